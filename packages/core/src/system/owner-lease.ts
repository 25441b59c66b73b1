/**
 * An owner lease: a `runner_owner` row that says a process is live until `lease_expires`. The owner registers the
 * row, a background fiber renews it every third of the lease while the scope is open, and the row is removed when
 * the scope closes. Other processes treat what an owner holds — the runner's unfinished `tool_call` rows, the asks
 * of `pending_ask` — as abandoned once its lease has run out. Leases follow Effect's `Clock`, so tests drive them
 * with `TestClock`. See docs/database.md.
 *
 * @since 0.3.0
 */
import * as os from "node:os"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Identifier from "../values/identifier.js"
import * as DatabaseError from "./database-error.js"

/**
 * How long an owner stays live without renewing. Generous on purpose: a loaded machine may delay a heartbeat by
 * seconds, and an expired lease lets another process take over what this one holds.
 *
 * @since 0.3.0
 * @category constants
 */
export const LEASE: Duration.Duration = Duration.seconds(30)

/**
 * Options of a lease.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options {
  /** How long the owner stays live without renewing (default `LEASE`); renewed every third of it. */
  readonly lease?: Duration.DurationInput
  /**
   * A stable name for this owner across restarts (for example a service's instance name). A new owner with the
   * same name takes over at once: the earlier owners of that name are expired when it registers.
   */
  readonly instance?: string
  /** Who holds the lease, for the warning a failed renewal logs (default `OwnerLease`). */
  readonly name?: string
}

/**
 * A registered owner.
 *
 * @since 0.3.0
 * @category models
 */
export interface Lease {
  /** The owner id (`own_…`). */
  readonly ownerID: string
  /** How long the lease lasts, in milliseconds. */
  readonly leaseMillis: number
  /** Extends the lease from now (the heartbeat calls it); a database error is a defect. */
  readonly renew: () => Effect.Effect<void>
}

/**
 * Registers a new owner, renews its lease in a fiber tied to the scope, and removes the owner's row when the scope
 * closes. A failed renewal (say `SQLITE_BUSY` on a loaded machine, or Postgres restarting) is logged and retried
 * on the next beat; the lease leaves room for two misses.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Lease, never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const orDie = DatabaseError.orDie(sql)
    const leaseMillis = Duration.toMillis(Duration.decode(options.lease ?? LEASE))
    const ownerID = Identifier.create("own")
    const instance = options.instance ?? null

    const renewOnce = Effect.flatMap(
      Clock.currentTimeMillis,
      (now) =>
        sql`INSERT INTO runner_owner (id, pid, hostname, instance, lease_expires, time_created, time_updated)
          VALUES (${ownerID}, ${process.pid}, ${os.hostname()}, ${instance}, ${now + leaseMillis}, ${Date.now()}, ${Date.now()})
          ON CONFLICT (id) DO UPDATE SET lease_expires = excluded.lease_expires, time_updated = excluded.time_updated`,
    )
    const renew = () => orDie(Effect.asVoid(renewOnce))

    yield* Effect.acquireRelease(
      Effect.zipRight(
        instance === null
          ? Effect.void
          : orDie(sql`UPDATE runner_owner SET lease_expires = 0 WHERE instance = ${instance}`),
        renew(),
      ),
      () => orDie(sql`DELETE FROM runner_owner WHERE id = ${ownerID}`),
    )
    const beat = Duration.millis(Math.max(1, Math.floor(leaseMillis / 3)))
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.delay(
          renewOnce.pipe(
            Effect.asVoid,
            Effect.catchAll((error) =>
              Effect.logWarning(`${options.name ?? "OwnerLease"}: lease renewal failed`, error),
            ),
          ),
          beat,
        ),
      ),
    )
    return { ownerID, leaseMillis, renew }
  })
