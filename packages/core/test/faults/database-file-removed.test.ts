/**
 * The database file removed or replaced under a running process is detected before a write that must last: an
 * "always" answered over HTTP after the data directory was deleted (or the file swapped for another) is the 503
 * `PermissionV2.SaveError` naming the file, the ask stays pending, and nothing claims to be saved.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { type Approvals, Core, PermissionV2, SessionV2 } from "../../src/index.js"
import { ApprovalServer } from "../../src/entry/server.js"
import { request } from "../support/http-client.js"
import { tempDir } from "../support/location.js"

const TOKEN = "file-removed-token-0123456789abcdef"
const auth = { authorization: `Bearer ${TOKEN}` }

const scenario = (disturb: (data: string) => void) =>
  Effect.gen(function* () {
    const data = path.join(yield* tempDir(), "data")
    const directory = yield* tempDir()
    const context = yield* Layer.build(
      ApprovalServer.layer({ token: TOKEN }).pipe(
        Layer.provideMerge(
          Core.layer({
            directory,
            data,
            discover: false,
            config: { permissions: [{ action: "read", resource: "fault/*", effect: "ask" }] },
          }),
        ),
      ),
    )
    const { url } = yield* Effect.provide(ApprovalServer.Service, context)
    const asked = yield* Effect.gen(function* () {
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      return yield* Effect.fork(
        (yield* PermissionV2.Service).assert({
          id: "per_gone",
          sessionID: session.id,
          agent: "build",
          action: "read",
          resources: ["fault/a.ts"],
          save: ["fault/*"],
        }),
      )
    }).pipe(Effect.provide(context))
    let prompts: ReadonlyArray<Approvals.Prompt> = []
    while (prompts.length === 0) {
      prompts = (yield* request(`${url}/api/asks`, { headers: auth })).json as ReadonlyArray<Approvals.Prompt>
      if (prompts.length === 0) yield* Effect.sleep("10 millis")
    }
    const prompt = prompts[0]!
    const always = prompt.choices.find((choice) => choice.id.startsWith("always:"))!
    const database = path.join(data, "toolgate.db")
    expect(fs.existsSync(database)).toBe(true)

    disturb(data)
    const reply = yield* request(`${url}/api/asks/per_gone/answer`, {
      method: "POST",
      headers: auth,
      body: { digest: prompt.digest, choice: always.id },
    })
    expect(reply.status).toBe(503)
    expect(reply.json).toMatchObject({ _tag: "PermissionV2.SaveError", requestID: "per_gone", filename: database })
    // Not saved, still pending: it can be answered once (or rejected) instead.
    expect((yield* request(`${url}/api/asks/per_gone`, { headers: auth })).status).toBe(200)
    expect(asked.unsafePoll()).toBeNull()
    yield* Fiber.interrupt(asked)
    return reply.json as { detail: string }
  })

describe("the database file removed or replaced under a running process", () => {
  it.live("the data directory removed before an always over HTTP: 503 SaveError naming the file, still pending", () =>
    Effect.gen(function* () {
      const error = yield* scenario((data) => fs.rmSync(data, { recursive: true, force: true }))
      expect(error.detail).toBe("the database file was removed while this process was running; nothing was written")
    }).pipe(Effect.scoped),
  )

  it.live("the database file replaced by another before an always over HTTP: 503 SaveError naming the file", () =>
    Effect.gen(function* () {
      const error = yield* scenario((data) => {
        const file = path.join(data, "toolgate.db")
        fs.copyFileSync(file, `${file}.copy`)
        fs.renameSync(`${file}.copy`, file)
      })
      expect(error.detail).toBe(
        "the database file was replaced by another file while this process was running; nothing was written",
      )
    }).pipe(Effect.scoped),
  )
})
