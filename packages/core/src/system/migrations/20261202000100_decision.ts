/**
 * Creates `decision`: the decision journal, one row per evaluation, ask, answer, expiry, release, cascade or revoke.
 * No foreign keys: entries outlive the sessions and saved approvals they name (retention removes them). `time` is
 * epoch milliseconds as a 64-bit integer; `resources` and `detail` are JSON text. See docs/decisions.md.
 *
 * @since 0.3.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/** The migration. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE decision (
  id TEXT PRIMARY KEY NOT NULL,
  time BIGINT NOT NULL,
  project_id TEXT NOT NULL,
  session_id TEXT,
  request_id TEXT,
  kind TEXT NOT NULL,
  action TEXT NOT NULL,
  resources TEXT NOT NULL,
  detail TEXT NOT NULL
)`)
  yield* sql.unsafe(`CREATE INDEX decision_project_time_idx ON decision (project_id, time)`)
  yield* sql.unsafe(`CREATE INDEX decision_session_time_idx ON decision (session_id, time)`)
  yield* sql.unsafe(`CREATE INDEX decision_time_idx ON decision (time)`)
})
