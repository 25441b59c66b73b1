import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { ApplicationTools, Tool, ToolOutputStore, ToolRegistry } from "../src/index.js"

const echo = Tool.make({
  description: "Echo",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.Struct({ text: Schema.String }),
  execute: (input) => Effect.succeed({ text: input.text }),
  toModelOutput: ({ output }) => [{ type: "text", text: output.text }],
})

const TestLayer = ToolRegistry.layer.pipe(Layer.provide([ApplicationTools.layer, ToolOutputStore.layerPassthrough]))

describe("smoke", () => {
  it.scoped("settles", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry.Service
      yield* registry.register({ echo })
      const turn = yield* registry.materialize()
      const s = yield* turn.settle({ sessionID: "ses_1", agent: "build", assistantMessageID: "m", call: { id: "c", name: "echo", input: { text: "hi" } } })
      expect(s.result).toEqual({ type: "text", value: "hi" })
      expect(turn.definitions[0]?.inputSchema).toMatchObject({ type: "object" })
    }).pipe(Effect.provide(TestLayer)))
})
