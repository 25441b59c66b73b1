// A consumer's first program, in plain Node ESM against the installed @toolgate/core: build a Location with
// Core.layer, settle `read` and `glob`, and answer a permission ask for `write`. Exits non-zero on any mismatch.
import * as assert from "node:assert/strict"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Core, EventV2, PermissionV2, SessionV2, ToolRegistry } from "@toolgate/core"
import { Effect, Fiber, Queue } from "effect"

const temp = (prefix) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
const directory = temp("toolgate-consumer-location-")
const data = temp("toolgate-consumer-data-")
fs.writeFileSync(path.join(directory, "hello.txt"), "hello\n")

const program = Effect.gen(function* () {
  const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
  const turn = yield* (yield* ToolRegistry.Service).materialize([])
  const settle = (id, name, input) =>
    turn.settle({ sessionID: session.id, agent: "build", assistantMessageID: "msg_1", call: { id, name, input } })

  const read = yield* settle("c_read", "read", { path: "hello.txt" })
  assert.notEqual(read.result.type, "error", JSON.stringify(read.result))
  assert.match(JSON.stringify(read.result), /hello/)

  const glob = yield* settle("c_glob", "glob", { pattern: "*.txt" })
  assert.notEqual(glob.result.type, "error", JSON.stringify(glob.result))
  assert.match(JSON.stringify(glob.result), /hello\.txt/)

  // `edit` asks (configured below): the write waits until the ask is answered.
  const asks = yield* (yield* EventV2.Service).queue()
  const write = yield* Effect.fork(settle("c_write", "write", { path: "new.txt", content: "written\n" }))
  let asked
  while (asked === undefined) {
    const envelope = yield* Queue.take(asks)
    if (envelope.type === "permission.v2.asked") asked = envelope.data
  }
  assert.equal(asked.action, "edit")
  assert.equal(fs.existsSync(path.join(directory, "new.txt")), false)
  yield* (yield* PermissionV2.Service).reply({ requestID: asked.id, reply: "once" })
  const written = yield* Fiber.join(write)
  assert.notEqual(written.result.type, "error", JSON.stringify(written.result))
  assert.equal(fs.readFileSync(path.join(directory, "new.txt"), "utf8"), "written\n")
  return [read.result.type, glob.result.type, written.result.type]
})

const layer = Core.layer({
  directory,
  data,
  discover: false,
  config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
})
const summary = await Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(layer)))
fs.rmSync(directory, { recursive: true, force: true })
fs.rmSync(data, { recursive: true, force: true })
console.log(`core: read, glob and an answered ask settled (${JSON.stringify(summary)})`)
