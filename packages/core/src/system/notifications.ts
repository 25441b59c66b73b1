/**
 * LISTEN / NOTIFY on the database, for processes that share one Postgres: a process announces a change on a channel
 * (`notify`, inside the transaction that made it when there is one, so it is delivered on commit) and every process
 * subscribed to the channel hears the payload (`subscribe`, `listen`). On SQLite nothing is delivered (there is no
 * other host): `notify` does nothing and a subscription never emits. Notifications are a hint that something
 * changed, never the change itself: a listener re-reads the rows it cares about, and polls as well, since a
 * notification sent while its connection was down is lost. See docs/database.md.
 *
 * A subscription holds one dedicated connection (not one of the pool's), opened with the pool's settings and the
 * application name `toolgate-listen`. When that connection is lost (Postgres restarted, the backend was
 * terminated), the subscription's stream fails with `Notifications.ListenError`; subscribe again to listen again.
 *
 * @since 0.3.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SqlDialect from "./internal/sql-dialect.js"

/**
 * A subscription could not be made, or its connection was lost. `message` is one line naming the channel and the
 * cause.
 *
 * @since 0.3.0
 * @category errors
 */
export class ListenError extends Schema.TaggedError<ListenError>()("Notifications.ListenError", {
  channel: Schema.String,
  message: Schema.String,
}) {}

/**
 * The notifications of one database.
 *
 * @since 0.3.0
 * @category models
 */
export interface Interface {
  /** True on Postgres; on SQLite nothing is ever delivered. */
  readonly delivers: boolean
  /**
   * Starts listening on `channel`: once the effect succeeds the LISTEN is in force (so a listener reads the current
   * state right after, and hears every later change), and the stream emits each payload notified on the channel
   * until the scope closes. It fails with `ListenError` when the connection is lost. On SQLite: a stream that
   * never emits.
   */
  readonly subscribe: (channel: string) => Effect.Effect<Stream.Stream<string, ListenError>, ListenError, Scope.Scope>
  /** `subscribe` as one stream (the LISTEN starts when the stream is run). */
  readonly listen: (channel: string) => Stream.Stream<string, ListenError>
  /**
   * Notifies `channel` with `payload` (`SELECT pg_notify(…)` through the client, so inside a transaction it is sent
   * when the transaction commits, and not at all when it rolls back). Nothing on SQLite.
   */
  readonly notify: (channel: string, payload: string) => Effect.Effect<void, SqlError.SqlError>
}

/**
 * The Notifications service tag.
 *
 * @since 0.3.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Notifications")<Service, Interface>() {}

/** Channel names are plain identifiers (they are quoted into LISTEN). */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/

const checked = (channel: string): Effect.Effect<void, ListenError> =>
  CHANNEL.test(channel)
    ? Effect.void
    : Effect.fail(new ListenError({ channel, message: `not a channel name: ${JSON.stringify(channel)}` }))

/**
 * `notify` without the service: `SELECT pg_notify(channel, payload)` through `sql` on Postgres, nothing on SQLite.
 *
 * @since 0.3.0
 * @category utilities
 */
export const notifyWith = (
  sql: SqlClient.SqlClient,
  channel: string,
  payload: string,
): Effect.Effect<void, SqlError.SqlError> =>
  SqlDialect.of(sql).name === "pg" ? Effect.asVoid(sql`SELECT pg_notify(${channel}, ${payload})`) : Effect.void

/**
 * Notifications that are never delivered (SQLite, or a test that stands for a lost LISTEN connection); `notify`
 * still runs through `sql` when given.
 *
 * @since 0.3.0
 * @category constructors
 */
export const silent = (sql?: SqlClient.SqlClient): Interface => ({
  delivers: false,
  subscribe: (channel) => Effect.as(checked(channel), Stream.never),
  listen: (channel) => Stream.unwrap(Effect.as(checked(channel), Stream.never)),
  notify: (channel, payload) => (sql === undefined ? Effect.void : notifyWith(sql, channel, payload)),
})

/**
 * The notifications of the database behind `SqlClient.SqlClient`: on Postgres through a dedicated connection per
 * subscription (the Postgres driver is loaded only then; the client must come from `Database.layerUrl`, which
 * carries the pool's settings); on SQLite `silent`.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, SqlClient.SqlClient> = Layer.effect(
  Service,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    if (SqlDialect.of(sql).name !== "pg") return silent()
    const Postgres = yield* Effect.promise(() => import("./internal/notifications-postgres.js"))
    const open = yield* Postgres.opener((channel, message) => new ListenError({ channel, message }))
    const subscribe = (channel: string) => Effect.zipRight(checked(channel), open(channel))
    return Service.of({
      delivers: true,
      subscribe,
      listen: (channel) => Stream.unwrapScoped(subscribe(channel)),
      notify: (channel, payload) => notifyWith(sql, channel, payload),
    })
  }),
)
