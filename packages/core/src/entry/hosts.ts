/**
 * `@toolgate/core/hosts`: pending asks shared by every process on one database — `SharedAsks`, the process-wide
 * service behind `PermissionV2.SharedAsks` (`Core.layerProcess` provides it), and `ApprovalsDatabase`, the approval
 * protocol with no Location that an approval server on another host serves.
 *
 * @since 0.4.0
 * @category modules
 */
export * as SharedAsks from "../hosts/shared-asks.js"
/**
 * The approval protocol over every asking process's `pending_ask` rows, with no Location.
 *
 * @since 0.4.0
 * @category modules
 */
export * as ApprovalsDatabase from "../hosts/approvals-database.js"
