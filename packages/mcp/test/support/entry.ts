/**
 * The MCP server as the tests run it: a real child process serving TOOLGATE_MCP_DIR over stdio, with its data in
 * TOOLGATE_MCP_DATA. Creating `<data>/register-now` registers an extra `echo` tool in the server's Location; the
 * heartbeat is short so progress tests stay fast. TOOLGATE_MCP_MAX_MESSAGE, when set, is the limit on one message.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Core, Tool, ToolRegistry } from "@toolgate/core"
import { Effect, Schedule, Schema } from "effect"
import { McpServer } from "../../src/index.js"

console.log = console.error
const directory = process.env["TOOLGATE_MCP_DIR"]!
const data = process.env["TOOLGATE_MCP_DATA"]!
const trigger = path.join(data, "register-now")

const echo = Tool.make({
  description: "Echoes its text",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.String,
  execute: (input) => Effect.succeed(`echo: ${input.text}`),
})

const registerOnTrigger = Effect.gen(function* () {
  const registry = yield* ToolRegistry.Service
  yield* Effect.repeat(
    Effect.sync(() => fs.existsSync(trigger)),
    { until: (exists) => exists, schedule: Schedule.spaced("50 millis") },
  )
  yield* registry.register({ echo })
  yield* Effect.never
})

const program = Effect.gen(function* () {
  yield* Effect.forkScoped(registerOnTrigger)
  const limit = process.env["TOOLGATE_MCP_MAX_MESSAGE"]
  yield* McpServer.serve({
    heartbeat: "400 millis",
    ...(limit === undefined ? {} : { maxMessageBytes: Number(limit) }),
  })
}).pipe(Effect.scoped, Effect.provide(Core.layer({ directory, data, memoryDatabase: true })))

await Effect.runPromise(program)
process.exit(0)
