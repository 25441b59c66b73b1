/**
 * Creates `project` and `session`: the minimal columns this library reads.
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
  yield* sql.unsafe(`CREATE TABLE project (
  id TEXT PRIMARY KEY NOT NULL,
  worktree TEXT NOT NULL,
  time_created ${bigint} NOT NULL DEFAULT ${nowMs},
  time_updated ${bigint} NOT NULL DEFAULT ${nowMs}
)`)
  yield* sql.unsafe(`CREATE TABLE session (
  id TEXT PRIMARY KEY NOT NULL,
  project_id TEXT NOT NULL,
  directory TEXT NOT NULL,
  agent TEXT,
  time_created ${bigint} NOT NULL DEFAULT ${nowMs},
  time_updated ${bigint} NOT NULL DEFAULT ${nowMs},
  CONSTRAINT fk_session_project_id_project_id_fk FOREIGN KEY (project_id) REFERENCES project(id) ON DELETE CASCADE
)`)
  yield* sql.unsafe(`CREATE INDEX session_project_idx ON session (project_id)`)
})
