/**
 * What PermissionV2 and PermissionSaved write to the decision journal, read back from the `decision` table itself
 * (past the journal's reader; a SQLite file or a Postgres schema): each evaluation per resource with the deciding rule and where it came from (a built-in
 * default, a configuration file and index, an agent entry, a saved approval, a session approval, no rule), and each
 * revoke in the transaction of its delete. On both engines.
 */
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer } from "effect"
import {
  AgentV2,
  Approvals,
  Config,
  Database,
  DecisionJournal,
  EventV2,
  Global,
  Location,
  PermissionSaved,
  PermissionV2,
  SessionV2,
} from "../src/index.js"
import * as Engines from "./support/engines.js"
import { tempDir } from "./support/location.js"

const CONFIG_PATH = "/etc/toolgate/toolgate.json"

const config: Config.Info = {
  permissions: [
    { action: "read", resource: "*", effect: "allow" },
    { action: "read", resource: "*.env", effect: "deny" },
    { action: "edit", resource: "*", effect: "ask" },
  ],
  agents: { build: { permissions: [{ action: "grep", resource: "*", effect: "allow" }] } },
}

/** The real stack of one Location (built-in and configured agents, the journal) over `engine`'s database. */
const stack = (engine: Engines.Engine, directory: string, data: string) =>
  Approvals.layer.pipe(
    Layer.provideMerge(PermissionV2.layer),
    Layer.provideMerge(Layer.mergeAll(EventV2.layer, AgentV2.layer, SessionV2.layer)),
    Layer.provideMerge(Location.layer({ directory }).pipe(Layer.orDie)),
    Layer.provideMerge(
      Layer.mergeAll(
        Config.layerFromEntries([{ type: "document", path: CONFIG_PATH, info: config }]),
        Global.layerWith({ data }),
      ),
    ),
    Layer.provideMerge(Layer.mergeAll(PermissionSaved.layer, DecisionJournal.layer)),
    Layer.provideMerge(onDisk(engine, data)),
  )

/** `engine`'s database as production opens it: a SQLite file under `data`, or a private Postgres schema. */
const onDisk = (engine: Engines.Engine, data: string) =>
  Layer.unwrapEffect(
    Effect.map(engine.shared(data), (where) =>
      engine.name === "sqlite" ? Database.layerFile(where) : Database.layerUrl(where),
    ),
  )

/** The journal's rows as stored, oldest first, with `resources` and `detail` parsed (no id or time). */
const stored = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{
    readonly session_id: string | null
    readonly request_id: string | null
    readonly kind: string
    readonly action: string
    readonly resources: string
    readonly detail: string
  }>`SELECT session_id, request_id, kind, action, resources, detail FROM decision ORDER BY time, id`
  return rows.map((row) => ({
    sessionID: row.session_id,
    requestID: row.request_id,
    kind: row.kind,
    action: row.action,
    resources: JSON.parse(row.resources) as unknown,
    detail: JSON.parse(row.detail) as unknown,
  }))
})

/** Runs `body` on a fresh stack with session `ses_j` of the built-in `build` agent. */
const onStack = <A, E>(
  engine: Engines.Engine,
  body: (session: string) => Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof stack>>>,
) =>
  Effect.gen(function* () {
    const directory = yield* tempDir()
    const data = yield* tempDir()
    const context = yield* Layer.build(stack(engine, directory, data))
    return yield* Effect.provide(
      Effect.flatMap(SessionV2.Service, (sessions) =>
        Effect.flatMap(sessions.create({ id: "ses_j", agent: "build" }), () => body("ses_j")),
      ),
      context,
    )
  })

Engines.describeEach("DecisionJournal: what PermissionV2 and PermissionSaved write", (engine) => {
  it.scoped("every evaluation is on disk per resource, with the deciding rule and its origin", () =>
    onStack(engine, (sessionID) =>
      Effect.gen(function* () {
        const permission = yield* PermissionV2.Service
        const approvals = yield* Approvals.Service
        const journal = yield* DecisionJournal.Service
        const base = { sessionID, agent: "build" }
        // Configured top-level rules, an agent entry and a built-in default.
        yield* permission.assert({ ...base, action: "read", resources: ["src/a.ts"] })
        yield* permission.assert({ ...base, action: "grep", resources: ["TODO"] })
        yield* permission.assert({ ...base, action: "question", resources: ["which?"] })
        // A configured deny among the resources: the whole request is denied, each resource says why.
        const denied = yield* Effect.exit(
          permission.assert({ ...base, id: "per_denied", action: "read", resources: ["src/b.ts", ".env"] }),
        )
        expect(Exit.isFailure(denied)).toBe(true)
        // The built-in `* * allow` does not cover a private address, so no rule decides: the default ask, answered
        // `always`; the next evaluation is allowed by the saved row.
        const asking = yield* Effect.fork(
          permission.assert({
            ...base,
            id: "per_ask",
            action: "webfetch",
            resources: ["private:https://x.test/a"],
            save: ["private:https://x.test/*"],
          }),
        )
        while ((yield* approvals.pending()).length === 0) yield* Effect.yieldNow()
        const prompt = yield* approvals.get("per_ask")
        yield* approvals.answer({
          requestID: "per_ask",
          digest: prompt.digest,
          choice: "always:pattern",
          channel: "test",
        })
        yield* Fiber.join(asking)
        yield* permission.assert({ ...base, action: "webfetch", resources: ["private:https://x.test/b"] })
        // A `session` answer: the next evaluation is allowed by the session's grant.
        const asking2 = yield* Effect.fork(
          permission.assert({ ...base, id: "per_session", action: "edit", resources: ["src/c.ts"], save: ["src/*"] }),
        )
        while ((yield* approvals.pending()).length === 0) yield* Effect.yieldNow()
        const prompt2 = yield* approvals.get("per_session")
        yield* approvals.answer({
          requestID: "per_session",
          digest: prompt2.digest,
          choice: "session",
          channel: "test",
        })
        yield* Fiber.join(asking2)
        yield* permission.assert({ ...base, action: "edit", resources: ["src/d.ts"] })
        yield* journal.flush

        const savedRow = (yield* (yield* PermissionSaved.Service).list()).find((row) => row.action === "webfetch")!
        const rows = (yield* stored).filter((row) => row.kind === "evaluated")
        const evaluated = (
          requestID: string | null,
          action: string,
          resources: ReadonlyArray<string>,
          effect: string,
          decisions: ReadonlyArray<unknown>,
        ) => ({
          sessionID,
          requestID,
          kind: "evaluated",
          action,
          resources,
          detail: { agent: "build", effect, decisions },
        })
        const allowRead = { action: "read", resource: "*", effect: "allow" }
        expect(rows).toEqual([
          evaluated(null, "read", ["src/a.ts"], "allow", [
            {
              resource: "src/a.ts",
              effect: "allow",
              rule: allowRead,
              origin: { type: "config", path: CONFIG_PATH, index: 0 },
            },
          ]),
          evaluated(null, "grep", ["TODO"], "allow", [
            {
              resource: "TODO",
              effect: "allow",
              rule: { action: "grep", resource: "*", effect: "allow" },
              origin: { type: "agent", path: CONFIG_PATH, agent: "build", index: 0, file: false },
            },
          ]),
          evaluated(null, "question", ["which?"], "allow", [
            {
              resource: "which?",
              effect: "allow",
              rule: { action: "question", resource: "*", effect: "allow" },
              origin: { type: "builtin" },
            },
          ]),
          evaluated("per_denied", "read", ["src/b.ts", ".env"], "deny", [
            {
              resource: "src/b.ts",
              effect: "allow",
              rule: allowRead,
              origin: { type: "config", path: CONFIG_PATH, index: 0 },
            },
            {
              resource: ".env",
              effect: "deny",
              rule: { action: "read", resource: "*.env", effect: "deny" },
              origin: { type: "config", path: CONFIG_PATH, index: 1 },
            },
          ]),
          evaluated("per_ask", "webfetch", ["private:https://x.test/a"], "ask", [
            { resource: "private:https://x.test/a", effect: "ask", origin: { type: "default" } },
          ]),
          evaluated(null, "webfetch", ["private:https://x.test/b"], "allow", [
            {
              resource: "private:https://x.test/b",
              effect: "allow",
              rule: { action: "webfetch", resource: "private:https://x.test/*", effect: "allow" },
              origin: { type: "saved", id: savedRow.id, timeCreated: savedRow.timeCreated },
            },
          ]),
          evaluated("per_session", "edit", ["src/c.ts"], "ask", [
            {
              resource: "src/c.ts",
              effect: "ask",
              rule: { action: "edit", resource: "*", effect: "ask" },
              origin: { type: "config", path: CONFIG_PATH, index: 2 },
            },
          ]),
          evaluated(null, "edit", ["src/d.ts"], "allow", [
            {
              resource: "src/d.ts",
              effect: "allow",
              rule: { action: "edit", resource: "src/*", effect: "allow" },
              origin: { type: "session" },
            },
          ]),
        ])
        // An ask's evaluation comes before its ask, and both before the answer.
        const kinds = (yield* stored).filter((row) => row.requestID === "per_ask").map((row) => row.kind)
        expect(kinds).toEqual(["evaluated", "asked", "answered"])
        // The journal's reader reads the same entries.
        const read = yield* journal.query({ kinds: ["evaluated"] })
        expect(read.map((entry) => entry.detail)).toEqual(rows.map((row) => row.detail))
      }),
    ),
  )

  it.scoped("a revoke is journaled in the transaction of its delete: who, through which channel, which row", () =>
    onStack(engine, () =>
      Effect.gen(function* () {
        const saved = yield* PermissionSaved.Service
        const location = yield* Location.Service
        const sql = yield* SqlClient.SqlClient
        const projectID = location.project.id
        yield* saved.add({ projectID, directory: "sub", action: "edit", resources: ["src/*", "docs/*"] })
        const [first, second] = yield* Effect.map(saved.list(), (rows) =>
          [...rows].sort((a, b) => a.resource.localeCompare(b.resource)),
        )
        yield* saved.remove(first!.id, { channel: "cli", by: "alice" })
        // The default channel, and an absent id, which deletes and journals nothing.
        yield* saved.remove(second!.id)
        yield* saved.remove("psv_absent", { channel: "http" })
        expect(yield* saved.list()).toEqual([])
        const revoked = (yield* stored).filter((row) => row.kind === "revoked")
        expect(revoked).toEqual([
          {
            sessionID: null,
            requestID: null,
            kind: "revoked",
            action: "edit",
            resources: ["docs/*"],
            detail: { savedID: first!.id, directory: "sub", channel: "cli", by: "alice" },
          },
          {
            sessionID: null,
            requestID: null,
            kind: "revoked",
            action: "edit",
            resources: ["src/*"],
            detail: { savedID: second!.id, directory: "sub", channel: "in-process" },
          },
        ])
        const projects = yield* sql<{
          readonly project_id: string
        }>`SELECT project_id FROM decision WHERE kind = 'revoked'`
        expect(projects.map((row) => row.project_id)).toEqual([projectID, projectID])

        // When the entry cannot be written, the delete rolls back with it: the approval stays.
        yield* saved.add({ projectID, action: "edit", resources: ["kept/*"] })
        const kept = (yield* saved.list())[0]!
        yield* sql`DROP TABLE decision`
        const failed = yield* Effect.exit(saved.remove(kept.id, { channel: "cli" }))
        expect(Exit.isFailure(failed)).toBe(true)
        expect((yield* saved.list()).map((row) => row.id)).toEqual([kept.id])
      }),
    ),
  )
})
