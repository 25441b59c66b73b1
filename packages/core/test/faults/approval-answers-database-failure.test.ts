/**
 * Every database failure inside the HTTP answer path is the documented 503 `PermissionV2.SaveError`: 40 answers
 * arrive at once at an approval server with no Location (`ApprovalServer.layerDatabase`) on a Postgres server of the
 * test's own while every other connection to it is terminated (`pg_terminate_backend`) again and again. Each answer
 * is 204, 409 or 503 — never a 500 (a failed read, claim, COMMIT or ROLLBACK escaping as a defect).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Layer, Ref, Schedule, Schema } from "effect"
import { Approvals, Database, type PermissionV2 } from "../../src/index.js"
import { ApprovalServer } from "../../src/entry/server.js"
import { binaries, dedicatedServer } from "../support/dedicated-postgres.js"
import { request } from "../support/http-client.js"

const TOKEN = "database-failure-token-0123456789"
const auth = { authorization: `Bearer ${TOKEN}` }
const ASKS = 20

/** A live owner and one pending edit ask, as the asking process writes them. */
const ask = (sql: SqlClient.SqlClient, id: string) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    yield* sql`INSERT INTO runner_owner (id, pid, hostname, instance, lease_expires, time_created, time_updated)
      VALUES (${`own_${id}`}, 1, 'runner-host', NULL, ${now + 3_600_000}, 0, 0)`
    const request: PermissionV2.Request = {
      id,
      sessionID: `ses_${id}`,
      action: "edit",
      resources: ["a.txt"],
      save: ["*"],
    }
    const prompt = Approvals.prompt(request, undefined, now, undefined)
    yield* sql`INSERT INTO pending_ask (id, owner_id, project_id, directory, session_id, digest, prompt, status,
        answer, deadline, time_created, time_updated)
      VALUES (${id}, ${`own_${id}`}, 'prj_1', '/src', ${request.sessionID}, ${prompt.digest},
        ${JSON.stringify(Schema.encodeSync(Approvals.Prompt)(prompt))}, 'pending', NULL, NULL, ${now}, ${now})`
    return prompt
  })

describe.skipIf(binaries.bin === undefined)(
  `HTTP answers while Postgres connections are terminated${binaries.bin === undefined ? ` (skipped: ${binaries.reason})` : ""}`,
  () => {
    it.live(
      "40 concurrent answers under pg_terminate_backend: every answer is 204, 409 or 503, never 500",
      () =>
        Effect.gen(function* () {
          const server = yield* dedicatedServer("answers")
          const context = yield* Layer.build(
            ApprovalServer.layerDatabase({ token: TOKEN }).pipe(
              Layer.provideMerge(Layer.merge(Database.layerUrl(server.url), NodeHttpClient.layer)),
            ),
          )
          const { url } = yield* Effect.provide(ApprovalServer.Service, context)
          const sql = yield* Effect.provide(SqlClient.SqlClient, context)
          const prompts = yield* Effect.forEach(
            Array.from({ length: ASKS }, (_, i) => `per_${i}`),
            (id) => ask(sql, id),
          )

          // A connection of its own that terminates every other backend until the answers are all in.
          const killer = yield* Layer.build(Database.layerUrl(server.url, { maxConnections: 1 }))
          const killerSql = yield* Effect.provide(SqlClient.SqlClient, killer)
          const done = yield* Deferred.make<void>()
          const kills = yield* Ref.make(0)
          const terminated = yield* Effect.fork(
            Effect.raceFirst(
              Effect.repeat(
                killerSql<{ killed: boolean }>`SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
                  WHERE pid <> pg_backend_pid() AND datname = current_database()`.pipe(
                  Effect.flatMap((rows) => Ref.update(kills, (n) => n + rows.filter((row) => row.killed).length)),
                  Effect.ignore,
                ),
                Schedule.spaced("5 millis"),
              ),
              Deferred.await(done),
            ),
          )
          // Two answers per ask (one of the pair can only lose), all at once.
          const replies = yield* Effect.forEach(
            [...prompts, ...prompts],
            (prompt) =>
              request(`${url}/api/asks/${prompt.request.id}/answer`, {
                method: "POST",
                headers: auth,
                body: { digest: prompt.digest, choice: "once" },
              }),
            { concurrency: "unbounded" },
          )
          yield* Deferred.succeed(done, undefined)
          yield* terminated.await

          expect(yield* Ref.get(kills)).toBeGreaterThan(0)
          const statuses = replies.map((reply) => reply.status)
          expect(statuses.filter((status) => ![204, 409, 503].includes(status))).toEqual([])
          for (const reply of replies.filter((reply) => reply.status === 503))
            expect(reply.json).toMatchObject({ _tag: "PermissionV2.SaveError" })
          // At most one winner per ask.
          const won = new Map<string, number>()
          replies.forEach((reply, i) => {
            if (reply.status === 204)
              won.set(prompts[i % ASKS]!.request.id, (won.get(prompts[i % ASKS]!.request.id) ?? 0) + 1)
          })
          expect([...won.values()].every((count) => count === 1)).toBe(true)
        }).pipe(Effect.scoped),
      120_000,
    )
  },
)
