/**
 * `ApprovalServer.layerDatabase` (`layerRemote` over `ApprovalsDatabase.layer`), with no Location, on Postgres, over a real loopback
 * HTTP server: the asks every process wrote into `pending_ask` are listed and answered with the bearer token (the
 * claim is in the database), the event stream delivers them, and the saved approvals and journal are every
 * project's, `?projectID=` narrowing.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Clock, Effect, Layer, Schema } from "effect"
import { Approvals, DecisionJournal, PermissionSaved, PermissionV2 } from "../src/index.js"
import { ApprovalServer } from "../src/entry/server.js"
import * as Engines from "./support/engines.js"
import { eventStream, request } from "./support/http-client.js"
import { ApprovalsDatabase } from "../src/entry/hosts.js"

const TOKEN = "remote-token-0123456789abcdef"
const auth = { authorization: `Bearer ${TOKEN}` }

const harness = (engine: Engines.Engine) =>
  Effect.gen(function* () {
    // The test reads and writes through services of its own on the same database.
    const own = Layer.mergeAll(PermissionSaved.layer, DecisionJournal.layer)
    const context = yield* Layer.build(
      Layer.merge(ApprovalServer.layerDatabase({ token: TOKEN }), own).pipe(
        Layer.provideMerge(Layer.merge(engine.layer(), NodeHttpClient.layer)),
      ),
    )
    const info = yield* Effect.provide(ApprovalServer.Service, context)
    const sql = yield* Effect.provide(SqlClient.SqlClient, context)
    const store = yield* Effect.provide(PermissionSaved.Service, context)
    const journal = yield* Effect.provide(DecisionJournal.Service, context)
    return { url: info.url, sql, store, journal }
  })

/** A live owner and one pending edit ask of `project`, as the asking process writes them. */
const ask = (sql: SqlClient.SqlClient, id: string, project: string) =>
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
      VALUES (${id}, ${`own_${id}`}, ${project}, '/src', ${request.sessionID}, ${prompt.digest},
        ${JSON.stringify(Schema.encodeSync(Approvals.Prompt)(prompt))}, 'pending', NULL, NULL, ${now}, ${now})`
    return prompt
  })

Engines.describeEach(
  "ApprovalServer.layerDatabase",
  (engine) => {
    it.live("lists every process's asks and answers one with the token: the row is claimed in the database", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { url, sql } = yield* harness(engine)
          const events = yield* eventStream(`${url}/api/events`, auth)
          const first = yield* ask(sql, "per_a", "prj_1")
          yield* ask(sql, "per_b", "prj_2")
          const asked = yield* Effect.promise(events.next)
          expect(asked.data).toMatchObject({ _tag: "Asked", prompt: { request: { id: "per_a" } } })

          const listed = yield* request(`${url}/api/asks`, { headers: auth })
          expect(listed.status).toBe(200)
          expect((listed.json as ReadonlyArray<Approvals.Prompt>).map((p) => p.request.id)).toEqual(["per_a", "per_b"])
          expect((yield* request(`${url}/api/asks`)).status).toBe(401)
          const unauthorised = yield* request(`${url}/api/asks/per_a/answer`, {
            method: "POST",
            body: { digest: first.digest, choice: "once" },
          })
          expect(unauthorised.status).toBe(401)

          const stale = yield* request(`${url}/api/asks/per_a/answer`, {
            method: "POST",
            headers: auth,
            body: { digest: "stale", choice: "once" },
          })
          expect(stale.status).toBe(409)
          expect(stale.json).toMatchObject({ _tag: "Approvals.DigestMismatchError" })
          const answered = yield* request(`${url}/api/asks/per_a/answer`, {
            method: "POST",
            headers: auth,
            body: { digest: first.digest, choice: "once", by: "erin" },
          })
          expect(answered.status).toBe(204)
          const [row] = yield* sql<{ status: string; answer: string }>`SELECT status, answer FROM pending_ask
            WHERE id = 'per_a'`
          expect(row?.status).toBe("claimed")
          expect(JSON.parse(row!.answer)).toEqual({ kind: "answer", choice: "once", by: "erin", channel: "http" })
          const again = yield* request(`${url}/api/asks/per_a/answer`, {
            method: "POST",
            headers: auth,
            body: { digest: first.digest, choice: "once" },
          })
          expect(again.status).toBe(409)
          expect(again.json).toMatchObject({ _tag: "Approvals.AlreadyAnsweredError" })
          expect((yield* request(`${url}/api/asks/per_a`, { headers: auth })).status).toBe(404)

          // The stream saw per_b asked and per_a answered (in the order the re-reads found them).
          const later = [(yield* Effect.promise(events.next)).data, (yield* Effect.promise(events.next)).data]
          expect(later).toEqual(
            expect.arrayContaining([
              expect.objectContaining({
                _tag: "Asked",
                prompt: expect.objectContaining({ request: expect.objectContaining({ id: "per_b" }) }),
              }),
              {
                _tag: "Answered",
                requestID: "per_a",
                sessionID: "ses_per_a",
                choice: "once",
                by: "erin",
                channel: "http",
              },
            ]),
          )
        }),
      ),
    )

    it.scoped("saved approvals and the journal of every project; ?projectID= narrows; a revoke reaches any", () =>
      Effect.gen(function* () {
        const { url, sql, store, journal } = yield* harness(engine)
        yield* sql`INSERT INTO project (id, worktree) VALUES ('prj_1', '/'), ('prj_2', '/') ON CONFLICT DO NOTHING`
        yield* store.add({ projectID: "prj_1", directory: "/src", action: "edit", resources: ["src/*"] })
        yield* store.add({ projectID: "prj_2", action: "bash", resources: ["ls *"] })
        const expired = (projectID: string, requestID: string): DecisionJournal.Draft => ({
          kind: "expired",
          projectID,
          sessionID: "ses_1",
          requestID,
          action: "edit",
          resources: ["x"],
          detail: { timeoutMillis: 1000 },
        })
        yield* journal.append([expired("prj_1", "per_1"), expired("prj_2", "per_2")])
        const projects = (reply: { json: unknown }) =>
          (reply.json as ReadonlyArray<{ projectID: string }>).map((row) => row.projectID).sort()

        expect(projects(yield* request(`${url}/api/saved`, { headers: auth }))).toEqual(["prj_1", "prj_2"])
        expect(projects(yield* request(`${url}/api/saved?projectID=prj_2`, { headers: auth }))).toEqual(["prj_2"])
        expect(projects(yield* request(`${url}/api/journal`, { headers: auth }))).toEqual(["prj_1", "prj_2"])
        expect(projects(yield* request(`${url}/api/journal?projectID=prj_1`, { headers: auth }))).toEqual(["prj_1"])

        const other = (yield* store.list({ projectID: "prj_2" }))[0]!
        expect((yield* request(`${url}/api/saved/${other.id}`, { method: "DELETE", headers: auth })).status).toBe(204)
        expect((yield* store.list()).map((row) => row.projectID)).toEqual(["prj_1"])
        expect((yield* request(`${url}/api/saved/${other.id}`, { method: "DELETE", headers: auth })).status).toBe(404)
        const revoked = yield* journal.query({ kinds: ["revoked"] })
        expect(revoked).toEqual([
          expect.objectContaining({ projectID: "prj_2", detail: expect.objectContaining({ channel: "http" }) }),
        ])
      }),
    )
  },
  Engines.postgresOnly,
)
