/**
 * Pending asks shared by every process on one database: the process-wide service behind the port
 * `PermissionV2.SharedAsks`. On Postgres it mirrors every Location's pending asks into `pending_ask` and applies the
 * answers other processes claim; on SQLite it does nothing. `Core.layerProcess` provides it; an embedder that builds
 * its own process layer adds `layer`. See docs/approval-server.md.
 *
 * @since 0.4.0
 */
import * as internal from "./internal/shared-asks.js"

/**
 * Builds the service over the database in context; on Postgres it registers this process as an owner and starts the
 * claim listener, the poll and the settle writer in the layer's scope.
 *
 * @since 0.4.0
 * @category constructors
 */
export const make = internal.make

/**
 * The service as a layer over the database and notifications in context.
 *
 * @since 0.4.0
 * @category layers
 */
export const layer = internal.layerShared
