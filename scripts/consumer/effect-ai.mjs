// @toolgate/effect-ai with the real @effect/ai: a stand-in LanguageModel drives the Runner through one `glob` call.
import * as assert from "node:assert/strict"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { LanguageModel } from "@effect/ai"
import { Core, Runner, SessionV2 } from "@toolgate/core"
import { EffectAiModel } from "@toolgate/effect-ai"
import { Effect, Layer, Stream } from "effect"

const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-consumer-effect-ai-")))
fs.writeFileSync(path.join(directory, "a.json"), "{}\n")
let turn = 0
const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }
const provider = Layer.effect(
  LanguageModel.LanguageModel,
  LanguageModel.make({
    generateText: () => Effect.succeed([]),
    streamText: () =>
      Stream.fromIterable(
        turn++ === 0
          ? [
              { type: "tool-call", id: "c1", name: "glob", params: { pattern: "*.json" } },
              { type: "finish", reason: "tool-calls", usage },
            ]
          : [
              { type: "text-delta", id: "t", delta: "Found them." },
              { type: "finish", reason: "stop", usage },
            ],
      ),
  }),
)
const program = Effect.gen(function* () {
  const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
  return yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "list the json files" })
})
const layer = Runner.layer.pipe(
  Layer.provideMerge(EffectAiModel.layer),
  Layer.provideMerge(provider),
  Layer.provideMerge(Core.layer({ directory, memoryDatabase: true, discover: false })),
)
const result = await Effect.runPromise(program.pipe(Effect.provide(layer), Effect.scoped))
assert.equal(turn, 2)
assert.match(JSON.stringify(result), /a\.json/)
fs.rmSync(directory, { recursive: true, force: true })
console.log("effect-ai: the Runner settled glob from an @effect/ai stream")
