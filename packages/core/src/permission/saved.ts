/**
 * Saved approvals: one `permission` row per (project, action, resource), written when a user answers `always`.
 * Process-wide; database errors are defects.
 *
 * @since 0.1.0
 */
import { Context, type Effect, Schema } from "effect"

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
  readonly add: (input: { readonly projectID: string; readonly action: string; readonly resources: ReadonlyArray<string> }) => Effect.Effect<void>
  /** Deletes by id; absent rows are fine. */
  readonly remove: (id: string) => Effect.Effect<void>
}

/** The PermissionSaved service. */
export class Service extends Context.Tag("@toolgate/v2/PermissionSaved")<Service, Interface>() {}
