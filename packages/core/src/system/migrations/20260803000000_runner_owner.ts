/**
 * Creates `runner_owner`, one row per live runner with the time its lease runs out, and gives each `tool_call` the
 * owner that recorded it. A starting runner fails only the unfinished calls whose owner's lease has expired (or that
 * have no owner), so runners sharing one database leave each other's live calls alone. See docs/database.md.
 *
 * @since 0.2.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as SqlDialect from "../internal/sql-dialect.js"

/** The migration. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const { bigint, nowMs } = SqlDialect.of(sql)
  yield* sql.unsafe(`CREATE TABLE runner_owner (
  id TEXT PRIMARY KEY NOT NULL,
  pid INTEGER NOT NULL,
  hostname TEXT NOT NULL,
  instance TEXT,
  lease_expires ${bigint} NOT NULL,
  time_created ${bigint} NOT NULL DEFAULT ${nowMs},
  time_updated ${bigint} NOT NULL DEFAULT ${nowMs}
)`)
  yield* sql.unsafe(`CREATE INDEX runner_owner_instance_idx ON runner_owner (instance)`)
  yield* sql.unsafe(`ALTER TABLE tool_call ADD COLUMN owner_id TEXT`)
  yield* sql.unsafe(`CREATE INDEX tool_call_owner_idx ON tool_call (owner_id)`)
})
