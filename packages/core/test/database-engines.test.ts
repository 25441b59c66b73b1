/**
 * The engine choice and what only Postgres does: `TOOLGATE_DATABASE_URL` chooses Postgres for `Database.layer`;
 * concurrent starts migrate once under the advisory lock; the change counter moves with every change to a watched
 * table by any connection (and only then); `Database.durably` refuses a commit without `synchronous_commit = on`.
 */
import * as fs from "node:fs"
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { Database, Global, PermissionSaved } from "../src/index.js"
import * as Engines from "./support/engines.js"
import { tempDir } from "./support/location.js"

it("urlFromEnvironment: unset, empty or blank is SQLite; a value is trimmed", () => {
  expect(Database.urlFromEnvironment({})).toBeUndefined()
  expect(Database.urlFromEnvironment({ TOOLGATE_DATABASE_URL: "" })).toBeUndefined()
  expect(Database.urlFromEnvironment({ TOOLGATE_DATABASE_URL: "  " })).toBeUndefined()
  expect(Database.urlFromEnvironment({ TOOLGATE_DATABASE_URL: " postgres://u@h/db " })).toBe("postgres://u@h/db")
})

const dialect = Effect.map(SqlClient.SqlClient, (sql) => sql.onDialectOrElse({ pg: () => "pg", orElse: () => "other" }))

Engines.describeEach(
  "Postgres engine",
  (engine) => {
    it.scoped("Database.layer opens the database TOOLGATE_DATABASE_URL names and creates no SQLite file", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const data = yield* tempDir()
        const before = process.env[Database.URL_VARIABLE]
        process.env[Database.URL_VARIABLE] = url
        const built = yield* Effect.exit(
          Effect.provide(dialect, Database.layer.pipe(Layer.provide(Global.layerWith({ data })))),
        )
        if (before === undefined) delete process.env[Database.URL_VARIABLE]
        else process.env[Database.URL_VARIABLE] = before
        expect(built).toEqual(Exit.succeed("pg"))
        expect(fs.readdirSync(data)).toEqual([])
      }),
    )

    it.scoped("six processes' worth of concurrent starts on a new database migrate exactly once", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const scope = yield* Effect.scope
        const contexts = yield* Effect.all(
          Array.from({ length: 6 }, () => Layer.buildWithScope(Database.layerUrl(url), scope)),
          { concurrency: "unbounded" },
        )
        const sql = Layer.succeedContext(contexts[0]!)
        const rows = yield* Effect.provide(
          Effect.flatMap(SqlClient.SqlClient, (client) => client<{ migration_id: number }>`SELECT migration_id FROM effect_sql_migrations`),
          sql,
        )
        expect(rows.map((row) => `${row.migration_id}`).sort()).toEqual(
          Object.keys(Database.migrations).map((key) => key.slice(0, 14)).sort(),
        )
      }),
    )

    it.scoped("the change stamp moves with every change to permission or session, by any connection, and only then", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const scope = yield* Effect.scope
        const mine = yield* Layer.buildWithScope(PermissionSaved.layer.pipe(Layer.provideMerge(Database.layerUrl(url))), scope)
        const other = yield* Layer.buildWithScope(Database.layerUrl(url), scope)
        const stamp = Effect.flatMap(PermissionSaved.Service, (saved) => saved.changeStamp).pipe(Effect.provide(mine))
        const run = (context: typeof other, statement: string) =>
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(Effect.provide(context))
        const seen = new Set([yield* stamp])
        const moves = function* (statement: string, context: typeof other) {
          yield* run(context, statement)
          const now = yield* stamp
          expect(seen.has(now)).toBe(false)
          seen.add(now)
        }
        yield* Effect.gen(function* () {
          yield* moves("INSERT INTO project (id, worktree) VALUES ('p', '/'); INSERT INTO permission (id, project_id, action, resource) VALUES ('a', 'p', 'read', '*')", other)
          yield* moves("UPDATE permission SET resource = 'x' WHERE id = 'a'", other)
          yield* moves("INSERT INTO session (id, project_id, directory) VALUES ('ses_1', 'p', '/')", mine)
          yield* moves("DELETE FROM session", other)
          yield* moves("DELETE FROM permission", other)
          yield* moves("TRUNCATE permission", other)
        })
        // Writes elsewhere leave it alone (the call journal is not watched).
        const before = yield* stamp
        yield* run(other, "INSERT INTO runner_owner (id, pid, hostname, lease_expires) VALUES ('own_1', 1, 'h', 0)")
        expect(yield* stamp).toBe(before)
        // A rolled-back change leaves it alone too.
        const rolledBack = yield* Effect.exit(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql.withTransaction(Effect.zipRight(sql`DELETE FROM project`, Effect.fail("undo" as const))),
          ).pipe(Effect.provide(other)),
        )
        expect(Exit.isFailure(rolledBack)).toBe(true)
        expect(yield* stamp).toBe(before)
      }),
    )

    it.scoped("durably commits with synchronous_commit = on; a transaction that turned it off is a defect, as on SQLite", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const context = yield* Layer.build(Database.layerUrl(url))
        yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const level = Effect.map(
            sql<{ level: string }>`SELECT current_setting('synchronous_commit') AS level`,
            ([row]) => row?.level,
          )
          const inside = yield* Database.durably(
            sql,
            Effect.zipRight(sql`INSERT INTO project (id, worktree) VALUES ('p', '/')`, level),
          )
          expect(inside).toBe("on")
          const weakened = yield* Effect.exit(
            Database.durably(
              sql,
              Effect.zipRight(sql`DELETE FROM project`, sql.unsafe("SET LOCAL synchronous_commit = off")),
            ),
          )
          // The level is checked after the commit, as on SQLite: the change stands, and the caller learns that it
          // was not committed durably.
          expect(Exit.isFailure(weakened) && Cause.isDie(weakened.cause)).toBe(true)
          if (Exit.isFailure(weakened)) {
            expect(Cause.pretty(weakened.cause)).toContain("durable commit with synchronous_commit = off")
          }
        }).pipe(Effect.provide(context))
      }),
    )
  },
  Engines.postgresOnly,
)
