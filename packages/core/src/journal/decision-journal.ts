/**
 * DecisionJournal: every decision of the permission gate, appended to the `decision` table — each evaluation per
 * resource with the rule that decided and where it came from, each ask, answer (who, through which channel, the
 * choice and what it saved), expiry, release by a saved approval, same-session cascade and revoke. Process-wide;
 * `toolgate decisions` prints it. See docs/decisions.md.
 *
 * This module is the namespace embedders import: the values live in `internal/schema.ts`, the service in
 * `internal/service.ts` (over the statements of `internal/store.ts`), the Location-scoped retention job in
 * `internal/retention.ts`.
 *
 * @since 0.3.0
 */

/**
 * `Kind`, `Origin`, `ResourceDecision`, each kind's detail, `Entry`, `Draft`, `Query`, `Prune`.
 *
 * @since 0.3.0
 */
export * from "./internal/schema.js"
/**
 * `Interface`, `Service`, `layer`, `make`, `createID`, `FLUSH_INTERVAL_MS`, `FLUSH_BATCH`, `MAX_BUFFERED`.
 *
 * @since 0.3.0
 */
export * from "./internal/service.js"
/**
 * `layerRetention`, `retentionOf`, `pruneOf`, `Retention`, `DEFAULT_RETENTION_DAYS`, `PRUNE_INTERVAL`.
 *
 * @since 0.3.0
 */
export * from "./internal/retention.js"
