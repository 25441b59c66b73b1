import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { Location, SessionV2 } from "../src/index.js"
import * as Engines from "./support/engines.js"
import { tempDir } from "./support/location.js"

const provide = (engine: Engines.Engine, directory: string) =>
  Effect.provide(
    SessionV2.layer.pipe(Layer.provideMerge(Location.layer({ directory })), Layer.provideMerge(engine.layer())),
  )

Engines.describeEach("SessionV2", (engine) => {
  it.scoped("create: fresh ascending ses_ ids, project and directory from the Location", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      yield* Effect.gen(function* () {
        const sessions = yield* SessionV2.Service
        const a = yield* sessions.create()
        const b = yield* sessions.create({ agent: "plan" })
        expect(a.id).toMatch(/^ses_[0-9a-f]{12}[0-9A-Za-z]{14}$/)
        expect(a.id < b.id).toBe(true)
        expect(a).toEqual({ id: a.id, projectID: "global", directory: dir })
        expect("agent" in a).toBe(false)
        expect(b).toEqual({ id: b.id, projectID: "global", directory: dir, agent: "plan" })
        expect(yield* sessions.get(a.id)).toEqual(a)
        expect(yield* sessions.get(b.id)).toEqual(b)
      }).pipe(provide(engine, dir))
    }),
  )

  it.scoped("create with an explicit id; an id without the ses prefix or a duplicate is a defect", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      yield* Effect.gen(function* () {
        const sessions = yield* SessionV2.Service
        expect(yield* sessions.create({ id: "ses_fixed", agent: "build" })).toEqual({
          id: "ses_fixed",
          projectID: "global",
          directory: dir,
          agent: "build",
        })
        const bad = yield* Effect.exit(sessions.create({ id: "abc" }))
        expect(Exit.isFailure(bad) && Cause.isDie(bad.cause)).toBe(true)
        const duplicate = yield* Effect.exit(sessions.create({ id: "ses_fixed" }))
        expect(Exit.isFailure(duplicate) && Cause.isDie(duplicate.cause)).toBe(true)
      }).pipe(provide(engine, dir))
    }),
  )

  it.scoped("get reads rows inserted directly (any project); unknown ids give undefined", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const sessions = yield* SessionV2.Service
        yield* sql`INSERT INTO project (id, worktree) VALUES ('other', '/x')`
        yield* sql`INSERT INTO session (id, project_id, directory, agent) VALUES ('ses_direct', 'other', '/x/y', NULL)`
        expect(yield* sessions.get("ses_direct")).toEqual({ id: "ses_direct", projectID: "other", directory: "/x/y" })
        expect(yield* sessions.get("ses_missing")).toBeUndefined()
        // sessions go with their project
        yield* sql`DELETE FROM project WHERE id = 'other'`
        expect(yield* sessions.get("ses_direct")).toBeUndefined()
      }).pipe(provide(engine, dir))
    }),
  )

  it("NotFoundError has tag Session.NotFoundError and field sessionID", () => {
    const error = new SessionV2.NotFoundError({ sessionID: "ses_x" })
    expect(error._tag).toBe("Session.NotFoundError")
    expect(error.sessionID).toBe("ses_x")
  })

  it.scoped("a session belongs to the Location project and its absolute directory", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      yield* Effect.gen(function* () {
        const location = yield* Location.Service
        const session = yield* Effect.flatMap(SessionV2.Service, (s) => s.create())
        expect(session.projectID).toBe(location.project.id)
        expect(session.directory).toBe(root)
        expect(path.isAbsolute(session.directory)).toBe(true)
      }).pipe(provide(engine, root))
    }),
  )
})
