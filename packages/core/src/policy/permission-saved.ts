/**
 * Saved approvals: one `permission` row per (project, action, resource), written when a user answers `always`.
 * Process-wide; database errors are defects.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import * as Identifier from "../values/identifier.js"

/** A saved-approval id: `"psv_" + ascending()` (no prefix check). */
export const ID = Schema.String
/** @see ID */
export type ID = typeof ID.Type

/** Returns a fresh `psv_…` id. */
export const createID = (): ID => Identifier.create("psv")

/** A saved approval. */
export const Info = Schema.Struct({
  id: Schema.String,
  projectID: Schema.String,
  action: Schema.String,
  resource: Schema.String,
})
/** @see Info */
export type Info = typeof Info.Type

/** The saved-approval store. */
export interface Interface {
  /** The rows of one project, or all rows. No defined order. */
  readonly list: (input?: { readonly projectID?: string }) => Effect.Effect<ReadonlyArray<Info>>
  /** Inserts one row per resource; duplicates (also within the batch) are ignored and keep the original row. */
  readonly add: (input: {
    readonly projectID: string
    readonly action: string
    readonly resources: ReadonlyArray<string>
  }) => Effect.Effect<void>
  /** Deletes by id; absent rows are fine. */
  readonly remove: (id: string) => Effect.Effect<void>
}

/** The PermissionSaved service. */
export class Service extends Context.Tag("@toolgate/v2/PermissionSaved")<Service, Interface>() {}

interface Row {
  readonly id: string
  readonly project_id: string
  readonly action: string
  readonly resource: string
}

const toInfo = (row: Row): Info => ({
  id: row.id,
  projectID: row.project_id,
  action: row.action,
  resource: row.resource,
})

/** Rows per INSERT statement: keeps a batch within SQLite's bound-parameter limit (6 per row, 32766 in all). */
const ROWS_PER_STATEMENT = 1000

/**
 * The process-wide store on the `permission` table. `add` writes one multi-row `INSERT … ON CONFLICT DO NOTHING`
 * (batches beyond 1000 rows are split inside one transaction). Database errors are defects.
 */
export const layer: Layer.Layer<Service, never, SqlClient.SqlClient> = Layer.effect(
  Service,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const list = Effect.fn("PermissionSaved.list")(function* (input?: { readonly projectID?: string }) {
      const rows =
        input?.projectID === undefined
          ? yield* sql<Row>`SELECT id, project_id, action, resource FROM permission`
          : yield* sql<Row>`SELECT id, project_id, action, resource FROM permission WHERE project_id = ${input.projectID}`
      return rows.map(toInfo)
    }, Effect.orDie)

    const add = Effect.fn("PermissionSaved.add")(
      function* (input: {
        readonly projectID: string
        readonly action: string
        readonly resources: ReadonlyArray<string>
      }) {
        const resources = [...new Set(input.resources)]
        if (resources.length === 0) return
        const now = Date.now()
        const rows = resources.map((resource) => ({
          id: createID(),
          project_id: input.projectID,
          action: input.action,
          resource,
          time_created: now,
          time_updated: now,
        }))
        const insert = (chunk: typeof rows) => sql`INSERT INTO permission ${sql.insert(chunk)} ON CONFLICT DO NOTHING`
        if (rows.length <= ROWS_PER_STATEMENT) return yield* insert(rows)
        const chunks: Array<typeof rows> = []
        for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) chunks.push(rows.slice(i, i + ROWS_PER_STATEMENT))
        yield* sql.withTransaction(Effect.forEach(chunks, insert, { discard: true }))
      },
      Effect.asVoid,
      Effect.orDie,
    )

    const remove = Effect.fn("PermissionSaved.remove")(function* (id: string) {
      yield* sql`DELETE FROM permission WHERE id = ${id}`
    }, Effect.orDie)

    return Service.of({ list, add, remove })
  }),
)
