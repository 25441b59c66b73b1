/**
 * The retention of `pending_ask` (Postgres): what the table keeps once nobody needs a row.
 *
 * - A `settled` row goes `SHARED_RETENTION_MS` after it settled. Until then an answer to it is refused as already
 *   answered (`Approvals.AlreadyAnsweredError`) rather than unknown.
 * - A row whose owner is gone (a process that died without settling its asks) goes `SHARED_RETENTION_MS` after its
 *   owner last touched it. Remote lists hide it as soon as the owner's lease runs out; deleting it changes nothing a
 *   client sees (an answer to it is `Approvals.NotFoundError` either way).
 * - A live owner touches its `pending` rows at every prune, so a row of an owner whose lease lapsed for a while (a
 *   Postgres restart, a starved heartbeat) is never old enough to go, however long its ask has waited. A row of an
 *   owner whose lease is live is never deleted.
 *
 * Every process that shares asks prunes when it starts and every `SHARED_PRUNE_INTERVAL_MS`; the statements are
 * idempotent, so several processes pruning at once is harmless. See docs/approvals.md.
 *
 * @since 0.3.0
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import * as Fx from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { SHARED_PRUNE_INTERVAL_MS, SHARED_RETENTION_MS } from "../../permission/internal/queue.js"

/** The rows one `DELETE` removes at most, so that a table grown large before an upgrade is pruned in short steps. */
const BATCH = 5000

/**
 * Touches `ownerID`'s pending rows at `now`, then deletes what the retention no longer keeps, `BATCH` rows per
 * statement; returns how many rows went.
 *
 * @internal
 * @category utilities
 */
export const prune = (sql: SqlClient.SqlClient, ownerID: string, now: number): Fx.Effect<number, SqlError.SqlError> =>
  Fx.gen(function* () {
    yield* sql`UPDATE pending_ask SET time_updated = ${now} WHERE owner_id = ${ownerID} AND status = 'pending'`
    let total = 0
    for (;;) {
      const deleted = yield* sql<{ readonly id: string }>`DELETE FROM pending_ask WHERE id IN (
          SELECT id FROM pending_ask
          WHERE time_updated < ${now - SHARED_RETENTION_MS}
            AND (status = 'settled' OR owner_id NOT IN (SELECT id FROM runner_owner WHERE lease_expires > ${now}))
          LIMIT ${BATCH})
        RETURNING id`
      total += deleted.length
      if (deleted.length < BATCH) return total
    }
  })

/**
 * The retention job of one owner: a prune now, then one every `SHARED_PRUNE_INTERVAL_MS` (fork it in the owner's
 * scope). A failed prune (Postgres restarting) is logged as a warning and tried again at the next interval.
 *
 * @internal
 * @category constructors
 */
export const job = (sql: SqlClient.SqlClient, ownerID: string): Fx.Effect<void> => {
  const once = Fx.flatMap(
    Fx.clockWith((clock) => clock.currentTimeMillis),
    (now) => prune(sql, ownerID, now),
  ).pipe(
    Fx.asVoid,
    Fx.catchAll((error) => Fx.logWarning("PermissionV2 shared asks: could not prune pending_ask; retrying", error)),
  )
  return Fx.zipRight(once, Fx.asVoid(Fx.schedule(once, Schedule.spaced(SHARED_PRUNE_INTERVAL_MS))))
}
