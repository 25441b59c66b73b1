/**
 * Saved approvals: one `permission` row per (project, directory, action, resource), written when a user answers
 * `always`. `directory` is `""` for a whole project; the `global` project (directories outside any repository) files
 * its rows under the Location directory they were approved in (see docs/trust/approvals.md). Resources are Wildcard
 * patterns; a literal resource is stored escaped (`Wildcard.literal`). Process-wide. A failed `add` is a typed
 * `Database.QueryError` (the caller decides what an unsaved approval means); other database errors are defects
 * carrying the same error, which names the file and the SQLite code.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Option from "effect/Option"
import * as Database from "../system/database.js"
import * as ChangeStamp from "../system/internal/change-stamp.js"
import * as Identifier from "../values/identifier.js"
import * as DecisionJournal from "../journal/decision-journal.js"
import { IN_PROCESS } from "./internal/protocol.js"

/**
 * A saved-approval id: `"psv_" + ascending()` (no prefix check).
 *
 * @since 0.1.0
 * @category constants
 */
export const ID = Schema.String
/**
 * @see ID
 *
 * @since 0.1.0
 * @category models
 */
export type ID = typeof ID.Type

/**
 * Returns a fresh `psv_…` id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createID = (): ID => Identifier.create("psv")

/**
 * A saved approval.
 *
 * @since 0.1.0
 * @category models
 */
export const Info = Schema.Struct({
  id: Schema.String,
  projectID: Schema.String,
  /** The directory the approval is limited to; `""` for the whole project. */
  directory: Schema.String,
  action: Schema.String,
  resource: Schema.String,
  /** When it was saved (epoch milliseconds). */
  timeCreated: Schema.Number,
  /** Who answered (as the answering client named them), when known. */
  by: Schema.optional(Schema.String),
  /** Through which channel it was answered (`cli`, `mcp`, `ai-sdk`, `http`, `test`, `in-process`, …), when known. */
  channel: Schema.optional(Schema.String),
  /** Until when it applies (epoch milliseconds, exclusive); absent: until revoked. */
  until: Schema.optional(Schema.Number),
})
/**
 * @see Info
 *
 * @since 0.1.0
 * @category models
 */
export type Info = typeof Info.Type

/**
 * The saved-approval store.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /**
   * The rows of one project (with `directory`: only the rows filed under exactly that directory, `""` meaning the
   * project-wide ones), or all rows. No defined order.
   */
  readonly list: (input?: {
    readonly projectID?: string
    readonly directory?: string
  }) => Effect.Effect<ReadonlyArray<Info>>
  /**
   * Inserts one row per resource under `directory` (default `""`, the whole project), recording who answered,
   * through which channel and until when (`until` absent: until revoked). Duplicates (also within the batch) keep
   * the original row, except that a row that would expire is extended to the new row's `until` (or made permanent)
   * when that is later, with the new row's `by` and `channel`. Fails with `Database.QueryError` when the rows cannot
   * be written (a full disk, an unwritable WAL, a corrupt file): then nothing of the batch is saved.
   */
  readonly add: (input: AddInput) => Effect.Effect<void, Database.QueryError>
  /**
   * Deletes by id; absent rows are fine. Durable when it returns (committed with `synchronous = FULL`). When the
   * caller's context holds a `DecisionJournal.Service` (every `Core` layer does), a `revoked` entry — the row's id,
   * directory, action and resource, and who removed it through which channel (`channel` defaults to
   * `in-process`) — is written in the same SQL transaction as the delete: both commit or neither does. An absent row
   * journals nothing.
   */
  readonly remove: (id: string, options?: RemoveOptions) => Effect.Effect<void>
  /**
   * The database's change stamp: a reading differs from every earlier one whenever a row of any table may have
   * changed in between — written through this process's connection or committed by another connection or process.
   * Holders of in-memory views of rows (the permission service's saved rules and sessions) re-read when it moves.
   * Untraced: it is read once per permission request. On a SQLite file it is the `data_version` of a second
   * connection that runs nothing else (any commit by any other connection moves it; about 2 µs); inside a
   * transaction, on an in-memory database, or if that connection cannot answer, one query on the shared connection
   * (`total_changes()` and `data_version`). On Postgres it is a counter row that triggers move in the transaction
   * of every change to saved approvals and sessions (docs/database.md).
   *
   * @since 0.2.0
   */
  readonly changeStamp: Effect.Effect<string>
}

/**
 * Who revokes a saved approval, and through which channel (`cli`, `http`, …; default `in-process`).
 *
 * @since 0.3.0
 * @category models
 */
export interface RemoveOptions {
  readonly channel?: string | undefined
  readonly by?: string | undefined
}

/**
 * The PermissionSaved service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/PermissionSaved")<Service, Interface>() {}

interface Row {
  readonly id: string
  readonly project_id: string
  readonly directory: string
  readonly action: string
  readonly resource: string
  readonly time_created: number
  readonly answered_by: string | null
  readonly channel: string | null
  readonly time_until: number | null
}

const toInfo = (row: Row): Info => ({
  id: row.id,
  projectID: row.project_id,
  directory: row.directory,
  action: row.action,
  resource: row.resource,
  timeCreated: row.time_created,
  ...(row.answered_by === null ? {} : { by: row.answered_by }),
  ...(row.channel === null ? {} : { channel: row.channel }),
  ...(row.time_until === null ? {} : { until: row.time_until }),
})

/** The columns `list` reads. */
const COLUMNS = "id, project_id, directory, action, resource, time_created, answered_by, channel, time_until"

/** The input of `add`. */
interface AddInput {
  readonly projectID: string
  readonly directory?: string
  readonly action: string
  readonly resources: ReadonlyArray<string>
  /** Who answered. */
  readonly by?: string
  /** Through which channel. */
  readonly channel?: string
  /** Until when the approval applies (epoch milliseconds); absent: until revoked. */
  readonly until?: number
}

/** Rows per INSERT statement: keeps a batch within SQLite's bound-parameter limit (10 per row, 32766 in all). */
const ROWS_PER_STATEMENT = 1000

/**
 * The process-wide store on the `permission` table. `add` writes one multi-row `INSERT … ON CONFLICT … DO UPDATE`
 * (batches beyond 1000 rows are split inside one transaction), after `Database.verifyFile` (a database file removed
 * or replaced under the process fails the save, naming the file). A failed `add` is a `Database.QueryError`; other
 * database errors are defects carrying one.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, SqlClient.SqlClient> = Layer.scoped(
  Service,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const changeStamp = yield* ChangeStamp.make(sql)
    const orDie = Database.orDie(sql)

    const list = Effect.fn("PermissionSaved.list")(function* (input?: {
      readonly projectID?: string
      readonly directory?: string
    }) {
      const rows =
        input?.projectID === undefined
          ? yield* sql<Row>`SELECT ${sql.literal(COLUMNS)} FROM permission`
          : input.directory === undefined
            ? yield* sql<Row>`SELECT ${sql.literal(COLUMNS)} FROM permission WHERE project_id = ${input.projectID}`
            : yield* sql<Row>`SELECT ${sql.literal(COLUMNS)} FROM permission WHERE project_id = ${input.projectID} AND directory = ${input.directory}`
      return rows.map(toInfo)
    }, orDie)

    const add = Effect.fn("PermissionSaved.add")(
      function* (input: AddInput) {
        const resources = [...new Set(input.resources)]
        if (resources.length === 0) return
        // A saved approval must last: not into a database file that was removed or replaced under this process.
        yield* Database.verifyFile(sql)
        const now = Date.now()
        const rows = resources.map((resource) => ({
          id: createID(),
          project_id: input.projectID,
          directory: input.directory ?? "",
          action: input.action,
          resource,
          time_created: now,
          time_updated: now,
          answered_by: input.by ?? null,
          channel: input.channel ?? null,
          time_until: input.until ?? null,
        }))
        // A duplicate keeps its row; only a later (or no) end extends one that would expire.
        const insert = (chunk: typeof rows) =>
          sql`INSERT INTO permission ${sql.insert(chunk)} ON CONFLICT (project_id, directory, action, resource) DO UPDATE SET time_until = excluded.time_until, answered_by = excluded.answered_by, channel = excluded.channel, time_updated = excluded.time_updated WHERE permission.time_until IS NOT NULL AND (excluded.time_until IS NULL OR excluded.time_until > permission.time_until)`
        if (rows.length <= ROWS_PER_STATEMENT) return yield* insert(rows)
        const chunks: Array<typeof rows> = []
        for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) chunks.push(rows.slice(i, i + ROWS_PER_STATEMENT))
        yield* sql.withTransaction(Effect.forEach(chunks, insert, { discard: true }))
      },
      Effect.asVoid,
      Database.mapQueryError(sql),
    )

    const remove = Effect.fn("PermissionSaved.remove")(function* (id: string, options?: RemoveOptions) {
      const journal = yield* Effect.serviceOption(DecisionJournal.Service)
      // A lost revoke would silently bring the approval back: commit it with synchronous = FULL.
      if (Option.isNone(journal)) return yield* Database.durably(sql, sql`DELETE FROM permission WHERE id = ${id}`)
      // Entries buffered before the revoke go first, as before any other journaled change; a revoke narrows what is
      // allowed, so it goes on when they cannot be written (they stay buffered for the next write).
      yield* journal.value.flush.pipe(
        Effect.catchAll((error) => Effect.logWarning("PermissionSaved: could not write buffered decisions", error)),
      )
      yield* Database.durably(
        sql,
        journal.value.transaction(
          Effect.gen(function* () {
            // A write first, so the write lock is taken on the busy timeout; then the row the entry describes.
            yield* sql`UPDATE permission SET time_updated = time_updated WHERE id = ${id}`
            const [row] = yield* sql<Row>`SELECT ${sql.literal(COLUMNS)} FROM permission WHERE id = ${id}`
            if (row === undefined) return
            yield* sql`DELETE FROM permission WHERE id = ${id}`
            yield* journal.value.appendInTransaction([
              {
                kind: "revoked",
                projectID: row.project_id,
                action: row.action,
                resources: [row.resource],
                detail: {
                  savedID: row.id,
                  directory: row.directory,
                  channel: options?.channel ?? IN_PROCESS,
                  ...(options?.by === undefined ? {} : { by: options.by }),
                },
              },
            ])
          }),
        ),
      )
    }, orDie)

    return Service.of({ list, add, remove, changeStamp })
  }),
)
