// @toolgate/ai-sdk with the real `ai` package: a mock model calls `glob`, the tool settles through our registry.
import * as assert from "node:assert/strict"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { AiSdkTools } from "@toolgate/ai-sdk"
import { Core, SessionV2, ToolRegistry } from "@toolgate/core"
import { generateText, stepCountIs } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect } from "effect"

const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-consumer-ai-sdk-")))
fs.writeFileSync(path.join(directory, "a.json"), "{}\n")
const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
}
let step = 0
const model = new MockLanguageModelV4({
  doGenerate: async () =>
    step++ === 0
      ? {
          content: [{ type: "tool-call", toolCallId: "c1", toolName: "glob", input: '{"pattern":"*.json"}' }],
          finishReason: { unified: "tool-calls", raw: undefined },
          usage,
          warnings: [],
        }
      : {
          content: [{ type: "text", text: "Found them." }],
          finishReason: { unified: "stop", raw: undefined },
          usage,
          warnings: [],
        },
})

const program = Effect.gen(function* () {
  const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
  const turn = yield* (yield* ToolRegistry.Service).materialize([])
  const identity = { sessionID: session.id, agent: "build", assistantMessageID: "msg_1" }
  const tools = AiSdkTools.toAiSdkTools(turn, identity, yield* Effect.runtime())
  return yield* Effect.promise(() =>
    generateText({ model, tools, prompt: "list the json files", stopWhen: [stepCountIs(5), AiSdkTools.stoppedByUser] }),
  )
})
const result = await Effect.runPromise(
  program.pipe(Effect.scoped, Effect.provide(Core.layer({ directory, memoryDatabase: true, discover: false }))),
)
assert.equal(result.text, "Found them.")
const outputs = result.steps.flatMap((s) => s.toolResults).map((r) => JSON.stringify(r.output))
assert.match(outputs.join("\n"), /a\.json/)
fs.rmSync(directory, { recursive: true, force: true })
console.log("ai-sdk: generateText settled glob through the registry")
