/**
 * Pending asks across hosts on Postgres (docs/approvals.md, "Across hosts (Postgres)"): two Core stacks, each with
 * its own pool on one Postgres schema, stand for two hosts. An ask in stack 1 is a `pending_ask` row; a claim
 * written as another host's `Approvals.answer` writes it (a raw UPDATE + NOTIFY) is applied by stack 1's listener,
 * or by its poll when the notification is lost; the row is settled whenever the entry leaves stack 1's queue. On
 * SQLite no row is written.
 */
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Schedule, TestClock } from "effect"
import { Approvals, Database, PermissionSaved, PermissionV2 } from "../src/index.js"
import * as Notifications from "../src/system/notifications.js"
import * as Engines from "./support/engines.js"
import { tempDir } from "./support/location.js"
import { asserting, claim, host, rows, session, statusOf, waitFor } from "./support/shared-asks.js"
import { ApprovalsDatabase } from "../src/entry/hosts.js"

Engines.describeEach(
  "pending asks across hosts",
  (engine) => {
    it.scoped("an ask is a pending row; a claim from another host completes the waiting assert, once", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const one = yield* host(url)
        const two = yield* host(url)
        const { id: sessionID } = yield* Effect.provide(session, one)
        const waiting = yield* Effect.provide(asserting(sessionID, "per_shared_1", "a.ts"), one)
        const [asked] = yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_1") === "pending"),
          two,
        )
        expect(asked).toMatchObject({ id: "per_shared_1", status: "pending", session_id: sessionID })
        yield* Effect.provide(
          claim("per_shared_1", { kind: "answer", choice: "once", by: "alice", channel: "http" }),
          two,
        )
        expect(yield* Fiber.await(waiting)).toEqual(Exit.void)
        const [settled] = yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_1") === "settled"),
          two,
        )
        expect(JSON.parse(settled!.answer!)).toEqual({ kind: "answer", choice: "once", by: "alice", channel: "http" })
        expect(
          yield* Effect.provide(
            Effect.flatMap(PermissionV2.Service, (p) => p.list()),
            one,
          ),
        ).toEqual([])
      }),
    )

    it.scoped("a reject claim with its session's cascade declines both waiting asserts", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const one = yield* host(url)
        const two = yield* host(url)
        const { id: sessionID } = yield* Effect.provide(session, one)
        const first = yield* Effect.provide(asserting(sessionID, "per_shared_r1", "a.ts"), one)
        const second = yield* Effect.provide(asserting(sessionID, "per_shared_r2", "b.ts"), one)
        yield* Effect.provide(
          waitFor((all) => all.filter((row) => row.status === "pending").length === 2),
          two,
        )
        yield* Effect.provide(
          Effect.zipRight(
            claim("per_shared_r2", { kind: "cascade", cause: "per_shared_r1" }, false),
            claim("per_shared_r1", { kind: "answer", choice: "reject", channel: "http" }),
          ),
          two,
        )
        for (const fiber of [first, second]) {
          const exit = yield* Fiber.await(fiber)
          expect(Exit.isFailure(exit) && PermissionV2.isDeclined(exit.cause)).toBe(true)
        }
        const all = yield* Effect.provide(
          waitFor((all) => all.every((row) => row.status === "settled")),
          two,
        )
        expect(all.map((row) => JSON.parse(row.answer!).kind)).toEqual(["answer", "cascade"])
      }),
    )

    it.scoped("a reject answered in one process cascades to the session's ask in another", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const directory = yield* tempDir()
        const one = yield* host(url, undefined, directory)
        const two = yield* host(url, undefined, directory)
        const { id: sessionID } = yield* Effect.provide(session, one)
        const here = yield* Effect.provide(asserting(sessionID, "per_shared_h1", "a.ts"), one)
        const there = yield* Effect.provide(asserting(sessionID, "per_shared_h2", "b.ts"), two)
        yield* Effect.provide(
          waitFor((all) => all.filter((row) => row.status === "pending").length === 2),
          two,
        )
        yield* Effect.provide(
          Effect.flatMap(PermissionV2.Service, (p) => p.reply({ requestID: "per_shared_h1", reply: "reject" })),
          one,
        )
        for (const fiber of [here, there]) {
          const exit = yield* Fiber.await(fiber)
          expect(Exit.isFailure(exit) && PermissionV2.isDeclined(exit.cause)).toBe(true)
        }
        const all = yield* Effect.provide(
          waitFor((all) => all.every((row) => row.status === "settled")),
          two,
        )
        expect(all.map((row) => JSON.parse(row.answer!))).toEqual([
          { kind: "answer", choice: "reject", channel: "in-process" },
          { kind: "cascade", cause: "per_shared_h1" },
        ])
      }),
    )

    it.scoped("a claim whose notification was lost is applied by the poll", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const one = yield* host(url)
        const two = yield* host(url)
        const { id: sessionID } = yield* Effect.provide(session, one)
        const waiting = yield* Effect.provide(asserting(sessionID, "per_shared_p", "a.ts"), one)
        yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_p") === "pending"),
          two,
        )
        yield* Effect.provide(claim("per_shared_p", { kind: "answer", choice: "once", channel: "http" }, false), two)
        // No notification: nothing applies it until the poll's second has passed.
        for (let i = 0; i < 20; i++) yield* Effect.provide(rows, two)
        expect(waiting.unsafePoll()).toBeNull()
        yield* TestClock.adjust(PermissionV2.SHARED_POLL_INTERVAL_MS)
        expect(yield* Fiber.await(waiting)).toEqual(Exit.void)
        yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_p") === "settled"),
          two,
        )
      }),
    )

    it.scoped("a claim made while the owner's listening connection is down is applied", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const one = yield* host(url)
        const two = yield* host(url)
        const { id: sessionID } = yield* Effect.provide(session, one)
        const waiting = yield* Effect.provide(asserting(sessionID, "per_shared_d", "a.ts"), one)
        const [asked] = yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_d") === "pending"),
          two,
        )
        const sql = yield* Effect.provide(SqlClient.SqlClient, two)
        // Every listening connection of this test's server goes (stack 2's too): Postgres dropped them.
        const killed = yield* sql<{ ok: boolean }>`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE application_name = 'toolgate-listen' AND query = 'LISTEN "toolgate_answer"'`
        expect(killed.length).toBeGreaterThanOrEqual(1)
        yield* Effect.provide(claim("per_shared_d", { kind: "answer", choice: "once", channel: "http" }), two)
        expect(asked?.owner_id).toBeDefined()
        // The owner subscribes again after a second and reads what was claimed meanwhile (the poll would too).
        yield* TestClock.adjust(PermissionV2.SHARED_POLL_INTERVAL_MS)
        expect(yield* Fiber.await(waiting)).toEqual(Exit.void)
        yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_d") === "settled"),
          two,
        )
      }),
    )

    it.scoped("an always whose save fails goes back to pending, and can be answered again", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const one = yield* host(url)
        const two = yield* host(url)
        const { id: sessionID } = yield* Effect.provide(session, one)
        const waiting = yield* Effect.provide(asserting(sessionID, "per_shared_a", "a.ts"), one)
        yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_a") === "pending"),
          two,
        )
        const sql = yield* Effect.provide(SqlClient.SqlClient, two)
        yield* sql`ALTER TABLE permission RENAME TO permission_away`
        yield* Effect.provide(claim("per_shared_a", { kind: "answer", choice: "always:pattern", channel: "http" }), two)
        const [back] = yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_a") === "pending" && all[0]!.answer === null),
          two,
        )
        expect(back).toMatchObject({ status: "pending", answer: null })
        expect(waiting.unsafePoll()).toBeNull()
        yield* sql`ALTER TABLE permission_away RENAME TO permission`
        yield* Effect.provide(claim("per_shared_a", { kind: "answer", choice: "once", channel: "http" }), two)
        expect(yield* Fiber.await(waiting)).toEqual(Exit.void)
      }),
    )

    it.scoped("the row is settled when the ask is answered here or expires", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const one = yield* host(url, 60_000)
        const observer = yield* host(url)
        const { id: sessionID } = yield* Effect.provide(session, one)
        const replied = yield* Effect.provide(asserting(sessionID, "per_shared_l1", "a.ts"), one)
        const expiring = yield* Effect.provide(asserting(sessionID, "per_shared_l2", "b.ts"), one)
        yield* Effect.provide(
          waitFor((all) => all.filter((row) => row.status === "pending").length === 2),
          observer,
        )
        yield* Effect.provide(
          Effect.flatMap(PermissionV2.Service, (p) => p.reply({ requestID: "per_shared_l1", reply: "once" })),
          one,
        )
        expect(yield* Fiber.await(replied)).toEqual(Exit.void)
        const [answered] = yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_l1") === "settled"),
          observer,
        )
        expect(JSON.parse(answered!.answer!)).toEqual({ kind: "answer", choice: "once", channel: "in-process" })
        yield* TestClock.adjust(60_000)
        expect(Exit.isFailure(yield* Fiber.await(expiring))).toBe(true)
        const all = yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_l2") === "settled"),
          observer,
        )
        expect(all.find((row) => row.id === "per_shared_l2")?.answer).toBeNull()
      }),
    )

    it.scoped("a Location that closes settles its rows", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const observer = yield* host(url)
        yield* Effect.scoped(
          Effect.gen(function* () {
            const one = yield* host(url)
            const { id: sessionID } = yield* Effect.provide(session, one)
            yield* Effect.provide(asserting(sessionID, "per_shared_c", "a.ts"), one)
            yield* Effect.provide(
              waitFor((all) => statusOf(all, "per_shared_c") === "pending"),
              observer,
            )
          }),
        )
        yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_c") === "settled"),
          observer,
        )
      }),
    )

    it.scoped("an approval saved by the other host releases the ask and settles its row", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const one = yield* host(url)
        const two = yield* host(url)
        const { id: sessionID } = yield* Effect.provide(session, one)
        const waiting = yield* Effect.provide(asserting(sessionID, "per_shared_s", "a.ts"), one)
        yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_s") === "pending"),
          two,
        )
        const request = yield* Effect.provide(
          Effect.flatMap(PermissionV2.Service, (p) => p.get("per_shared_s")),
          one,
        )
        const scope = request!.always!.scope!
        yield* Effect.provide(
          Effect.flatMap(PermissionSaved.Service, (saved) =>
            saved.add({
              projectID: scope.projectID,
              ...(scope.kind === "directory" ? { directory: scope.directory } : {}),
              action: "read",
              resources: ["fault/*"],
            }),
          ),
          two,
        )
        yield* TestClock.adjust(PermissionV2.PENDING_RECHECK_INTERVAL_MS)
        expect(yield* Fiber.await(waiting)).toEqual(Exit.void)
        const [released] = yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_s") === "settled"),
          two,
        )
        expect(JSON.parse(released!.answer!)).toMatchObject({ kind: "answer", choice: "auto" })
      }),
    )
  },
  Engines.postgresOnly,
)

it.scoped("on SQLite an ask writes no row", () =>
  Effect.gen(function* () {
    const one = yield* host(undefined)
    const { id: sessionID } = yield* Effect.provide(session, one)
    const waiting = yield* Effect.provide(asserting(sessionID, "per_shared_q", "a.ts"), one)
    const list = Effect.provide(
      Effect.flatMap(PermissionV2.Service, (p) => p.list()),
      one,
    )
    let listed = yield* list
    for (let i = 0; i < 1000 && listed.length === 0; i++) listed = yield* Effect.zipRight(Effect.yieldNow(), list)
    expect(listed.map((request) => request.id)).toEqual(["per_shared_q"])
    expect(yield* Effect.provide(rows, one)).toEqual([])
    yield* Fiber.interrupt(waiting)
  }),
)

Engines.describeEach(
  "pending asks across hosts, answered through ApprovalsDatabase.layer",
  (engine) => {
    it.scoped("the remote protocol lists the ask, and its answer completes the assert in the owner", () =>
      Effect.gen(function* () {
        const url = yield* engine.shared("")
        const one = yield* host(url)
        const remote = yield* Layer.build(
          ApprovalsDatabase.layer().pipe(
            Layer.provideMerge(Notifications.layer),
            Layer.provideMerge(Database.layerUrl(url)),
          ),
        )
        const { id: sessionID } = yield* Effect.provide(session, one)
        const waiting = yield* Effect.provide(asserting(sessionID, "per_shared_x", "a.ts"), one)
        yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_x") === "pending"),
          remote,
        )
        const [prompt] = yield* Effect.provide(
          Effect.flatMap(Approvals.Service, (a) => a.pending()),
          remote,
        )
        expect(prompt?.request.id).toBe("per_shared_x")
        yield* Effect.provide(
          Effect.flatMap(Approvals.Service, (a) =>
            a.answer({ requestID: "per_shared_x", digest: prompt!.digest, choice: "once", by: "bob", channel: "http" }),
          ),
          remote,
        )
        expect(yield* Fiber.await(waiting)).toEqual(Exit.void)
        yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_shared_x") === "settled"),
          remote,
        )
        const late = yield* Effect.exit(
          Effect.provide(
            Effect.flatMap(Approvals.Service, (a) =>
              a.answer({ requestID: "per_shared_x", digest: prompt!.digest, choice: "once", channel: "http" }),
            ),
            remote,
          ),
        )
        expect(late).toEqual(Exit.fail(new Approvals.AlreadyAnsweredError({ requestID: "per_shared_x" })))
      }),
    )
  },
  Engines.postgresOnly,
)
