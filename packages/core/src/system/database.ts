/**
 * The SQLite database (P10): one `better-sqlite3` connection on `<data>/toolgate.db` in WAL mode, with foreign keys
 * enforced and a busy timeout, migrated on start. The layers expose `SqlClient.SqlClient` (and the sqlite-specific
 * `SqliteClient.SqliteClient`); other modules query through `SqlClient.SqlClient`.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient, SqliteMigrator } from "@effect/sql-sqlite-node"
import { Effect, Layer } from "effect"
import projectSession from "./migrations/20260801000000_project_session.js"
import permission from "./migrations/20260801000100_permission.js"
import todo from "./migrations/20260801000200_todo.js"
import toolCall from "./migrations/20260801000300_tool_call.js"
import permissionDirectory from "./migrations/20260802000000_permission_directory.js"
import projectRoot from "./migrations/20260802000100_project_root.js"
import * as Global from "./global.js"

/** How long a statement waits for another process's write lock before failing with `SQLITE_BUSY`. */
export const BUSY_TIMEOUT_MS = 5000

/** The migrations, keyed `<yyyymmddhhmmss>_<name>`, applied in id order. */
export const migrations: Readonly<Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>> = {
  "20260801000000_project_session": projectSession,
  "20260801000100_permission": permission,
  "20260801000200_todo": todo,
  "20260801000300_tool_call": toolCall,
  "20260802000000_permission_directory": permissionDirectory,
  "20260802000100_project_root": projectRoot,
}

/** What the database layers provide. */
export type Client = SqlClient.SqlClient | SqliteClient.SqliteClient

/**
 * Connection setup. The sqlite client holds exactly one connection for its lifetime, so running the pragmas once
 * after it opens covers "every connection". `foreign_keys` must be set outside a transaction, hence before migrating.
 */
const configure = Layer.effectDiscard(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
    yield* sql.unsafe("PRAGMA foreign_keys = ON")
  }),
)

const migrate = SqliteMigrator.layer({ loader: SqliteMigrator.fromRecord(migrations) }).pipe(
  Layer.provide(NodeContext.layer),
)

/** A migrated database in `filename` (`:memory:` for a private in-memory one). Open failures are defects. */
export const layerFile = (filename: string): Layer.Layer<Client> =>
  migrate.pipe(Layer.provideMerge(configure.pipe(Layer.provideMerge(SqliteClient.layer({ filename })))), Layer.orDie)

/** The process-wide database at `Global.database(global)`; creates the data directory. */
export const layer: Layer.Layer<Client, never, Global.Service> = Layer.unwrapEffect(
  Effect.gen(function* () {
    const filename = Global.database(yield* Global.Service)
    yield* Effect.sync(() => fs.mkdirSync(path.dirname(filename), { recursive: true }))
    return layerFile(filename)
  }),
)

/** A fresh, migrated in-memory database per build; for tests. */
export const layerMemory: Layer.Layer<Client> = layerFile(":memory:")
