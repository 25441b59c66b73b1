/**
 * `@toolgate/core/server`: the HTTP approval server — `ApprovalServer.layer` serves a Location's pending asks,
 * answers, saved approvals and live events over HTTP with a web page, and `ApprovalApi` is its `HttpApi` definition
 * (for typed clients and the OpenAPI document). Not in the main entry: it loads the HTTP server.
 *
 * @since 0.3.0
 * @category modules
 */
export * as ApprovalServer from "../serve/approval-server.js"
/**
 * The approval API as an `HttpApi`: endpoints, shared schemas, errors with their statuses, bearer security.
 *
 * @since 0.3.0
 * @category modules
 */
export * as ApprovalApi from "../serve/approval-api.js"
