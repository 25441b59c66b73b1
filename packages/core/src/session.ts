/**
 * The minimal session store the permission service needs, backed by the `session` table.
 *
 * @since 0.1.0
 */
import { Context, type Effect, Schema } from "effect"

/** A session id (`ses…`). */
export const ID = Schema.String.pipe(Schema.startsWith("ses"))
/** @see ID */
export type ID = typeof ID.Type

/** A stored session. */
export interface Info {
  readonly id: string
  readonly projectID: string
  readonly directory: string
  readonly agent?: string
}

/** No session with this id exists. */
export class NotFoundError extends Schema.TaggedError<NotFoundError>()("Session.NotFoundError", {
  sessionID: Schema.String,
}) {}

/** The session store. */
export interface Interface {
  /** Creates a session in the current Location's project; `id` defaults to a fresh `ses_…` id. */
  readonly create: (input?: { readonly id?: string; readonly agent?: string }) => Effect.Effect<Info>
  readonly get: (sessionID: string) => Effect.Effect<Info | undefined>
}

/** The SessionV2 service. */
export class Service extends Context.Tag("@toolgate/v2/Session")<Service, Interface>() {}
