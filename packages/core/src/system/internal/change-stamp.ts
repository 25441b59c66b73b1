/**
 * The database's change stamp: a reading differs from every earlier one whenever a saved approval or a session may
 * have changed in between — written through this process's client or committed by another connection, process or
 * host. Holders of in-memory views of those rows (the permission service) re-read when it moves, so a revoke
 * committed anywhere is honoured by the very next ask. See docs/database.md.
 *
 * - SQLite file: the `data_version` of a second, read-only connection that runs nothing else (any commit by any
 *   other connection moves it; about 2 µs); inside a transaction, or when that connection cannot answer, one query
 *   on the shared connection (`total_changes()` and `data_version`).
 * - SQLite in memory: that query (no other connection can see the database).
 * - Postgres: the `toolgate_change` counter, which triggers move in the transaction of every change to a watched
 *   table (`SqlDialect.WATCHED_TABLES`); one query through the client, so it sees every commit and, inside a
 *   transaction, the transaction's own writes.
 *
 * @since 0.3.0
 */
import { createRequire } from "node:module"
import * as SqlClient from "@effect/sql/SqlClient"
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
 * have changed, without a query through the shared client (its statement machinery costs ~30 µs a call). It opens
 * the absolute path the shared connection reports for its main database (so a relative name or a later change of
 * directory cannot point it at another file), read-only and with no busy timeout: it never writes and never waits.
 * `undefined` for an in-memory or temporary database (no other connection can see it), for a client that is not
 * SQLite, or when it cannot be opened. better-sqlite3 is loaded from the client library's own dependency tree: the
 * same module the client uses.
 */
const watchCommits = (sql: SqlClient.SqlClient): Effect.Effect<(() => number) | undefined, never, Scope.Scope> =>
  Effect.gen(function* () {
    if (Option.isNone(yield* Effect.serviceOption(SqliteClient.SqliteClient))) return undefined
    const [main] = yield* sql
      .unsafe<{ readonly file: string | null }>("SELECT file FROM pragma_database_list WHERE name = 'main'")
      .pipe(Effect.orElseSucceed(() => []))
    const file = main?.file
    if (file === undefined || file === null || file === "") return undefined
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
    const watched = yield* watchCommits(sql)
    // A fixed statement run without the template compile and the per-statement span.
    const queried = Effect.map(
      sql.unsafe<{ readonly changes: number; readonly version: number }>(CHANGE_STAMP_SQLITE),
      (rows) => `${rows[0]!.version}:${rows[0]!.changes}`,
    ).pipe(orDie, Effect.withTracerEnabled(false))
    if (watched === undefined) return queried
    // The watcher sees only commits, so inside a transaction (whose own writes are not committed yet) the query on
    // the shared connection answers. The two kinds of reading never equal each other ("w…" against "…:…").
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
