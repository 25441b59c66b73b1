/**
 * The `decision` table's statements: an entry as a row and back, batched inserts, the query and pruning. Plain
 * portable SQL (no `LIMIT -1`, no `RETURNING`, no SQLite functions), so the same statements run on another engine.
 *
 * @since 0.3.0
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { type Draft, Entry, type Prune, type Query } from "./schema.js"

/**
 * A row of `decision`.
 *
 * @internal
 * @category models
 */
export interface Row {
  readonly id: string
  readonly time: number
  readonly project_id: string
  readonly session_id: string | null
  readonly request_id: string | null
  readonly kind: string
  readonly action: string
  readonly resources: string
  readonly detail: string
}

const encode = Schema.encodeUnknownEither(Entry)
const decode = Schema.decodeUnknownEither(Entry)

/**
 * The row of `draft` recorded as `id` at `time`, or why the draft is not an entry (a detail that does not fit its
 * kind).
 *
 * @internal
 * @category utilities
 */
export const toRow = (id: string, time: number, draft: Draft): Either.Either<Row, string> =>
  Either.mapBoth(encode({ ...draft, id, time }), {
    onLeft: (error) =>
      `decision entry ${draft.kind} for ${draft.action}: ${ParseResult.TreeFormatter.formatErrorSync(error)}`,
    onRight: (entry) => ({
      id: entry.id,
      time: entry.time,
      project_id: entry.projectID,
      session_id: entry.sessionID ?? null,
      request_id: entry.requestID ?? null,
      kind: entry.kind,
      action: entry.action,
      resources: JSON.stringify(entry.resources),
      detail: JSON.stringify(entry.detail),
    }),
  })

/**
 * The entry a row holds, or undefined when it does not read as one (a kind or detail this version does not know).
 *
 * @internal
 * @category constructors
 */
export const fromRow = (row: Row): Entry | undefined => {
  let resources: unknown
  let detail: unknown
  try {
    resources = JSON.parse(row.resources)
    detail = JSON.parse(row.detail)
  } catch {
    return undefined
  }
  const entry = decode({
    id: row.id,
    time: Number(row.time),
    projectID: row.project_id,
    ...(row.session_id === null ? {} : { sessionID: row.session_id }),
    ...(row.request_id === null ? {} : { requestID: row.request_id }),
    kind: row.kind,
    action: row.action,
    resources,
    detail,
  })
  return Either.isRight(entry) ? entry.right : undefined
}

/** Rows per INSERT: 9 parameters a row stays far below every engine's bound-parameter limit. */
const ROWS_PER_STATEMENT = 500

/**
 * Inserts `rows` (in statements of at most 500 rows), in whatever transaction is current.
 *
 * @internal
 * @category utilities
 */
export const insert = (sql: SqlClient.SqlClient, rows: ReadonlyArray<Row>): Effect.Effect<void, SqlError.SqlError> => {
  if (rows.length === 0) return Effect.void
  const chunks: Array<ReadonlyArray<Row>> = []
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) chunks.push(rows.slice(i, i + ROWS_PER_STATEMENT))
  return Effect.forEach(
    chunks,
    (chunk) => sql`INSERT INTO decision ${sql.insert(chunk as unknown as Array<Record<string, unknown>>)}`,
    {
      discard: true,
    },
  )
}

const COLUMNS = "id, time, project_id, session_id, request_id, kind, action, resources, detail"

/** The WHERE clause of `query`. */
const conditions = (sql: SqlClient.SqlClient, query: Query) => {
  const clauses = []
  if (query.projectID !== undefined) clauses.push(sql`project_id = ${query.projectID}`)
  if (query.sessionID !== undefined) clauses.push(sql`session_id = ${query.sessionID}`)
  if (query.requestID !== undefined) clauses.push(sql`request_id = ${query.requestID}`)
  if (query.since !== undefined) clauses.push(sql`time >= ${query.since}`)
  if (query.kinds !== undefined) clauses.push(query.kinds.length === 0 ? sql`1 = 0` : sql.in("kind", query.kinds))
  return sql.and(clauses)
}

/**
 * The rows `query` names, oldest first (by time, then id); with `limit`, the newest `limit` of them.
 *
 * @internal
 * @category utilities
 */
export const select = (
  sql: SqlClient.SqlClient,
  query: Query,
): Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError> => {
  const where = conditions(sql, query)
  if (query.limit === undefined) {
    return sql<Row>`SELECT ${sql.literal(COLUMNS)} FROM decision WHERE ${where} ORDER BY time ASC, id ASC`
  }
  const limit = Math.max(0, Math.floor(query.limit))
  return Effect.map(
    sql<Row>`SELECT ${sql.literal(COLUMNS)} FROM decision WHERE ${where} ORDER BY time DESC, id DESC LIMIT ${limit}`,
    (rows) => rows.slice().reverse(),
  )
}

const countWhere = (sql: SqlClient.SqlClient, where: ReturnType<SqlClient.SqlClient["and"]>) =>
  Effect.map(sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM decision WHERE ${where}`, ([row]) =>
    Number(row?.n ?? 0),
  )

/**
 * Deletes what `prune` names and returns how many rows went, in whatever transaction is current: rows older than
 * `olderThan`, then all but the newest `keep` (of the project, or of the whole table).
 *
 * @internal
 * @category utilities
 */
export const prune = (sql: SqlClient.SqlClient, prune: Prune): Effect.Effect<number, SqlError.SqlError> =>
  Effect.gen(function* () {
    const project = prune.projectID === undefined ? [] : [sql`project_id = ${prune.projectID}`]
    let deleted = 0
    if (prune.olderThan !== undefined) {
      const where = sql.and([...project, sql`time < ${prune.olderThan}`])
      deleted += yield* countWhere(sql, where)
      yield* sql`DELETE FROM decision WHERE ${where}`
    }
    if (prune.keep !== undefined) {
      const keep = Math.max(0, Math.floor(prune.keep))
      // The newest row that goes: everything at or before it in (time, id) order is deleted.
      const [cut] = yield* sql<{ readonly time: number; readonly id: string }>`SELECT time, id FROM decision
        WHERE ${sql.and(project)} ORDER BY time DESC, id DESC LIMIT 1 OFFSET ${keep}`
      if (cut !== undefined) {
        const time = Number(cut.time)
        const where = sql.and([...project, sql`(time < ${time} OR (time = ${time} AND id <= ${cut.id}))`])
        deleted += yield* countWhere(sql, where)
        yield* sql`DELETE FROM decision WHERE ${where}`
      }
    }
    return deleted
  })
