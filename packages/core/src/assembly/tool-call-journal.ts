/**
 * The runner's durable call log: every `tool_call` row is written here, and nowhere else. A journal belongs to one
 * owner — a `runner_owner` row with a lease that a background fiber renews while the journal's scope is open — and
 * every call it records carries that owner. Recovery fails only unfinished calls whose owner is gone (its lease
 * expired, it has no owner, or it was an earlier incarnation of the same named instance), so runners in other
 * Locations or other processes sharing the database keep their live calls. Leases follow Effect's `Clock`, so tests
 * drive them with `TestClock`. The first terminal state of a call wins: a settle never overwrites a call that
 * recovery already failed (its runner learns so from `settle`'s answer). See docs/database.md.
 *
 * @since 0.2.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Database from "../system/database.js"
import * as OwnerLease from "../system/owner-lease.js"

/**
 * How long an owner stays live without renewing. Generous on purpose: a loaded machine may delay a heartbeat by
 * seconds, and an expired lease lets another runner fail this runner's calls.
 *
 * @since 0.2.0
 * @category constants
 */
export const LEASE: Duration.Duration = OwnerLease.LEASE

/**
 * How often a live runner looks for calls of owners whose lease has expired, as a fraction of its lease: every half
 * lease, so a dead runner's calls are failed at most one and a half leases after its last renewal.
 *
 * @since 0.4.0
 * @category constants
 */
export const RECOVERY_FRACTION = 0.5

/**
 * The recovery interval of a lease of `leaseMillis`: `RECOVERY_FRACTION` of it.
 *
 * @since 0.4.0
 * @category utilities
 */
export const recoveryInterval = (leaseMillis: number): Duration.Duration =>
  Duration.millis(Math.max(1, Math.floor(leaseMillis * RECOVERY_FRACTION)))

/**
 * How long `settleDurably` keeps retrying a call's final write while the database fails (an outage, a restart): 30
 * seconds, backing off from 50 ms to at most 2 s between attempts.
 *
 * @since 0.4.0
 * @category constants
 */
export const RESULT_WRITE_BOUND: Duration.Duration = Duration.seconds(30)

/**
 * A call's final state could not be written within `RESULT_WRITE_BOUND`: the tool ran and its result reached the
 * model, but the journal does not hold it (recovery will mark the call interrupted).
 *
 * @since 0.4.0
 * @category errors
 */
export class RecordError extends Schema.TaggedError<RecordError>()("ToolCallJournal.RecordError", {
  callID: Schema.String,
  filename: Schema.optional(Schema.String),
  code: Schema.optional(Schema.String),
  detail: Schema.String,
}) {
  override get message(): string {
    return `The result of tool call ${this.callID} could not be recorded in ${this.filename ?? "the database"}: ${this.detail}`
  }
}

/**
 * Options of a journal's owner.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** How long the owner stays live without renewing (default `LEASE`); renewed every third of it. */
  readonly lease?: Duration.DurationInput
  /**
   * A stable name for this runner across restarts (for example a service's instance name). A new owner with the
   * same name takes over at once: the calls of the earlier owners of that name are recovered without waiting for
   * their leases.
   */
  readonly instance?: string
}

/**
 * Which call a row is.
 *
 * @since 0.2.0
 * @category models
 */
export interface CallKey {
  readonly sessionID: string
  readonly assistantMessageID: string
  readonly callID: string
}

/**
 * A call as recorded before any side effect.
 *
 * @since 0.2.0
 * @category models
 */
export interface Call extends CallKey {
  readonly name: string
  readonly input: unknown
  readonly providerExecuted: boolean
}

/**
 * How a call ended.
 *
 * @since 0.2.0
 * @category models
 */
export interface Outcome {
  readonly status: "completed" | "failed"
  /** The result value stored as JSON. */
  readonly result: unknown
  /** The failure text (for `failed`). */
  readonly error: string | null
}

/**
 * What `settle` did: `settled` — it wrote the call's final state; `recovered` — the call already had one (recovery
 * failed it while its runner was unresponsive past its lease), which stays.
 *
 * @since 0.3.0
 * @category models
 */
export type Settled = "settled" | "recovered"

/**
 * The journal. `record` and `settle` sit on the per-call path and are not traced; database errors are defects
 * (a `Database.QueryError` naming the file and the SQLite code).
 *
 * @since 0.2.0
 * @category models
 */
export interface Interface {
  /** This journal's owner id (`own_…`). */
  readonly ownerID: string
  /** How long this owner's lease lasts, in milliseconds. */
  readonly leaseMillis: number
  /** Writes the call as `running`, owned by this journal. */
  readonly record: (call: Call) => Effect.Effect<void>
  /**
   * Writes the call's final status, result and error — only while the call is still pending or running and owned by
   * this journal. Otherwise (recovery got there first) nothing is written and the answer is `recovered`.
   */
  readonly settle: (call: CallKey, outcome: Outcome) => Effect.Effect<Settled>
  /**
   * `settle` once, as a typed failure instead of a defect: the runner tries this first and, when the database
   * fails, goes on and leaves the write to `settleDurably`.
   */
  readonly settleOnce: (call: CallKey, outcome: Outcome) => Effect.Effect<Settled, RecordError>
  /** `settle`, retried with backoff while the database fails, for at most `RESULT_WRITE_BOUND`. */
  readonly settleDurably: (call: CallKey, outcome: Outcome) => Effect.Effect<Settled, RecordError>
  /**
   * Marks `failed` with `error` every pending or running call whose owner is gone, forgets expired owners, and
   * returns how many calls it failed.
   */
  readonly recover: (error: string) => Effect.Effect<number>
  /** Extends this owner's lease from now (the heartbeat calls it). */
  readonly renew: () => Effect.Effect<void>
}

/**
 * The ToolCallJournal service.
 *
 * @since 0.2.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/ToolCallJournal")<Service, Interface>() {}

/**
 * JSON for a column. A value JSON cannot hold (nested too deeply for the serializer's stack, a cycle, a BigInt) is
 * recorded as a note saying why instead of failing the call's record.
 */
const toJson = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? "null"
  } catch (error) {
    const reason =
      error instanceof RangeError
        ? "nested too deeply to store as JSON"
        : error instanceof Error
          ? error.message
          : String(error)
    return JSON.stringify({ unstored: reason })
  }
}

const RETRY = Schedule.exponential("50 millis").pipe(
  Schedule.union(Schedule.spaced("2 seconds")),
  Schedule.upTo(RESULT_WRITE_BOUND),
)

/**
 * Registers a new owner (an `OwnerLease`), renews its lease in a fiber tied to the scope, and removes the owner when
 * the scope closes (its unfinished calls, if any, are then recovered by the next runner at once).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const orDie = Database.orDie(sql)
    const { ownerID, leaseMillis, renew } = yield* OwnerLease.make({ ...options, name: "ToolCallJournal" })

    const record = (call: Call) =>
      sql`INSERT INTO tool_call (session_id, assistant_message_id, call_id, name, input, provider_executed, status, owner_id, time_created, time_updated)
        VALUES (${call.sessionID}, ${call.assistantMessageID}, ${call.callID}, ${call.name}, ${toJson(call.input ?? null)},
          ${call.providerExecuted ? 1 : 0}, 'running', ${ownerID}, ${Date.now()}, ${Date.now()})`.pipe(
        Effect.asVoid,
        orDie,
      )

    // The status and owner guard keeps the first terminal state: a call recovery failed stays failed. Writing it
    // again is harmless, so a retry after a lost answer cannot overwrite anything.
    const write = (call: CallKey, outcome: Outcome) =>
      Effect.suspend(
        () => sql<{
          call_id: string
        }>`UPDATE tool_call SET status = ${outcome.status}, result = ${toJson(outcome.result)},
          error = ${outcome.error}, time_updated = ${Date.now()}
          WHERE session_id = ${call.sessionID} AND assistant_message_id = ${call.assistantMessageID} AND call_id = ${call.callID}
            AND owner_id = ${ownerID} AND status IN ('pending', 'running')
          RETURNING call_id`,
      ).pipe(Effect.map((rows): Settled => (rows.length > 0 ? "settled" : "recovered")))
    const settle = (call: CallKey, outcome: Outcome): Effect.Effect<Settled> => orDie(write(call, outcome))
    const settleOnce = (call: CallKey, outcome: Outcome): Effect.Effect<Settled, RecordError> =>
      Effect.mapError(write(call, outcome), (error) => {
        const failure = Database.queryError(sql, error)
        return new RecordError({
          callID: call.callID,
          ...(failure.filename === undefined ? {} : { filename: failure.filename }),
          ...(failure.code === undefined ? {} : { code: failure.code }),
          detail: failure.detail,
        })
      })
    const settleDurably = (call: CallKey, outcome: Outcome): Effect.Effect<Settled, RecordError> =>
      Effect.retry(settleOnce(call, outcome), RETRY)

    const recover = Effect.fn("ToolCallJournal.recover")(function* (error: string) {
      const now = yield* Clock.currentTimeMillis
      // One transaction that starts with a write, so it takes the write lock before reading anything.
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          const failed = yield* sql<{
            call_id: string
          }>`UPDATE tool_call SET status = 'failed', error = ${error}, time_updated = ${Date.now()}
            WHERE status IN ('pending', 'running')
              AND (owner_id IS NULL OR owner_id NOT IN (SELECT id FROM runner_owner WHERE lease_expires > ${now}))
            RETURNING call_id`
          yield* sql`DELETE FROM runner_owner WHERE lease_expires <= ${now} AND id != ${ownerID}`
          return failed.length
        }),
      )
    }, orDie)

    return Service.of({ ownerID, leaseMillis, record, settle, settleOnce, settleDurably, recover, renew })
  })

/**
 * A journal with its own owner for the layer's lifetime.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<Service, never, SqlClient.SqlClient> =>
  Layer.scoped(Service, make(options))
