/**
 * Registry fixtures: an echo tool, a recording mock output store and helpers that materialize and settle.
 */
import { Context, Effect, Layer, Ref, Schema } from "effect"
import { ApplicationTools, LLM, Tool, ToolOutputStore, ToolRegistry } from "../../src/index.js"

/** The standard registry identity. */
export const identity = { sessionID: "ses_registry", agent: "build", assistantMessageID: "msg_registry" } as const

/** A call to `name` with id `call-<name>` and input `{ text: name }`. */
export const call = (name: string, id = `call-${name}`): ToolRegistry.ExecuteInput => ({
  ...identity,
  call: { id, name, input: { text: name } },
})

/** `{ text }` in and out; execute echoes; one text part. */
export const echoTool = (options: { readonly permission?: string; readonly onExecute?: Effect.Effect<void> } = {}) => {
  const tool = Tool.make({
    description: "Echo the text back",
    input: Schema.Struct({ text: Schema.String }),
    output: Schema.Struct({ text: Schema.String }),
    execute: (input) => Effect.as(options.onExecute ?? Effect.void, { text: input.text }),
    toModelOutput: ({ output }) => [{ type: "text", text: output.text }],
  })
  return options.permission === undefined ? tool : Tool.withPermission(tool, options.permission)
}

/** Every input the mock store's `bound` received. */
export class StoreCalls extends Context.Tag("test/StoreCalls")<
  StoreCalls,
  Ref.Ref<ReadonlyArray<ToolOutputStore.BoundInput>>
>() {}

/** The storage failure the mock store raises (one instance, so tests can check identity). */
export const diskFull = new ToolOutputStore.StorageError({ operation: "write", cause: new Error("disk full") })

/** Records every `bound` input; fails for `call-retention-failure`, bounds `call-bounded`, echoes the rest. */
export const mockStore: Layer.Layer<ToolOutputStore.Service | StoreCalls> = Layer.effectContext(
  Effect.gen(function* () {
    const calls = yield* Ref.make<ReadonlyArray<ToolOutputStore.BoundInput>>([])
    const store = ToolOutputStore.Service.of({
      limits: () => Effect.succeed({ maxLines: ToolOutputStore.MAX_LINES, maxBytes: ToolOutputStore.MAX_BYTES }),
      cleanup: () => Effect.void,
      capture: ToolOutputStore.captureNothing,
      bound: (input) =>
        Effect.gen(function* () {
          yield* Ref.update(calls, (all) => [...all, input])
          if (input.toolCallID === "call-retention-failure") return yield* diskFull
          if (input.toolCallID === "call-bounded") {
            const output: LLM.ToolOutput = { structured: {}, content: [{ type: "text", text: "bounded reference" }] }
            return { output, outputPaths: ["/managed/generic"] }
          }
          return { output: input.output, outputPaths: [] }
        }),
    })
    return Context.make(ToolOutputStore.Service, store).pipe(Context.add(StoreCalls, calls))
  }),
)

/** ApplicationTools + ToolRegistry/Tools over the mock store. */
export const registryLayer = ToolRegistry.layer.pipe(Layer.provideMerge(Layer.merge(ApplicationTools.layer, mockStore)))

/** Materializes with `rules` and returns the definition names. */
export const names = (rules?: ReadonlyArray<ToolRegistry.VisibilityRule>) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize(rules)).pipe(
    Effect.map((turn) => turn.definitions.map((definition) => definition.name)),
  )

/** A fresh materialization (no rules), then settle. */
export const settleTool = (input: ToolRegistry.ExecuteInput) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize()).pipe(
    Effect.flatMap((turn) => turn.settle(input)),
  )

/** The inputs the mock store has seen. */
export const storeCalls = Effect.flatMap(StoreCalls, Ref.get)
