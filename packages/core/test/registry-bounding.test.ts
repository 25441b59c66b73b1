import * as fs from "node:fs"
import * as path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref, Schema } from "effect"
import { ApplicationTools, Config, Global, type LLM, Tool, ToolOutputStore, ToolRegistry } from "../src/index.js"
import { tempDir } from "./support/location.js"
import { ToolTest } from "../src/entry/testing.js"

const identity = { sessionID: "ses_registry", agent: "build", assistantMessageID: "msg_registry" } as const
const call = (name: string, input: unknown = { text: name }): ToolRegistry.ExecuteInput => ({
  ...identity,
  call: { id: `call-${name}`, name, input },
})

/** Emits `size` bytes of multi-line text (with some multi-byte characters) for the model. */
const big = Tool.make({
  description: "Produces a large text",
  input: Schema.Struct({ size: Schema.Number }),
  output: Schema.String,
  execute: ({ size }) =>
    Effect.sync(() => {
      const line = "row ✓ ümlaut 😀 " + "x".repeat(80) + "\n"
      const full = line.repeat(Math.ceil(size / Buffer.byteLength(line)))
      return full
    }),
})

const failing = Tool.make({
  description: "Always fails",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.String,
  execute: () => Effect.fail(new Tool.Failure({ message: "nope " + "n".repeat(100_000) })),
})

const echo = Tool.make({
  description: "Echo",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.Struct({ text: Schema.String }),
  execute: (input) => Effect.succeed({ text: input.text }),
  toModelOutput: ({ output }) => [{ type: "text", text: output.text }],
})

/** A store double that records every `bound` input and answers with `answer`. */
const mockStore = (
  seen: Ref.Ref<ReadonlyArray<ToolOutputStore.BoundInput>>,
  answer: (
    input: ToolOutputStore.BoundInput,
  ) => Effect.Effect<ToolOutputStore.BoundResult, ToolOutputStore.StorageError>,
) =>
  Layer.succeed(
    ToolOutputStore.Service,
    ToolOutputStore.Service.of({
      limits: () => Effect.succeed({ maxLines: ToolOutputStore.MAX_LINES, maxBytes: ToolOutputStore.MAX_BYTES }),
      bound: (input) =>
        Effect.zipRight(
          Ref.update(seen, (all) => [...all, input]),
          answer(input),
        ),
      cleanup: () => Effect.void,
      capture: ToolOutputStore.captureNothing,
    }),
  )

const registryWith = (store: Layer.Layer<ToolOutputStore.Service>) =>
  ToolRegistry.layer.pipe(Layer.provide(Layer.mergeAll(ApplicationTools.layer, store)))

describe("registry bounding (end to end)", () => {
  it.scoped("a 3 MB text result settles to a bounded text with one managed file holding it byte for byte", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const registry = yield* Effect.provide(
        ToolRegistry.Service,
        ToolRegistry.defaultLayer.pipe(
          Layer.provide(Layer.mergeAll(NodeFileSystem.layer, Global.layerWith({ data, tmp: data }), Config.layerEmpty)),
        ),
      )
      yield* registry.register({ big })
      const turn = yield* registry.materialize()
      const settlement = yield* turn.settle(call("big", { size: 3 * 1024 * 1024 }))
      expect(settlement.result.type).toBe("text")
      expect(settlement.outputPaths).toHaveLength(1)
      const file = settlement.outputPaths![0]!
      expect(path.dirname(file)).toBe(path.join(data, "tool-output", ToolOutputStore.UNSCOPED_FOLDER))
      const expected = yield* Effect.orDie(
        ToolTest.settle(big, { size: 3 * 1024 * 1024 }, { name: "big", context: { ...identity, toolCallID: "again" } }),
      )
      const full = (expected.content[0] as LLM.ToolTextContent).text
      expect(Buffer.byteLength(full)).toBeGreaterThanOrEqual(3 * 1024 * 1024)
      expect(fs.readFileSync(file).equals(Buffer.from(full, "utf8"))).toBe(true)
      const preview = settlement.result.value as string
      expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(ToolOutputStore.MAX_BYTES)
      expect(preview).toContain(`... output truncated; full content saved to ${file} ...`)
      expect(settlement.output?.content).toEqual([{ type: "text", text: preview }])
    }),
  )

  it.scoped("a ToolFailure never reaches the store", () =>
    Effect.gen(function* () {
      const seen = yield* Ref.make<ReadonlyArray<ToolOutputStore.BoundInput>>([])
      const registry = yield* Effect.provide(
        ToolRegistry.Service,
        registryWith(mockStore(seen, (input) => Effect.succeed({ output: input.output, outputPaths: [] }))),
      )
      yield* registry.register({ failing, echo })
      const turn = yield* registry.materialize()
      const failed = yield* turn.settle(call("failing"))
      expect(failed.result.type).toBe("error")
      expect(failed.outputPaths).toBeUndefined()
      expect(yield* Ref.get(seen)).toEqual([])
      yield* turn.settle(call("echo"))
      const bounded = yield* Ref.get(seen)
      expect(bounded.map((input) => [input.sessionID, input.toolCallID])).toEqual([["ses_registry", "call-echo"]])
    }),
  )

  it.scoped("a storage failure fails settle with that very StorageError", () =>
    Effect.gen(function* () {
      const seen = yield* Ref.make<ReadonlyArray<ToolOutputStore.BoundInput>>([])
      const error = new ToolOutputStore.StorageError({ operation: "write", cause: new Error("disk full") })
      const registry = yield* Effect.provide(
        ToolRegistry.Service,
        registryWith(mockStore(seen, () => Effect.fail(error))),
      )
      yield* registry.register({ echo })
      const turn = yield* registry.materialize()
      const failure = yield* Effect.flip(turn.settle(call("echo")))
      expect(failure).toBe(error)
      expect(failure.message).toBe("Failed to write tool output: disk full")
      expect(yield* Ref.get(seen)).toHaveLength(1)
    }),
  )

  it.scoped("a bounded output with one path gives outputPaths in the settlement", () =>
    Effect.gen(function* () {
      const seen = yield* Ref.make<ReadonlyArray<ToolOutputStore.BoundInput>>([])
      const bounded: LLM.ToolOutput = { structured: { text: "echo" }, content: [{ type: "text", text: "preview" }] }
      const registry = yield* Effect.provide(
        ToolRegistry.Service,
        registryWith(
          mockStore(seen, () => Effect.succeed({ output: bounded, outputPaths: ["/data/tool-output/tool_x"] })),
        ),
      )
      yield* registry.register({ echo })
      const turn = yield* registry.materialize()
      const settlement = yield* turn.settle(call("echo"))
      expect(settlement.outputPaths).toEqual(["/data/tool-output/tool_x"])
      expect(settlement.result).toEqual({ type: "text", value: "preview" })
      expect(settlement.output).toBe(bounded)
    }),
  )
})
