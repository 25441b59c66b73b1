/**
 * Creates `project` and `session`: the minimal columns this library reads.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { NOW_MS } from "./now.js"

/** The migration. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE project (
  id TEXT PRIMARY KEY NOT NULL,
  worktree TEXT NOT NULL,
  time_created INTEGER NOT NULL DEFAULT ${NOW_MS},
  time_updated INTEGER NOT NULL DEFAULT ${NOW_MS}
)`)
  yield* sql.unsafe(`CREATE TABLE session (
  id TEXT PRIMARY KEY NOT NULL,
  project_id TEXT NOT NULL,
  directory TEXT NOT NULL,
  agent TEXT,
  time_created INTEGER NOT NULL DEFAULT ${NOW_MS},
  time_updated INTEGER NOT NULL DEFAULT ${NOW_MS},
  CONSTRAINT fk_session_project_id_project_id_fk FOREIGN KEY (project_id) REFERENCES project(id) ON DELETE CASCADE
)`)
  yield* sql.unsafe(`CREATE INDEX session_project_idx ON session (project_id)`)
})
