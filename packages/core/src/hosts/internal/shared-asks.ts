/**
 * Pending asks across hosts (Postgres): the process-wide half that mirrors every Location queue's entries into
 * `pending_ask` and applies the answers other processes claim. On SQLite it does nothing (`mirror` is `undefined`,
 * so a queue does no extra work per ask).
 *
 * - An ask: the queue's `created` inserts the row `pending` (in the ask's path, before `Asked` is published) and
 *   notifies `toolgate_ask`. A failed insert (Postgres restarting) is retried every poll while the entry waits.
 * - An entry leaving its queue for any reason (answered here or remotely, expired, released, cascaded, the Location
 *   closed): its row becomes `settled` (with what answered it when nothing claimed it) and `toolgate_ask` is
 *   notified. Settles are written in batches by one fiber, off the caller's path.
 * - A claim (another process's `Approvals.answer`): on `NOTIFY toolgate_answer <owner id>`, after every
 *   (re)subscription and every `SHARED_POLL_INTERVAL_MS` while shared asks are pending, the claimed rows of this
 *   owner are read and each is handed to the queue holding the entry: an `answer` through its one answer path with
 *   the row's digest, a `cascade` as a same-session cascade. A claim that cannot be applied while the entry still
 *   waits (an `always` whose save fails) puts the row back to `pending` (answer cleared, `toolgate_ask` notified).
 * - A reject answered here claims the other `pending` rows of its session, in any process, as cascades.
 * - The owner is a `runner_owner` row with a lease (`OwnerLease`), renewed while the process runs.
 * - Settled rows, and the rows of owners that are gone, are pruned a day later (`retention.ts`).
 *
 * The insert, the batched settles and the claim listener share one owner id, one set of known entries and one poll
 * loop, so they live together here; the row and claim formats are `approvals-database.ts`'s.
 *
 * @since 0.3.0
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Fx from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as ProjectV2 from "../../place/project.js"
import * as Notifications from "../../system/notifications.js"
import * as OwnerLease from "../../system/owner-lease.js"
import * as SqlDialect from "../../system/internal/sql-dialect.js"
import {
  ANSWER_CHANNEL,
  ASK_CHANNEL,
  type Claim,
  claimCascades,
  decodeClaim,
  encodeClaim,
  encodePrompt,
} from "./approvals-database.js"
import * as Approvals from "../../permission/internal/protocol.js"
import * as Retention from "./retention.js"
import type { Request } from "../../permission/internal/schema.js"
import {
  type SharedHolder as Holder,
  type SharedInterface as Interface,
  type SharedMirror as Mirror,
  type SharedEntry as Pending,
  SharedAsks,
  SHARED_POLL_INTERVAL_MS,
  type SharedWho as Who,
} from "../../permission/internal/queue.js"

/** The rows of one statement at most (an `IN (…)` list). */
const CHUNK = 500

/** One entry's row as this process knows it. */
interface Row {
  readonly entry: Pending
  readonly holder: Holder
  readonly scope: ProjectV2.ApprovalScope
  readonly prompt: Approvals.Prompt
  /** `inserting`: the insert runs; `unsaved`: it failed (the poll retries); `live`: in the table. */
  state: "inserting" | "unsaved" | "live"
  /** The entry left its queue while the row was being inserted: settle it once it is in. */
  left: boolean
  /** What answered the entry here, written when it settles (a claimed row keeps its claim). */
  answer: string | undefined
}

interface ClaimedRow {
  readonly id: string
  readonly digest: string
  readonly answer: string | null
}

/** SQLite: nothing is shared. */
const unshared: Interface = { ownerID: undefined, mirror: () => undefined }

/**
 * Builds the service over the database in context; on Postgres it registers the owner and starts the listener, the
 * poll and the settle writer in the layer's scope.
 *
 * @internal
 * @category constructors
 */
export const make = Fx.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  if (SqlDialect.of(sql).name !== "pg") return unshared
  const notifications = yield* Notifications.Service
  const { ownerID } = yield* OwnerLease.make({ name: "PermissionV2 shared asks" })
  const rows = new Map<string, Row>()
  const wake = yield* Queue.sliding<void>(1)
  const settling = yield* Queue.unbounded<string>()
  /** Answers recorded for rows whose settle is queued. */
  const settledAnswers = new Map<string, string | undefined>()
  const clock = yield* Fx.clock
  const now = () => clock.unsafeCurrentTimeMillis()
  const warn = (message: string) => (error: unknown) => Fx.logWarning(`PermissionV2 shared asks: ${message}`, error)

  const insert = (id: string, row: Row) =>
    sql`WITH i AS (
        INSERT INTO pending_ask (id, owner_id, project_id, directory, session_id, digest, prompt, status, answer,
          deadline, time_created, time_updated)
        VALUES (${id}, ${ownerID}, ${row.scope.projectID}, ${row.scope.directory}, ${row.entry.request.sessionID},
          ${row.prompt.digest}, ${encodePrompt(row.prompt)}, 'pending', NULL, ${row.prompt.deadline ?? null},
          ${row.entry.askedAt}, ${now()})
        ON CONFLICT (id) DO NOTHING RETURNING id)
      SELECT pg_notify(${ASK_CHANNEL}, id) FROM i`.pipe(
      Fx.matchEffect({
        onFailure: (error) =>
          Fx.zipRight(
            Fx.sync(() => {
              row.state = "unsaved"
              if (row.left) {
                // It may have been written before the failure was reported: settle it anyway.
                rows.delete(id)
                queueSettle(id, row.answer)
              }
            }),
            warn(`could not write the ask ${id}; retrying while it waits`)(error),
          ),
        onSuccess: () =>
          Fx.sync(() => {
            row.state = "live"
            if (row.left) {
              rows.delete(id)
              queueSettle(id, row.answer)
            }
          }),
      }),
    )

  const queueSettle = (id: string, answer: string | undefined) => {
    settledAnswers.set(id, answer)
    settling.unsafeOffer(id)
  }

  /** Settles `ids` (with their recorded answers where the row holds none), notifying `toolgate_ask` for each. */
  const settle = (ids: ReadonlyArray<string>) =>
    Fx.gen(function* () {
      const byAnswer = new Map<string, Array<string>>()
      for (const id of ids) {
        const answer = settledAnswers.get(id) ?? ""
        const group = byAnswer.get(answer)
        if (group === undefined) byAnswer.set(answer, [id])
        else group.push(id)
      }
      for (const [answer, group] of byAnswer) {
        for (let i = 0; i < group.length; i += CHUNK) {
          const chunk = group.slice(i, i + CHUNK)
          yield* sql`WITH s AS (
              UPDATE pending_ask SET status = 'settled', time_updated = ${now()},
                answer = COALESCE(answer, ${answer === "" ? null : answer})
              WHERE id IN ${sql.in(chunk)} AND status <> 'settled' RETURNING id)
            SELECT pg_notify(${ASK_CHANNEL}, id) FROM s`
          for (const id of chunk) settledAnswers.delete(id)
        }
      }
    })

  /**
   * The settle writer: every queued settle, in batches. A failed batch stays in `settledAnswers` (until written) and
   * is queued again after a poll interval (Postgres restarting).
   */
  const settleLoop = Fx.forever(
    Fx.gen(function* () {
      const first = yield* Queue.take(settling)
      const rest = yield* Queue.takeAll(settling)
      const ids = [...new Set([first, ...rest])].filter((id) => settledAnswers.has(id))
      yield* settle(ids).pipe(
        Fx.catchAll((error) =>
          Fx.zipRight(
            warn(`could not settle ${ids.length} ask(s); retrying`)(error),
            Fx.zipRight(
              Fx.sleep(SHARED_POLL_INTERVAL_MS),
              Fx.sync(() => ids.forEach((id) => settling.unsafeOffer(id))),
            ),
          ),
        ),
      )
    }),
  )

  /** Back to `pending`: the claim could not be applied and the entry still waits. */
  const unclaim = (id: string) =>
    sql`WITH u AS (
        UPDATE pending_ask SET status = 'pending', answer = NULL, time_updated = ${now()}
        WHERE id = ${id} AND status = 'claimed' RETURNING id)
      SELECT pg_notify(${ASK_CHANNEL}, id) FROM u`

  /** The entry is gone here: the claimed row is settled as it stands. */
  const settleClaimed = (id: string) =>
    sql`WITH s AS (
        UPDATE pending_ask SET status = 'settled', time_updated = ${now()}
        WHERE id = ${id} AND status = 'claimed' RETURNING id)
      SELECT pg_notify(${ASK_CHANNEL}, id) FROM s`

  /** Who rejected `cause`, from its row's claim (for the cascade's events). */
  const causes = (ids: ReadonlyArray<string>) =>
    ids.length === 0
      ? Fx.succeed(new Map<string, Who>())
      : Fx.map(
          sql<{ id: string; answer: string | null }>`SELECT id, answer FROM pending_ask WHERE id IN ${sql.in(ids)}`,
          (found) => {
            const who = new Map<string, Who>()
            for (const row of found) {
              const claim = row.answer === null ? Option.none() : decodeClaim(row.answer)
              if (Option.isSome(claim) && claim.value.kind === "answer") {
                who.set(row.id, { by: claim.value.by, channel: claim.value.channel })
              }
            }
            return who
          },
        )

  const applyOne = (claimed: ClaimedRow, claim: Claim, rejecters: ReadonlyMap<string, Who>) =>
    Fx.gen(function* () {
      const row = rows.get(claimed.id)
      const entry = row?.holder.entry(claimed.id)
      if (row === undefined || entry === undefined || entry !== row.entry) return yield* settleClaimed(claimed.id)
      const outcome = yield* Fx.exit(
        claim.kind === "answer"
          ? row.holder.answer({
              requestID: entry.request.id,
              digest: claimed.digest,
              choice: claim.choice,
              channel: claim.channel,
              ...(claim.message === undefined ? {} : { message: claim.message }),
              ...(claim.ttlMillis === undefined ? {} : { ttlMillis: claim.ttlMillis }),
              ...(claim.by === undefined ? {} : { by: claim.by }),
            })
          : row.holder.cascade(
              entry.request.id,
              claim.cause,
              rejecters.get(claim.cause) ?? { by: undefined, channel: "cascade" },
            ),
      )
      if (Exit.isSuccess(outcome)) return
      if (row.holder.entry(claimed.id) === entry) {
        yield* Fx.logWarning(
          `PermissionV2 shared asks: the claimed answer to ${claimed.id} failed; pending again`,
          outcome.cause,
        )
        return yield* unclaim(claimed.id)
      }
      return yield* settleClaimed(claimed.id)
    })

  /** Reads this owner's claimed rows and applies them: answers first, then cascades. */
  const apply = Fx.gen(function* () {
    const claimed = yield* sql<ClaimedRow>`SELECT id, digest, answer FROM pending_ask
      WHERE owner_id = ${ownerID} AND status = 'claimed' ORDER BY time_updated, id`
    if (claimed.length === 0) return
    const decoded = claimed.map((row) => ({
      row,
      claim: row.answer === null ? Option.none<Claim>() : decodeClaim(row.answer),
    }))
    const rejecters = yield* causes(
      decoded.flatMap(({ claim }) =>
        Option.isSome(claim) && claim.value.kind === "cascade" ? [claim.value.cause] : [],
      ),
    )
    for (const pass of ["answer", "cascade"] as const) {
      for (const { row, claim } of decoded) {
        if (Option.isNone(claim)) {
          if (pass === "answer") {
            yield* Fx.logWarning(`PermissionV2 shared asks: the claim of ${row.id} does not decode; pending again`)
            yield* unclaim(row.id)
          }
          continue
        }
        if (claim.value.kind === pass) yield* applyOne(row, claim.value, rejecters)
      }
    }
  })

  /** Inserts again the rows whose insert failed. */
  const retryUnsaved = Fx.suspend(() =>
    Fx.forEach(
      [...rows].filter(([, row]) => row.state === "unsaved"),
      ([id, row]) =>
        Fx.zipRight(
          Fx.sync(() => (row.state = "inserting")),
          insert(id, row),
        ),
      { discard: true },
    ),
  )

  /** The apply loop: on a wake-up, or every poll interval while shared asks are pending. */
  const applyLoop = Fx.forever(
    Fx.gen(function* () {
      const woken = yield* Fx.raceFirst(Fx.as(Queue.take(wake), true), Fx.as(Fx.sleep(SHARED_POLL_INTERVAL_MS), false))
      if (!woken && rows.size === 0) return
      yield* retryUnsaved
      yield* apply.pipe(Fx.catchAll(warn("could not read the claimed asks; retrying")))
    }),
  )

  /** The listener: wakes the apply loop on this owner's notifications and after every (re)subscription. */
  const listen = Fx.scoped(
    Fx.gen(function* () {
      const stream = yield* notifications.subscribe(ANSWER_CHANNEL)
      yield* wake.offer(undefined)
      yield* Stream.runForEach(stream, (payload) => (payload === ownerID ? wake.offer(undefined) : Fx.void))
    }),
  ).pipe(
    Fx.tapError(warn("the answer notifications stopped; polling and subscribing again")),
    Fx.retry(Schedule.spaced(SHARED_POLL_INTERVAL_MS)),
  )

  yield* Fx.forkScoped(listen)
  yield* Fx.forkScoped(applyLoop)
  yield* Fx.forkScoped(Retention.job(sql, ownerID))
  const settler = yield* Fx.forkScoped(settleLoop)
  // Closing (after every Location closed): the writer stops, then everything not yet settled is written before the
  // owner's row goes (finalizers run last-added first).
  yield* Fx.addFinalizer(() =>
    Fiber.interrupt(settler).pipe(
      // Every row this process still knows goes too (one whose insert was answering as its Location closed).
      Fx.zipRight(Fx.suspend(() => settle([...new Set([...settledAnswers.keys(), ...rows.keys()])]))),
      Fx.catchAll(warn("could not settle on close")),
    ),
  )

  const mirror = (scope: ProjectV2.ApprovalScope, holder: Holder): Mirror => ({
    created: (entry, prompt) =>
      Fx.suspend(() => {
        // Answered while Asked was being published: nothing to share.
        if (holder.entry(entry.request.id) !== entry) return Fx.void
        const row: Row = { entry, holder, scope, prompt, state: "inserting", left: false, answer: undefined }
        rows.set(entry.request.id, row)
        return insert(entry.request.id, row)
      }),
    answered: (entries, choice, who) => {
      for (const entry of entries) {
        const row = rows.get(entry.request.id)
        if (row === undefined || row.entry !== entry) continue
        row.answer = encodeClaim({
          kind: "answer",
          choice,
          channel: who.channel,
          ...(who.by === undefined ? {} : { by: who.by }),
        })
      }
    },
    left: (entry) => {
      const id = entry.request.id
      const row = rows.get(id)
      if (row === undefined || row.entry !== entry) return
      if (row.state === "inserting") {
        row.left = true
        return
      }
      rows.delete(id)
      queueSettle(id, row.answer)
    },
    rejected: (entry) =>
      Fx.suspend(() =>
        claimCascades(sql, {
          sessionID: entry.request.sessionID,
          cause: entry.request.id,
          now: now(),
          exceptOwner: ownerID,
        }).pipe(Fx.catchAll(warn(`could not cascade the rejection of ${entry.request.id} to other processes`))),
      ),
  })

  return { ownerID, mirror } satisfies Interface
})

/**
 * The process-wide shared-asks service: on Postgres it mirrors every Location's pending asks into `pending_ask` and
 * applies the answers other processes claim; on SQLite it does nothing.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerShared: Layer.Layer<SharedAsks, never, SqlClient.SqlClient | Notifications.Service> = Layer.scoped(
  SharedAsks,
  make,
)
