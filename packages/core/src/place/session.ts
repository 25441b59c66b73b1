/**
 * The minimal session store the permission service needs, backed by the `session` table.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Database from "../system/database.js"
import * as Identifier from "../values/identifier.js"
import * as Location from "./location.js"

/**
 * A session id (`ses…`).
 *
 * @since 0.1.0
 * @category constants
 */
export const ID = Schema.String.pipe(Schema.startsWith("ses"))
/**
 * @see ID
 *
 * @since 0.1.0
 * @category models
 */
export type ID = typeof ID.Type

/**
 * A stored session.
 *
 * @since 0.1.0
 * @category models
 */
export interface Info {
  readonly id: string
  readonly projectID: string
  readonly directory: string
  readonly agent?: string
}

/**
 * No session with this id exists.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFoundError extends Schema.TaggedError<NotFoundError>()("Session.NotFoundError", {
  sessionID: Schema.String,
}) {}

/**
 * The session store.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /** Creates a session in the current Location's project; `id` defaults to a fresh `ses_…` id. */
  readonly create: (input?: { readonly id?: string; readonly agent?: string }) => Effect.Effect<Info>
  readonly get: (sessionID: string) => Effect.Effect<Info | undefined>
}

/**
 * The SessionV2 service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Session")<Service, Interface>() {}

interface Row {
  readonly id: string
  readonly project_id: string
  readonly directory: string
  readonly agent: string | null
}

const toInfo = (row: Row): Info => ({
  id: row.id,
  projectID: row.project_id,
  directory: row.directory,
  ...(row.agent !== null ? { agent: row.agent } : {}),
})

/**
 * The session store on the `session` table. New sessions belong to the current Location's project and directory.
 * Database errors, and a given id without the `ses` prefix, are defects.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, SqlClient.SqlClient | Location.Service> = Layer.effect(
  Service,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const location = yield* Location.Service

    const create = Effect.fn("SessionV2.create")(function* (input?: { readonly id?: string; readonly agent?: string }) {
      const id =
        input?.id === undefined ? Identifier.create("ses") : yield* Schema.decode(ID)(input.id).pipe(Effect.orDie)
      const now = Date.now()
      const info: Info = {
        id,
        projectID: location.project.id,
        directory: location.directory,
        ...(input?.agent !== undefined ? { agent: input.agent } : {}),
      }
      yield* sql`INSERT INTO session (id, project_id, directory, agent, time_created, time_updated)
        VALUES (${id}, ${info.projectID}, ${info.directory}, ${input?.agent ?? null}, ${now}, ${now})`.pipe(
        Database.orDie(sql),
      )
      return info
    })

    const get = Effect.fn("SessionV2.get")(function* (sessionID: string) {
      const rows = yield* sql<Row>`SELECT id, project_id, directory, agent FROM session WHERE id = ${sessionID}`.pipe(
        Database.orDie(sql),
      )
      const row = rows[0]
      return row === undefined ? undefined : toInfo(row)
    })

    return Service.of({ create, get })
  }),
)
