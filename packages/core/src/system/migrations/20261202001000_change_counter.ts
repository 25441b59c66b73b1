/**
 * Creates the Postgres change counter (`toolgate_change`, one row) and the triggers that move it whenever a saved
 * approval or a session changes, in the transaction of the change; `PermissionSaved.changeStamp` reads it. Nothing on
 * SQLite, whose `data_version` does the same. See docs/database.md.
 *
 * @since 0.3.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as SqlDialect from "../internal/sql-dialect.js"

/** The migration. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* SqlDialect.createChangeCounter(sql)
  for (const table of SqlDialect.WATCHED_TABLES) yield* SqlDialect.watchChanges(sql, table)
})
