/**
 * The settlement hot path: no span within limits, one `ToolOutputStore.spill` span over a limit, the public
 * `bound` still traced, `Tool.settleThen` equal to `Tool.settle` + a match, and settlement still lazy.
 */
import * as fs from "node:fs"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, Layer, Schema, Tracer } from "effect"
import { ApplicationTools, Config, Global, type LLM, Tool, ToolOutputStore, ToolRegistry } from "../src/index.js"
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

  it.scoped("the public bound is still traced and answers what settlementBound answers", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const [, store] = yield* realRegistry(data)
      const output: LLM.ToolOutput = { structured: null, content: [{ type: "text", text: "hello" }] }
      const input = { sessionID: "ses_hot", toolCallID: "call_public", output }
      const traced = yield* spanNames(store.bound(input))
      expect(traced.names).toEqual(["ToolOutputStore.bound"])
      const untraced = yield* spanNames(ToolOutputStore.settlementBound(store)(input))
      expect(untraced.names).toEqual([])
      expect(untraced.value).toEqual(traced.value)
      expect(traced.value.output).toBe(output)
    }),
  )

  it.effect("settlementBound of a store not built by make is that store's own bound", () =>
    Effect.gen(function* () {
      const store = yield* ToolOutputStore.Service
      expect(ToolOutputStore.settlementBound(store)).toBe(store.bound)
    }).pipe(Effect.provide(ToolOutputStore.layerPassthrough)),
  )

  it.effect("settleThen continues exactly as settle followed by a match", () =>
    Effect.gen(function* () {
      const context = { ...identity, toolCallID: "call_then" }
      const inputs: ReadonlyArray<unknown> = [
        { text: "abc" },
        { text: "fail" },
        { text: 7 },
        { text: "abc", extra: true },
        "not an object",
      ]
      for (const input of inputs) {
        const toolCall = { id: "call_then", name: "shaped", input }
        const viaSettle = yield* Effect.either(Tool.settle(shaped, toolCall, context))
        const viaThen = yield* Effect.suspend(() =>
          Tool.settleThen<Either.Either<LLM.ToolOutput, LLM.ToolFailure>, never>(shaped, toolCall, context, {
            onSuccess: (output) => Effect.succeed(Either.right(output)),
            onFailure: (failure) => Effect.succeed(Either.left(failure)),
          }),
        )
        expect(viaThen).toEqual(viaSettle)
      }
      const structured = yield* Tool.settle(shaped, { id: "c", name: "shaped", input: { text: "abcd" } }, context)
      expect(structured.structured).toEqual({ doubled: "44" })
    }),
  )

  it.effect("a continuation's failure is not taken for a tool failure, and a tool defect stays a defect", () =>
    Effect.gen(function* () {
      const context = { ...identity, toolCallID: "call_then" }
      const continuations = {
        onSuccess: () => Effect.fail("continuation failed" as const),
        onFailure: () => Effect.succeed("tool failure" as const),
      }
      const ok = yield* Effect.exit(
        Effect.suspend(() =>
          Tool.settleThen(shaped, { id: "c", name: "shaped", input: { text: "x" } }, context, continuations),
        ),
      )
      expect(ok).toEqual(Exit.fail("continuation failed"))
      const died = yield* Effect.exit(
        Effect.suspend(() =>
          Tool.settleThen(shaped, { id: "c", name: "shaped", input: { text: "die" } }, context, continuations),
        ),
      )
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
