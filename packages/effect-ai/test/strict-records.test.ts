/**
 * A tool whose input has a record (`Schema.Record`) through `@effect/ai-openai` (strict by default) against the
 * loopback server that enforces OpenAI's strict rules: the record goes out as an array of `{ key, value }` pairs,
 * the model's pairs (valid against exactly what was advertised) come back as the record the tool receives.
 */
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Runner, SessionV2, Tool, ToolRegistry } from "@toolgate/core"
import { Core } from "@toolgate/core/testing"
import { Effect, Layer, Redacted, Schema } from "effect"
import { EffectAiModel } from "../src/index.js"
import { openAiStrictViolations } from "../../core/test/support/openai-strict.js"
import * as FakeOpenAi from "./support/fake-openai.js"

const received: Array<unknown> = []
const setenv = Tool.make({
  description: "Set environment variables for later commands.",
  input: Schema.Struct({
    vars: Schema.Record({ key: Schema.String, value: Schema.String }),
    note: Schema.optional(Schema.String),
  }),
  output: Schema.Struct({ count: Schema.Number }),
  execute: (input) => Effect.sync(() => (received.push(input), { count: Object.keys(input.vars).length })),
  toModelOutput: ({ output }) => [{ type: "text", text: `set ${output.count}` }],
})

describe("a Schema.Record input under OpenAI strict mode", () => {
  it.scoped("is advertised as key/value pairs and reaches the tool as the record", () =>
    Effect.gen(function* () {
      const args = {
        vars: [
          { key: "A", value: "1" },
          { key: "B", value: "two" },
        ],
        note: null,
      }
      const server = yield* FakeOpenAi.serve([
        (body) => {
          // The model answers in exactly the shape it was shown (checked below).
          return [{ type: "call", name: "setenv", arguments: FakeOpenAi.strictArguments(body, "setenv", args) }]
        },
        () => [{ type: "text", text: "done" }],
      ])
      const layer = Runner.layer.pipe(
        Layer.provideMerge(EffectAiModel.layer),
        Layer.provideMerge(
          OpenAiLanguageModel.layer({ model: "gpt-4.1" }).pipe(
            Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("sk-test"), apiUrl: server.url })),
            Layer.provide(FetchHttpClient.layer),
          ),
        ),
        Layer.provideMerge(Core.layerTest({ permission: "once" })),
      )
      const exit = yield* Effect.gen(function* () {
        yield* (yield* ToolRegistry.Service).register({ setenv })
        const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
        return yield* Effect.exit((yield* Runner.Service).run({ sessionID: session.id, prompt: "set A and B" }))
      }).pipe(Effect.provide(layer))
      if (exit._tag === "Failure") throw new Error(`run failed: ${String(exit.cause)}`)
      expect(server.statuses).toEqual([200, 200])
      const sent = server.requests[0]!.tools!.find((tool) => tool.name === "setenv")!
      expect(openAiStrictViolations(sent.parameters)).toEqual([])
      expect(sent.parameters.properties).toEqual({
        vars: {
          type: "array",
          items: {
            type: "object",
            properties: { key: { type: "string" }, value: { type: "string" } },
            required: ["key", "value"],
            additionalProperties: false,
          },
        },
        note: { type: ["string", "null"] },
      })
      expect(received).toEqual([{ vars: { A: "1", B: "two" } }])
      expect([...FakeOpenAi.callOutputs(server.requests[1]!).values()][0]).toContain("set 2")
    }),
  )
})
