/**
 * Creates `todo`: a session's todo list, one row per position.
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
  yield* sql.unsafe(`CREATE TABLE todo (
  session_id TEXT NOT NULL,
  content TEXT NOT NULL,
  status TEXT NOT NULL,
  priority TEXT NOT NULL,
  position INTEGER NOT NULL,
  time_created ${bigint} NOT NULL DEFAULT ${nowMs},
  time_updated ${bigint} NOT NULL DEFAULT ${nowMs},
  PRIMARY KEY (session_id, position),
  CONSTRAINT fk_todo_session_id_session_id_fk FOREIGN KEY (session_id) REFERENCES session(id) ON DELETE CASCADE
)`)
  yield* sql.unsafe(`CREATE INDEX todo_session_idx ON todo (session_id)`)
})
