/**
 * `Core.layerTest`'s scripted answers surface a failed save: a scripted `always` whose approval cannot be written is
 * logged and rejected with the error's message, so the test sees it in the tool result instead of a hang or a quiet
 * `once`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Location, PermissionSaved, PermissionV2, SessionV2, ToolRegistry } from "../src/index.js"
import { Core } from "../src/entry/testing.js"

const testLayer = Core.layerTest({
  config: { permissions: [{ action: "edit", resource: "guarded/*", effect: "ask" }] },
  permission: "always",
})

layer(testLayer)("Core.layerTest and a failed save", (it) => {
  it.effect("a scripted always whose save fails rejects with the SaveError's message; nothing is written", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // Every insert into the saved approvals fails; reads still work.
      yield* sql.unsafe(
        "CREATE TRIGGER refuse_saves BEFORE INSERT ON permission BEGIN SELECT RAISE(ABORT, 'the disk is on fire'); END",
      )
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      const turn = yield* (yield* ToolRegistry.Service).materialize([])
      const settlement = yield* turn.settle({
        sessionID: session.id,
        agent: "build",
        assistantMessageID: "msg_save",
        call: { id: "call_save", name: "write", input: { path: "guarded/a.txt", content: "a" } },
      })
      const value = String(settlement.result.value)
      expect(value).toMatch(
        /^The user rejected permission to use this specific tool call with the following feedback: Could not save the approval of permission request per\w+ \(edit\) to :memory:: Failed to execute statement: SQLITE_CONSTRAINT_TRIGGER: the disk is on fire\. The request is still pending: answer it once or reject it\.$/,
      )
      const location = yield* Location.Service
      expect(fs.existsSync(path.join(location.directory, "guarded", "a.txt"))).toBe(false)
      expect(yield* Effect.flatMap(PermissionSaved.Service, (saved) => saved.list())).toEqual([])
      expect(yield* Effect.flatMap(PermissionV2.Service, (permission) => permission.list())).toEqual([])
      yield* sql.unsafe("DROP TRIGGER refuse_saves")
    }),
  )
})
