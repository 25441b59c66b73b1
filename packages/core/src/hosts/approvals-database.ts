/**
 * The approval protocol with no Location, over the `pending_ask` rows every asking process writes to a shared
 * database: what an approval server on another host serves (`ApprovalServer.layerDatabase`). See
 * docs/approval-server.md.
 *
 * @since 0.4.0
 */
import * as internal from "./internal/approvals-database.js"

/**
 * A claim written on a `pending_ask` row: an answer, or a cascade of a rejection in the same session.
 *
 * @since 0.4.0
 * @category models
 */
export const Claim = internal.Claim
/**
 * @since 0.4.0
 * @category models
 */
export type Claim = internal.Claim

/**
 * Options of `make` and `layer`: `poll`, how often the rows are read when no notification came (default `POLL`).
 *
 * @since 0.4.0
 * @category models
 */
export type Options = internal.DatabaseOptions

/**
 * The notification channel an ask's row change is announced on.
 *
 * @since 0.4.0
 * @category constants
 */
export const ASK_CHANNEL = internal.ASK_CHANNEL

/**
 * The notification channel a claim is announced on (payload: the owner's id).
 *
 * @since 0.4.0
 * @category constants
 */
export const ANSWER_CHANNEL = internal.ANSWER_CHANNEL

/**
 * The default poll interval of the rows when no notification came.
 *
 * @since 0.4.0
 * @category constants
 */
export const POLL = internal.POLL

/**
 * Builds `Approvals.Service` over every process's rows on the database in context.
 *
 * @since 0.4.0
 * @category constructors
 */
export const make = internal.makeDatabase

/**
 * `Approvals.Service` over every process's rows on the database in context, listening through `Notifications`
 * (`Notifications.silent` polls only).
 *
 * @since 0.4.0
 * @category layers
 */
export const layer = internal.layerDatabase
