import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck, Layer } from "effect"
import { PermissionSaved } from "../src/index.js"
import * as Engines from "./support/engines.js"

const testLayer = (engine: Engines.Engine) => PermissionSaved.layer.pipe(Layer.provideMerge(engine.layer()))

const project = (...ids: Array<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(ids, (id) => sql`INSERT INTO project (id, worktree) VALUES (${id}, '/') ON CONFLICT DO NOTHING`, {
      discard: true,
    }),
  )

const triples = (rows: ReadonlyArray<PermissionSaved.Info>) =>
  rows.map((r) => `${r.projectID}|${r.action}|${r.resource}`).sort()

Engines.describeEach("PermissionSaved", (engine) => {
  it.effect("add / list / remove", () =>
    Effect.gen(function* () {
      const saved = yield* PermissionSaved.Service
      yield* project("p1", "p2")
      yield* saved.add({ projectID: "p1", action: "read", resources: ["*"] })
      yield* saved.add({ projectID: "p1", action: "bash", resources: ["git status", "ls *"] })
      yield* saved.add({ projectID: "p2", action: "read", resources: ["*"] })
      const p1 = yield* saved.list({ projectID: "p1" })
      expect(triples(p1)).toEqual(["p1|bash|git status", "p1|bash|ls *", "p1|read|*"])
      for (const row of p1) expect(row.id).toMatch(/^psv_[0-9a-f]{12}[0-9A-Za-z]{14}$/)
      expect(Object.keys(p1[0]!).sort()).toEqual(["action", "directory", "id", "projectID", "resource", "timeCreated"])
      expect(p1.every((row) => row.directory === "")).toBe(true)
      expect(new Set(p1.map((r) => r.id)).size).toBe(3)
      expect(triples(yield* saved.list())).toEqual([...triples(p1), "p2|read|*"].sort())
      expect(triples(yield* saved.list({}))).toHaveLength(4)
      // remove works regardless of project, and an absent id is fine
      const p2 = yield* saved.list({ projectID: "p2" })
      yield* saved.remove(p2[0]!.id)
      yield* saved.remove(p2[0]!.id)
      yield* saved.remove("psv_nope")
      expect(yield* saved.list({ projectID: "p2" })).toEqual([])
      expect(yield* saved.list({ projectID: "p1" })).toHaveLength(3)
      expect(yield* saved.list({ projectID: "unknown" })).toEqual([])
    }).pipe(Effect.provide(testLayer(engine))),
  )

  it.effect("duplicates by (project, action, resource) are ignored and keep the original row and id", () =>
    Effect.gen(function* () {
      const saved = yield* PermissionSaved.Service
      const sql = yield* SqlClient.SqlClient
      yield* project("p")
      yield* saved.add({ projectID: "p", action: "edit", resources: ["*"] })
      const [original] = yield* saved.list({ projectID: "p" })
      const [before] = yield* sql<{ time_created: number }>`SELECT time_created FROM permission`
      yield* saved.add({ projectID: "p", action: "edit", resources: ["*", "src/*"] })
      const rows = yield* saved.list({ projectID: "p" })
      expect(triples(rows)).toEqual(["p|edit|*", "p|edit|src/*"])
      expect(rows.find((r) => r.resource === "*")).toEqual(original)
      const [after] = yield* sql<{
        time_created: number
      }>`SELECT time_created FROM permission WHERE id = ${original!.id}`
      expect(after).toEqual(before)
      // same resource under another action or project is a different row
      yield* project("q")
      yield* saved.add({ projectID: "p", action: "read", resources: ["*"] })
      yield* saved.add({ projectID: "q", action: "edit", resources: ["*"] })
      expect(yield* saved.list()).toHaveLength(4)
    }).pipe(Effect.provide(testLayer(engine))),
  )

  it.effect("duplicates inside one batch are ignored; an empty batch is a no-op", () =>
    Effect.gen(function* () {
      const saved = yield* PermissionSaved.Service
      yield* project("p")
      yield* saved.add({ projectID: "p", action: "bash", resources: ["a", "b", "a", "b", "a"] })
      expect(triples(yield* saved.list())).toEqual(["p|bash|a", "p|bash|b"])
      yield* saved.add({ projectID: "p", action: "bash", resources: [] })
      // empty batch does not even need the project to exist
      yield* saved.add({ projectID: "no-such-project", action: "bash", resources: [] })
      expect(yield* saved.list()).toHaveLength(2)
    }).pipe(Effect.provide(testLayer(engine))),
  )

  it.effect("a large batch (beyond one statement's share) inserts every row once", () =>
    Effect.gen(function* () {
      const saved = yield* PermissionSaved.Service
      yield* project("p")
      const resources = Array.from({ length: 2500 }, (_, i) => `r${i % 2100}`)
      yield* saved.add({ projectID: "p", action: "read", resources })
      const rows = yield* saved.list({ projectID: "p" })
      expect(rows).toHaveLength(2100)
      expect(new Set(rows.map((r) => r.resource)).size).toBe(2100)
    }).pipe(Effect.provide(testLayer(engine))),
  )

  it.effect("a failed add is a typed Database.QueryError naming the database and the engine's error code", () =>
    Effect.gen(function* () {
      const saved = yield* PermissionSaved.Service
      // An unknown project violates the foreign key.
      const error = yield* Effect.flip(saved.add({ projectID: "missing", action: "read", resources: ["*"] }))
      expect(error._tag).toBe("Database.QueryError")
      if (engine.name === "sqlite") {
        expect(error.code).toBe("SQLITE_CONSTRAINT_FOREIGNKEY")
        expect(error.message).toBe(
          "database :memory:: Failed to execute statement: SQLITE_CONSTRAINT_FOREIGNKEY: FOREIGN KEY constraint failed",
        )
      } else {
        // Postgres: the SQLSTATE (23503 foreign_key_violation) and the URL the client was opened on.
        expect(error.code).toBe("23503")
        expect(error.message).toMatch(
          /^database postgres:\/\/toolgate@127\.0\.0\.1:\d+\/toolgate\?options=\S+: Failed to execute statement: 23503: insert or update on table "permission" violates foreign key constraint /,
        )
      }
      expect(yield* saved.list()).toEqual([])
    }).pipe(Effect.provide(testLayer(engine))),
  )

  it.effect("property: the stored set is the union of all batches and first-seen ids are stable", () =>
    Effect.gen(function* () {
      const saved = yield* PermissionSaved.Service
      const batch = FastCheck.record({
        action: FastCheck.constantFrom("read", "edit", "bash"),
        resources: FastCheck.array(FastCheck.constantFrom("*", "a", "b", "c d", "é", "*.env"), { maxLength: 6 }),
      })
      const cases = FastCheck.sample(FastCheck.array(batch, { maxLength: 8 }), { numRuns: 60, seed: 42 })
      let n = 0
      for (const batches of cases) {
        const projectID = `prop${n++}`
        yield* project(projectID)
        const firstIDs = new Map<string, string>()
        const expected = new Set<string>()
        for (const { action, resources } of batches) {
          yield* saved.add({ projectID, action, resources })
          for (const resource of resources) expected.add(`${projectID}|${action}|${resource}`)
          for (const row of yield* saved.list({ projectID })) {
            const key = `${row.projectID}|${row.action}|${row.resource}`
            expect(firstIDs.get(key) ?? row.id).toBe(row.id)
            firstIDs.set(key, row.id)
          }
        }
        expect(triples(yield* saved.list({ projectID }))).toEqual([...expected].sort())
      }
    }).pipe(Effect.provide(testLayer(engine))),
  )
})

Engines.describeEach("PermissionSaved: directory-limited rows", (engine) => {
  it.effect(
    "rows filed under a directory are listed only for exactly that directory; duplicates are per directory",
    () =>
      Effect.gen(function* () {
        const saved = yield* PermissionSaved.Service
        yield* project("global")
        yield* saved.add({ projectID: "global", directory: "/tmp/a", action: "edit", resources: ["*"] })
        yield* saved.add({ projectID: "global", directory: "/tmp/b", action: "edit", resources: ["*"] })
        yield* saved.add({ projectID: "global", directory: "/tmp/a", action: "edit", resources: ["*"] })
        yield* saved.add({ projectID: "global", action: "edit", resources: ["*"] })
        const a = yield* saved.list({ projectID: "global", directory: "/tmp/a" })
        expect(a.map((row) => [row.directory, row.action, row.resource])).toEqual([["/tmp/a", "edit", "*"]])
        expect(yield* saved.list({ projectID: "global", directory: "/tmp/a/sub" })).toEqual([])
        expect(yield* saved.list({ projectID: "global", directory: "/tmp" })).toEqual([])
        const shared = yield* saved.list({ projectID: "global", directory: "" })
        expect(shared.map((row) => row.directory)).toEqual([""])
        expect(yield* saved.list({ projectID: "global" })).toHaveLength(3)
      }).pipe(Effect.provide(testLayer(engine))),
  )
})
