/**
 * `PermissionSaved.changeStamp` on a database file reads the `data_version` of a second connection that does nothing
 * else; inside a transaction and on an in-memory database it queries the shared connection. Every kind of change the
 * permission views depend on must move it: writes through this connection, commits by another connection, commits
 * by another process, and uncommitted writes inside a transaction read from that transaction.
 */
import { spawnSync } from "node:child_process"
import { createRequire } from "node:module"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Database, Location, PermissionSaved, SessionV2 } from "../src/index.js"
import * as Children from "./support/children.js"
import * as Engines from "./support/engines.js"
import { tempDir } from "./support/location.js"
import { buildStack, fixture } from "./support/permission-stack.js"

/** better-sqlite3, as the SQLite client loads it (for the child process that writes with it directly). */
const betterSqlite3 = createRequire(createRequire(import.meta.url).resolve("@effect/sql-sqlite-node")).resolve(
  "better-sqlite3",
)

/** Runs `statement` in a separate node process on its own better-sqlite3 connection to `file`. */
const inOtherProcess = (file: string, statement: string) =>
  Effect.sync(() => {
    const script = `const D = require(process.argv[1]); const db = new D(process.argv[2], { timeout: 5000 }); db.prepare(process.argv[3]).run(); db.close()`
    const result = spawnSync(process.execPath, ["-e", script, betterSqlite3, file, statement], { encoding: "utf8" })
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
  })

const savedOn = (database: Layer.Layer<Database.Client>) => PermissionSaved.layer.pipe(Layer.provideMerge(database))

const withSaved = <A, E>(
  database: Layer.Layer<Database.Client>,
  body: Effect.Effect<A, E, PermissionSaved.Service | Database.Client>,
) => Effect.scoped(Effect.flatMap(Layer.build(savedOn(database)), (context) => Effect.provide(body, context)))

const dbFile = Effect.map(tempDir("toolgate-db-"), (dir) => path.join(dir, "toolgate.db"))

const where = { projectID: "proj", directory: "" }

/** The project row the saved rows of `where` refer to. */
const project = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`INSERT INTO project (id, worktree) VALUES (${where.projectID}, '/') ON CONFLICT DO NOTHING`,
)

describe("PermissionSaved.changeStamp", () => {
  it.scoped("on a file: the watcher's reading, moved by this connection, another connection and another process", () =>
    Effect.gen(function* () {
      const file = yield* dbFile
      yield* withSaved(
        Database.layerFile(file),
        Effect.gen(function* () {
          const saved = yield* PermissionSaved.Service
          const sql = yield* SqlClient.SqlClient
          yield* project
          const first = yield* saved.changeStamp
          expect(first.startsWith("w")).toBe(true)
          expect(yield* saved.changeStamp).toBe(first)

          yield* saved.add({ ...where, action: "read", resources: ["src/*"] })
          const afterAdd = yield* saved.changeStamp
          expect(afterAdd).not.toBe(first)
          expect(yield* saved.changeStamp).toBe(afterAdd)

          const [row] = yield* saved.list(where)
          yield* saved.remove(row!.id)
          const afterRemove = yield* saved.changeStamp
          expect(afterRemove).not.toBe(afterAdd)

          yield* sql`DELETE FROM permission`
          // Nothing was deleted, but a statement ran: the stamp may move; what matters is that a real change does.
          const quiet = yield* saved.changeStamp
          yield* withSaved(
            Database.layerFile(file),
            Effect.flatMap(PermissionSaved.Service, (other) =>
              other.add({ ...where, action: "read", resources: ["lib/*"] }),
            ),
          )
          const afterOther = yield* saved.changeStamp
          expect(afterOther).not.toBe(quiet)
          expect((yield* saved.list(where)).map((info) => info.resource)).toEqual(["lib/*"])

          yield* inOtherProcess(file, "DELETE FROM permission")
          const afterProcess = yield* saved.changeStamp
          expect(afterProcess).not.toBe(afterOther)
          expect(afterProcess.startsWith("w")).toBe(true)
          expect(yield* saved.list(where)).toEqual([])
        }),
      )
    }),
  )

  it.scoped("a relative file name: the watcher opens the file the shared connection has open", () =>
    Effect.gen(function* () {
      const file = yield* dbFile
      yield* withSaved(
        Database.layerFile(path.relative(process.cwd(), file)),
        Effect.gen(function* () {
          const saved = yield* PermissionSaved.Service
          yield* project
          const first = yield* saved.changeStamp
          expect(first.startsWith("w")).toBe(true)
          yield* inOtherProcess(file, "DELETE FROM project")
          expect(yield* saved.changeStamp).not.toBe(first)
        }),
      )
    }),
  )

  it.scoped("inside a transaction, its own uncommitted writes move the stamp", () =>
    Effect.gen(function* () {
      const file = yield* dbFile
      yield* withSaved(
        Database.layerFile(file),
        Effect.gen(function* () {
          const saved = yield* PermissionSaved.Service
          const sql = yield* SqlClient.SqlClient
          yield* project
          yield* sql.withTransaction(
            Effect.gen(function* () {
              const before = yield* saved.changeStamp
              yield* saved.add({ ...where, action: "read", resources: ["x/*"] })
              const inside = yield* saved.changeStamp
              expect(inside).not.toBe(before)
              yield* sql`DELETE FROM permission`
              expect(yield* saved.changeStamp).not.toBe(inside)
            }),
          )
        }),
      )
    }),
  )

  it.scoped("in memory: the query, moved by every write", () =>
    withSaved(
      Database.layerMemory,
      Effect.gen(function* () {
        const saved = yield* PermissionSaved.Service
        const sql = yield* SqlClient.SqlClient
        yield* project
        const first = yield* saved.changeStamp
        expect(first.startsWith("w")).toBe(false)
        expect(yield* saved.changeStamp).toBe(first)
        yield* saved.add({ ...where, action: "read", resources: ["src/*"] })
        const afterAdd = yield* saved.changeStamp
        expect(afterAdd).not.toBe(first)
        yield* sql`DELETE FROM permission`
        expect(yield* saved.changeStamp).not.toBe(afterAdd)
      }),
    ),
  )
})

/** A database other processes can open: a SQLite file or a Postgres URL. */
const open = (database: string) =>
  database.startsWith("postgres://") ? Database.layerUrl(database) : Database.layerFile(database)

/** `pg`, as the Postgres client loads it (for the child process that writes with it directly). */
const pgModule = createRequire(createRequire(import.meta.url).resolve("@effect/sql-pg")).resolve("pg")

/**
 * Runs `statement` in a separate plain node process on its own connection to `database` (better-sqlite3 or `pg`),
 * committed when it returns.
 */
const sqlInOtherProcess = (database: string, statement: string) =>
  database.startsWith("postgres://")
    ? Effect.sync(() => {
        const script = `const { Client } = require(process.argv[1]); const c = new Client({ connectionString: process.argv[2] });
c.connect().then(() => c.query(process.argv[3])).then(() => c.end()).catch((e) => { console.error(e); process.exit(1) })`
        const result = spawnSync(process.execPath, ["-e", script, pgModule, database, statement], { encoding: "utf8" })
        expect(result.stderr).toBe("")
        expect(result.status).toBe(0)
      })
    : inOtherProcess(database, statement)

/** Runs `database-child.ts` (the library's own layers) on `database` and waits until it committed and exited. */
const inChild = (database: string, command: "sql" | "revoke", argument: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const child = yield* Children.scoped(Children.fixture("database-child.ts"), [database, command, argument])
      const exit = yield* Children.exited(child)
      expect(exit.stderr).toBe("")
      expect(exit.code).toBe(0)
    }),
  )

Engines.describeEach("PermissionV2 on a database shared with other processes", (engine) => {
  it.scoped("a revoke and a session delete committed by another process are honoured by the next ask", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const database = yield* engine.shared(yield* tempDir("toolgate-db-"))
      const context = yield* buildStack(dir, open(database))
      yield* Effect.provide(
        Effect.gen(function* () {
          const f = yield* fixture
          const location = yield* Location.Service
          const base = { sessionID: "ses_test", action: "read", resources: ["src/a.ts"] } as const
          yield* f.sessions.create({ id: "ses_two", agent: "test" })
          const first = yield* f.permission.ask({ ...base, id: "per_1", save: ["src/*"] })
          expect(first.effect).toBe("ask")
          yield* f.permission.reply({ requestID: "per_1", reply: "always" })
          expect((yield* f.permission.ask({ ...base, id: "per_2" })).effect).toBe("allow")
          expect((yield* f.permission.ask({ ...base, id: "per_3", sessionID: "ses_two" })).effect).toBe("allow")

          yield* sqlInOtherProcess(database, `DELETE FROM permission WHERE project_id = '${location.project.id}'`)
          expect((yield* f.permission.ask({ ...base, id: "per_4" })).effect).toBe("ask")

          yield* sqlInOtherProcess(database, "DELETE FROM session WHERE id = 'ses_two'")
          const gone = yield* Effect.flip(f.permission.ask({ ...base, id: "per_5", sessionID: "ses_two" }))
          expect(gone).toBeInstanceOf(SessionV2.NotFoundError)
          expect((yield* f.permission.list()).map((request) => request.id)).toEqual(["per_4"])
        }),
        context,
      )
    }),
  )

  it.scoped("a revoke committed by another process (PermissionSaved.remove) is honoured by the very next ask", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const database = yield* engine.shared(yield* tempDir("toolgate-db-"))
      const context = yield* buildStack(dir, open(database))
      yield* Effect.provide(
        Effect.gen(function* () {
          const f = yield* fixture
          const saved = yield* PermissionSaved.Service
          const location = yield* Location.Service
          const base = { sessionID: "ses_test", action: "edit", resources: ["src/a.ts"] } as const
          expect((yield* f.permission.ask({ ...base, id: "per_r1", save: ["src/*"] })).effect).toBe("ask")
          yield* f.permission.reply({ requestID: "per_r1", reply: "always" })
          // The saved rule is in this process's view now: the next ask is allowed without a query of the rows.
          expect((yield* f.permission.ask({ ...base, id: "per_r2" })).effect).toBe("allow")
          const [row] = yield* saved.list({ projectID: location.project.id, directory: location.directory })
          expect(row?.resource).toBe("src/*")
          yield* inChild(database, "revoke", row!.id)
          // No waiting, no event: the very next ask after the other process committed asks again.
          expect((yield* f.permission.ask({ ...base, id: "per_r3" })).effect).toBe("ask")
          expect(yield* saved.list()).toEqual([])
        }),
        context,
      )
    }),
    120_000,
  )

  it.scoped("many asks and revokes interleaved: every ask sees the saved rows as they are", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const database = yield* engine.shared(yield* tempDir("toolgate-db-"))
      const context = yield* buildStack(dir, open(database))
      yield* Effect.provide(
        Effect.gen(function* () {
          const f = yield* fixture
          const saved = yield* PermissionSaved.Service
          const location = yield* Location.Service
          const scope = { projectID: location.project.id, directory: location.directory }
          // Fewer rounds on Postgres: each out-of-process revoke there starts a node process and a connection.
          const rounds = engine.name === "postgres" ? 10 : 30
          for (let i = 0; i < rounds; i++) {
            const resource = `d${i}/f.ts`
            const expectAsk = (id: string) =>
              Effect.map(
                f.permission.ask({ sessionID: "ses_test", action: "read", resources: [resource], id }),
                (result) => result.effect,
              )
            expect(yield* expectAsk(`per_a${i}`)).toBe("ask")
            yield* saved.add({ ...scope, action: "read", resources: [`d${i}/*`] })
            expect(yield* expectAsk(`per_b${i}`)).toBe("allow")
            const row = (yield* saved.list(scope)).find((info) => info.resource === `d${i}/*`)!
            if (i % 2 === 0) yield* saved.remove(row.id)
            else yield* sqlInOtherProcess(database, `DELETE FROM permission WHERE id = '${row.id}'`)
            expect(yield* expectAsk(`per_c${i}`)).toBe("ask")
          }
          expect((yield* f.permission.list()).length).toBe(rounds * 2)
        }),
        context,
      )
    }),
    120_000,
  )
})
