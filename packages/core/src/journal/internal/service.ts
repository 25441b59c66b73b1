/**
 * The decision journal's service: one per process, over the `decision` table. Entries that record a state change
 * go in the transaction of that change (`appendInTransaction` inside `transaction`); answers, expiries, releases
 * and cascades are written before the call they settle goes on (`append`); evaluations and asks, which change
 * nothing on disk, are buffered (`record`) and written in batches, always before any later `append` or
 * `transaction` commits and when the layer closes. See docs/decisions.md.
 *
 * `record` runs on every tool call, so it carries no tracing span; the other methods are traced.
 *
 * @since 0.3.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlError from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Database from "../../system/database.js"
import * as Identifier from "../../values/identifier.js"
import type { Draft, Entry, Prune, Query } from "./schema.js"
import * as Store from "./store.js"

/**
 * How often buffered entries are written (milliseconds).
 *
 * @since 0.3.0
 * @category constants
 */
export const FLUSH_INTERVAL_MS = 1000

/**
 * How many buffered entries start a write before the interval is up.
 *
 * @since 0.3.0
 * @category constants
 */
export const FLUSH_BATCH = 512

/**
 * The most entries the buffer holds while writes fail; beyond it the oldest are dropped (with a warning).
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_BUFFERED = 65536

/**
 * Returns a fresh `dec_…` id.
 *
 * @since 0.3.0
 * @category constructors
 */
export const createID = (): string => Identifier.create("dec")

/**
 * The decision journal.
 *
 * @since 0.3.0
 * @category models
 */
export interface Interface {
  /**
   * Buffers an entry that records no state change (an evaluation, an ask): its id and time are taken now; a function
   * is called when the batch is written, off the caller's path (so the caller can defer building the detail). The
   * buffer is written every `FLUSH_INTERVAL_MS`, when it holds `FLUSH_BATCH` entries, before any `append` or
   * outermost `transaction` commits, and when the layer closes. A crash of the process loses at most the entries
   * buffered since the last write. Untraced; never fails.
   */
  readonly record: (draft: Draft | (() => Draft)) => Effect.Effect<void>
  /**
   * Writes `drafts` (with every buffered entry) in one transaction of its own — or as part of the caller's, when
   * called inside `transaction`. Committed when it returns: the entries survive a crash of the process.
   */
  readonly append: (drafts: ReadonlyArray<Draft>) => Effect.Effect<void, Database.QueryError>
  /**
   * Writes `drafts` inside the caller's transaction, so they commit or roll back with the change they record (an
   * `always` save, a revoke). It needs the transaction's connection: run it inside `transaction` (or another
   * `SqlClient.withTransaction`, with the requirement discharged there).
   */
  readonly appendInTransaction: (
    drafts: ReadonlyArray<Draft>,
  ) => Effect.Effect<void, Database.QueryError, SqlClient.TransactionConnection>
  /**
   * Runs `effect` in one SQL transaction (a savepoint when already inside one) and discharges its need of the
   * transaction's connection. The outermost one also writes the buffered entries in it.
   */
  readonly transaction: <A, E, R>(
    effect: Effect.Effect<A, E, R>,
  ) => Effect.Effect<A, E | Database.QueryError, Exclude<R, SqlClient.TransactionConnection>>
  /** Writes the buffered entries now. */
  readonly flush: Effect.Effect<void, Database.QueryError>
  /** Reads entries (the buffered ones written first), oldest first. */
  readonly query: (query?: Query) => Effect.Effect<ReadonlyArray<Entry>, Database.QueryError>
  /** Deletes what `prune` names; returns how many entries were deleted. */
  readonly prune: (prune: Prune) => Effect.Effect<number, Database.QueryError>
}

/**
 * The DecisionJournal service tag.
 *
 * @since 0.3.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/DecisionJournal")<Service, Interface>() {}

/** An entry waiting in the buffer: id and time taken when it was recorded. */
interface Buffered {
  readonly id: string
  readonly time: number
  readonly draft: Draft | (() => Draft)
}

const inTransaction = Effect.map(Effect.serviceOption(SqlClient.TransactionConnection), Option.isSome)

/**
 * Builds the journal over the current `SqlClient`: the buffer, its writer fiber (in the layer's scope) and a last
 * write when the scope closes.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const clock = yield* Effect.clock
  const scope = yield* Effect.scope
  const runtime = yield* Effect.runtime<never>()
  const toQueryError = Database.mapQueryError(sql)

  let buffer: Array<Buffered> = []
  let batching = false
  let timing = false
  let dropped = 0

  const cap = () => {
    if (buffer.length <= MAX_BUFFERED) return
    const over = buffer.length - MAX_BUFFERED
    buffer.splice(0, over)
    dropped += over
  }

  /** The rows of `taken`; a draft that throws or does not fit its kind is left out with a warning. */
  const rowsOf = (taken: ReadonlyArray<Buffered>) =>
    Effect.suspend(() => {
      const rows: Array<Store.Row> = []
      const problems: Array<string> = []
      for (const item of taken) {
        let draft: Draft
        try {
          draft = typeof item.draft === "function" ? item.draft() : item.draft
        } catch (error) {
          problems.push(`decision entry ${item.id}: ${String(error)}`)
          continue
        }
        const row = Store.toRow(item.id, item.time, draft)
        if (Either.isRight(row)) rows.push(row.right)
        else problems.push(row.left)
      }
      if (dropped > 0)
        problems.push(`${dropped} buffered decision entries were dropped while the journal could not be written`)
      dropped = 0
      return problems.length === 0
        ? Effect.succeed(rows)
        : Effect.as(Effect.logWarning("DecisionJournal: entries left out", ...problems), rows)
    })

  /** The outermost transaction: the buffered entries are written first, in it; put back when it fails. */
  const outermost = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.suspend(() => {
      const taken = buffer
      buffer = []
      return Effect.flatMap(rowsOf(taken), (rows) =>
        sql.withTransaction(Effect.zipRight(Store.insert(sql, rows), effect)),
      ).pipe(
        Effect.onError(() =>
          Effect.sync(() => {
            buffer = taken.concat(buffer)
            cap()
          }),
        ),
      )
    })

  const transaction = <A, E, R>(
    effect: Effect.Effect<A, E, R>,
  ): Effect.Effect<A, E | Database.QueryError, Exclude<R, SqlClient.TransactionConnection>> =>
    Effect.flatMap(inTransaction, (inside) => (inside ? sql.withTransaction(effect) : outermost(effect))).pipe(
      Effect.mapError((error) => (error instanceof SqlError.SqlError ? Database.queryError(sql, error) : (error as E))),
      // `withTransaction` dies when its ROLLBACK fails too (an unwritable WAL, a full disk): that is the same
      // database failure, so it is a `QueryError` the caller handles (a `SaveError` for an `always`), not a defect.
      Effect.catchSomeDefect((defect) =>
        defect instanceof SqlError.SqlError
          ? Option.some(Effect.fail(Database.queryError(sql, defect)))
          : Option.none(),
      ),
    ) as Effect.Effect<A, E | Database.QueryError, Exclude<R, SqlClient.TransactionConnection>>

  const appendInTransaction = (
    drafts: ReadonlyArray<Draft>,
  ): Effect.Effect<void, Database.QueryError, SqlClient.TransactionConnection> =>
    Effect.flatMap(SqlClient.TransactionConnection, () =>
      Effect.suspend(() => {
        const time = clock.unsafeCurrentTimeMillis()
        const rows: Array<Store.Row> = []
        for (const draft of drafts) {
          const row = Store.toRow(createID(), time, draft)
          if (Either.isLeft(row)) return Effect.dieMessage(row.left)
          rows.push(row.right)
        }
        return toQueryError(Store.insert(sql, rows))
      }),
    )

  const append = Effect.fn("DecisionJournal.append")((drafts: ReadonlyArray<Draft>) =>
    transaction(appendInTransaction(drafts)),
  )

  const flushNow: Effect.Effect<void, Database.QueryError> = Effect.suspend(() =>
    buffer.length === 0 && dropped === 0 ? Effect.void : transaction(Effect.void),
  )
  const flush = flushNow.pipe(Effect.withSpan("DecisionJournal.flush"))

  /** A background write that logs instead of failing (the entries stay buffered for the next one). */
  const flushQuietly = flushNow.pipe(
    Effect.catchAll((error) => Effect.logWarning("DecisionJournal: could not write buffered entries", error)),
  )

  /** Runs `effect` in a fiber of the layer's scope (closing the layer interrupts it). */
  const background = (effect: Effect.Effect<void>) => {
    Runtime.runFork(runtime)(effect, { scope })
  }

  // At most one timer and one batch write are under way; a timer starts only when an entry waits for it, so an idle
  // journal wakes nobody.
  const timer: Effect.Effect<void> = Effect.sleep(FLUSH_INTERVAL_MS).pipe(
    Effect.zipRight(Effect.sync(() => (timing = false))),
    Effect.zipRight(flushQuietly),
    Effect.zipRight(Effect.sync(() => startTimer())),
  )
  const startTimer = () => {
    if (timing || buffer.length === 0) return
    timing = true
    background(timer)
  }
  const batch = Effect.ensuring(
    flushQuietly,
    Effect.sync(() => (batching = false)),
  )

  const record = (draft: Draft | (() => Draft)): Effect.Effect<void> =>
    Effect.sync(() => {
      buffer.push({ id: createID(), time: clock.unsafeCurrentTimeMillis(), draft })
      if (!timing) startTimer()
      if (buffer.length >= FLUSH_BATCH && !batching) {
        batching = true
        cap()
        background(batch)
      }
    })

  const query = Effect.fn("DecisionJournal.query")(function* (input?: Query) {
    if (!(yield* inTransaction)) yield* flushNow
    const rows = yield* toQueryError(Store.select(sql, input ?? {}))
    const entries: Array<Entry> = []
    const unread: Array<string> = []
    for (const row of rows) {
      const entry = Store.fromRow(row)
      if (entry === undefined) unread.push(row.id)
      else entries.push(entry)
    }
    if (unread.length > 0) yield* Effect.logWarning("DecisionJournal: entries this version cannot read", ...unread)
    return entries as ReadonlyArray<Entry>
  })

  const prune = Effect.fn("DecisionJournal.prune")((input: Prune) =>
    toQueryError(sql.withTransaction(Store.prune(sql, input))),
  )

  // Registered before any writer fiber is forked into the scope, so it runs after they are interrupted.
  yield* Effect.addFinalizer(() => flushQuietly)

  return Service.of({ record, append, appendInTransaction, transaction, flush, query, prune })
})

/**
 * The process-wide journal on the `decision` table (build it once per process, beside `PermissionSaved.layer`).
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, SqlClient.SqlClient> = Layer.scoped(Service, make)
