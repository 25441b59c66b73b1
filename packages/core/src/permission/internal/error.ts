/**
 * The failures of the permission gate: a configured deny, a rejection with or without feedback, an unknown request
 * id and an approval that could not be saved. `PermissionV2` names everything exported here.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import { Ruleset } from "./schema.js"

/**
 * The user rejected without a message (or a same-session cascade, or shutdown). Always delivered as a defect.
 *
 * @since 0.1.0
 * @category errors
 */
export class DeclinedError extends Schema.TaggedError<DeclinedError>()("PermissionV2.DeclinedError", {}) {}

/**
 * The user rejected with a message; the model sees the feedback.
 *
 * @since 0.1.0
 * @category errors
 */
export class CorrectedError extends Schema.TaggedError<CorrectedError>()("PermissionV2.CorrectedError", {
  feedback: Schema.String,
}) {}

/**
 * Configured rules deny the request; `resources` are the denied ones, in request order. With `hook`, a plugin's
 * `permission.evaluate` hook denied it instead (`origin` is `hook:<plugin>/<hook>`, `reason` what the model sees)
 * and `rules` is empty.
 *
 * @since 0.1.0
 * @category errors
 */
export class BlockedError extends Schema.TaggedError<BlockedError>()("PermissionV2.BlockedError", {
  rules: Ruleset,
  action: Schema.String,
  resources: Schema.Array(Schema.String),
  hook: Schema.optional(Schema.Struct({ origin: Schema.String, reason: Schema.optional(Schema.String) })),
}) {}

/**
 * A reply names no pending request.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFoundError extends Schema.TaggedError<NotFoundError>()("PermissionV2.NotFoundError", {
  requestID: Schema.String,
}) {}

/**
 * An `always` reply whose approval could not be saved (a full disk, an unwritable or corrupt database): nothing
 * changed — nothing was saved, no `Replied` event was published, and the request is still pending and answerable.
 * The answerer may answer it `once` or `reject` (or `always` again once the cause is fixed). `filename` and `code`
 * (`SQLITE_FULL`, `SQLITE_IOERR_WRITE`, …) come from the database error, `detail` is its cause chain in one line.
 * See docs/permissions.md.
 *
 * @since 0.3.0
 * @category errors
 */
export class SaveError extends Schema.TaggedError<SaveError>()("PermissionV2.SaveError", {
  requestID: Schema.String,
  action: Schema.String,
  filename: Schema.optional(Schema.String),
  code: Schema.optional(Schema.String),
  detail: Schema.String,
}) {
  override get message(): string {
    return `Could not save the approval of permission request ${this.requestID} (${this.action}) to ${this.filename ?? "the database"}: ${this.detail}. The request is still pending: answer it once or reject it.`
  }
}
