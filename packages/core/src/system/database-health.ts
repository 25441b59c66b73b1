/**
 * Operating the database: `check` connects to the chosen database WITHOUT migrating it (`Database.layer` migrates
 * on open and dies when it cannot) and says whether it is reachable and migrated as far as this version expects;
 * `migrate` applies what is missing and says what it applied. `toolgate db check` and `toolgate db migrate` print
 * them. The database is named as `Database` names it everywhere: the SQLite file, or the Postgres URL with its
 * password replaced by `***`. See docs/database.md.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Database from "./database.js"
import type * as DatabaseConfig from "./database-config.js"
import * as DatabaseError from "./database-error.js"
import * as Global from "./global.js"
import * as SqlDialect from "./internal/sql-dialect.js"

/**
 * The database could not be reached: no connection (Postgres), no file or not a database (SQLite), or reading the
 * migrations table failed. `message` is one line: the database and the cause.
 *
 * @since 0.3.0
 * @category errors
 */
export class UnreachableError extends Schema.TaggedError<UnreachableError>()("DatabaseHealth.UnreachableError", {
  database: Schema.String,
  message: Schema.String,
}) {}

/**
 * The engine of a choice.
 *
 * @since 0.3.0
 * @category models
 */
export type Engine = "sqlite" | "postgres"

/**
 * Where a choice points: the engine, the database as shown (the file, or the URL with `***` for its password) and
 * where the choice came from (`TOOLGATE_DATABASE_URL`, a configuration file, or `default` for `<data>/toolgate.db`).
 *
 * @since 0.3.0
 * @category models
 */
export interface Target {
  readonly engine: Engine
  readonly database: string
  readonly source: string
}

/**
 * What `check` found. `healthy` iff the database is reachable and every migration this version knows is recorded
 * (`missing` is empty); `latestApplied` and `expected` are migration names (`<yyyymmddhhmmss>_<name>`), `null` when
 * nothing is applied. `cause` is one line when it is not healthy.
 *
 * @since 0.3.0
 * @category models
 */
export interface Report extends Target {
  readonly reachable: boolean
  readonly latestApplied: string | null
  readonly expected: string
  readonly missing: ReadonlyArray<string>
  readonly healthy: boolean
  readonly cause?: string
}

/**
 * What `migrate` did: the migrations it applied (in order; empty when the database was up to date) and the latest
 * one recorded afterwards.
 *
 * @since 0.3.0
 * @category models
 */
export interface Migrated extends Target {
  readonly applied: ReadonlyArray<string>
  readonly latest: string | null
}

/**
 * The migrations this version knows, in id order.
 *
 * @since 0.3.0
 * @category constants
 */
export const KNOWN: ReadonlyArray<string> = Object.keys(Database.migrations).sort()

const EXPECTED = KNOWN.at(-1)!

const redact = (url: string): Effect.Effect<string> =>
  Effect.map(
    Effect.promise(() => import("./internal/database-postgres.js")),
    (Postgres) => Postgres.redact(url),
  )

/**
 * The target of `choice`, with the SQLite file of `global` when it names no URL.
 *
 * @since 0.3.0
 * @category utilities
 */
export const target = (global: Global.Interface, choice: DatabaseConfig.Choice): Effect.Effect<Target> =>
  choice.url === undefined
    ? Effect.succeed({ engine: "sqlite", database: Global.database(global), source: "default" })
    : Effect.map(redact(choice.url), (database) => ({
        engine: "postgres",
        database,
        source: choice.source ?? "TOOLGATE_DATABASE_URL",
      }))

/** A client on the chosen database that neither creates, configures nor migrates anything. */
const connect = (
  global: Global.Interface,
  choice: DatabaseConfig.Choice,
  shown: string,
): Layer.Layer<SqlClient.SqlClient, UnreachableError> => {
  const unreachable = (error: unknown) =>
    new UnreachableError({ database: shown, message: `cannot reach ${shown}: ${DatabaseError.describe(error)}` })
  if (choice.url !== undefined) {
    const url = choice.url
    return Layer.unwrapEffect(
      Effect.map(
        Effect.promise(() => import("./internal/database-postgres.js")),
        (Postgres) => Postgres.layer(url, { ...choice.pool, maxConnections: 1 }).pipe(Layer.mapError(unreachable)),
      ),
    )
  }
  const filename = Global.database(global)
  return Layer.unwrapEffect(
    Effect.sync(() =>
      fs.existsSync(filename)
        ? // Read-only: a check never creates or changes the file. The client throws when it cannot open it.
          SqliteClient.layer({ filename, readonly: true, disableWAL: true }).pipe(
            Layer.catchAllCause((cause) => Layer.fail(unreachable(Cause.squash(cause)))),
          )
        : Layer.fail(
            new UnreachableError({
              database: shown,
              message: `cannot reach ${shown}: there is no database file (the data directory ${path.dirname(filename)} has none yet)`,
            }),
          ),
    ),
  )
}

/** The names of the migrations recorded in the database, in id order; empty when its migrations table is absent. */
const recorded = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const present =
    SqlDialect.of(sql).name === "pg"
      ? yield* sql<{ present: boolean }>`SELECT to_regclass('effect_sql_migrations') IS NOT NULL AS present`
      : yield* sql<{
          present: number
        }>`SELECT COUNT(*) AS present FROM sqlite_master WHERE type = 'table' AND name = 'effect_sql_migrations'`
  if (!present[0]?.present) return [] as ReadonlyArray<string>
  const rows = yield* sql<{
    migration_id: number
    name: string
  }>`SELECT migration_id, name FROM effect_sql_migrations ORDER BY migration_id`
  return rows.map((row) => `${row.migration_id}_${row.name}`)
})

const recordedOn = (
  global: Global.Interface,
  choice: DatabaseConfig.Choice,
  shown: string,
): Effect.Effect<ReadonlyArray<string>, UnreachableError> =>
  recorded.pipe(
    Effect.mapError(
      (error) =>
        new UnreachableError({ database: shown, message: `cannot read ${shown}: ${DatabaseError.describe(error)}` }),
    ),
    Effect.provide(connect(global, choice, shown)),
  )

/**
 * Connects to the database `choice` names without migrating it and reports what it found. Never fails: an
 * unreachable database is a report with `reachable: false` and its cause.
 *
 * @since 0.3.0
 * @category utilities
 */
export const check = (global: Global.Interface, choice: DatabaseConfig.Choice): Effect.Effect<Report> =>
  Effect.gen(function* () {
    const where = yield* target(global, choice)
    return yield* recordedOn(global, choice, where.database).pipe(
      Effect.map((names): Report => {
        const missing = KNOWN.filter((name) => !names.includes(name))
        const latestApplied = names.at(-1) ?? null
        return {
          ...where,
          reachable: true,
          latestApplied,
          expected: EXPECTED,
          missing,
          healthy: missing.length === 0,
          ...(missing.length === 0
            ? {}
            : {
                cause:
                  names.length === 0
                    ? `${where.database} is not migrated (no migration applied, expected ${EXPECTED}): run toolgate db migrate`
                    : `${where.database} is behind: ${missing.length} of ${KNOWN.length} migrations not applied (latest applied ${latestApplied}, expected ${EXPECTED}): run toolgate db migrate`,
              }),
        }
      }),
      Effect.catchTag("DatabaseHealth.UnreachableError", (error) =>
        Effect.succeed<Report>({
          ...where,
          reachable: false,
          latestApplied: null,
          expected: EXPECTED,
          missing: KNOWN,
          healthy: false,
          cause: error.message,
        }),
      ),
    )
  }).pipe(Effect.withSpan("DatabaseHealth.check"))

/**
 * Opens the database `choice` names with `Database.layerUrl` / `Database.layerFile` (which migrate it under their
 * lock, so concurrent runs are safe) and reports the migrations that were missing before and are recorded now. A
 * database that cannot be opened or migrated is a defect carrying `Database.OpenError`, as when any process starts.
 *
 * @since 0.3.0
 * @category utilities
 */
export const migrate = (global: Global.Interface, choice: DatabaseConfig.Choice): Effect.Effect<Migrated> =>
  Effect.gen(function* () {
    const where = yield* target(global, choice)
    // Before: what is recorded (nothing when there is no file yet or no table); a server that cannot be reached
    // fails in the open below with the one-line OpenError every start reports.
    const before = yield* recordedOn(global, choice, where.database).pipe(
      Effect.orElseSucceed((): ReadonlyArray<string> => []),
    )
    const database =
      choice.url === undefined
        ? Database.layerFile(Global.database(global))
        : Database.layerUrl(choice.url, choice.pool)
    const after = yield* recorded.pipe(Effect.orDie, Effect.provide(database))
    return { ...where, applied: after.filter((name) => !before.includes(name)), latest: after.at(-1) ?? null }
  }).pipe(Effect.withSpan("DatabaseHealth.migrate"))
