/**
 * Creates `tool_call`: the runner's durable record of every tool call, written before any side effect, so a crash
 * mid-tool is visible and marked interrupted on the next start.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as SqlDialect from "../internal/sql-dialect.js"

/** The migration. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const { bigint, nowMs } = SqlDialect.of(sql)
  yield* sql.unsafe(`CREATE TABLE tool_call (
  session_id TEXT NOT NULL,
  assistant_message_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  name TEXT NOT NULL,
  input TEXT NOT NULL,
  provider_executed INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  result TEXT,
  error TEXT,
  time_created ${bigint} NOT NULL DEFAULT ${nowMs},
  time_updated ${bigint} NOT NULL DEFAULT ${nowMs},
  PRIMARY KEY (session_id, assistant_message_id, call_id),
  CONSTRAINT fk_tool_call_session_id_session_id_fk FOREIGN KEY (session_id) REFERENCES session(id) ON DELETE CASCADE
)`)
  yield* sql.unsafe(`CREATE INDEX tool_call_status_idx ON tool_call (status)`)
})
