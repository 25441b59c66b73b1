/**
 * The approval server over a real loopback HTTP server on a free port: digest-bound answers resume the suspended
 * call, wrong digests, second answers and unknown ids change nothing, the token is required, Server-Sent Events
 * deliver `Asked` before anyone answers, cross-origin and foreign-host requests are refused, saved approvals are
 * listed and revoked within the Location's project only (a `projectID` parameter naming another lists nothing), and
 * the webhook posts a correctly signed ask.
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer } from "effect"
import {
  Approvals,
  Core,
  Database,
  DecisionJournal,
  Location,
  PermissionSaved,
  PermissionV2,
  SessionV2,
  ToolRegistry,
} from "../src/index.js"
import { ApprovalServer } from "../src/entry/server.js"
import * as Fake from "./support/approvals-fake.js"
import { eventStream, request } from "./support/http-client.js"
import { tempDir } from "./support/location.js"

const TOKEN = "test-token-0123456789abcdef"
const auth = { authorization: `Bearer ${TOKEN}` }

/**
 * A journal that answers queries from `entries` (as the real one filters) and records each query, and keeps what is
 * appended inside a transaction (a revoke's entry) in `appended`.
 */
const fakeJournal = (
  entries: ReadonlyArray<DecisionJournal.Entry>,
  queries: Array<DecisionJournal.Query>,
  appended: Array<DecisionJournal.Draft>,
) =>
  Layer.succeed(
    DecisionJournal.Service,
    DecisionJournal.Service.of({
      record: () => Effect.void,
      append: () => Effect.die("not used"),
      appendInTransaction: (drafts) => Effect.sync(() => void appended.push(...drafts)),
      // Only ever called inside the revoke's own SQL transaction here.
      transaction: (effect) => effect as never,
      flush: Effect.void,
      prune: () => Effect.die("not used"),
      query: (query = {}) =>
        Effect.sync(() => {
          queries.push(query)
          return entries.filter(
            (entry) =>
              (query.projectID === undefined || entry.projectID === query.projectID) &&
              (query.sessionID === undefined || entry.sessionID === query.sessionID) &&
              (query.since === undefined || entry.time >= query.since) &&
              (query.kinds === undefined || query.kinds.includes(entry.kind)),
          )
        }),
    }),
  )

const expiredEntry = (id: string, projectID: string, sessionID: string, time: number): DecisionJournal.Entry => ({
  id,
  time,
  projectID,
  sessionID,
  requestID: `per_${id}`,
  kind: "expired",
  action: "edit",
  resources: ["x"],
  detail: { timeoutMillis: 1000 },
})

const harness = (options: Partial<ApprovalServer.Options> = {}, entries: ReadonlyArray<DecisionJournal.Entry> = []) =>
  Effect.gen(function* () {
    const directory = yield* tempDir("toolgate-serve-")
    const fake = yield* Fake.make
    const queries: Array<DecisionJournal.Query> = []
    const appended: Array<DecisionJournal.Draft> = []
    const location = Location.layerWith({ directory, project: { id: "global", directory } })
    const saved = PermissionSaved.layer.pipe(Layer.provideMerge(Database.layerMemory))
    const deps = Layer.mergeAll(
      Layer.succeed(Approvals.Service, fake.service),
      saved,
      fakeJournal(entries, queries, appended),
      location,
      NodeHttpClient.layer,
    )
    const context = yield* Layer.build(
      ApprovalServer.layer({ token: TOKEN, ...options }).pipe(Layer.provideMerge(deps)),
    )
    const server = Layer.succeedContext(context)
    const info = yield* Effect.provide(ApprovalServer.Service, server)
    const store = yield* Effect.provide(PermissionSaved.Service, server)
    const sql = yield* Effect.provide(SqlClient.SqlClient, server)
    return { fake, info, store, sql, queries, appended, directory, url: info.url }
  })

describe("ApprovalServer", () => {
  it.scoped("an answer with the right digest resumes the suspended call; SSE delivered Asked before it", () =>
    Effect.gen(function* () {
      const { fake, url } = yield* harness()
      const events = yield* eventStream(`${url}/api/events`, auth)
      expect(events.status).toBe(200)
      const call = yield* Effect.fork(fake.ask(Fake.editPrompt("per_1", "d1")))
      const asked = yield* Effect.promise(events.next)
      expect(asked.event).toBe("Asked")
      expect(asked.data).toMatchObject({ _tag: "Asked", prompt: { request: { id: "per_1" }, digest: "d1" } })
      expect(call.unsafePoll()).toBeNull()

      const listed = yield* request(`${url}/api/asks`, { headers: auth })
      expect(listed.status).toBe(200)
      expect(listed.json).toMatchObject([{ request: { id: "per_1", action: "edit" }, digest: "d1" }])

      const answered = yield* request(`${url}/api/asks/per_1/answer`, {
        method: "POST",
        headers: auth,
        body: { digest: "d1", choice: "once", by: "alice" },
      })
      expect(answered.status).toBe(204)
      const answer = yield* Fiber.join(call)
      expect(answer).toMatchObject({ requestID: "per_1", choice: "once", channel: "http", by: "alice", digest: "d1" })
      const next = yield* Effect.promise(events.next)
      expect(next.data).toMatchObject({ _tag: "Answered", requestID: "per_1", channel: "http", by: "alice" })
    }),
  )

  it.scoped("a wrong digest, a second answer, an unknown choice and an unknown id fail and change nothing", () =>
    Effect.gen(function* () {
      const { fake, url } = yield* harness()
      const call = yield* Effect.fork(fake.ask(Fake.editPrompt("per_2", "d2")))
      yield* Effect.yieldNow()
      const answer = (id: string, body: object) =>
        request(`${url}/api/asks/${id}/answer`, { method: "POST", headers: auth, body })

      const wrong = yield* answer("per_2", { digest: "stale", choice: "once" })
      expect(wrong.status).toBe(409)
      expect(wrong.json).toMatchObject({ _tag: "Approvals.DigestMismatchError", requestID: "per_2" })
      const choice = yield* answer("per_2", { digest: "d2", choice: "always:everything" })
      expect(choice.status).toBe(400)
      expect(choice.json).toMatchObject({ _tag: "Approvals.UnknownChoiceError" })
      const missingDigest = yield* answer("per_2", { choice: "once" })
      expect(missingDigest.status).toBe(400)
      expect(fake.answers).toEqual([])
      expect(call.unsafePoll()).toBeNull()
      expect((yield* request(`${url}/api/asks/per_2`, { headers: auth })).status).toBe(200)

      const unknown = yield* answer("per_nope", { digest: "d2", choice: "once" })
      expect(unknown.status).toBe(404)
      expect(unknown.json).toMatchObject({ _tag: "PermissionV2.NotFoundError", requestID: "per_nope" })
      expect((yield* request(`${url}/api/asks/per_nope`, { headers: auth })).status).toBe(404)

      expect((yield* answer("per_2", { digest: "d2", choice: "reject", message: "not this file" })).status).toBe(204)
      expect(yield* Fiber.join(call)).toMatchObject({ choice: "reject", message: "not this file" })
      const second = yield* answer("per_2", { digest: "d2", choice: "once" })
      expect(second.status).toBe(409)
      expect(second.json).toMatchObject({ _tag: "Approvals.AlreadyAnsweredError" })
      expect(fake.answers.map((a) => a.choice)).toEqual(["reject"])
    }),
  )

  it.scoped("every /api endpoint needs the token; the OpenAPI document and the page do not", () =>
    Effect.gen(function* () {
      const { fake, url, info } = yield* harness()
      const call = yield* Effect.fork(fake.ask(Fake.editPrompt("per_3", "d3")))
      yield* Effect.yieldNow()
      for (const headers of [{}, { authorization: "Bearer wrong-token-0123456789" }, { authorization: TOKEN }]) {
        for (const [method, path, body] of [
          ["GET", "/api/asks", undefined],
          ["GET", "/api/asks/per_3", undefined],
          ["POST", "/api/asks/per_3/answer", { digest: "d3", choice: "once" }],
          ["GET", "/api/saved", undefined],
          ["DELETE", "/api/saved/psv_x", undefined],
          ["GET", "/api/journal", undefined],
          ["GET", "/api/events", undefined],
        ] as const) {
          const reply = yield* request(`${url}${path}`, { method, headers, body })
          expect(reply.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401)
          expect(reply.json).toMatchObject({ _tag: "ApprovalApi.UnauthorizedError" })
        }
      }
      expect(fake.answers).toEqual([])
      expect(call.unsafePoll()).toBeNull()

      const openapi = yield* request(`${url}/api/openapi.json`)
      expect(openapi.status).toBe(200)
      const document = openapi.json as { paths: Record<string, unknown>; components: { securitySchemes: object } }
      expect(Object.keys(document.paths)).toEqual(
        expect.arrayContaining(["/api/asks", "/api/asks/{id}/answer", "/api/saved/{id}", "/api/events"]),
      )
      expect(JSON.stringify(document.components.securitySchemes)).toContain("bearer")
      const page = yield* request(`${url}/`)
      expect(page.status).toBe(200)
      expect(page.headers["content-type"]).toContain("text/html")
      expect(page.headers["content-security-policy"]).toContain("default-src 'none'")
      expect(page.headers["x-frame-options"]).toBe("DENY")
      expect(page.body).not.toContain(TOKEN)
      expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(String(info.token)).not.toContain(TOKEN)
    }),
  )

  it.scoped("cross-origin requests and foreign Host headers are refused, with the token too", () =>
    Effect.gen(function* () {
      const { fake, url, info } = yield* harness()
      yield* Effect.fork(fake.ask(Fake.editPrompt("per_4", "d4")))
      yield* Effect.yieldNow()
      const answer = { digest: "d4", choice: "once" }
      for (const headers of [
        { origin: "http://evil.example" },
        { origin: `http://localhost:${info.port + 1}` },
        { origin: "null" },
        { "sec-fetch-site": "cross-site" },
        { "sec-fetch-site": "same-site" },
      ]) {
        const reply = yield* request(`${url}/api/asks/per_4/answer`, {
          method: "POST",
          headers: { ...auth, ...headers },
          body: answer,
        })
        expect(reply.status, JSON.stringify(headers)).toBe(403)
        expect(reply.headers["access-control-allow-origin"]).toBeUndefined()
        const preflight = yield* request(`${url}/api/asks/per_4/answer`, { method: "OPTIONS", headers })
        expect(preflight.status).toBe(403)
      }
      const rebinding = yield* request(`${url}/api/asks`, { headers: { ...auth, host: `evil.example:${info.port}` } })
      expect(rebinding.status).toBe(421)
      expect(fake.answers).toEqual([])

      const sameOrigin = yield* request(`${url}/api/asks/per_4/answer`, {
        method: "POST",
        headers: { ...auth, origin: url, "sec-fetch-site": "same-origin" },
        body: answer,
      })
      expect(sameOrigin.status).toBe(204)
      expect(fake.answers.map((a) => a.requestID)).toEqual(["per_4"])
    }),
  )

  it.scoped("saved approvals: the Location's own are listed and revoked; another project's are not found", () =>
    Effect.gen(function* () {
      const { url, store, sql, directory, appended } = yield* harness()
      yield* sql`INSERT INTO project (id, worktree) VALUES ('global', '/'), ('other', '/') ON CONFLICT DO NOTHING`
      yield* store.add({ projectID: "global", directory, action: "edit", resources: ["src/*"] })
      yield* store.add({ projectID: "other", action: "bash", resources: ["rm *"] })
      const all = yield* store.list()
      const own = all.find((row) => row.projectID === "global")!
      const foreign = all.find((row) => row.projectID === "other")!

      const listed = yield* request(`${url}/api/saved`, { headers: auth })
      expect(listed.status).toBe(200)
      expect(listed.json).toEqual([expect.objectContaining({ id: own.id, action: "edit", resource: "src/*" })])
      // Beside a Location, naming another project lists nothing (a server with no Location lists any project's).
      expect((yield* request(`${url}/api/saved?projectID=other`, { headers: auth })).json).toEqual([])
      expect((yield* request(`${url}/api/saved?projectID=global`, { headers: auth })).json).toEqual(listed.json)
      const refused = yield* request(`${url}/api/saved/${foreign.id}`, { method: "DELETE", headers: auth })
      expect(refused.status).toBe(404)
      expect(refused.json).toMatchObject({ _tag: "ApprovalApi.SavedNotFoundError", id: foreign.id })
      expect((yield* store.list()).length).toBe(2)

      expect((yield* request(`${url}/api/saved/${own.id}`, { method: "DELETE", headers: auth })).status).toBe(204)
      expect((yield* store.list()).map((row) => row.id)).toEqual([foreign.id])
      // The revoke is journaled, through the channel `http`, in the transaction of the delete.
      expect(appended).toEqual([
        {
          kind: "revoked",
          projectID: "global",
          action: "edit",
          resources: ["src/*"],
          detail: { savedID: own.id, directory, channel: "http" },
        },
      ])
      expect((yield* request(`${url}/api/saved/${own.id}`, { method: "DELETE", headers: auth })).status).toBe(404)
    }),
  )

  it.scoped("the journal: this project's entries only, filtered by session, time and kind; bad filters are 400", () =>
    Effect.gen(function* () {
      const entries = [
        expiredEntry("dec_1", "global", "ses_a", 1000),
        expiredEntry("dec_2", "global", "ses_b", 2000),
        expiredEntry("dec_3", "other", "ses_a", 3000),
      ]
      const { url, queries } = yield* harness({}, entries)
      const ids = (reply: { json: unknown }) => (reply.json as ReadonlyArray<{ id: string }>).map((entry) => entry.id)
      const all = yield* request(`${url}/api/journal`, { headers: auth })
      expect(all.status).toBe(200)
      expect(ids(all)).toEqual(["dec_1", "dec_2"])
      expect(queries[0]).toMatchObject({ projectID: "global", limit: 500 })
      expect(ids(yield* request(`${url}/api/journal?sessionID=ses_a`, { headers: auth }))).toEqual(["dec_1"])
      expect(ids(yield* request(`${url}/api/journal?since=1500&kind=expired`, { headers: auth }))).toEqual(["dec_2"])
      expect(ids(yield* request(`${url}/api/journal?kind=answered`, { headers: auth }))).toEqual([])
      expect(ids(yield* request(`${url}/api/journal?projectID=other`, { headers: auth }))).toEqual([])
      expect(ids(yield* request(`${url}/api/journal?projectID=global`, { headers: auth }))).toEqual(["dec_1", "dec_2"])
      for (const query of ["kind=everything", "limit=0", "limit=5001", "since=-1", "since=soon"])
        expect((yield* request(`${url}/api/journal?${query}`, { headers: auth })).status, query).toBe(400)
    }),
  )

  it.scoped("the webhook posts each new ask with an HMAC-SHA256 signature over timestamp and body", () =>
    Effect.gen(function* () {
      const received = yield* Effect.acquireRelease(
        Effect.async<{
          server: http.Server
          port: number
          next: Promise<{ headers: http.IncomingHttpHeaders; body: string }>
        }>((resume) => {
          let deliver: (value: { headers: http.IncomingHttpHeaders; body: string }) => void = () => undefined
          const next = new Promise<{ headers: http.IncomingHttpHeaders; body: string }>((ok) => (deliver = ok))
          const server = http.createServer((req, res) => {
            const chunks: Array<Buffer> = []
            req.on("data", (chunk: Buffer) => chunks.push(chunk))
            req.on("end", () => {
              res.end()
              deliver({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
            })
          })
          server.listen(0, "127.0.0.1", () =>
            resume(Effect.succeed({ server, port: (server.address() as { port: number }).port, next })),
          )
        }),
        ({ server }) => Effect.sync(() => server.close()),
      )
      const secret = "webhook-secret"
      const { fake } = yield* harness({ webhook: { url: `http://127.0.0.1:${received.port}/hook`, secret } })
      yield* Effect.fork(fake.ask(Fake.editPrompt("per_5", "d5")))
      const { headers, body } = yield* Effect.promise(() => received.next)
      const signature = String(headers["x-toolgate-signature"])
      const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature)
      expect(match).not.toBeNull()
      const expected = crypto.createHmac("sha256", secret).update(`${match![1]}.${body}`).digest("hex")
      expect(match![2]).toBe(expected)
      expect(JSON.parse(body)).toMatchObject({ type: "asked", prompt: { request: { id: "per_5" }, digest: "d5" } })
      expect(body).not.toContain(TOKEN)
    }),
  )

  it.scoped("a configured token shorter than 16 characters fails the layer", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(harness({ token: "short" }))
      expect(error).toMatchObject({ _tag: "ApprovalServer.StartError" })
    }),
  )

  it.scoped("over the real Location layer: a suspended assert resumes on the right digest only, once", () =>
    Effect.gen(function* () {
      const directory = yield* tempDir("toolgate-serve-real-")
      const data = yield* tempDir("toolgate-serve-data-")
      const core = Core.layer({
        directory,
        data,
        discover: false,
        config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
      })
      const layer = ApprovalServer.layer({ token: TOKEN }).pipe(
        Layer.provideMerge(DecisionJournal.layer),
        Layer.provideMerge(core),
      )
      const context = yield* Layer.build(layer)
      const { url } = yield* Effect.provide(ApprovalServer.Service, context)
      const permission = yield* Effect.provide(PermissionV2.Service, context)
      const session = yield* Effect.provide(
        Effect.flatMap(SessionV2.Service, (sessions) => sessions.create()),
        context,
      )
      const events = yield* eventStream(`${url}/api/events?sessionID=${session.id}`, auth)
      const call = (resource: string) =>
        Effect.fork(permission.assert({ sessionID: session.id, action: "edit", resources: [resource], save: ["*"] }))
      const answer = (id: string, body: object) =>
        request(`${url}/api/asks/${id}/answer`, { method: "POST", headers: auth, body })

      const first = yield* call("a.txt")
      const asked = (yield* Effect.promise(events.next)).data as { prompt: Approvals.Prompt }
      expect(asked.prompt.request).toMatchObject({ action: "edit", resources: ["a.txt"], sessionID: session.id })
      const id = asked.prompt.request.id
      expect(asked.prompt.digest).toMatch(/^[0-9a-f]{64}$/)
      expect(asked.prompt.choices.map((choice) => choice.id)).toContain("once")

      expect((yield* answer(id, { digest: "0".repeat(64), choice: "once" })).status).toBe(409)
      expect((yield* answer(id, { digest: asked.prompt.digest, choice: "always:nothing" })).status).toBe(400)
      expect(first.unsafePoll()).toBeNull()
      expect((yield* request(`${url}/api/asks/${id}`, { headers: auth })).json).toMatchObject({
        digest: asked.prompt.digest,
      })

      expect((yield* answer(id, { digest: asked.prompt.digest, choice: "once", by: "bob" })).status).toBe(204)
      expect(Exit.isSuccess(yield* Fiber.await(first))).toBe(true)
      expect((yield* Effect.promise(events.next)).data).toMatchObject({
        _tag: "Answered",
        requestID: id,
        choice: "once",
        channel: "http",
        by: "bob",
      })
      const again = yield* answer(id, { digest: asked.prompt.digest, choice: "once" })
      expect(again.status).toBe(409)
      expect(again.json).toMatchObject({ _tag: "Approvals.AlreadyAnsweredError", requestID: id })

      const second = yield* call("b.txt")
      const next = (yield* Effect.promise(events.next)).data as { prompt: Approvals.Prompt }
      expect(
        (yield* answer(next.prompt.request.id, { digest: next.prompt.digest, choice: "reject", message: "no" })).status,
      ).toBe(204)
      const exit = yield* Fiber.await(second)
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("PermissionV2.CorrectedError")
      expect((yield* request(`${url}/api/asks`, { headers: auth })).json).toEqual([])
    }),
  )

  it.scoped("over the real Location layer: the prompt JSON shows the tool call; another call's digest is a 409", () =>
    Effect.gen(function* () {
      const directory = yield* tempDir("toolgate-serve-tool-")
      const data = yield* tempDir("toolgate-serve-data-")
      fs.writeFileSync(path.join(directory, "a.txt"), "before\n")
      const core = Core.layer({
        directory,
        data,
        discover: false,
        config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
      })
      const context = yield* Layer.build(
        ApprovalServer.layer({ token: TOKEN }).pipe(Layer.provideMerge(DecisionJournal.layer), Layer.provideMerge(core)),
      )
      const { url } = yield* Effect.provide(ApprovalServer.Service, context)
      const registry = yield* Effect.provide(ToolRegistry.Service, context)
      const session = yield* Effect.provide(
        Effect.flatMap(SessionV2.Service, (sessions) => sessions.create()),
        context,
      )
      const events = yield* eventStream(`${url}/api/events?sessionID=${session.id}`, auth)
      const turn = yield* registry.materialize()
      // Two edits of the same file that differ only in what they write.
      const edit = (callID: string, newString: string) =>
        Effect.fork(
          turn.settle({
            sessionID: session.id,
            agent: "build",
            assistantMessageID: "msg_t",
            call: { id: callID, name: "edit", input: { path: "a.txt", oldString: "before", newString } },
          }),
        )
      const answer = (id: string, body: object) =>
        request(`${url}/api/asks/${id}/answer`, { method: "POST", headers: auth, body })

      const one = yield* edit("call_1", "one")
      const first = ((yield* Effect.promise(events.next)).data as { prompt: Approvals.Prompt }).prompt
      const two = yield* edit("call_2", "two")
      const second = ((yield* Effect.promise(events.next)).data as { prompt: Approvals.Prompt }).prompt
      const definition = Approvals.definitionDigest(turn.definitions.find((entry) => entry.name === "edit")!)
      expect(second.tool).toEqual({
        name: "edit",
        callID: "call_2",
        input: { path: "a.txt", oldString: "before", newString: "two" },
        definition,
      })
      expect((yield* request(`${url}/api/asks/${second.request.id}`, { headers: auth })).json).toMatchObject({
        tool: { name: "edit", callID: "call_2", input: { newString: "two" }, definition },
      })
      expect(second.request.resources).toEqual(first.request.resources)
      expect(second.digest).not.toBe(first.digest)

      const stale = yield* answer(second.request.id, { digest: first.digest, choice: "once" })
      expect(stale.status).toBe(409)
      expect(stale.json).toMatchObject({ _tag: "Approvals.DigestMismatchError", requestID: second.request.id })
      expect(two.unsafePoll()).toBeNull()
      expect(fs.readFileSync(path.join(directory, "a.txt"), "utf8")).toBe("before\n")
      const pending = (yield* request(`${url}/api/asks`, { headers: auth })).json as ReadonlyArray<Approvals.Prompt>
      expect(pending.map((prompt) => prompt.request.id)).toEqual([first.request.id, second.request.id])

      expect((yield* answer(second.request.id, { digest: second.digest, choice: "once" })).status).toBe(204)
      expect((yield* Fiber.join(two)).result).toMatchObject({ type: "text" })
      expect(fs.readFileSync(path.join(directory, "a.txt"), "utf8")).toBe("two\n")
      expect((yield* answer(first.request.id, { digest: first.digest, choice: "reject" })).status).toBe(204)
      yield* Fiber.await(one)
    }),
  )
})
