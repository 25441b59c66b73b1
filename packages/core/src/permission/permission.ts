/**
 * PermissionV2: allow / deny / ask rules where the last match wins and no match means ask. Tools assert their own
 * permissions; asks suspend on a Deferred until a client replies once, always or reject. "always" approvals are
 * saved per project and consulted on every evaluation (through a view re-read whenever the database changed), but
 * never lift a configured deny.
 *
 * `ask` and `assert` run on every tool call, so they carry no tracing span (a span costs more than the rest of a
 * request); the other methods are traced.
 *
 * This module is the namespace embedders import; each concept lives in `internal/`: the values and events
 * (`schema.ts`), the failures (`error.ts`), the compiled evaluator (`evaluate.ts`), what leaves and prompts share
 * (`leaf.ts`) and the Location's service (`service.ts`, over the views of `view.ts`) with its queue (`queue.ts`).
 *
 * @since 0.1.0
 */

/**
 * Rules, requests, what `always` saves, the inputs of each method, and the `Asked` / `Replied` events.
 *
 * @since 0.3.0
 */
export * from "./internal/schema.js"
/**
 * `BlockedError`, `CorrectedError`, `DeclinedError`, `NotFoundError`, `SaveError` (the `Error` union of `assert` is
 * with the service).
 *
 * @since 0.3.0
 */
export * from "./internal/error.js"
/**
 * `evaluate` (last match wins), the explicit actions and resource prefixes, `merge`, `relevant`, `denyAll`.
 *
 * @since 0.3.0
 */
export * from "./internal/evaluate.js"
/**
 * `fromToolCall`, `toToolFailure`, `leafFailure`, `isDeclined`, `saveEntry`, `describeCommand`, `describeAlways`.
 *
 * @since 0.3.0
 */
export * from "./internal/leaf.js"
/**
 * `Service`, `Interface`, `Error`, `make`, `layer`, `PENDING_RECHECK_INTERVAL_MS`.
 *
 * @since 0.3.0
 */
export * from "./internal/service.js"
