/**
 * Adds `project.root_commit`: the first root commit a project id was first seen with, so a later claim of the same id
 * (an origin URL or cached id written into another repository's `.git`) can be refused. See docs/trust/approvals.md.
 *
 * @since 0.2.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/** The migration. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`ALTER TABLE project ADD COLUMN root_commit TEXT`)
})
