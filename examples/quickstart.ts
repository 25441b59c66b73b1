/**
 * Quickstart: two tools registered, one materialization, a few settlements printed readably.
 *
 * Run: npx -y pnpm@12.21.0 demo
 */
import { Effect, Layer, Schema } from "effect"
import { ApplicationTools, Tool, ToolOutputStore, ToolRegistry } from "@toolgate/core"

const echo = Tool.make({
  description: "Repeat the given text back to the model.",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.Struct({ text: Schema.String }),
  execute: (input) => Effect.succeed({ text: input.text }),
  toModelOutput: ({ output }) => [{ type: "text", text: output.text }],
})

const add = Tool.make({
  description: "Add two numbers.",
  input: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  output: Schema.Struct({ sum: Schema.Number }),
  execute: (input) => Effect.succeed({ sum: input.a + input.b }),
})

const identity = { sessionID: "ses_quickstart", agent: "build", assistantMessageID: "msg_1" }

const program = Effect.gen(function* () {
  const registry = yield* ToolRegistry.Service
  yield* registry.register({ echo, add })

  const turn = yield* registry.materialize([])
  console.log("Advertised tools:")
  for (const definition of turn.definitions) {
    console.log(`  ${definition.name} — ${definition.description}`)
    console.log(`    input schema: ${JSON.stringify(definition.inputSchema)}`)
  }

  const show = (label: string, name: string, input: unknown) =>
    Effect.gen(function* () {
      const settlement = yield* turn.settle({ ...identity, call: { id: `call_${label}`, name, input } })
      console.log(`\n${label}: ${name}(${JSON.stringify(input)})`)
      console.log(`  → ${settlement.result.type}: ${JSON.stringify(settlement.result.value)}`)
    })

  yield* show("success", "echo", { text: "hello" })
  yield* show("structured", "add", { a: 2, b: 3 })
  yield* show("invalid input", "add", { a: "two", b: 3 })
  yield* show("unknown", "search", { query: "x" })

  // Re-registering `echo` after the turn was materialized makes the captured call stale.
  yield* registry.register({ echo })
  yield* show("stale", "echo", { text: "hello again" })
})

const layer = ToolRegistry.layer.pipe(Layer.provide([ApplicationTools.layer, ToolOutputStore.layerPassthrough]))
Effect.runPromise(Effect.scoped(Effect.provide(program, layer))).catch((error) => {
  console.error(error)
  process.exit(1)
})
