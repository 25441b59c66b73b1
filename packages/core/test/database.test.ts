import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { Database, Global } from "../src/index.js"
import { tempDir } from "./support/location.js"

interface Column {
  readonly name: string
  readonly type: string
  readonly notnull: number
  readonly pk: number
}

const columns = (table: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<Column>`SELECT name, type, "notnull", pk FROM pragma_table_info(${table}) ORDER BY cid`,
  ).pipe(Effect.map((rows) => rows.map((c) => ({ name: c.name, type: c.type, notnull: c.notnull, pk: c.pk }))))

const foreignKeys = (table: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ table: string; from: string; to: string; on_delete: string }>`
      SELECT "table", "from", "to", on_delete FROM pragma_foreign_key_list(${table})`,
  )

const indexes = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql<{
        name: string
        unique: number
        origin: string
      }>`SELECT name, "unique", origin FROM pragma_index_list(${table})`,
      (list) =>
        Effect.forEach(list, (index) =>
          Effect.map(
            sql<{ name: string }>`SELECT name FROM pragma_index_info(${index.name}) ORDER BY seqno`,
            (cols) => ({
              name: index.name,
              unique: index.unique,
              origin: index.origin,
              columns: cols.map((c) => c.name),
            }),
          ),
        ),
    ),
  )

const createSql = (table: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ${table}`,
  ).pipe(Effect.map((rows) => rows[0]?.sql ?? ""))

describe("default paths", () => {
  it("uses XDG_DATA_HOME / XDG_CONFIG_HOME when set", () => {
    const global = Global.fromEnvironment({
      HOME: "/home/u",
      XDG_DATA_HOME: "/xdg/data",
      XDG_CONFIG_HOME: "/xdg/config",
    })
    expect(global.data).toBe(path.join("/xdg/data", "toolgate"))
    expect(global.config).toBe(path.join("/xdg/config", "toolgate"))
    expect(global.tmp).toBe(path.join(os.tmpdir(), "toolgate"))
    expect(Global.database(global)).toBe(path.join("/xdg/data", "toolgate", "toolgate.db"))
    expect(Global.toolOutput(global)).toBe(path.join("/xdg/data", "toolgate", "tool-output"))
  })

  it("falls back to ~/.local/share and ~/.config", () => {
    const global = Global.fromEnvironment({ HOME: "/home/u" })
    expect(global.data).toBe(path.join("/home/u", ".local", "share", "toolgate"))
    expect(global.config).toBe(path.join("/home/u", ".config", "toolgate"))
    expect(global.home).toBe("/home/u")
    expect(Global.database(global)).toBe(path.join("/home/u", ".local", "share", "toolgate", "toolgate.db"))
  })

  it.effect("Global.layerWith overrides every path, and the database follows the data dir", () =>
    Effect.gen(function* () {
      const global = yield* Global.Service
      expect(global).toEqual({ data: "/d", config: "/c", tmp: "/t", home: "/h" })
      expect(Global.database(global)).toBe(path.join("/d", "toolgate.db"))
    }).pipe(Effect.provide(Global.layerWith({ data: "/d", config: "/c", tmp: "/t", home: "/h" }))),
  )
})

describe("Database.layer (file)", () => {
  it.scoped(
    "creates the data dir and <data>/toolgate.db in WAL mode, synchronous NORMAL, foreign keys, busy timeout",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir()
        const data = path.join(root, "nested", "data")
        const pragmas = yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const [journal] = yield* sql<{ journal_mode: string }>`PRAGMA journal_mode`
          const [fk] = yield* sql<{ foreign_keys: number }>`PRAGMA foreign_keys`
          const [busy] = yield* sql<{ timeout: number }>`PRAGMA busy_timeout`
          const [sync] = yield* sql<{ synchronous: number }>`PRAGMA synchronous`
          return { journal: journal?.journal_mode, fk: fk?.foreign_keys, busy: busy?.timeout, sync: sync?.synchronous }
        }).pipe(Effect.provide(Database.layer.pipe(Layer.provide(Global.layerWith({ data })))))
        expect(pragmas).toEqual({ journal: "wal", fk: 1, busy: Database.BUSY_TIMEOUT_MS, sync: 1 })
        expect(fs.existsSync(path.join(data, "toolgate.db"))).toBe(true)
      }),
  )

  it.scoped("migrates once: a second open keeps the data and records each migration by name", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const layer = Database.layer.pipe(Layer.provide(Global.layerWith({ data: root })))
      yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`INSERT INTO project (id, worktree) VALUES ('p', '/')`,
      ).pipe(Effect.provide(layer))
      const [projects, migrations] = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.all([
          sql<{ id: string }>`SELECT id FROM project`,
          sql<{
            migration_id: number
            name: string
          }>`SELECT migration_id, name FROM effect_sql_migrations ORDER BY migration_id`,
        ]),
      ).pipe(Effect.provide(layer))
      expect(projects.map((p) => p.id)).toEqual(["p"])
      expect(migrations.map((m) => `${m.migration_id}_${m.name}`)).toEqual(Object.keys(Database.migrations).sort())
      for (const name of Object.keys(Database.migrations)) expect(name).toMatch(/^\d{14}_[a-z_]+$/)
    }),
  )
})

describe("schema", () => {
  it.effect("permission: columns, foreign key, unique index", () =>
    Effect.gen(function* () {
      expect(yield* columns("permission")).toEqual([
        { name: "id", type: "TEXT", notnull: 1, pk: 1 },
        { name: "project_id", type: "TEXT", notnull: 1, pk: 0 },
        { name: "action", type: "TEXT", notnull: 1, pk: 0 },
        { name: "resource", type: "TEXT", notnull: 1, pk: 0 },
        { name: "time_created", type: "INTEGER", notnull: 1, pk: 0 },
        { name: "time_updated", type: "INTEGER", notnull: 1, pk: 0 },
        // per-directory approvals of the `global` project (docs/trust/approvals.md)
        { name: "directory", type: "TEXT", notnull: 1, pk: 0 },
        // who answered, through which channel, until when (docs/approvals.md)
        { name: "answered_by", type: "TEXT", notnull: 0, pk: 0 },
        { name: "channel", type: "TEXT", notnull: 0, pk: 0 },
        { name: "time_until", type: "INTEGER", notnull: 0, pk: 0 },
      ])
      expect(yield* foreignKeys("permission")).toEqual([
        { table: "project", from: "project_id", to: "id", on_delete: "CASCADE" },
      ])
      expect(yield* createSql("permission")).toContain("CONSTRAINT fk_permission_project_id_project_id_fk FOREIGN KEY")
      const unique = (yield* indexes("permission")).find(
        (i) => i.name === "permission_project_directory_action_resource_idx",
      )
      expect(unique).toEqual({
        name: "permission_project_directory_action_resource_idx",
        unique: 1,
        origin: "c",
        columns: ["project_id", "directory", "action", "resource"],
      })
    }).pipe(Effect.provide(Database.layerMemory)),
  )

  it.effect("project, session and todo", () =>
    Effect.gen(function* () {
      expect(yield* columns("project")).toEqual([
        { name: "id", type: "TEXT", notnull: 1, pk: 1 },
        { name: "worktree", type: "TEXT", notnull: 1, pk: 0 },
        { name: "time_created", type: "INTEGER", notnull: 1, pk: 0 },
        { name: "time_updated", type: "INTEGER", notnull: 1, pk: 0 },
        // the root commit an id was first seen with (docs/trust/approvals.md)
        { name: "root_commit", type: "TEXT", notnull: 0, pk: 0 },
      ])
      expect(yield* columns("session")).toEqual([
        { name: "id", type: "TEXT", notnull: 1, pk: 1 },
        { name: "project_id", type: "TEXT", notnull: 1, pk: 0 },
        { name: "directory", type: "TEXT", notnull: 1, pk: 0 },
        { name: "agent", type: "TEXT", notnull: 0, pk: 0 },
        { name: "time_created", type: "INTEGER", notnull: 1, pk: 0 },
        { name: "time_updated", type: "INTEGER", notnull: 1, pk: 0 },
      ])
      expect(yield* foreignKeys("session")).toEqual([
        { table: "project", from: "project_id", to: "id", on_delete: "CASCADE" },
      ])
      expect((yield* indexes("session")).find((i) => i.name === "session_project_idx")).toMatchObject({
        unique: 0,
        columns: ["project_id"],
      })
      expect(yield* columns("todo")).toEqual([
        { name: "session_id", type: "TEXT", notnull: 1, pk: 1 },
        { name: "content", type: "TEXT", notnull: 1, pk: 0 },
        { name: "status", type: "TEXT", notnull: 1, pk: 0 },
        { name: "priority", type: "TEXT", notnull: 1, pk: 0 },
        { name: "position", type: "INTEGER", notnull: 1, pk: 2 },
        { name: "time_created", type: "INTEGER", notnull: 1, pk: 0 },
        { name: "time_updated", type: "INTEGER", notnull: 1, pk: 0 },
      ])
      expect(yield* foreignKeys("todo")).toEqual([
        { table: "session", from: "session_id", to: "id", on_delete: "CASCADE" },
      ])
      expect((yield* indexes("todo")).find((i) => i.name === "todo_session_idx")).toMatchObject({
        unique: 0,
        columns: ["session_id"],
      })
    }).pipe(Effect.provide(Database.layerMemory)),
  )

  it.effect("deleting a project cascades to its saved approvals, sessions and their todos", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO project (id, worktree) VALUES ('p1', '/a'), ('p2', '/b')`
      yield* sql`INSERT INTO permission (id, project_id, action, resource) VALUES
        ('psv_1', 'p1', 'read', '*'), ('psv_2', 'p1', 'bash', 'ls'), ('psv_3', 'p2', 'read', '*')`
      yield* sql`INSERT INTO session (id, project_id, directory) VALUES ('ses_1', 'p1', '/a')`
      yield* sql`INSERT INTO todo (session_id, content, status, priority, position) VALUES ('ses_1', 'x', 'pending', 'high', 0)`
      yield* sql`DELETE FROM project WHERE id = 'p1'`
      expect((yield* sql<{ id: string }>`SELECT id FROM permission ORDER BY id`).map((r) => r.id)).toEqual(["psv_3"])
      expect(yield* sql`SELECT id FROM session`).toEqual([])
      expect(yield* sql`SELECT session_id FROM todo`).toEqual([])
    }).pipe(Effect.provide(Database.layerMemory)),
  )

  it.effect("foreign keys and the unique index are enforced; time columns default to now in ms", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const orphan = yield* Effect.exit(
        sql`INSERT INTO permission (id, project_id, action, resource) VALUES ('psv_x', 'nope', 'read', '*')`,
      )
      expect(Exit.isFailure(orphan)).toBe(true)
      const before = Date.now()
      yield* sql`INSERT INTO project (id, worktree) VALUES ('p', '/')`
      yield* sql`INSERT INTO permission (id, project_id, action, resource) VALUES ('psv_1', 'p', 'read', '*')`
      const duplicate = yield* Effect.exit(
        sql`INSERT INTO permission (id, project_id, action, resource) VALUES ('psv_2', 'p', 'read', '*')`,
      )
      expect(Exit.isFailure(duplicate)).toBe(true)
      const [row] = yield* sql<{
        time_created: number
        time_updated: number
      }>`SELECT time_created, time_updated FROM permission`
      expect(Number.isInteger(row?.time_created)).toBe(true)
      expect(row!.time_created).toBeGreaterThanOrEqual(before - 1000)
      expect(row!.time_created).toBeLessThanOrEqual(Date.now() + 1000)
    }).pipe(Effect.provide(Database.layerMemory)),
  )
})

describe("opening and migrating under contention", () => {
  it.scoped("the migration lock row records the process that last migrated", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const rows = yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ name: string; pid: number }>`SELECT name, pid FROM ${sql(Database.LOCK_TABLE)}`,
      ).pipe(Effect.provide(Database.layerFile(path.join(root, "toolgate.db"))))
      expect(rows).toEqual([{ name: "migrations", pid: process.pid }])
    }),
  )

  it.scoped("a file that is not a database dies with a one-line OpenError naming the file and the SQLite code", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const file = path.join(root, "toolgate.db")
      fs.writeFileSync(file, "this is not a database, just some text that is long enough to fill a header page")
      const exit = yield* Effect.exit(Effect.provide(Effect.void, Database.layerFile(file)))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        const defect = Cause.squash(exit.cause)
        expect(defect).toBeInstanceOf(Database.OpenError)
        const message = (defect as Database.OpenError).message
        expect(message).toContain(file)
        expect(message).toContain("SQLITE_NOTADB")
        expect(message).not.toContain("\n")
      }
    }),
  )
})

describe("Database.describe", () => {
  it("joins an error's cause chain in one line with the SQLite codes", () => {
    const sqlite = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" })
    const wrapped = new Error("Failed to prepare statement ", { cause: sqlite })
    expect(Database.describe(wrapped)).toBe("Failed to prepare statement: SQLITE_BUSY: database is locked")
    expect(Database.describe(new Error("line one\nline two"))).toBe("line one line two")
    expect(Database.describe("plain")).toBe("plain")
    const node = Object.assign(new Error("EACCES: permission denied, open '/x'"), { code: "EACCES" })
    expect(Database.describe(node)).toBe("EACCES: permission denied, open '/x'")
  })
})

describe("Database.durably", () => {
  const level = Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ synchronous: number }>`PRAGMA synchronous`, ([row]) => row?.synchronous),
  )

  it.scoped("commits with synchronous = FULL and puts the connection back to NORMAL", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* level).toBe(1)
        const inside = yield* Database.durably(
          sql,
          Effect.zipRight(sql`INSERT INTO project (id, worktree) VALUES ('p', '/')`, level),
        )
        expect(inside).toBe(Database.DURABLE_SYNCHRONOUS)
        expect(yield* level).toBe(1)
        expect(yield* sql`SELECT id FROM project`).toEqual([{ id: "p" }])
      }).pipe(Effect.provide(Database.layerFile(path.join(root, "toolgate.db"))))
    }),
  )

  it.effect("a failing effect rolls back and still puts the connection back to NORMAL", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const exit = yield* Effect.exit(
        Database.durably(
          sql,
          Effect.zipRight(sql`INSERT INTO project (id, worktree) VALUES ('p', '/')`, Effect.fail("nope" as const)),
        ),
      )
      expect(exit).toEqual(Exit.fail("nope"))
      expect(yield* level).toBe(1)
      expect(yield* sql`SELECT id FROM project`).toEqual([])
    }).pipe(Effect.provide(Database.layerMemory)),
  )

  it.effect("concurrent durable sections each commit under FULL", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const levels = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i) => i),
        (i) =>
          Database.durably(
            sql,
            Effect.zipRight(
              sql`INSERT INTO project (id, worktree) VALUES (${`p${i}`}, '/')`,
              Effect.zipRight(Effect.yieldNow(), level),
            ),
          ),
        { concurrency: "unbounded" },
      )
      expect(levels).toEqual(Array.from({ length: 8 }, () => Database.DURABLE_SYNCHRONOUS))
      expect(yield* level).toBe(1)
    }).pipe(Effect.provide(Database.layerMemory)),
  )
})

describe("Database.isBusy", () => {
  it("recognises SQLITE_BUSY and its extended codes on `code` anywhere in the cause chain, and nothing else", () => {
    const sqlite = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY_SNAPSHOT" })
    expect(Database.isBusy(new Error("Failed to execute statement", { cause: sqlite }))).toBe(true)
    expect(Database.isBusy({ message: "x", cause: { code: "SQLITE_BUSY" } })).toBe(true)
    // The message text is never read: only a code says what happened.
    expect(Database.isBusy(new Error("PRAGMA journal_mode = WAL: SQLITE_BUSY: database is locked"))).toBe(false)
    expect(Database.isBusy(new Error("PRAGMA journal_mode = WAL", { cause: { code: "SQLITE_BUSY" } }))).toBe(true)
    expect(Database.isBusy(Object.assign(new Error("file is not a database"), { code: "SQLITE_NOTADB" }))).toBe(false)
    expect(Database.isBusy("SQLITE_BUSY as a plain string is not an error")).toBe(false)
  })
})
