/**
 * `ApprovalsDatabase.layer`: the approval protocol with no Location, over `pending_ask` rows inserted here as an
 * asking process inserts them (Postgres only: no process writes the table on SQLite). Only pending rows of a live
 * owner before their deadline are listed; an answer claims a row exactly once under concurrency; a wrong digest or
 * an unknown choice changes nothing; a reject claims the session's other pending rows as cascades; the prompt stream
 * delivers Asked, then Answered and Expired as rows leave the list.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Clock, type Duration, Effect, Exit, Fiber, Layer, Queue, Schema, Stream } from "effect"
import { Approvals, PermissionV2 } from "../src/index.js"
import * as Notifications from "../src/system/notifications.js"
import * as Engines from "./support/engines.js"
import { ApprovalsDatabase } from "../src/entry/hosts.js"

const HOUR = 3_600_000

interface Row {
  readonly id: string
  readonly owner_id: string
  readonly session_id: string
  readonly status: string
  readonly answer: string | null
  readonly time_updated: number
}

/** A runner owner whose lease runs out at `leaseExpires`. */
const owner = (sql: SqlClient.SqlClient, id: string, leaseExpires: number) =>
  sql`INSERT INTO runner_owner (id, pid, hostname, instance, lease_expires, time_created, time_updated)
    VALUES (${id}, 1, 'test', NULL, ${leaseExpires}, 0, 0)`

/** Inserts an edit ask's row as its owner does and returns its prompt. */
const ask = (
  sql: SqlClient.SqlClient,
  input: {
    readonly id: string
    readonly owner: string
    readonly session?: string
    readonly deadline?: number
    readonly status?: string
    readonly created?: number
  },
) =>
  Effect.gen(function* () {
    const request: PermissionV2.Request = {
      id: input.id,
      sessionID: input.session ?? "ses_a",
      action: "edit",
      resources: [`src/${input.id}.ts`],
      save: ["src/*"],
    }
    const created = input.created ?? (yield* Clock.currentTimeMillis)
    const prompt = Approvals.prompt(request, undefined, created, input.deadline)
    const encoded = JSON.stringify(Schema.encodeSync(Approvals.Prompt)(prompt))
    yield* sql`INSERT INTO pending_ask (id, owner_id, project_id, directory, session_id, digest, prompt, status, answer,
        deadline, time_created, time_updated)
      VALUES (${input.id}, ${input.owner}, 'prj_1', '/work', ${request.sessionID}, ${prompt.digest}, ${encoded},
        ${input.status ?? "pending"}, NULL, ${input.deadline ?? null}, ${created}, ${created})`
    return prompt
  })

const row = (sql: SqlClient.SqlClient, id: string) =>
  Effect.map(
    sql<Row>`SELECT id, owner_id, session_id, status, answer, time_updated FROM pending_ask WHERE id = ${id}`,
    (rows) => rows[0],
  )

const claimOf = (value: Row | undefined) =>
  value?.answer == null ? undefined : Schema.decodeUnknownSync(Schema.parseJson(ApprovalsDatabase.Claim))(value.answer)

/**
 * The service over a fresh database. `listen`: through `Notifications.layer` (the default) or `Notifications.silent`
 * (a lost LISTEN: polling only).
 */
const setup = (
  engine: Engines.Engine,
  options: { readonly poll?: Duration.DurationInput; readonly listen?: boolean } = {},
) =>
  Effect.gen(function* () {
    const notifications =
      options.listen === false
        ? Layer.effect(Notifications.Service, Effect.map(SqlClient.SqlClient, Notifications.silent))
        : Notifications.layer
    const context = yield* Layer.build(
      ApprovalsDatabase.layer({ poll: options.poll ?? "50 millis" }).pipe(
        Layer.provideMerge(notifications),
        Layer.provideMerge(engine.layer()),
      ),
    )
    const approvals = yield* Effect.provide(Approvals.Service, context)
    const sql = yield* Effect.provide(SqlClient.SqlClient, context)
    const listener = yield* Effect.provide(Notifications.Service, context)
    return { approvals, sql, listener }
  })

const failure = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? (exit.cause.error as { _tag: string }) : undefined

Engines.describeEach(
  "ApprovalsDatabase.layer",
  (engine) => {
    it.scoped("lists only pending rows of a live owner before their deadline, oldest first", () =>
      Effect.gen(function* () {
        const { approvals, sql } = yield* setup(engine)
        const now = yield* Clock.currentTimeMillis
        yield* owner(sql, "own_live", now + HOUR)
        yield* owner(sql, "own_dead", now - 1)
        yield* ask(sql, { id: "per_new", owner: "own_live", created: now - 10, deadline: now + HOUR })
        yield* ask(sql, { id: "per_old", owner: "own_live", created: now - 20, session: "ses_b" })
        yield* ask(sql, { id: "per_deadowner", owner: "own_dead" })
        yield* ask(sql, { id: "per_nowner", owner: "own_missing" })
        yield* ask(sql, { id: "per_late", owner: "own_live", deadline: now - 1 })
        yield* ask(sql, { id: "per_claimed", owner: "own_live", status: "claimed" })
        yield* ask(sql, { id: "per_settled", owner: "own_live", status: "settled" })

        const listed = yield* approvals.pending()
        expect(listed.map((prompt) => prompt.request.id)).toEqual(["per_old", "per_new"])
        expect(listed[1]).toMatchObject({ request: { action: "edit", resources: ["src/per_new.ts"] } })
        expect((yield* approvals.pending({ sessionID: "ses_b" })).map((p) => p.request.id)).toEqual(["per_old"])
        expect((yield* approvals.get("per_new")).digest).toBe(listed[1]!.digest)
        for (const id of ["per_deadowner", "per_nowner", "per_late", "per_claimed", "per_settled", "per_nope"]) {
          expect(failure(yield* Effect.exit(approvals.get(id))), id).toMatchObject({
            _tag: "PermissionV2.NotFoundError",
            requestID: id,
          })
        }
      }),
    )

    it.scoped("two concurrent answers: one claims the row, the other is AlreadyAnswered", () =>
      Effect.gen(function* () {
        const { approvals, sql } = yield* setup(engine)
        yield* owner(sql, "own_1", (yield* Clock.currentTimeMillis) + HOUR)
        for (let round = 0; round < 5; round++) {
          const id = `per_race${round}`
          const prompt = yield* ask(sql, { id, owner: "own_1" })
          const answer = (by: string, choice: string) =>
            Effect.exit(approvals.answer({ requestID: id, digest: prompt.digest, choice, by, channel: "http" }))
          const [a, b] = yield* Effect.all([answer("alice", "once"), answer("bob", "session")], {
            concurrency: 2,
          })
          const wins = [a, b].filter(Exit.isSuccess)
          expect(wins.length, id).toBe(1)
          expect(failure(Exit.isSuccess(a) ? b : a)).toMatchObject({
            _tag: "Approvals.AlreadyAnsweredError",
            requestID: id,
          })
          const stored = yield* row(sql, id)
          expect(stored?.status).toBe("claimed")
          const winner = Exit.isSuccess(a) ? { by: "alice", choice: "once" } : { by: "bob", choice: "session" }
          expect(claimOf(stored)).toEqual({ kind: "answer", channel: "http", ...winner })
        }
        // A third answer later is refused the same way, and the claim stays.
        const late = yield* Effect.exit(
          approvals.answer({ requestID: "per_race0", digest: "x", choice: "once", channel: "http" }),
        )
        expect(failure(late)).toMatchObject({ _tag: "Approvals.AlreadyAnsweredError" })
      }),
    )

    it.scoped("a wrong digest, an unknown choice, no digest, a dead owner and an unknown id change nothing", () =>
      Effect.gen(function* () {
        const { approvals, sql } = yield* setup(engine)
        const now = yield* Clock.currentTimeMillis
        yield* owner(sql, "own_1", now + HOUR)
        yield* owner(sql, "own_dead", now - 1)
        const prompt = yield* ask(sql, { id: "per_1", owner: "own_1" })
        const orphan = yield* ask(sql, { id: "per_orphan", owner: "own_dead" })
        const late = yield* ask(sql, { id: "per_late", owner: "own_1", deadline: now - 1 })
        const before = yield* row(sql, "per_1")
        const attempt = (answer: Omit<Approvals.Answer, "channel">) =>
          Effect.map(Effect.exit(approvals.answer({ channel: "http", ...answer })), failure)

        expect(yield* attempt({ requestID: "per_1", digest: "stale", choice: "once" })).toMatchObject({
          _tag: "Approvals.DigestMismatchError",
          requestID: "per_1",
        })
        expect(
          yield* attempt({ requestID: "per_1", digest: prompt.digest, choice: "always:everything" }),
        ).toMatchObject({ _tag: "Approvals.UnknownChoiceError", choice: "always:everything" })
        expect(yield* attempt({ requestID: "per_1", choice: "once" })).toMatchObject({
          _tag: "Approvals.DigestMismatchError",
        })
        expect(yield* attempt({ requestID: "per_nope", digest: prompt.digest, choice: "once" })).toMatchObject({
          _tag: "PermissionV2.NotFoundError",
        })
        expect(yield* attempt({ requestID: "per_orphan", digest: orphan.digest, choice: "once" })).toMatchObject({
          _tag: "PermissionV2.NotFoundError",
        })
        expect(yield* attempt({ requestID: "per_late", digest: late.digest, choice: "once" })).toMatchObject({
          _tag: "Approvals.AlreadyAnsweredError",
        })
        expect(yield* row(sql, "per_1")).toEqual(before)
        expect((yield* row(sql, "per_orphan"))?.status).toBe("pending")
        expect((yield* row(sql, "per_late"))?.status).toBe("pending")
        expect((yield* approvals.pending()).map((p) => p.request.id)).toEqual(["per_1"])
      }),
    )

    it.scoped("a reject claims the session's other pending rows, of any owner, as cascades in its transaction", () =>
      Effect.gen(function* () {
        const { approvals, sql } = yield* setup(engine)
        yield* owner(sql, "own_1", (yield* Clock.currentTimeMillis) + HOUR)
        yield* owner(sql, "own_2", (yield* Clock.currentTimeMillis) + HOUR)
        const first = yield* ask(sql, { id: "per_x", owner: "own_1", session: "ses_s" })
        yield* ask(sql, { id: "per_y", owner: "own_2", session: "ses_s" })
        yield* ask(sql, { id: "per_done", owner: "own_2", session: "ses_s", status: "settled" })
        yield* ask(sql, { id: "per_z", owner: "own_1", session: "ses_other" })
        yield* approvals.answer({
          requestID: "per_x",
          digest: first.digest,
          choice: "reject",
          message: "not there",
          by: "carol",
          channel: "http",
        })
        expect(claimOf(yield* row(sql, "per_x"))).toEqual({
          kind: "answer",
          choice: "reject",
          message: "not there",
          by: "carol",
          channel: "http",
        })
        expect(yield* row(sql, "per_y")).toMatchObject({ status: "claimed" })
        expect(claimOf(yield* row(sql, "per_y"))).toEqual({ kind: "cascade", cause: "per_x" })
        expect(yield* row(sql, "per_done")).toMatchObject({ status: "settled", answer: null })
        expect(yield* row(sql, "per_z")).toMatchObject({ status: "pending", answer: null })
        expect((yield* approvals.pending()).map((p) => p.request.id)).toEqual(["per_z"])
      }),
    )

    it.scoped("an answer claims nothing else of the session", () =>
      Effect.gen(function* () {
        const { approvals, sql } = yield* setup(engine)
        yield* owner(sql, "own_1", (yield* Clock.currentTimeMillis) + HOUR)
        const first = yield* ask(sql, { id: "per_x", owner: "own_1", session: "ses_s" })
        yield* ask(sql, { id: "per_y", owner: "own_1", session: "ses_s" })
        yield* approvals.answer({ requestID: "per_x", digest: first.digest, choice: "session", channel: "http" })
        expect(yield* row(sql, "per_y")).toMatchObject({ status: "pending", answer: null })
      }),
    )

    it.live("the prompt stream: Asked for what is pending, then live Asked, Answered (cascades too) and Expired", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { approvals, sql } = yield* setup(engine)
          yield* owner(sql, "own_1", (yield* Clock.currentTimeMillis) + HOUR)
          const before = yield* ask(sql, { id: "per_before", owner: "own_1", session: "ses_s" })
          const events = yield* Queue.unbounded<Approvals.PromptEvent>()
          const reader = yield* Effect.forkScoped(Stream.runForEach(approvals.prompts(), (e) => events.offer(e)))
          expect(yield* Queue.take(events)).toMatchObject({ _tag: "Asked", prompt: { request: { id: "per_before" } } })

          yield* ask(sql, { id: "per_live", owner: "own_1", session: "ses_s" })
          expect(yield* Queue.take(events)).toMatchObject({ _tag: "Asked", prompt: { request: { id: "per_live" } } })
          yield* ask(sql, { id: "per_gone", owner: "own_1", session: "ses_t" })
          expect(yield* Queue.take(events)).toMatchObject({ _tag: "Asked", prompt: { request: { id: "per_gone" } } })

          yield* approvals.answer({
            requestID: "per_before",
            digest: before.digest,
            choice: "reject",
            by: "dave",
            channel: "http",
          })
          const answered = [yield* Queue.take(events), yield* Queue.take(events)]
          expect(answered).toEqual(
            expect.arrayContaining([
              {
                _tag: "Answered",
                requestID: "per_before",
                sessionID: "ses_s",
                choice: "reject",
                by: "dave",
                channel: "http",
              },
              {
                _tag: "Answered",
                requestID: "per_live",
                sessionID: "ses_s",
                choice: "cascade",
                by: "dave",
                channel: "http",
              },
            ]),
          )
          // The owner settles a row without an answer (it expired there, or a saved approval released it).
          yield* sql`UPDATE pending_ask SET status = 'settled' WHERE id = 'per_gone'`
          expect(yield* Queue.take(events)).toEqual({ _tag: "Expired", requestID: "per_gone", sessionID: "ses_t" })
          // A claim the owner could not apply goes back to pending: it is asked again.
          yield* sql`UPDATE pending_ask SET status = 'pending', answer = NULL WHERE id = 'per_live'`
          expect(yield* Queue.take(events)).toMatchObject({ _tag: "Asked", prompt: { request: { id: "per_live" } } })
          expect(yield* Queue.size(events)).toBe(0)
          yield* Fiber.interrupt(reader)
        }),
      ),
    )

    it.live("with LISTEN: a claim reaches the stream at once (the poll is an hour), and the owner is notified", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { approvals, sql, listener } = yield* setup(engine, { poll: "1 hour" })
          yield* owner(sql, "own_1", (yield* Clock.currentTimeMillis) + HOUR)
          const woken = yield* Queue.unbounded<string>()
          yield* Effect.forkScoped(
            Stream.runForEach(yield* listener.subscribe(ApprovalsDatabase.ANSWER_CHANNEL), (p) => woken.offer(p)),
          )
          const events = yield* Queue.unbounded<Approvals.PromptEvent>()
          yield* Effect.forkScoped(Stream.runForEach(approvals.prompts(), (e) => events.offer(e)))
          // The owner's insert notifies toolgate_ask, as the asking process does.
          const prompt = yield* ask(sql, { id: "per_1", owner: "own_1" })
          yield* Notifications.notifyWith(sql, ApprovalsDatabase.ASK_CHANNEL, "per_1")
          expect(yield* Queue.take(events)).toMatchObject({ _tag: "Asked", prompt: { request: { id: "per_1" } } })
          yield* approvals.answer({ requestID: "per_1", digest: prompt.digest, choice: "once", channel: "http" })
          expect(yield* Queue.take(woken)).toBe("own_1")
          expect(yield* Queue.take(events)).toMatchObject({ _tag: "Answered", requestID: "per_1", choice: "once" })
        }),
      ),
    )

    it.live("with no notification delivered (a lost LISTEN), the poll still finds new asks and answers", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { approvals, sql } = yield* setup(engine, { poll: "50 millis", listen: false })
          yield* owner(sql, "own_1", (yield* Clock.currentTimeMillis) + HOUR)
          const events = yield* Queue.unbounded<Approvals.PromptEvent>()
          yield* Effect.forkScoped(Stream.runForEach(approvals.prompts(), (e) => events.offer(e)))
          const prompt = yield* ask(sql, { id: "per_1", owner: "own_1" })
          expect(yield* Queue.take(events)).toMatchObject({ _tag: "Asked", prompt: { request: { id: "per_1" } } })
          yield* approvals.answer({ requestID: "per_1", digest: prompt.digest, choice: "once", channel: "http" })
          expect(yield* Queue.take(events)).toMatchObject({ _tag: "Answered", requestID: "per_1" })
        }),
      ),
    )

    it.live("a session's stream delivers only that session's events", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { approvals, sql } = yield* setup(engine)
          yield* owner(sql, "own_1", (yield* Clock.currentTimeMillis) + HOUR)
          const events = yield* Queue.unbounded<Approvals.PromptEvent>()
          yield* Effect.forkScoped(
            Stream.runForEach(approvals.prompts({ sessionID: "ses_mine" }), (e) => events.offer(e)),
          )
          yield* ask(sql, { id: "per_other", owner: "own_1", session: "ses_theirs" })
          yield* ask(sql, { id: "per_mine", owner: "own_1", session: "ses_mine" })
          expect(yield* Queue.take(events)).toMatchObject({ _tag: "Asked", prompt: { request: { id: "per_mine" } } })
          expect(yield* Queue.size(events)).toBe(0)
        }),
      ),
    )
  },
  Engines.postgresOnly,
)

describe("ApprovalsDatabase.Claim", () => {
  it("is the JSON the design names", () => {
    const encode = Schema.encodeSync(Schema.parseJson(ApprovalsDatabase.Claim))
    expect(JSON.parse(encode({ kind: "cascade", cause: "per_1" }))).toEqual({ kind: "cascade", cause: "per_1" })
    expect(JSON.parse(encode({ kind: "answer", choice: "once", channel: "http" }))).toEqual({
      kind: "answer",
      choice: "once",
      channel: "http",
    })
  })
})
