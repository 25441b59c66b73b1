/**
 * The database's change stamp: a reading differs from every earlier one whenever a saved approval or a session may
 * have changed in between — written through this process's client or committed by another connection, process or
 * host. Holders of in-memory views of those rows (the permission service) re-read when it moves, so a revoke
 * committed anywhere is honoured by the very next ask. See docs/database.md.
 *
 * - SQLite file: the `data_version` of a second, read-only connection that runs nothing else (any commit by any
 *   other connection moves it; about 2 µs); inside a transaction, or when that connection cannot answer, the shared
 *   connection's `total_changes()` and `data_version`.
 * - SQLite in memory: the shared connection's `total_changes()` (no other connection can see the database).
 * - Both SQLite readings are one statement run on the shared connection itself, not through the client's statement
 *   machinery (its span, scope, permit and statement cache cost about 40 µs a call on the benchmark machine).
 * - Postgres: the `toolgate_change` counter, which triggers move in the transaction of every change to a watched
 *   table (`SqlDialect.WATCHED_TABLES`); one query through the client, so it sees every commit and, inside a
 *   transaction, the transaction's own writes.
 *
 * @since 0.3.0
 */
import { createRequire } from "node:module"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as CorePackage from "../core-package.js"
import * as DatabaseError from "../database-error.js"
import * as SqlDialect from "./sql-dialect.js"

/** One row: this connection's `total_changes()` and the database's `data_version` (moved by other connections). */
const CHANGE_STAMP_SQLITE = "SELECT total_changes() AS changes, data_version AS version FROM pragma_data_version"

/** One row: this connection's `total_changes()`, all an in-memory database needs (only this connection sees it). */
const CHANGE_STAMP_SQLITE_MEMORY = "SELECT total_changes() AS changes"

/** The parts of a better-sqlite3 connection the commit watcher uses. */
interface RawConnection {
  readonly prepare: (source: string) => { readonly pluck: () => { readonly get: () => unknown } }
  readonly close: () => void
}
type RawConstructor = new (
  filename: string,
  options: { readonly readonly: boolean; readonly fileMustExist: boolean; readonly timeout: number },
) => RawConnection

/**
 * A second connection to the database file that only reads `PRAGMA data_version`, which moves whenever any other
 * connection commits — the shared connection of this process included — so reading it tells whether anything may
 * have changed, without a statement on the shared connection. It opens `file`, the absolute path the shared
 * connection reports for its main database (so a relative name or a later change of directory cannot point it at
 * another file), read-only and with no busy timeout: it never writes and never waits. `undefined` when it cannot be
 * opened. better-sqlite3 is loaded from the client library's own dependency tree: the same module the client uses.
 */
const watchCommits = (file: string): Effect.Effect<(() => number) | undefined, never, Scope.Scope> =>
  Effect.gen(function* () {
    const watcher = yield* Effect.acquireRelease(
      Effect.sync((): RawConnection | undefined => {
        try {
          const Raw = createRequire(CorePackage.require.resolve("@effect/sql-sqlite-node"))(
            "better-sqlite3",
          ) as RawConstructor
          return new Raw(file, { readonly: true, fileMustExist: true, timeout: 0 })
        } catch {
          return undefined
        }
      }),
      (connection) => Effect.sync(() => connection?.close()),
    )
    if (watcher === undefined) return undefined
    try {
      const statement = watcher.prepare("PRAGMA data_version").pluck()
      statement.get()
      return () => statement.get() as number
    } catch {
      return undefined
    }
  })

/**
 * The shared connection of a SQLite client from `@effect/sql-sqlite-node` (one connection per client, open for the
 * client's lifetime) and the file of its main database (`""` in memory). The stamp runs its one statement on that
 * connection directly: better-sqlite3 runs it synchronously, so it never interleaves with another statement, and it
 * reads counters, so running it beside another fiber's open transaction is safe: it then counts that transaction's
 * writes so far (the stamp moves, and the rows are re-read through the client, which waits for the transaction).
 * `undefined` for any other client.
 */
const sharedConnection = (
  sql: SqlClient.SqlClient,
): Effect.Effect<{ readonly connection: Connection; readonly file: string } | undefined> =>
  Effect.gen(function* () {
    if (Option.isNone(yield* Effect.serviceOption(SqliteClient.SqliteClient))) return undefined
    const [main] = yield* sql
      .unsafe<{ readonly file: string | null }>("SELECT file FROM pragma_database_list WHERE name = 'main'")
      .pipe(Effect.orElseSucceed(() => []))
    const connection = yield* Effect.scoped(sql.reserve).pipe(Effect.orElseSucceed(() => undefined))
    if (connection === undefined) return undefined
    return { connection, file: main?.file ?? "" }
  })

/**
 * The change stamp of the database behind `sql`, for the lifetime of the scope (which holds the SQLite watcher
 * connection). Reading it is untraced (it is on every permission request's path) and never fails: a failed query
 * is a defect carrying the `Database.QueryError`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (sql: SqlClient.SqlClient): Effect.Effect<Effect.Effect<string>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const orDie = DatabaseError.orDie(sql)
    if (SqlDialect.of(sql).name === "pg") {
      return Effect.map(
        sql.unsafe<{ readonly version: number }>(SqlDialect.CHANGE_STAMP_PG),
        (rows) => `p${rows[0]?.version ?? "none"}`,
      ).pipe(orDie, Effect.withTracerEnabled(false))
    }
    const shared = yield* sharedConnection(sql)
    if (shared === undefined) {
      // Another SQLite client: the query through it (its own span is switched off).
      return Effect.map(
        sql.unsafe<{ readonly changes: number; readonly version: number }>(CHANGE_STAMP_SQLITE),
        (rows) => `${rows[0]!.version}:${rows[0]!.changes}`,
      ).pipe(orDie, Effect.withTracerEnabled(false))
    }
    const { connection, file } = shared
    if (file === "") {
      // In memory (or a temporary database): private to the shared connection, which alone can change it.
      return Effect.map(
        connection.executeUnprepared(CHANGE_STAMP_SQLITE_MEMORY, [], undefined),
        (rows) => `m${(rows[0] as { readonly changes: number }).changes}`,
      ).pipe(orDie)
    }
    const queried = Effect.map(connection.executeUnprepared(CHANGE_STAMP_SQLITE, [], undefined), (rows) => {
      const row = rows[0] as { readonly changes: number; readonly version: number }
      return `${row.version}:${row.changes}`
    }).pipe(orDie)
    const watched = yield* watchCommits(file)
    if (watched === undefined) return queried
    // The watcher sees only commits, so inside a transaction (whose own writes are not committed yet) the shared
    // connection answers. The kinds of reading never equal each other ("w…" against "…:…").
    return Effect.withFiberRuntime<string>((fiber) => {
      if (Option.isSome(Context.getOption(fiber.currentContext, SqlClient.TransactionConnection))) return queried
      let version: number
      try {
        version = watched()
      } catch {
        return queried
      }
      return Effect.succeed(`w${version}`)
    })
  })
