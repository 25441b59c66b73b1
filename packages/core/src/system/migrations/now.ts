/**
 * The SQL default for `time_created` / `time_updated`: the current time in epoch milliseconds, so rows inserted
 * directly (tests, embedders) satisfy the NOT NULL columns. Our own inserts pass `Date.now()` explicitly.
 *
 * @since 0.1.0
 */
export const NOW_MS = "(CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER))"
