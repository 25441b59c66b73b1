/**
 * Postgres LISTEN for `Notifications`: one dedicated `pg` connection per subscription, opened with the settings of
 * the pool `Database.layerUrl` built (read from the `PgClient` in the context). Loaded only on Postgres.
 *
 * @since 0.3.0
 * @internal
 */
import { createRequire } from "node:module"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as CorePackage from "../core-package.js"
import * as DatabaseError from "../database-error.js"

/** The parts of a `pg` client a subscription uses. */
interface RawClient {
  readonly connect: () => Promise<void>
  readonly query: (text: string) => Promise<unknown>
  readonly end: () => Promise<void>
  readonly on: (event: string, listener: (value: never) => void) => void
  readonly removeAllListeners: () => void
}
type RawConstructor = new (options: Record<string, unknown>) => RawClient

/**
 * The application name of a subscription's connection (`pg_stat_activity.application_name`).
 *
 * @since 0.3.0
 * @internal
 * @category constants
 */
export const APPLICATION_NAME = "toolgate-listen"

/**
 * The function that opens a subscription (failing with what `listenError` builds), from the `PgClient` in the context (a defect when there is none: the
 * `SqlClient` then did not come from `Database.layerUrl`).
 *
 * @internal
 * @category constructors
 */
export const opener = <E>(
  listenError: (channel: string, message: string) => E,
): Effect.Effect<(channel: string) => Effect.Effect<Stream.Stream<string, E>, E, Scope.Scope>> =>
  Effect.gen(function* () {
    const client = yield* Effect.serviceOption(PgClient.PgClient)
    if (Option.isNone(client)) {
      return yield* Effect.dieMessage(
        "Notifications: a Postgres SqlClient without its PgClient (use Database.layerUrl)",
      )
    }
    const config = client.value.config
    const Raw = (
      createRequire(CorePackage.require.resolve("@effect/sql-pg"))("pg") as { readonly Client: RawConstructor }
    ).Client
    const options: Record<string, unknown> = {
      ...(config.url === undefined ? {} : { connectionString: Redacted.value(config.url) }),
      ...(config.host === undefined ? {} : { host: config.host }),
      ...(config.port === undefined ? {} : { port: config.port }),
      ...(config.database === undefined ? {} : { database: config.database }),
      ...(config.username === undefined ? {} : { user: config.username }),
      ...(config.password === undefined ? {} : { password: Redacted.value(config.password) }),
      ...(config.ssl === undefined ? {} : { ssl: config.ssl }),
      connectionTimeoutMillis: Duration.toMillis(Duration.decode(config.connectTimeout ?? "10 seconds")),
      application_name: APPLICATION_NAME,
    }
    return (channel: string) =>
      Effect.gen(function* () {
        const failure = (cause: unknown) => listenError(channel, `LISTEN ${channel}: ${DatabaseError.describe(cause)}`)
        const mailbox = yield* Mailbox.make<string, E>()
        const raw = yield* Effect.acquireRelease(
          Effect.tryPromise({
            try: async () => {
              const raw = new Raw(options)
              // A connection that fails while connecting emits `error` too: keep it from being an unhandled error.
              raw.on("error", (error: never) => void mailbox.unsafeDone(Exit.fail(failure(error))))
              raw.on("end", () => void mailbox.unsafeDone(Exit.fail(failure(new Error("the connection ended")))))
              raw.on("notification", (message: never) => {
                const { channel: heard, payload } = message as { readonly channel: string; readonly payload?: string }
                if (heard === channel && payload !== undefined) mailbox.unsafeOffer(payload)
              })
              try {
                await raw.connect()
              } catch (error) {
                raw.removeAllListeners()
                throw error
              }
              return raw
            },
            catch: failure,
          }),
          (raw) =>
            Effect.promise(() => {
              raw.removeAllListeners()
              raw.on("error", () => {})
              return raw.end().catch(() => undefined)
            }).pipe(Effect.timeoutOption(1000)),
        )
        yield* Effect.tryPromise({ try: () => raw.query(`LISTEN "${channel}"`), catch: failure })
        return Mailbox.toStream(mailbox)
      })
  })
