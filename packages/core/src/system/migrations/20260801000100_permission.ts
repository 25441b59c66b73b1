/**
 * Creates the V2 `permission` table of saved approvals: one row per (project, action, resource).
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
  yield* sql.unsafe(`CREATE TABLE permission (
  id TEXT PRIMARY KEY NOT NULL,
  project_id TEXT NOT NULL,
  action TEXT NOT NULL,
  resource TEXT NOT NULL,
  time_created ${bigint} NOT NULL DEFAULT ${nowMs},
  time_updated ${bigint} NOT NULL DEFAULT ${nowMs},
  CONSTRAINT fk_permission_project_id_project_id_fk FOREIGN KEY (project_id) REFERENCES project(id) ON DELETE CASCADE
)`)
  yield* sql.unsafe(
    `CREATE UNIQUE INDEX permission_project_action_resource_idx ON permission (project_id, action, resource)`,
  )
})
