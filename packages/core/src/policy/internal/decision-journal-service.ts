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
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Database from "../../system/database.js"
import type { Draft, Entry, Prune, Query } from "./decision-journal-schema.js"

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
