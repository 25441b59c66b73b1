/**
 * The settlement hot path: no span within limits, one `ToolOutputStore.spill` span over a limit (also from `bound`
 * called directly), a materialization's settlement equal to the test entry's plus bounding for every outcome, and
 * settlement still lazy.
 */
import * as fs from "node:fs"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, Layer, Schema, Tracer } from "effect"
import { ToolTest } from "../src/entry/testing.js"
import {
  ApplicationTools,
  Config,
  Global,
  type LLM,
  LLM as LLMValues,
  Tool,
  ToolOutputStore,
  ToolRegistry,
} from "../src/index.js"
import { tempDir } from "./support/location.js"

const identity = { sessionID: "ses_hot", agent: "build", assistantMessageID: "msg_hot" } as const
const call = (name: string, input: unknown, id = `call-${name}`): ToolRegistry.ExecuteInput => ({
  ...identity,
  call: { id, name, input },
})

const echo = Tool.make({
  description: "Echo",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.Struct({ text: Schema.String }),
  execute: (input) => Effect.succeed({ text: input.text }),
  toModelOutput: ({ output }) => [{ type: "text", text: output.text }],
})

/** Fails for "fail", dies for "die", otherwise returns `{ n: <length> }` with a structured projection. */
const shaped = Tool.make({
  description: "Shaped",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.Struct({ n: Schema.NumberFromString }),
  structured: Schema.Struct({ doubled: Schema.String }),
  toStructuredOutput: ({ output }) => ({ doubled: output.n + output.n }),
  execute: (input) =>
    input.text === "fail"
      ? Effect.fail(new Tool.Failure({ message: "refused" }))
      : input.text === "die"
        ? Effect.die("boom")
        : Effect.succeed({ n: input.text.length }),
})

const big = Tool.make({
  description: "Big",
  input: Schema.Struct({ lines: Schema.Number }),
  output: Schema.String,
  execute: ({ lines }) => Effect.succeed("line\n".repeat(lines)),
})

/** The names of every span started while `effect` runs. */
const spanNames = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const names: Array<string> = []
    const inner = yield* Effect.tracer
    const tracer = Tracer.make({
      span: (...args) => {
        names.push(args[0])
        return inner.span(...args)
      },
      context: inner.context,
    })
    const value = yield* Effect.withTracer(effect, tracer)
    return { value, names }
  })

/** A registry over the real output store (a temp data directory), and that store. */
const realRegistry = (data: string) => {
  const base = Layer.mergeAll(NodeFileSystem.layer, Global.layerWith({ data, tmp: data }), Config.layerEmpty)
  const store = ToolOutputStore.layer.pipe(Layer.provide(base))
  return Effect.provide(
    Effect.zip(ToolRegistry.Service, ToolOutputStore.Service),
    ToolRegistry.layer.pipe(Layer.provideMerge(Layer.merge(ApplicationTools.layer, store))),
  )
}

describe("settlement hot path", () => {
  it.scoped("within limits a settlement starts no span; over a limit only ToolOutputStore.spill", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const [registry] = yield* realRegistry(data)
      yield* registry.register({ echo, big })
      const turn = yield* registry.materialize()

      const small = yield* spanNames(turn.settle(call("echo", { text: "hi" })))
      expect(small.value.result).toEqual({ type: "text", value: "hi" })
      expect(small.names).toEqual([])

      const large = yield* spanNames(turn.settle(call("big", { lines: ToolOutputStore.MAX_LINES + 10 })))
      expect(large.names).toEqual(["ToolOutputStore.spill"])
      expect(large.value.outputPaths).toHaveLength(1)
      expect(fs.readFileSync(large.value.outputPaths![0]!, "utf8")).toBe(
        "line\n".repeat(ToolOutputStore.MAX_LINES + 10),
      )
    }),
  )

  it.scoped("bound starts no span within limits and only ToolOutputStore.spill over a limit", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const [, store] = yield* realRegistry(data)
      const output: LLM.ToolOutput = { structured: null, content: [{ type: "text", text: "hello" }] }
      const within = yield* spanNames(store.bound({ sessionID: "ses_hot", toolCallID: "call_public", output }))
      expect(within.names).toEqual([])
      expect(within.value.output).toBe(output)
      const big: LLM.ToolOutput = {
        structured: null,
        content: [{ type: "text", text: "line\n".repeat(ToolOutputStore.MAX_LINES + 1) }],
      }
      const over = yield* spanNames(store.bound({ sessionID: "ses_hot", toolCallID: "call_big", output: big }))
      expect(over.names).toEqual(["ToolOutputStore.spill"])
      expect(over.value.outputPaths).toHaveLength(1)
    }),
  )

  it.scoped("a materialization settles every outcome as the test entry does, then bounds it", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const [registry] = yield* realRegistry(data)
      yield* registry.register({ shaped })
      const turn = yield* registry.materialize()
      const inputs: ReadonlyArray<unknown> = [
        { text: "abc" },
        { text: "fail" },
        { text: 7 },
        { text: "abc", extra: true },
        "not an object",
      ]
      for (const input of inputs) {
        const direct = yield* Effect.either(ToolTest.settle(shaped, input, { context: identity }))
        const settled = yield* turn.settle(call("shaped", input))
        expect(settled.result).toEqual(
          Either.isRight(direct)
            ? LLMValues.toResultValue(direct.right)
            : { type: "error", value: direct.left.message },
        )
      }
      expect((yield* ToolTest.settle(shaped, { text: "abcd" })).structured).toEqual({ doubled: "44" })
      const died = yield* Effect.exit(turn.settle(call("shaped", { text: "die" })))
      expect(Exit.isFailure(died) && died.cause._tag).toBe("Die")
    }),
  )

  it.scoped("a settle Effect is lazy: built before the tool is replaced, run after, it is a stale call", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const [registry] = yield* realRegistry(data)
      yield* registry.register({ echo })
      const turn = yield* registry.materialize()
      const pending = turn.settle(call("echo", { text: "hi" }))
      yield* registry.register({ echo })
      expect((yield* pending).result).toEqual({ type: "error", value: "Stale tool call: echo" })
    }),
  )
})
