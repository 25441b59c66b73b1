/**
 * Adds `permission.directory`: the directory a saved approval is limited to. Rows of a real project keep `""` (the
 * whole project); rows of the `global` project carry the Location directory they were approved in, so one non-git
 * directory's approvals never apply in another. Rows saved before this migration for `global` keep `""` and are
 * therefore no longer applied anywhere (they stay listed and revocable). See docs/trust/approvals.md.
 *
 * @since 0.2.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/** The migration. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`ALTER TABLE permission ADD COLUMN directory TEXT NOT NULL DEFAULT ''`)
  yield* sql.unsafe(`DROP INDEX permission_project_action_resource_idx`)
  yield* sql.unsafe(
    `CREATE UNIQUE INDEX permission_project_directory_action_resource_idx ON permission (project_id, directory, action, resource)`,
  )
})
