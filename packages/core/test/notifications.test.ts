/**
 * `Notifications`: on Postgres a payload notified on a channel reaches every subscription to it (of this pool or
 * another), a notify inside a transaction is delivered on commit and not at all on rollback, and a subscription
 * whose connection is terminated fails with `Notifications.ListenError`; on SQLite nothing is delivered.
 */
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, Fiber, Layer, Option, Stream } from "effect"
import { Database } from "../src/index.js"
import * as Notifications from "../src/system/notifications.js"
import * as Engines from "./support/engines.js"

const stack = (layer: Layer.Layer<Database.Client>) => Notifications.layer.pipe(Layer.provideMerge(layer))

/** The next `n` payloads of a subscription. */
const take = (stream: Stream.Stream<string, Notifications.ListenError>, n: number) =>
  Effect.map(Stream.runCollect(Stream.take(stream, n)), Chunk.toReadonlyArray)

Engines.describeEach(
  "Notifications",
  (engine) => {
    it.scoped("a payload reaches the subscriptions of two pools on one database, once each", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const one = yield* Layer.build(stack(Database.layerUrl(url)))
        const two = yield* Layer.build(stack(Database.layerUrl(url)))
        const mine = yield* Effect.provide(
          Effect.flatMap(Notifications.Service, (n) => n.subscribe("toolgate_test")),
          one,
        )
        const theirs = yield* Effect.provide(
          Effect.flatMap(Notifications.Service, (n) => n.subscribe("toolgate_test")),
          two,
        )
        const heard = yield* Effect.fork(Effect.all([take(mine, 2), take(theirs, 2)]))
        yield* Effect.provide(
          Effect.flatMap(Notifications.Service, (n) =>
            Effect.zipRight(n.notify("toolgate_test", "a"), n.notify("toolgate_test", "b")),
          ),
          two,
        )
        expect(yield* Fiber.join(heard)).toEqual([
          ["a", "b"],
          ["a", "b"],
        ])
      }),
    )

    it.scoped("a notify inside a transaction is delivered on commit, and not at all on rollback", () =>
      Effect.gen(function* () {
        const context = yield* Layer.build(stack(engine.layer()))
        yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const notifications = yield* Notifications.Service
          const stream = yield* notifications.subscribe("toolgate_test_tx")
          const heard = yield* Effect.fork(take(stream, 1))
          yield* Effect.exit(
            sql.withTransaction(
              Effect.zipRight(notifications.notify("toolgate_test_tx", "rolled back"), Effect.fail("no")),
            ),
          )
          yield* sql.withTransaction(notifications.notify("toolgate_test_tx", "committed"))
          expect(yield* Fiber.join(heard)).toEqual(["committed"])
        }).pipe(Effect.provide(context))
      }),
    )

    it.scoped("a subscription whose connection is terminated fails with ListenError", () =>
      Effect.gen(function* () {
        const context = yield* Layer.build(stack(engine.layer()))
        yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const notifications = yield* Notifications.Service
          const stream = yield* notifications.subscribe("toolgate_test_kill")
          const ended = yield* Effect.fork(Stream.runDrain(stream))
          // The subscription's own backend: the only one of this application name listening on the channel.
          yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE application_name = 'toolgate-listen' AND query = 'LISTEN "toolgate_test_kill"'`
          const exit = yield* Fiber.await(ended)
          const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
          expect(Option.map(failure, (error) => [error._tag, error.channel])).toEqual(
            Option.some(["Notifications.ListenError", "toolgate_test_kill"]),
          )
        }).pipe(Effect.provide(context))
      }),
    )
  },
  Engines.postgresOnly,
)

it.scoped("on SQLite nothing is delivered and notify does nothing", () =>
  Effect.gen(function* () {
    const context = yield* Layer.build(stack(Database.layerMemory))
    yield* Effect.gen(function* () {
      const notifications = yield* Notifications.Service
      expect(notifications.delivers).toBe(false)
      const stream = yield* notifications.subscribe("toolgate_test")
      const heard = yield* Effect.fork(take(stream, 1))
      yield* notifications.notify("toolgate_test", "a")
      yield* Effect.yieldNow()
      expect(heard.unsafePoll()).toBeNull()
      yield* Fiber.interrupt(heard)
      const bad = yield* Effect.exit(notifications.subscribe("Not A Channel"))
      expect(bad).toEqual(
        Exit.fail(
          new Notifications.ListenError({ channel: "Not A Channel", message: 'not a channel name: "Not A Channel"' }),
        ),
      )
    }).pipe(Effect.provide(context))
  }),
)
