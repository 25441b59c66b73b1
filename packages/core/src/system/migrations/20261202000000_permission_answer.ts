/**
 * Adds what a saved approval records about its answer: `answered_by` (who answered, as the client named them),
 * `channel` (through which channel: `cli`, `mcp`, `ai-sdk`, `http`, `test`, `in-process`, …) and `time_until` (until
 * when it applies, epoch milliseconds; `NULL`: until revoked). `time_created` already records when. Rows saved
 * before this migration keep `NULL` in all three: permanent, answerer unknown. See docs/approvals.md.
 *
 * @since 0.3.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as SqlDialect from "../internal/sql-dialect.js"

/** The migration. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const { bigint } = SqlDialect.of(sql)
  yield* sql.unsafe(`ALTER TABLE permission ADD COLUMN answered_by TEXT`)
  yield* sql.unsafe(`ALTER TABLE permission ADD COLUMN channel TEXT`)
  yield* sql.unsafe(`ALTER TABLE permission ADD COLUMN time_until ${bigint}`)
})
