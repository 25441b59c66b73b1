/**
 * End to end across two hosts on one Postgres: an assert waits in a Core stack (its own pool, a Location); an
 * approval server with no Location (`ApprovalServer.layerDatabase`, a second pool) shows the ask over loopback HTTP
 * and answers it with the bearer token; the waiting assert completes, the row is settled, and a second answer is a
 * 409 that changes nothing. A reject over HTTP also declines the same session's ask waiting on another host.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Stream } from "effect"
import { type Approvals, Core, Database, PermissionV2, SessionV2 } from "../src/index.js"
import { ApprovalServer } from "../src/entry/server.js"
import * as Notifications from "../src/system/notifications.js"
import * as Engines from "./support/engines.js"
import { eventStream, request } from "./support/http-client.js"
import { tempDir } from "./support/location.js"

const TOKEN = "hosts-token-0123456789abcdef"
const auth = { authorization: `Bearer ${TOKEN}` }

Engines.describeEach(
  "an approval server on another host",
  (engine) => {
    it.live("answers an assert waiting in a Core stack; the assert completes and the row is settled", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const url = yield* engine.shared("")
          const runner = yield* Layer.build(
            Core.layer({
              directory: yield* tempDir(),
              data: yield* tempDir(),
              discover: false,
              config: { permissions: [{ action: "read", resource: "fault/*", effect: "ask" as const }] },
              databaseUrl: url,
            }),
          )
          const server = yield* Layer.build(
            ApprovalServer.layerDatabase({ token: TOKEN }).pipe(
              Layer.provideMerge(Layer.merge(Database.layerUrl(url), NodeHttpClient.layer)),
            ),
          )
          const base = (yield* Effect.provide(ApprovalServer.Service, server)).url
          const events = yield* eventStream(`${base}/api/events`, auth)
          const { id: sessionID } = yield* Effect.provide(
            Effect.flatMap(SessionV2.Service, (sessions) => sessions.create({ agent: "build" })),
            runner,
          )
          const waiting = yield* Effect.provide(
            Effect.flatMap(PermissionV2.Service, (permission) =>
              Effect.fork(
                permission.assert({
                  id: "per_hosts_1",
                  sessionID,
                  agent: "build",
                  action: "read",
                  resources: ["fault/a.ts"],
                }),
              ),
            ),
            runner,
          )
          const asked = (yield* Effect.promise(events.next)).data as { _tag: string; prompt: Approvals.Prompt }
          expect(asked).toMatchObject({ _tag: "Asked", prompt: { request: { id: "per_hosts_1", sessionID } } })
          const listed = (yield* request(`${base}/api/asks`, { headers: auth })).json as ReadonlyArray<Approvals.Prompt>
          expect(listed.map((prompt) => prompt.request.id)).toEqual(["per_hosts_1"])
          expect(waiting.unsafePoll()).toBeNull()

          const answer = (choice: string) =>
            request(`${base}/api/asks/per_hosts_1/answer`, {
              method: "POST",
              headers: auth,
              body: { digest: asked.prompt.digest, choice, by: "frank" },
            })
          // Hear the owner's settle notification (toolgate_ask) from before the answer on.
          const sql = yield* Effect.provide(SqlClient.SqlClient, server)
          const listener = yield* Effect.provide(
            Notifications.Service,
            Layer.provide(Notifications.layer, Layer.succeedContext(server)),
          )
          const changes = yield* listener.subscribe("toolgate_ask")
          expect((yield* answer("once")).status).toBe(204)
          expect(yield* Fiber.await(waiting)).toEqual(Exit.void)
          const second = yield* answer("reject")
          expect(second.status).toBe(409)
          expect(second.json).toMatchObject({ _tag: "Approvals.AlreadyAnsweredError" })
          const answered = (yield* Effect.promise(events.next)).data
          expect(answered).toMatchObject({ _tag: "Answered", requestID: "per_hosts_1", choice: "once", by: "frank" })

          // The owner settles the row when the entry leaves its queue, and notifies: re-read on each notification.
          const statusNow = Effect.map(
            sql<{ status: string }>`SELECT status FROM pending_ask WHERE id = 'per_hosts_1'`,
            (rows) => rows[0]?.status ?? "",
          )
          const first = yield* statusNow
          const status =
            first === "settled"
              ? first
              : yield* changes.pipe(
                  Stream.mapEffect(() => statusNow),
                  Stream.takeUntil((value) => value === "settled"),
                  Stream.runLast,
                  Effect.map((last) => (last._tag === "Some" ? last.value : "")),
                )
          expect(status).toBe("settled")
        }),
      ),
    )

    it.live("a reject over HTTP declines the same session's ask waiting on a third host (a cascade)", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const url = yield* engine.shared("")
          const stack = Effect.gen(function* () {
            return yield* Layer.build(
              Core.layer({
                directory: yield* tempDir(),
                data: yield* tempDir(),
                discover: false,
                config: { permissions: [{ action: "read", resource: "fault/*", effect: "ask" as const }] },
                databaseUrl: url,
              }),
            )
          })
          const one = yield* stack
          const two = yield* stack
          const server = yield* Layer.build(
            ApprovalServer.layerDatabase({ token: TOKEN }).pipe(
              Layer.provideMerge(Layer.merge(Database.layerUrl(url), NodeHttpClient.layer)),
            ),
          )
          const base = (yield* Effect.provide(ApprovalServer.Service, server)).url
          const events = yield* eventStream(`${base}/api/events`, auth)
          const { id: sessionID } = yield* Effect.provide(
            Effect.flatMap(SessionV2.Service, (sessions) => sessions.create({ agent: "build" })),
            one,
          )
          const assertIn = (context: typeof one, id: string, file: string) =>
            Effect.provide(
              Effect.flatMap(PermissionV2.Service, (permission) =>
                Effect.fork(
                  permission.assert({ id, sessionID, agent: "build", action: "read", resources: [`fault/${file}`] }),
                ),
              ),
              context,
            )
          const first = yield* assertIn(one, "per_hosts_a", "a.ts")
          const second = yield* assertIn(two, "per_hosts_b", "b.ts")
          const asked = new Map<string, Approvals.Prompt>()
          while (asked.size < 2) {
            const frame = (yield* Effect.promise(events.next)).data as { _tag: string; prompt: Approvals.Prompt }
            if (frame._tag === "Asked") asked.set(frame.prompt.request.id, frame.prompt)
          }
          const rejected = yield* request(`${base}/api/asks/per_hosts_a/answer`, {
            method: "POST",
            headers: auth,
            body: { digest: asked.get("per_hosts_a")!.digest, choice: "reject", message: "not these files" },
          })
          expect(rejected.status).toBe(204)
          const a = yield* Fiber.await(first)
          const b = yield* Fiber.await(second)
          expect(Exit.isFailure(a) && JSON.stringify(a.cause)).toContain("PermissionV2.CorrectedError")
          expect(Exit.isFailure(b) && JSON.stringify(b.cause)).toContain("PermissionV2.DeclinedError")
          expect((yield* request(`${base}/api/asks`, { headers: auth })).json).toEqual([])
        }),
      ),
    )
  },
  Engines.postgresOnly,
)
