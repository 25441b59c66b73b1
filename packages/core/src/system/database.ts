/**
 * The database, on one of two engines. SQLite (the default): one `better-sqlite3` connection on `<data>/toolgate.db`
 * in WAL mode, with foreign keys enforced and a busy timeout. Postgres (`TOOLGATE_DATABASE_URL`, or `layerUrl`): a
 * pool through `@effect/sql-pg`, loaded only when chosen. Both are migrated on start by the same migrations; the
 * layers expose `SqlClient.SqlClient`, which every other module queries through. What differs between the engines
 * is in `internal/sql-dialect.ts`.
 *
 * Several processes may open the same file at once (two runners, a runner beside `toolgate mcp`): the busy timeout
 * is in force before the first statement that can take a lock, and migrations run under one write lock so exactly
 * one process applies them while the others wait. See docs/database.md.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Migrator from "@effect/sql/Migrator"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import projectSession from "./migrations/20260801000000_project_session.js"
import permission from "./migrations/20260801000100_permission.js"
import todo from "./migrations/20260801000200_todo.js"
import toolCall from "./migrations/20260801000300_tool_call.js"
import permissionDirectory from "./migrations/20260802000000_permission_directory.js"
import projectRoot from "./migrations/20260802000100_project_root.js"
import runnerOwner from "./migrations/20260803000000_runner_owner.js"
import permissionAnswer from "./migrations/20261202000000_permission_answer.js"
import decision from "./migrations/20261202000100_decision.js"
import changeCounter from "./migrations/20261202001000_change_counter.js"
import pendingAsk from "./migrations/20261203000000_pending_ask.js"
import * as DatabaseConfig from "./database-config.js"
import * as DatabaseError from "./database-error.js"
import * as Global from "./global.js"
import type { PoolOptions } from "./internal/database-postgres.js"
import * as SqlDialect from "./internal/sql-dialect.js"

/**
 * How long a statement waits for another process's write lock before failing with `SQLITE_BUSY`.
 *
 * @since 0.1.0
 * @category constants
 */
export const BUSY_TIMEOUT_MS = 5000

/**
 * The migrations, keyed `<yyyymmddhhmmss>_<name>`, applied in id order.
 *
 * @since 0.1.0
 * @category utilities
 */
export const migrations: Readonly<Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>> = {
  "20260801000000_project_session": projectSession,
  "20260801000100_permission": permission,
  "20260801000200_todo": todo,
  "20260801000300_tool_call": toolCall,
  "20260802000000_permission_directory": permissionDirectory,
  "20260802000100_project_root": projectRoot,
  "20260803000000_runner_owner": runnerOwner,
  "20261202000000_permission_answer": permissionAnswer,
  "20261202000100_decision": decision,
  "20261202001000_change_counter": changeCounter,
  "20261203000000_pending_ask": pendingAsk,
}

/**
 * The table whose row a process writes first inside the migration transaction. Writing it takes the database's
 * write lock before anything is read, so concurrent starts queue on the busy timeout instead of racing.
 *
 * @since 0.2.0
 * @category constants
 */
export const LOCK_TABLE = "toolgate_lock"

/**
 * What the database layers provide (`layerFile` also provides `SqliteClient.SqliteClient`).
 *
 * @since 0.1.0
 * @category models
 */
export type Client = SqlClient.SqlClient

/**
 * The environment variable naming a Postgres database (`postgres://user@host:port/db`); unset or empty: SQLite.
 *
 * @since 0.3.0
 * @category engines
 */
export const URL_VARIABLE = "TOOLGATE_DATABASE_URL"

export type {
  /** @since 0.3.0 */
  PoolOptions,
} from "./internal/database-postgres.js"

export {
  /** @since 0.2.0 */
  describe,
  /** @since 0.3.0 */
  filenameOf,
  /** @since 0.3.0 */
  mapQueryError,
  /** @since 0.3.0 */
  orDie,
  /** @since 0.3.0 */
  QueryError,
  /** @since 0.3.0 */
  queryError,
  /** @since 0.3.0 */
  sqliteCode,
  /** @since 0.3.0 */
  sqlState,
  /** @since 0.4.0 */
  verifyFile,
} from "./database-error.js"

/**
 * The database could not be opened, configured or migrated. `message` is one line naming the file and the
 * underlying SQLite code and message (for example `SQLITE_BUSY: database is locked`).
 *
 * @since 0.2.0
 * @category errors
 */
export class OpenError extends Schema.TaggedError<OpenError>()("Database.OpenError", {
  filename: Schema.String,
  message: Schema.String,
}) {}

/**
 * Why SQLite could not open `filename`, when the file system says more than `SQLITE_CANTOPEN` does: a directory in
 * its place, a missing or unwritable directory.
 */
const cannotOpenReason = (filename: string): string | undefined => {
  if (filename === ":memory:" || filename === "") return undefined
  try {
    if (fs.statSync(filename).isDirectory()) return "it is a directory"
  } catch {
    // Not there yet: SQLite would create it in its directory.
  }
  const directory = path.dirname(path.resolve(filename))
  try {
    fs.accessSync(directory, fs.constants.W_OK | fs.constants.X_OK)
  } catch (error) {
    const code = (error as { readonly code?: unknown }).code
    return code === "ENOENT"
      ? `the directory ${directory} does not exist`
      : `the directory ${directory} is not writable${typeof code === "string" ? `: ${code}` : ""}`
  }
  return undefined
}

/** The one-line `OpenError` for `filename` and a failure to open, configure or migrate it. */
const openError = (filename: string, error: unknown): OpenError => {
  const reason = DatabaseError.sqliteCode(error) === "SQLITE_CANTOPEN" ? cannotOpenReason(filename) : undefined
  return new OpenError({
    filename,
    message: `cannot open ${filename}: ${DatabaseError.describe(error)}${reason === undefined ? "" : ` (${reason})`}`,
  })
}

/**
 * Connection setup, in an order that cannot race another process: the busy timeout first (the client opens with
 * WAL disabled, so nothing before it takes a lock), then the switch to WAL (which needs an exclusive lock and so
 * waits on the timeout), then `synchronous = NORMAL` (durable at checkpoints; narrowing changes use `durably`) and
 * `foreign_keys`, which must be set outside a transaction. The client holds exactly one connection, so running the
 * pragmas once covers every statement.
 */
const configure = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  if (SqlDialect.of(sql).name !== "sqlite") return
  for (const pragma of [
    `busy_timeout = ${BUSY_TIMEOUT_MS}`,
    "journal_mode = WAL",
    "synchronous = NORMAL",
    "foreign_keys = ON",
  ]) {
    yield* sql
      .unsafe(`PRAGMA ${pragma}`)
      .pipe(Effect.mapError((error) => new Error(`PRAGMA ${pragma}`, { cause: error })))
  }
})

/** The migrator's table. */
const MIGRATIONS_TABLE = "effect_sql_migrations"

/** `@effect/sql`'s migrator, the same for both engines (no schema dumps). */
const runMigrator = Migrator.make({})

const latestMigration = Math.max(...Object.keys(migrations).map((key) => Number(key.slice(0, 14))))

/**
 * Runs the migrator inside one transaction whose first statement is a write, so the write lock is taken (waiting on
 * the busy timeout) before the migrator reads its table. A second process therefore waits for the first to commit
 * and then finds nothing to do. Without it, the migrator's own read-then-insert loses the race with `SQLITE_BUSY`,
 * reports "Migrations already running", and the process goes on before the tables exist.
 */
const migrate = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  if (SqlDialect.of(sql).name === "sqlite") {
    yield* sql
      .unsafe(
        `CREATE TABLE IF NOT EXISTS ${LOCK_TABLE} (name TEXT PRIMARY KEY NOT NULL, pid INTEGER NOT NULL, time_acquired INTEGER NOT NULL)`,
      )
      .pipe(Effect.mapError((error) => new Error(`creating ${LOCK_TABLE}`, { cause: error })))
  }
  yield* sql.withTransaction(
    Effect.gen(function* () {
      yield* SqlDialect.lockForMigration(sql, LOCK_TABLE, MIGRATIONS_TABLE)
      yield* runMigrator({ loader: Migrator.fromRecord(migrations), table: MIGRATIONS_TABLE }).pipe(
        Effect.mapError((error) => new Error("migrating", { cause: error })),
      )
      const [row] = yield* sql<{ latest: number | null }>`SELECT MAX(migration_id) AS latest FROM effect_sql_migrations`
      if ((row?.latest ?? 0) < latestMigration) {
        return yield* Effect.fail(new Error(`migrations stopped at ${row?.latest ?? 0}, expected ${latestMigration}`))
      }
    }),
  )
}).pipe(Effect.provide(NodeContext.layer))

/**
 * True iff `error` or one of its causes carries SQLite's "database is locked" code (`SQLITE_BUSY` or an extended
 * code of it, such as `SQLITE_BUSY_SNAPSHOT`) on its `code`. Only the code is read, never the message text: every
 * wrapper on the way (`SqlError`, `MigrationError`, the `Error`s of `configure` and `migrate`) keeps the driver's
 * error as its `cause`.
 *
 * @since 0.2.0
 * @category guards
 */
export const isBusy = (error: unknown): boolean => {
  const seen = new Set<unknown>()
  for (let current: unknown = error; current !== null && typeof current === "object" && !seen.has(current);) {
    seen.add(current)
    const record = current as { readonly code?: unknown; readonly cause?: unknown }
    if (typeof record.code === "string" && record.code.startsWith("SQLITE_BUSY")) return true
    current = record.cause
  }
  return false
}

/**
 * Opening is idempotent (pragmas, `CREATE … IF NOT EXISTS`, a migrator that skips what is applied), so a step that
 * SQLite refuses with `SQLITE_BUSY` without waiting on the busy timeout — it does so when a lock upgrade would
 * deadlock or a snapshot went stale, which several processes creating one new database can provoke — is simply
 * run again, with jitter, for up to about 20 seconds.
 */
const whileBusy = {
  while: isBusy,
  schedule: Schedule.jittered(Schedule.spaced("50 millis")).pipe(Schedule.intersect(Schedule.recurs(400))),
}

/**
 * A migrated database in `filename` (`:memory:` for a private in-memory one). A failure to open, configure or
 * migrate is a defect carrying an `OpenError` whose message names the file and the SQLite cause (and, for
 * `SQLITE_CANTOPEN`, what the file system says: a directory in its place, a missing or unwritable directory).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFile = (filename: string): Layer.Layer<Client | SqliteClient.SqliteClient> => {
  const ready = Layer.effectDiscard(
    Effect.zipRight(configure, migrate).pipe(
      Effect.retry(whileBusy),
      Effect.mapError((error) => openError(filename, error)),
      Effect.zipLeft(Effect.map(SqlClient.SqlClient, (client) => DatabaseError.remember(client, filename))),
    ),
  )
  // The client opens the file when it is built and throws if it cannot (a directory in its place, no permission).
  const client = SqliteClient.layer({ filename, disableWAL: true }).pipe(
    Layer.catchAllCause((cause) => Layer.die(openError(filename, Cause.squash(cause)))),
  )
  return ready.pipe(Layer.provideMerge(client), Layer.orDie)
}

/**
 * A migrated Postgres database at `url` (`postgres://user:password@host:port/database`), through a pool. The
 * Postgres driver is loaded when the layer is built, not before. A failure to connect or migrate is a defect
 * carrying an `OpenError` naming the URL (its password replaced by `***`) and the cause with its SQLSTATE.
 *
 * @since 0.3.0
 * @category engines
 */
export const layerUrl = (url: string, pool: PoolOptions = {}): Layer.Layer<Client> =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.promise(() => import("./internal/database-postgres.js")),
      (Postgres) => {
        const shown = Postgres.redact(url)
        const ready = Layer.effectDiscard(
          migrate.pipe(
            Effect.mapError((error) => openError(shown, error)),
            Effect.zipLeft(Effect.map(SqlClient.SqlClient, (client) => DatabaseError.remember(client, shown))),
          ),
        )
        const client = Postgres.layer(url, pool).pipe(
          Layer.catchAllCause((cause) => Layer.die(openError(shown, Cause.squash(cause)))),
        )
        return ready.pipe(Layer.provideMerge(client), Layer.orDie)
      },
    ),
  )

/**
 * The engine `env` chooses: Postgres at `TOOLGATE_DATABASE_URL` when it is set and not empty, otherwise `undefined`
 * (SQLite).
 *
 * @since 0.3.0
 * @category engines
 */
export const urlFromEnvironment = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const url = env[URL_VARIABLE]?.trim()
  return url === undefined || url === "" ? undefined : url
}

/**
 * The process-wide database: Postgres when `TOOLGATE_DATABASE_URL` or `database.url` of the user's configuration
 * file names one (the variable wins; `database.pool` sets the pool, see `DatabaseConfig`), otherwise SQLite at
 * `Global.database(global)` (creating the data directory). An invalid `database` section is a defect carrying
 * `DatabaseConfig.InvalidError` naming the file and the field.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Client, never, Global.Service> = Layer.unwrapEffect(
  Effect.gen(function* () {
    const global = yield* Global.Service
    const { url, pool } = yield* DatabaseConfig.choose(global, urlFromEnvironment())
    if (url !== undefined) return layerUrl(url, pool)
    const filename = Global.database(global)
    yield* Effect.try({
      try: () => fs.mkdirSync(path.dirname(filename), { recursive: true }),
      catch: (error) =>
        new OpenError({
          filename,
          message: `cannot open ${filename}: cannot create its directory: ${DatabaseError.describe(error)}`,
        }),
    }).pipe(Effect.orDie)
    return layerFile(filename)
  }),
)

/**
 * A fresh, migrated in-memory database per build; for tests.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<Client | SqliteClient.SqliteClient> = layerFile(":memory:")

/** Durable sections of one client run one at a time (they switch the connection's `synchronous` level). */
const durableLocks = new WeakMap<SqlClient.SqlClient, Effect.Semaphore>()

const durableLock = (sql: SqlClient.SqlClient): Effect.Semaphore => {
  let lock = durableLocks.get(sql)
  if (lock === undefined) {
    lock = Effect.unsafeMakeSemaphore(1)
    durableLocks.set(sql, lock)
  }
  return lock
}

/**
 * The `synchronous` level `durably` commits with (`PRAGMA synchronous` reads it as 2).
 *
 * @since 0.1.0
 * @category constants
 */
export const DURABLE_SYNCHRONOUS = 2

/**
 * Runs `effect` in a transaction committed with `synchronous = FULL`: when it returns, the change is in the fsynced
 * WAL and survives power loss, not only a crash of the process. For changes that narrow what is allowed (a revoke):
 * losing one would silently bring an approval back. SQLite refuses to change the level inside a transaction, so it
 * is raised before `BEGIN` and lowered again after the commit; the level in force is read back inside the
 * transaction, recorded on the span as `db.synchronous`, and anything but FULL is a defect. Start the effect with a
 * write, not a read, so the write lock is taken on the busy timeout. On Postgres the transaction runs with
 * `SET LOCAL synchronous_commit = on` (the WAL flushed before the commit returns, whatever the server's default),
 * read back the same way (`db.synchronous` = `on`).
 *
 * @since 0.2.0
 * @category utilities
 */
export const durably = <A, E, R>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E | SqlError.SqlError, R> =>
  (SqlDialect.of(sql).name === "pg" ? durablyPg(sql, effect) : durablySqlite(sql, effect)).pipe(
    Effect.withSpan("Database.durably"),
  )

/** SQLite: `synchronous = FULL` around the transaction (it cannot change inside one). */
const durablySqlite = <A, E, R>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E | SqlError.SqlError, R> =>
  durableLock(sql).withPermits(1)(
    Effect.acquireUseRelease(
      sql.unsafe("PRAGMA synchronous = FULL"),
      () =>
        Effect.gen(function* () {
          const [value, level] = yield* sql.withTransaction(
            Effect.zip(
              effect,
              Effect.map(sql<{ synchronous: number }>`PRAGMA synchronous`, ([row]) => row?.synchronous),
            ),
          )
          yield* Effect.annotateCurrentSpan("db.synchronous", level)
          if (level !== DURABLE_SYNCHRONOUS) {
            return yield* Effect.dieMessage(`durable commit with synchronous = ${level}`)
          }
          return value
        }),
      () => Effect.orDie(sql.unsafe("PRAGMA synchronous = NORMAL")),
    ),
  )

/**
 * Postgres: `synchronous_commit = on` for this transaction only (`SET LOCAL`), so the commit returns once the WAL
 * record is flushed to disk whatever the server's or role's default; read back inside the transaction.
 */
const durablyPg = <A, E, R>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E | SqlError.SqlError, R> =>
  Effect.gen(function* () {
    const [value, level] = yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* sql.unsafe("SET LOCAL synchronous_commit = on")
        const value = yield* effect
        const [row] = yield* sql<{ level: string }>`SELECT current_setting('synchronous_commit') AS level`
        return [value, row?.level] as const
      }),
    )
    yield* Effect.annotateCurrentSpan("db.synchronous", level)
    if (level !== "on") return yield* Effect.dieMessage(`durable commit with synchronous_commit = ${level}`)
    return value
  })
