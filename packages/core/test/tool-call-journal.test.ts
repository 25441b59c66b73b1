import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Exit, Layer, Schedule, Scope, TestClock } from "effect"
import { ToolCallJournal } from "../src/index.js"
import * as Engines from "./support/engines.js"

const LEASE = Duration.seconds(10)

interface Row {
  readonly call_id: string
  readonly status: string
  readonly owner_id: string | null
  readonly error: string | null
}

const rows = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<Row>`SELECT call_id, status, owner_id, error FROM tool_call ORDER BY call_id`,
)

const owners = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ id: string; lease_expires: number; instance: string | null }>`
      SELECT id, lease_expires, instance FROM runner_owner ORDER BY id`,
)

/** Waits on the live clock until `ownerID`'s lease was renewed at `since` or later (fails after 30 s instead of hanging). */
const renewedSince = (ownerID: string, since: number) =>
  owners.pipe(
    Effect.map((all) => (all.find((owner) => owner.id === ownerID)?.lease_expires ?? 0) >= since + Duration.toMillis(LEASE)),
    Effect.repeat({ until: (renewed) => renewed, schedule: Schedule.spaced(Duration.millis(5)) }),
    Effect.timeoutFail({ duration: Duration.seconds(30), onTimeout: () => new Error(`${ownerID} was not renewed since ${since}`) }),
    Effect.withClock(Clock.make()),
    Effect.asVoid,
  )

const seedSession = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.zipRight(
    sql`INSERT INTO project (id, worktree) VALUES ('p', '/')`,
    sql`INSERT INTO session (id, project_id, directory) VALUES ('ses_1', 'p', '/')`,
  ),
)

const call = (callID: string): ToolCallJournal.Call => ({
  sessionID: "ses_1",
  assistantMessageID: "msg_1",
  callID,
  name: "bash",
  input: { command: "ls" },
  providerExecuted: false,
})

/** A journal in its own scope, so a test can close it (a runner that stops) independently. */
const journalIn = (options: ToolCallJournal.Options) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const journal = yield* ToolCallJournal.make(options).pipe(Scope.extend(scope))
    return { journal, close: Scope.close(scope, Exit.void) }
  })

Engines.describeEach("ToolCallJournal", (engine) => {
  it.effect("records calls under its owner and registers the owner with a lease from the Clock", () =>
    Effect.gen(function* () {
      yield* seedSession
      yield* TestClock.setTime(1_000_000)
      const journal = yield* ToolCallJournal.make({ lease: LEASE })
      yield* journal.record(call("c1"))
      expect(yield* rows).toEqual([{ call_id: "c1", status: "running", owner_id: journal.ownerID, error: null }])
      expect(yield* owners).toEqual([{ id: journal.ownerID, lease_expires: 1_010_000, instance: null }])
      yield* journal.settle(
        { sessionID: "ses_1", assistantMessageID: "msg_1", callID: "c1" },
        { status: "completed", result: { type: "text", value: "ok" }, error: null },
      )
      expect(yield* rows).toEqual([{ call_id: "c1", status: "completed", owner_id: journal.ownerID, error: null }])
      expect(journal.ownerID.startsWith("own_")).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(engine.layer())),
  )

  it.effect("the first terminal state wins: a settle after recovery (or a second settle) writes nothing", () =>
    Effect.gen(function* () {
      yield* seedSession
      const sql = yield* SqlClient.SqlClient
      const key = (callID: string) => ({ sessionID: "ses_1", assistantMessageID: "msg_1", callID })
      const done = { status: "completed" as const, result: { type: "text", value: "ok" }, error: null }
      const late = yield* ToolCallJournal.make({ lease: LEASE })
      yield* late.record(call("paused"))
      yield* late.record(call("twice"))
      // The owner was unresponsive past its lease (its process paused): another journal recovers its calls.
      yield* sql`UPDATE runner_owner SET lease_expires = 0 WHERE id = ${late.ownerID}`
      const other = yield* ToolCallJournal.make({ lease: LEASE })
      expect(yield* other.recover("interrupted")).toBe(2)
      expect(yield* late.settle(key("paused"), done)).toBe("recovered")
      // Another owner's settle is refused too: only the owner settles, and only an unfinished call.
      expect(yield* other.settle(key("twice"), done)).toBe("recovered")
      expect(yield* rows).toEqual([
        { call_id: "paused", status: "failed", owner_id: late.ownerID, error: "interrupted" },
        { call_id: "twice", status: "failed", owner_id: late.ownerID, error: "interrupted" },
      ])
      const fresh = yield* ToolCallJournal.make({ lease: LEASE })
      yield* fresh.record(call("fresh"))
      expect(yield* fresh.settle(key("fresh"), done)).toBe("settled")
      expect(yield* fresh.settle(key("fresh"), { ...done, status: "failed", error: "late" })).toBe("recovered")
      expect((yield* rows).find((row) => row.call_id === "fresh")).toMatchObject({ status: "completed", error: null })
    }).pipe(Effect.scoped, Effect.provide(engine.layer())),
  )

  it.effect("an input JSON cannot hold is recorded as a note saying why, not a failed call", () =>
    Effect.gen(function* () {
      yield* seedSession
      const sql = yield* SqlClient.SqlClient
      let deep: unknown = "x"
      for (let i = 0; i < 100_000; i++) deep = { a: deep }
      const journal = yield* ToolCallJournal.make({ lease: LEASE })
      yield* journal.record({ ...call("deep"), input: deep })
      expect(yield* sql`SELECT input FROM tool_call WHERE call_id = 'deep'`).toEqual([
        { input: JSON.stringify({ unstored: "nested too deeply to store as JSON" }) },
      ])
    }).pipe(Effect.scoped, Effect.provide(engine.layer())),
  )

  it.effect("recovery leaves a live owner's calls alone, however long it runs, because the heartbeat renews", () =>
    Effect.gen(function* () {
      yield* seedSession
      const first = yield* ToolCallJournal.make({ lease: LEASE })
      yield* first.record(call("live"))
      // Many leases later: the first owner's heartbeat has kept renewing. The clock moves one beat at a time, and each
      // step waits (on the live clock) until that beat's renewal is on disk: on Postgres the write is real I/O, and a
      // single five-minute jump would outrun the heartbeat fiber (it registers its next sleep only after the write).
      const beat = Math.floor(Duration.toMillis(LEASE) / 3)
      for (let step = 0; step < Duration.toMillis(Duration.minutes(5)) / beat; step++) {
        yield* TestClock.adjust(Duration.millis(beat))
        const now = yield* Clock.currentTimeMillis
        yield* renewedSince(first.ownerID, now - beat)
      }
      const second = yield* ToolCallJournal.make({ lease: LEASE })
      expect(yield* second.recover("interrupted")).toBe(0)
      expect(yield* rows).toEqual([{ call_id: "live", status: "running", owner_id: first.ownerID, error: null }])
      const lease = (yield* owners).find((owner) => owner.id === first.ownerID)!.lease_expires
      expect(lease).toBeGreaterThan(Duration.toMillis(Duration.minutes(5)))
    }).pipe(Effect.scoped, Effect.provide(engine.layer())),
  )

  it.effect("an owner that stops renewing keeps its calls until its lease expires, then they are failed", () =>
    Effect.gen(function* () {
      yield* seedSession
      const sql = yield* SqlClient.SqlClient
      yield* TestClock.setTime(50_000)
      // An owner whose process died: its row stays, nobody renews it.
      yield* sql`INSERT INTO runner_owner (id, pid, hostname, lease_expires) VALUES ('own_dead', 1, 'h', ${60_000})`
      yield* sql`INSERT INTO tool_call (session_id, assistant_message_id, call_id, name, input, status, owner_id)
        VALUES ('ses_1', 'msg_1', 'orphan', 'bash', '{}', 'running', 'own_dead')`
      const journal = yield* ToolCallJournal.make({ lease: LEASE })
      expect(yield* journal.recover("interrupted")).toBe(0)
      yield* TestClock.setTime(59_999)
      expect(yield* journal.recover("interrupted")).toBe(0)
      expect((yield* rows)[0]?.status).toBe("running")
      yield* TestClock.setTime(60_000)
      expect(yield* journal.recover("interrupted")).toBe(1)
      expect(yield* rows).toEqual([{ call_id: "orphan", status: "failed", owner_id: "own_dead", error: "interrupted" }])
      // The expired owner is forgotten; the live one stays.
      expect((yield* owners).map((owner) => owner.id)).toEqual([journal.ownerID])
    }).pipe(Effect.scoped, Effect.provide(engine.layer())),
  )

  it.effect("calls without an owner (written before owners existed) are failed at once", () =>
    Effect.gen(function* () {
      yield* seedSession
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO tool_call (session_id, assistant_message_id, call_id, name, input, status)
        VALUES ('ses_1', 'msg_1', 'old', 'bash', '{}', 'pending')`
      const journal = yield* ToolCallJournal.make({ lease: LEASE })
      expect(yield* journal.recover("interrupted")).toBe(1)
      expect((yield* rows)[0]).toMatchObject({ call_id: "old", status: "failed", error: "interrupted" })
    }).pipe(Effect.scoped, Effect.provide(engine.layer())),
  )

  it.effect("closing a journal removes its owner, so its unfinished calls are recovered at once", () =>
    Effect.gen(function* () {
      yield* seedSession
      const first = yield* journalIn({ lease: LEASE })
      yield* first.journal.record(call("left"))
      yield* first.close
      expect((yield* owners).some((owner) => owner.id === first.journal.ownerID)).toBe(false)
      const second = yield* ToolCallJournal.make({ lease: LEASE })
      expect(yield* second.recover("interrupted")).toBe(1)
      expect((yield* rows)[0]?.status).toBe("failed")
    }).pipe(Effect.scoped, Effect.provide(engine.layer())),
  )

  it.effect("a new owner with the same instance name takes over its earlier incarnation's calls at once", () =>
    Effect.gen(function* () {
      yield* seedSession
      const earlier = yield* ToolCallJournal.make({ lease: LEASE, instance: "svc" })
      const other = yield* ToolCallJournal.make({ lease: LEASE, instance: "other" })
      yield* earlier.record(call("mine"))
      yield* other.record(call("theirs"))
      const later = yield* ToolCallJournal.make({ lease: LEASE, instance: "svc" })
      expect(yield* later.recover("interrupted")).toBe(1)
      expect((yield* rows).map((row) => [row.call_id, row.status])).toEqual([
        ["mine", "failed"],
        ["theirs", "running"],
      ])
    }).pipe(Effect.scoped, Effect.provide(engine.layer())),
  )

  it.effect("the layer registers one owner with the lease it is given", () =>
    Effect.gen(function* () {
      yield* Layer.build(ToolCallJournal.layer({ lease: Duration.seconds(7) }))
      const [owner] = yield* owners
      expect(owner?.lease_expires).toBe(7_000)
    }).pipe(Effect.scoped, Effect.provide(engine.layer())),
  )
})
