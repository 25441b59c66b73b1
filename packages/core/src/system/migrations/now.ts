/**
 * The SQLite default for `time_created` / `time_updated` (epoch milliseconds). Kept for migrations written before
 * Postgres; a migration uses `SqlDialect.of(sql).nowMs` (and `.bigint` for the column type) so it runs on both.
 *
 * @since 0.1.0
 */
import * as SqlDialect from "../internal/sql-dialect.js"

/**
 * The SQLite expression; see `SqlDialect.sqlite.nowMs`.
 *
 * @since 0.1.0
 * @category constants
 */
export const NOW_MS = SqlDialect.sqlite.nowMs
