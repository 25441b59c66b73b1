// Imports only @toolgate/core/tool, settles one tool, and fails if better-sqlite3 was loaded or a child process
// was started on the way.
import * as assert from "node:assert/strict"
import { createRequire, syncBuiltinESMExports } from "node:module"

// The CommonJS view of node:child_process is writable; syncBuiltinESMExports carries the spies to ESM importers.
const childProcess = createRequire(import.meta.url)("node:child_process")

const spawned = []
for (const name of ["spawn", "execFile", "exec", "fork", "spawnSync", "execFileSync", "execSync"]) {
  const original = childProcess[name]
  childProcess[name] = (...args) => {
    spawned.push(`${name} ${String(args[0])}`)
    return original(...args)
  }
}
syncBuiltinESMExports()

const { ApplicationTools, Tool, ToolOutputStore, ToolRegistry } = await import("@toolgate/core/tool")
const { Effect, Layer, Schema } = await import("effect")

const echo = Tool.make({
  description: "Echoes its text",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.String,
  execute: (input) => Effect.succeed(`echo: ${input.text}`),
})
const settlement = await Effect.gen(function* () {
  const registry = yield* ToolRegistry.Service
  yield* registry.register({ echo })
  const turn = yield* registry.materialize([])
  return yield* turn.settle({
    sessionID: "ses_1",
    agent: "build",
    assistantMessageID: "msg_1",
    call: { id: "call_1", name: "echo", input: { text: "hi" } },
  })
}).pipe(
  Effect.scoped,
  Effect.provide(ToolRegistry.layer.pipe(Layer.provide([ApplicationTools.layer, ToolOutputStore.layerPassthrough]))),
  Effect.runPromise,
)
assert.deepEqual(settlement.result, { type: "text", value: "echo: hi" })
const sqlite = Object.keys(createRequire(import.meta.url).cache).filter((file) => file.includes("better-sqlite3"))
assert.deepEqual(sqlite, [], "@toolgate/core/tool loaded better-sqlite3")
assert.deepEqual(spawned, [], "@toolgate/core/tool started a child process")
// The probe works: the main entry does load better-sqlite3.
if (process.argv[2] === "--control") {
  await import("@toolgate/core")
  const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) => file.includes("better-sqlite3"))
  assert.notDeepEqual(loaded, [], "the main entry should load better-sqlite3 (the probe is blind)")
}
console.log("tool: settled without better-sqlite3 or a child process")
