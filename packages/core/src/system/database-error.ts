/**
 * The errors of the database and how they are described: `QueryError` names the file and the SQLite code of a
 * failed statement. Kept apart from `Database` so a module that only maps errors (the project table's queries, and
 * through them the tool entry point) does not load the SQLite driver. `Database` re-exports every member.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * One readable line for an error and the chain of its causes: each distinct message once, SQLite codes
 * (`SQLITE_BUSY`, …) in front of their message, joined with `: `.
 *
 * @since 0.2.0
 * @category utilities
 */
export const describe = (error: unknown): string => {
  const parts: Array<string> = []
  const seen = new Set<unknown>()
  let current: unknown = error
  while (current !== undefined && current !== null && !seen.has(current)) {
    seen.add(current)
    if (typeof current === "object") {
      const record = current as { readonly message?: unknown; readonly code?: unknown; readonly cause?: unknown }
      const message = typeof record.message === "string" ? record.message.trim() : ""
      const code = typeof record.code === "string" ? record.code : ""
      const part = code !== "" && !message.startsWith(code) ? `${code}: ${message}` : message
      if (part !== "" && !parts.includes(part)) parts.push(part)
      current = record.cause
    } else {
      parts.push(String(current))
      current = undefined
    }
  }
  return parts.length === 0 ? String(error) : parts.join(": ").replace(/\s+/g, " ")
}

/**
 * The first SQLite result code (`SQLITE_BUSY`, `SQLITE_FULL`, …) carried by `error` or one of its causes.
 *
 * @since 0.3.0
 * @category errors
 */
export const sqliteCode = (error: unknown): string | undefined => {
  const seen = new Set<unknown>()
  for (let current: unknown = error; current !== null && typeof current === "object" && !seen.has(current);) {
    seen.add(current)
    const record = current as { readonly code?: unknown; readonly cause?: unknown }
    if (typeof record.code === "string" && record.code.startsWith("SQLITE_")) return record.code
    current = record.cause
  }
  return undefined
}

/**
 * The first Postgres SQLSTATE (five characters, `23503`, `40001`, …) carried by `error` or one of its causes: a
 * `pg` error has one in `code` beside a `severity`.
 *
 * @since 0.3.0
 * @category errors
 */
export const sqlState = (error: unknown): string | undefined => {
  const seen = new Set<unknown>()
  for (let current: unknown = error; current !== null && typeof current === "object" && !seen.has(current);) {
    seen.add(current)
    const record = current as { readonly code?: unknown; readonly severity?: unknown; readonly cause?: unknown }
    if (typeof record.code === "string" && /^[0-9A-Z]{5}$/.test(record.code) && typeof record.severity === "string") {
      return record.code
    }
    current = record.cause
  }
  return undefined
}

/** The file of every client `Database.layerFile` built, so a failure at run time can name it. */
const files = new WeakMap<SqlClient.SqlClient, string>()

/** The identity (device and inode) of each such file when it was opened: the file the client's handle holds. */
const identities = new WeakMap<SqlClient.SqlClient, { readonly dev: number; readonly ino: number }>()

/**
 * Records that `client` works on `filename` (called by `Database.layerFile`).
 *
 * @since 0.3.0
 * @category internal
 * @internal
 */
export const remember = (client: SqlClient.SqlClient, filename: string): void => {
  files.set(client, filename)
  if (!path.isAbsolute(filename)) return
  try {
    const stats = fs.statSync(filename)
    identities.set(client, { dev: stats.dev, ino: stats.ino })
  } catch {
    // Not a file on disk (an in-memory database, a Postgres URL): nothing to compare later.
  }
}

/**
 * Checks that the path of the database file `client` opened still names that file, before a write that must last
 * (a saved approval): a data directory removed, or the file replaced, under a running process would otherwise take
 * the write into a file nobody will open again. A `QueryError` naming the file says which happened; databases
 * that are not files pass.
 *
 * @since 0.4.0
 * @category errors
 */
export const verifyFile = (client: SqlClient.SqlClient): Effect.Effect<void, QueryError> =>
  Effect.suspend(() => {
    const filename = files.get(client)
    const opened = identities.get(client)
    if (filename === undefined || opened === undefined) return Effect.void
    return Effect.async<void, QueryError>((resume) =>
      fs.stat(filename, (error, stats) => {
        if (error !== null)
          return resume(
            Effect.fail(
              new QueryError({
                filename,
                ...(error.code === undefined ? {} : { code: error.code }),
                detail: "the database file was removed while this process was running; nothing was written",
              }),
            ),
          )
        if (stats.dev !== opened.dev || stats.ino !== opened.ino)
          return resume(
            Effect.fail(
              new QueryError({
                filename,
                detail:
                  "the database file was replaced by another file while this process was running; nothing was written",
              }),
            ),
          )
        resume(Effect.void)
      }),
    )
  })

/**
 * The database file `client` works on, when `layerFile` (or `layer`) built it.
 *
 * @since 0.3.0
 * @category errors
 */
export const filenameOf = (client: SqlClient.SqlClient): string | undefined => files.get(client)

/**
 * A statement failed on an open database: `filename` (when known; on Postgres the URL without its password), the
 * SQLite code or Postgres SQLSTATE as `code` (when there is one) and
 * `detail`, the cause chain in one line. The message names all of them, e.g.
 * `database /home/u/.local/share/toolgate/toolgate.db: Failed to execute statement: SQLITE_FULL: database or disk is full`.
 *
 * @since 0.3.0
 * @category errors
 */
export class QueryError extends Schema.TaggedError<QueryError>()("Database.QueryError", {
  filename: Schema.optional(Schema.String),
  code: Schema.optional(Schema.String),
  detail: Schema.String,
}) {
  override get message(): string {
    return this.filename === undefined ? `database: ${this.detail}` : `database ${this.filename}: ${this.detail}`
  }
}

/**
 * The `QueryError` for a failure of a statement run through `client`.
 *
 * @since 0.3.0
 * @category errors
 */
export const queryError = (client: SqlClient.SqlClient, error: unknown): QueryError => {
  if (error instanceof QueryError) return error
  const filename = files.get(client)
  const code = sqliteCode(error) ?? sqlState(error)
  return new QueryError({
    ...(filename === undefined ? {} : { filename }),
    ...(code === undefined ? {} : { code }),
    detail: describe(error),
  })
}

/**
 * Fails with the `QueryError` of `client` instead of the raw error.
 *
 * @since 0.3.0
 * @category errors
 */
export const mapQueryError =
  (client: SqlClient.SqlClient) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, QueryError, R> =>
    Effect.mapError(self, (error) => queryError(client, error))

/**
 * `Effect.orDie` for statements of `client`: the defect is the `QueryError` naming the file and the SQLite code, so
 * whoever reports it (the runner's failure text, the CLI) says which database failed and why.
 *
 * @since 0.3.0
 * @category errors
 */
export const orDie =
  (client: SqlClient.SqlClient) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, never, R> =>
    Effect.catchAll(self, (error) => Effect.die(queryError(client, error)))
