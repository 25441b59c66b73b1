/**
 * The pending-ask queue and its release: the in-memory views of saved rows and sessions follow every change (a save,
 * a revoke, a deleted session — through this connection or another one), a release publishes in queue order and
 * every kind of subscriber sees the same events, and a listener failure part-way through a release leaves the rest
 * pending.
 */
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Context, Effect, Exit, Fiber, Layer, Option, Queue, Scope, Stream } from "effect"
import { Database, EventV2, Location, PermissionSaved, PermissionV2, SessionV2 } from "../src/index.js"
import { tempDir } from "./support/location.js"
import { buildStack, fixture, type Services, withMemoryStack } from "./support/permission-stack.js"

const base = {
  sessionID: "ses_test",
  action: "read",
  resources: ["src/index.ts"],
} satisfies PermissionV2.AssertInput

const scoped = <A, E>(name: string, body: () => Effect.Effect<A, E, Services | Scope.Scope>) =>
  it.scoped(name, () => Effect.flatMap(tempDir(), (dir) => withMemoryStack(dir, body())))

const failureOf = (exit: Exit.Exit<unknown, unknown>): unknown =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

/** The scope the permission service of the current Location saves under (`global`: this directory only). */
const savedScope = Effect.map(Location.Service, (location) => ({
  projectID: location.project.id,
  directory: location.directory,
}))

/** Runs `effect` on a second connection to the database file, opened and closed around it. */
const onOtherConnection = <A, E>(
  file: string,
  effect: Effect.Effect<A, E, Database.Client | PermissionSaved.Service>,
) =>
  Effect.scoped(
    Effect.flatMap(Layer.build(PermissionSaved.layer.pipe(Layer.provideMerge(Database.layerFile(file)))), (context) =>
      Effect.provide(effect, context),
    ),
  )

/** A stack on a database file in a fresh temp Location; returns the file too. */
const fileStack = Effect.gen(function* () {
  const dir = yield* tempDir()
  const file = path.join(yield* tempDir("toolgate-db-"), "toolgate.db")
  const context = yield* buildStack(dir, Database.layerFile(file))
  return { file, context }
})

describe("PermissionV2 pending asks", () => {
  scoped("a revoke through this process is honoured by the next ask", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const saved = yield* PermissionSaved.Service
      const where = yield* savedScope
      const first = yield* f.permission.ask({ ...base, id: "per_1", save: ["src/*"] })
      expect(first.effect).toBe("ask")
      yield* f.permission.reply({ requestID: "per_1", reply: "always" })
      expect((yield* f.permission.ask({ ...base, id: "per_2", resources: ["src/q.ts"] })).effect).toBe("allow")
      const [row] = yield* saved.list(where)
      yield* saved.remove(row!.id)
      expect((yield* f.permission.ask({ ...base, id: "per_3", resources: ["src/q.ts"] })).effect).toBe("ask")
      // Saved again, then deleted with plain SQL on the same connection: also seen.
      yield* saved.add({ ...where, action: "read", resources: ["lib/*"] })
      expect((yield* f.permission.ask({ ...base, id: "per_4", resources: ["lib/a.ts"] })).effect).toBe("allow")
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM permission`
      expect((yield* f.permission.ask({ ...base, id: "per_5", resources: ["lib/a.ts"] })).effect).toBe("ask")
      expect(yield* f.permission.check({ sessionID: "ses_test", action: "read", resources: ["lib/a.ts"] })).toEqual([
        "ask",
      ])
      expect((yield* f.permission.list()).map((request) => request.id)).toEqual(["per_3", "per_5"])
    }),
  )

  scoped("check answers each resource as assert decides it, a wildcard-action approval of protected_path too", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const saved = yield* PermissionSaved.Service
      yield* f.setRules([{ action: "protected_path", resource: "*", effect: "allow" }])
      const input = { sessionID: "ses_test", action: "protected_path", resources: ["toolgate.json"] }
      expect(yield* f.permission.check(input)).toEqual(["allow"])
      expect((yield* f.permission.ask({ ...input, id: "per_pp_1" })).effect).toBe("allow")
      // An approval whose action is a wildcard never allows protected_path; under the evaluation's last-match rule
      // it turns the configured allow into an ask, for assert and check alike.
      yield* saved.add({ ...(yield* savedScope), action: "*", resources: ["*"] })
      expect(yield* f.permission.check(input)).toEqual(["ask"])
      expect((yield* f.permission.ask({ ...input, id: "per_pp_2" })).effect).toBe("ask")
    }),
  )

  scoped("a save between queueing and the release is honoured by the release", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const saved = yield* PermissionSaved.Service
      const where = yield* savedScope
      yield* f.permission.ask({ ...base, id: "per_src", save: ["src/*"] })
      yield* f.permission.ask({ ...base, id: "per_lib", resources: ["lib/a.ts"] })
      yield* f.permission.ask({ ...base, id: "per_doc", resources: ["doc/a.md"] })
      // Saved by someone else (another Location of this process) after per_lib was queued.
      yield* saved.add({ ...where, action: "read", resources: ["lib/*"] })
      yield* f.permission.reply({ requestID: "per_src", reply: "always" })
      expect(f.replied().map((data) => data.requestID)).toEqual(["per_src", "per_lib"])
      expect((yield* f.permission.list()).map((request) => request.id)).toEqual(["per_doc"])
    }),
  )

  scoped("a session deleted after it was looked up is not found by the next ask", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.sessions.create({ id: "ses_short", agent: "test" })
      expect((yield* f.permission.ask({ ...base, id: "per_1", sessionID: "ses_short" })).effect).toBe("ask")
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM session WHERE id = 'ses_short'`
      const error = failureOf(yield* Effect.exit(f.permission.ask({ ...base, id: "per_2", sessionID: "ses_short" })))
      expect(error).toBeInstanceOf(SessionV2.NotFoundError)
      // The entry queued before stays pending: its session is gone, so the release skips it.
      yield* f.permission.ask({ ...base, id: "per_3", save: ["src/*"] })
      yield* f.permission.reply({ requestID: "per_3", reply: "always" })
      expect((yield* f.permission.list()).map((request) => request.id)).toEqual(["per_1"])
    }),
  )

  it.scoped("saves, revokes and deleted sessions committed by another connection are seen", () =>
    Effect.gen(function* () {
      const { file, context } = yield* fileStack
      const f = yield* Effect.provide(fixture, context)
      const where = yield* Effect.provide(savedScope, context)
      const saved = Context.get(context, PermissionSaved.Service)
      yield* f.sessions.create({ id: "ses_two", agent: "test" })
      yield* f.permission.ask({ ...base, id: "per_src", save: ["src/*"] })
      yield* f.permission.ask({ ...base, id: "per_lib", resources: ["lib/a.ts"] })
      yield* f.permission.ask({ ...base, id: "per_two", sessionID: "ses_two", resources: ["src/b.ts"] })
      // Another connection saves lib/* and deletes ses_two after both were read here.
      yield* onOtherConnection(
        file,
        Effect.gen(function* () {
          const other = yield* PermissionSaved.Service
          yield* other.add({ ...where, action: "read", resources: ["lib/*"] })
          const sql = yield* SqlClient.SqlClient
          yield* sql`DELETE FROM session WHERE id = 'ses_two'`
        }),
      )
      yield* f.permission.reply({ requestID: "per_src", reply: "always" })
      expect(f.replied().map((data) => data.requestID)).toEqual(["per_src", "per_lib"])
      expect((yield* f.permission.list()).map((request) => request.id)).toEqual(["per_two"])
      expect((yield* f.permission.ask({ ...base, id: "per_a", resources: ["lib/z.ts"] })).effect).toBe("allow")
      // A revoke by the other connection is seen by the very next ask.
      const row = (yield* saved.list(where)).find((info) => info.resource === "lib/*")!
      yield* onOtherConnection(
        file,
        Effect.flatMap(PermissionSaved.Service, (other) => other.remove(row.id)),
      )
      expect((yield* f.permission.ask({ ...base, id: "per_b", resources: ["lib/z.ts"] })).effect).toBe("ask")
      const gone = yield* Effect.exit(f.permission.ask({ ...base, id: "per_c", sessionID: "ses_two" }))
      expect(failureOf(gone)).toBeInstanceOf(SessionV2.NotFoundError)
    }),
  )

  scoped("a release publishes in queue order and every subscriber sees the same events", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.sessions.create({ id: "ses_b", agent: "test" })
      yield* f.sessions.create({ id: "ses_c", agent: "test" })
      const listened: Array<string> = []
      yield* f.events.listen((envelope) => void listened.push(envelope.id), ...PermissionV2.Event.Definitions)
      const queued = yield* f.events.queue(PermissionV2.Event.Replied)
      const stream = yield* f.events.subscribe()
      const streamed = yield* Effect.fork(Stream.runCollect(Stream.take(stream, 90)))
      const sessions = ["ses_test", "ses_b", "ses_c"]
      const expected: Array<string> = []
      const kept: Array<string> = []
      // 60 asks across three sessions; those outside src/ or of another action stay pending.
      for (let i = 0; i < 60; i++) {
        const id = `per_${String(i).padStart(2, "0")}`
        const resource = i % 4 === 3 ? `lib/${i}.ts` : `src/${i}.ts`
        const action = i % 7 === 5 ? "edit" : "read"
        yield* f.permission.ask({
          id,
          sessionID: sessions[i % 3]!,
          action,
          resources: [resource],
          ...(i === 0 ? { save: ["src/*"] } : {}),
        })
        if (i === 0) continue
        ;(resource.startsWith("src/") && action === "read" ? expected : kept).push(id)
      }
      yield* f.permission.reply({ requestID: "per_00", reply: "always" })
      expect(f.replied().map((data) => data.requestID)).toEqual(["per_00", ...expected])
      expect(f.replied().every((data) => data.reply === "always")).toBe(true)
      expect((yield* f.permission.list()).map((request) => request.id)).toEqual(kept)
      // The same envelopes, in the same order, for a listener, a queue and a stream.
      const replied = f.log.filter(EventV2.is(PermissionV2.Event.Replied))
      expect(Chunk.toReadonlyArray(yield* Queue.takeAll(queued)).map((envelope) => envelope.id)).toEqual(
        replied.map((envelope) => envelope.id),
      )
      expect(listened).toEqual(f.log.map((envelope) => envelope.id))
      expect(f.log.length).toBeGreaterThanOrEqual(90)
      const all = Chunk.toReadonlyArray(yield* Fiber.join(streamed)).map((envelope) => envelope.id)
      expect(all).toEqual(f.log.slice(0, 90).map((envelope) => envelope.id))
      // Envelope ids ascend in publish order.
      const ids = f.log.map((envelope) => envelope.id)
      expect([...ids].sort()).toEqual(ids)
    }),
  )

  scoped("a reject cascade publishes in queue order and declines each one", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.sessions.create({ id: "ses_other", agent: "test" })
      const waiting = [] as Array<Fiber.RuntimeFiber<void, unknown>>
      for (const id of ["per_a", "per_b", "per_c", "per_d"]) {
        waiting.push(yield* f.waitForRequest({ ...base, id, sessionID: id === "per_c" ? "ses_other" : "ses_test" }))
      }
      yield* f.permission.reply({ requestID: "per_b", reply: "reject" })
      expect(f.replied()).toEqual([
        { sessionID: "ses_test", requestID: "per_b", reply: "reject" },
        { sessionID: "ses_test", requestID: "per_a", reply: "reject" },
        { sessionID: "ses_test", requestID: "per_d", reply: "reject" },
      ])
      for (const index of [0, 1, 3]) {
        const exit = yield* Fiber.await(waiting[index]!)
        expect(Exit.isFailure(exit) && PermissionV2.isDeclined(exit.cause)).toBe(true)
      }
      expect(waiting[2]!.unsafePoll()).toBeNull()
      expect((yield* f.permission.list()).map((request) => request.id)).toEqual(["per_c"])
    }),
  )

  scoped("a listener failure part-way through a release: earlier ones released, the rest pending", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const waiting = [] as Array<Fiber.RuntimeFiber<void, unknown>>
      for (const id of ["per_a", "per_b", "per_c", "per_d"]) {
        waiting.push(yield* f.waitForRequest({ ...base, id, resources: [`src/${id}.ts`], save: ["src/*"] }))
      }
      yield* f.events.listen((envelope) => {
        if (envelope.data.requestID === "per_c") throw new Error("listener down")
      }, PermissionV2.Event.Replied)
      const exit = yield* Effect.exit(f.permission.reply({ requestID: "per_a", reply: "always" }))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      for (const index of [0, 1]) expect(Exit.isSuccess(yield* Fiber.await(waiting[index]!))).toBe(true)
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
      for (const index of [2, 3]) expect(waiting[index]!.unsafePoll()).toBeNull()
      expect((yield* f.permission.list()).map((request) => request.id)).toEqual(["per_c", "per_d"])
      // The listener registered first saw per_c before the failing one threw.
      expect(f.replied().map((data) => data.requestID)).toEqual(["per_a", "per_b", "per_c"])
      for (const fiber of waiting.slice(2)) yield* Fiber.interrupt(fiber)
    }),
  )
})

/** A small deterministic PRNG (mulberry32), so a failing mix can be replayed from its seed. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

describe("PermissionV2 release against a model", () => {
  it.scoped("random mixes: released = the queued entries the model allows, in queue order; the rest stay", () =>
    Effect.gen(function* () {
      for (let seed = 1; seed <= 25; seed++) {
        const next = random(seed)
        const pick = <A>(values: ReadonlyArray<A>): A => values[Math.floor(next() * values.length)]!
        yield* Effect.scoped(
          Effect.gen(function* () {
            const dir = yield* tempDir()
            yield* withMemoryStack(
              dir,
              Effect.gen(function* () {
                const f = yield* fixture
                yield* f.setAgentRules("strict", [{ action: "read", resource: "lib/*", effect: "deny" }])
                for (const id of ["ses_b", "ses_gone"]) yield* f.sessions.create({ id, agent: "test" })
                yield* f.permission.ask({ ...base, id: "per_trigger", resources: ["src/t.ts"], save: ["src/*"] })
                const queued: Array<{ id: string; sessionID: string; releasable: boolean }> = []
                for (let i = 0; i < 40; i++) {
                  const id = `per_${i}`
                  const sessionID = pick(["ses_test", "ses_b", "ses_gone"])
                  const agent = pick([undefined, "strict"])
                  const action = pick(["read", "read", "edit"])
                  const resources = Array.from({ length: 1 + Math.floor(next() * 2) }, () =>
                    pick(["src/a.ts", "src/b/c.ts", "lib/d.ts", "doc/e.md"]),
                  )
                  const result = yield* f.permission.ask({
                    id,
                    sessionID,
                    action,
                    resources,
                    ...(agent === undefined ? {} : { agent }),
                  })
                  const denied = agent === "strict" && action === "read" && resources.some((r) => r.startsWith("lib/"))
                  expect(result.effect).toBe(denied ? "deny" : "ask")
                  if (denied) continue
                  const releasable =
                    sessionID !== "ses_gone" && action === "read" && resources.every((r) => r.startsWith("src/"))
                  queued.push({ id, sessionID, releasable })
                }
                const sql = yield* SqlClient.SqlClient
                yield* sql`DELETE FROM session WHERE id = 'ses_gone'`
                yield* f.permission.reply({ requestID: "per_trigger", reply: "always" })
                expect(f.replied().map((data) => data.requestID)).toEqual([
                  "per_trigger",
                  ...queued.filter((entry) => entry.releasable).map((entry) => entry.id),
                ])
                expect((yield* f.permission.list()).map((request) => request.id)).toEqual(
                  queued.filter((entry) => !entry.releasable).map((entry) => entry.id),
                )
              }),
            )
          }),
        )
      }
    }),
  )
})

describe("EventV2.publishAll", () => {
  it.scoped("delivers like one publish per element and stops at the first listener failure", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const context = yield* Layer.build(
        EventV2.layer.pipe(
          Layer.provide(Location.layer({ directory: dir }).pipe(Layer.orDie, Layer.provide(Database.layerMemory))),
        ),
      )
      const bus = Context.get(context, EventV2.Service)
      const Ping = EventV2.define("test.ping", PermissionV2.Reply)
      const first: Array<string> = []
      const second: Array<string> = []
      yield* bus.listen((envelope) => void first.push(`${envelope.data}`), Ping)
      yield* bus.listen((envelope) => {
        if (envelope.data === "reject") throw new Error("no")
        second.push(`${envelope.data}`)
      }, Ping)
      const delivered: Array<number> = []
      yield* bus.publishAll(Ping, ["once", "always"], (index) => void delivered.push(index))
      expect(first).toEqual(["once", "always"])
      expect(second).toEqual(["once", "always"])
      expect(delivered).toEqual([0, 1])
      const exit = yield* Effect.exit(bus.publishAll(Ping, ["once", "reject", "always"], (i) => void delivered.push(i)))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(first).toEqual(["once", "always", "once", "reject"])
      expect(second).toEqual(["once", "always", "once"])
      expect(delivered).toEqual([0, 1, 0])
      yield* bus.publishAll(Ping, [])
    }),
  )
})
