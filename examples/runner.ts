/**
 * The README's Runner example: a scripted model asks for `glob`, the runner settles it and continues.
 *
 * Run: npx tsx examples/runner.ts
 */
import { Effect, Layer } from "effect"
import { Core, Runner, ScriptedModel, SessionV2 } from "@toolgate/core"

const model = ScriptedModel.layer([
  [{ type: "tool-call", name: "glob", input: { pattern: "*.ts" } }],
  [{ type: "text", text: "done" }],
])
const program = Effect.gen(function* () {
  const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
  return yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "list the sources" })
})
Effect.runPromise(
  program.pipe(
    Effect.provide(
      Runner.layer.pipe(Layer.provideMerge(model), Layer.provideMerge(Core.layer({ directory: process.cwd() }))),
    ),
    Effect.scoped,
  ),
).then((result) => console.log(JSON.stringify(result.messages, null, 2)))
