/**
 * Creates `pending_ask`: on Postgres, one row per ask that waits in some process's queue, so an approval server on
 * another host can list, show and answer it. The asking process (`owner_id`, a `runner_owner` row with a lease)
 * inserts it `pending`; an answer from anywhere claims it (`claimed`, with `answer` as JSON); the owner applies the
 * claim and marks the row `settled` when the entry leaves its queue. `prompt` is the encoded `Approvals.Prompt`;
 * `deadline`, `time_created` and `time_updated` are epoch milliseconds. The table exists on SQLite too (one set of
 * migrations) but no row is written there. See docs/approvals.md.
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
  yield* sql.unsafe(`CREATE TABLE pending_ask (
  id TEXT PRIMARY KEY NOT NULL,
  owner_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  directory TEXT NOT NULL,
  session_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  prompt TEXT NOT NULL,
  status TEXT NOT NULL,
  answer TEXT,
  deadline ${bigint},
  time_created ${bigint} NOT NULL,
  time_updated ${bigint} NOT NULL
)`)
  yield* sql.unsafe(`CREATE INDEX pending_ask_status_owner_idx ON pending_ask (status, owner_id)`)
  yield* sql.unsafe(`CREATE INDEX pending_ask_session_idx ON pending_ask (session_id)`)
})
