/**
 * The retention of `pending_ask` on Postgres (docs/approvals.md, "Retention"): a settled row and a row whose owner is
 * gone go a day after they were last touched; a row of a live owner stays however old it is; a live owner whose
 * lease lapsed touches its pending rows before it prunes, so another process's prune leaves them; a large table is
 * pruned in batches. Every process prunes when it starts and every hour (the job is timed on its own: an hour of a
 * whole host's loops is slow to simulate). Time is the TestClock's; the table is written and read raw.
 */
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, TestClock } from "effect"
import { PermissionV2 } from "../src/index.js"
import * as Retention from "../src/hosts/internal/retention.js"
import * as Engines from "./support/engines.js"
import { asserting, host, rows, session, statusOf, waitFor } from "./support/shared-asks.js"

const DAY = PermissionV2.SHARED_RETENTION_MS
/** Where the clock stands when each test begins: far enough from 0 that "a day ago" is a real time. */
const NOW = 10 * DAY

/** Writes a row of `pending_ask` as some process would have. */
const insertRow = (id: string, owner: string, status: string, updated: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO pending_ask (id, owner_id, project_id, directory, session_id, digest, prompt, status,
        answer, deadline, time_created, time_updated)
      VALUES (${id}, ${owner}, 'prj_x', '/x', 'ses_x', 'dig', '{}', ${status}, NULL, NULL, ${updated}, ${updated})`,
  )

/** Registers an owner whose lease runs out at `expires`. */
const insertOwner = (id: string, expires: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO runner_owner (id, pid, hostname, instance, lease_expires, time_created, time_updated)
      VALUES (${id}, 1, 'elsewhere', NULL, ${expires}, 0, 0)`,
  )

const ids = (all: ReadonlyArray<{ readonly id: string }>) => all.map((row) => row.id).sort()

Engines.describeEach(
  "the retention of pending_ask",
  (engine) => {
    it.scoped("a process prunes when it starts; a live owner's row stays however old", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const url = yield* engine.shared("")
        const one = yield* host(url)
        const { id: sessionID } = yield* Effect.provide(session, one)
        const waiting = yield* Effect.provide(asserting(sessionID, "per_keep_live", "a.ts"), one)
        yield* Effect.provide(
          waitFor((all) => statusOf(all, "per_keep_live") === "pending"),
          one,
        )
        const sql = yield* Effect.provide(SqlClient.SqlClient, one)
        // The live owner's ask has waited eleven days (as far as the row says).
        yield* sql`UPDATE pending_ask SET time_updated = 0 WHERE id = ${"per_keep_live"}`
        const old = NOW - DAY - 1
        const young = NOW - 1000
        yield* Effect.provide(
          Effect.all([
            insertRow("per_old_settled", "own_gone", "settled", old),
            insertRow("per_young_settled", "own_gone", "settled", young),
            insertRow("per_gone_pending", "own_gone", "pending", old),
            insertRow("per_gone_claimed", "own_gone", "claimed", old),
            insertRow("per_gone_young", "own_gone", "pending", young),
            insertOwner("own_expired", NOW - DAY),
            insertRow("per_expired_pending", "own_expired", "pending", old),
          ]),
          one,
        )

        // A second process starts: its first prune runs at once.
        const two = yield* host(url)
        const kept = yield* Effect.provide(
          waitFor((all) => all.length === 3),
          two,
        )
        expect(ids(kept)).toEqual(["per_gone_young", "per_keep_live", "per_young_settled"])

        yield* Effect.provide(
          Effect.flatMap(PermissionV2.Service, (p) => p.reply({ requestID: "per_keep_live", reply: "once" })),
          one,
        )
        expect(yield* Fiber.await(waiting)).toEqual(Exit.void)
      }),
    )

    it.scoped("the job prunes at once and then every interval", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const db = yield* Layer.build(engine.layer())
        const sql = yield* Effect.provide(SqlClient.SqlClient, db)
        const at = (id: string) =>
          Effect.map(sql<{ readonly id: string }>`SELECT id FROM pending_ask WHERE id = ${id}`, (found) => found.length)
        yield* Effect.provide(insertRow("per_first", "own_gone", "settled", NOW - DAY - 1), db)
        yield* Effect.forkScoped(Retention.job(sql, "own_job"))
        for (let i = 0; i < 2000 && (yield* at("per_first")) === 1; i++) yield* Effect.yieldNow()
        expect(yield* at("per_first")).toBe(0)
        // Settled a day ago, as seen at the next prune: it goes then, not before.
        yield* Effect.provide(
          insertRow("per_next", "own_gone", "settled", NOW + PermissionV2.SHARED_PRUNE_INTERVAL_MS - DAY - 1),
          db,
        )
        yield* TestClock.adjust(PermissionV2.SHARED_PRUNE_INTERVAL_MS - 1)
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
        expect(yield* at("per_next")).toBe(1)
        yield* TestClock.adjust(1)
        for (let i = 0; i < 2000 && (yield* at("per_next")) === 1; i++) yield* Effect.yieldNow()
        expect(yield* at("per_next")).toBe(0)
      }),
    )

    it.scoped("a live owner whose lease lapsed touches its pending rows first, so another prune keeps them", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const url = yield* engine.shared("")
        const one = yield* host(url)
        const sql = yield* Effect.provide(SqlClient.SqlClient, one)
        yield* Effect.provide(
          Effect.all([
            insertOwner("own_lapsed", NOW - 1),
            insertRow("per_touched", "own_lapsed", "pending", 0),
            insertOwner("own_lapsed_too", NOW - 1),
            insertRow("per_untouched", "own_lapsed_too", "pending", 0),
          ]),
          one,
        )
        // The lapsed owner's own prune comes first for one row and not for the other.
        expect(yield* Retention.prune(sql, "own_lapsed", NOW)).toBe(1)
        const [touched] = yield* sql<{ readonly time_updated: string | number }>`SELECT time_updated FROM pending_ask
          WHERE id = ${"per_touched"}`
        expect(Number(touched!.time_updated)).toBe(NOW)
        expect(ids(yield* Effect.provide(rows, one))).toEqual(["per_touched"])
        expect(yield* Retention.prune(sql, "own_someone_else", NOW)).toBe(0)
        expect(ids(yield* Effect.provide(rows, one))).toEqual(["per_touched"])
      }),
    )

    it.scoped("a large table is pruned whole, in several statements", () =>
      Effect.gen(function* () {
        const db = yield* Layer.build(engine.layer())
        const sql = yield* Effect.provide(SqlClient.SqlClient, db)
        // More rows than one statement deletes (5,000), all settled two days ago, and one settled just now.
        yield* sql`INSERT INTO pending_ask (id, owner_id, project_id, directory, session_id, digest, prompt, status,
            answer, deadline, time_created, time_updated)
          SELECT 'per_bulk_' || g, 'own_gone', 'prj_x', '/x', 'ses_x', 'dig', '{}', 'settled', NULL, NULL,
            ${NOW - 2 * DAY}, ${NOW - 2 * DAY}
          FROM generate_series(1, 12345) AS g`
        yield* Effect.provide(insertRow("per_recent", "own_gone", "settled", NOW - 1), db)
        expect(yield* Retention.prune(sql, "own_job", NOW)).toBe(12345)
        expect(ids(yield* sql<{ readonly id: string }>`SELECT id FROM pending_ask`)).toEqual(["per_recent"])
      }),
    )
  },
  Engines.postgresOnly,
)
