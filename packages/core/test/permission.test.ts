import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Fiber, Layer, Option, Scope } from "effect"
import { Database, EventV2, Location, PermissionSaved, PermissionV2, SessionV2, ToolRegistry } from "../src/index.js"
import { tempDir } from "./support/location.js"
import { agentControl, buildStack, fixture, type Services, withMemoryStack } from "./support/permission-stack.js"

type Rule = PermissionV2.Rule

/** A git repository with one commit in `directory` (its project id is the root commit). */
const gitRepository = (directory: string) => {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }
  for (const name of ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"]) delete env[name]
  const run = (...args: Array<string>) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: directory, env })
  run("init", "-q")
  fs.writeFileSync(path.join(directory, "a.txt"), "a")
  run("add", "a.txt")
  run("commit", "-q", "-m", "first")
}
const r = (action: string, resource: string, effect: Rule["effect"]): Rule => ({ action, resource, effect })

const base = {
  id: "per_test",
  sessionID: "ses_test",
  action: "read",
  resources: ["src/index.ts"],
} satisfies PermissionV2.AssertInput

/** A test on a fresh in-memory stack in a fresh temp Location. */
const scoped = <A, E>(name: string, body: () => Effect.Effect<A, E, Services | Scope.Scope>) =>
  it.scoped(name, () => Effect.flatMap(tempDir(), (dir) => withMemoryStack(dir, body())))

const dieOf = (exit: Exit.Exit<unknown, unknown>): unknown =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.dieOption(exit.cause)) : undefined
const failureOf = (exit: Exit.Exit<unknown, unknown>): unknown =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

describe("PermissionV2", () => {
  scoped("returns the evaluated effect and only queues prompts", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.setRules([r("read", "*", "allow")])
      expect(yield* f.permission.ask({ ...base, id: "per_a" })).toEqual({ id: "per_a", effect: "allow" })
      expect(yield* f.permission.list()).toEqual([])
      yield* f.setRules([r("read", "*", "deny")])
      expect(yield* f.permission.ask({ ...base, id: "per_d" })).toEqual({ id: "per_d", effect: "deny" })
      expect(yield* f.permission.list()).toEqual([])
      expect(f.asked()).toEqual([])
      yield* f.setRules([])
      const result = yield* f.permission.ask(base)
      expect(result).toEqual({ id: "per_test", effect: "ask" })
      // `always` (what an always reply would save, and where) is our addition: docs/trust/approvals.md
      const directory = (yield* Location.Service).directory
      expect(yield* f.permission.get("per_test")).toEqual({
        id: "per_test",
        sessionID: "ses_test",
        action: "read",
        resources: ["src/index.ts"],
        always: { action: "read", entries: [], scope: { kind: "directory", projectID: "global", directory } },
      })
      expect(f.asked().map((request) => request.id)).toEqual(["per_test"])
      // Without an id, a fresh per_ id is generated.
      const fresh = yield* f.permission.ask({ ...base, id: undefined } as PermissionV2.AssertInput)
      expect(fresh.id).toMatch(/^per_[0-9a-f]{12}[0-9A-Za-z]{14}$/)
    }),
  )

  scoped("evaluates against an explicit provider-turn agent", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.setRules([r("read", "*", "allow")])
      yield* f.setAgentRules("reviewer", [r("read", "*", "deny")])
      expect((yield* f.permission.ask({ ...base, id: "per_1" })).effect).toBe("allow")
      expect((yield* f.permission.ask({ ...base, id: "per_2", agent: "reviewer" })).effect).toBe("deny")
      yield* f.setAgentRules("reviewer", [])
      expect((yield* f.permission.ask({ ...base, id: "per_3", agent: "reviewer" })).effect).toBe("ask")
      const pending = yield* f.permission.get("per_3")
      expect(pending).toBeDefined()
      expect(Object.keys(pending!)).not.toContain("agent")
      expect(f.asked()[0]).not.toHaveProperty("agent")
      // An unknown explicit agent resolves to nothing: deny-all.
      expect((yield* f.permission.ask({ ...base, id: "per_4", agent: "nobody" })).effect).toBe("deny")
    }),
  )

  scoped("allows and denies from explicit rules without asking", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.setRules([r("read", "*", "allow")])
      yield* f.permission.assert(base)
      const rules = [r("edit", "*", "ask"), r("re*", "src/*", "deny"), r("bash", "*", "allow")]
      yield* f.setRules(rules)
      const exit = yield* Effect.exit(f.permission.assert({ ...base, resources: ["src/index.ts", "README.md"] }))
      const error = failureOf(exit)
      expect(error).toBeInstanceOf(PermissionV2.BlockedError)
      expect(error).toMatchObject({
        _tag: "PermissionV2.BlockedError",
        action: "read",
        resources: ["src/index.ts"],
        rules: [r("re*", "src/*", "deny")],
      })
      expect(PermissionV2.toToolFailure(error as PermissionV2.BlockedError).message).toBe(
        "Permission denied by configured rules for read: src/index.ts",
      )
      expect(yield* f.permission.list()).toEqual([])
      expect(f.log).toEqual([])
    }),
  )

  scoped("allows managed output reads without granting external directory access", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.setRules([r("*", "*", "deny"), r("read", "*", "allow")])
      expect((yield* f.permission.ask({ ...base, resources: ["tool_123"] })).effect).toBe("allow")
      expect(
        (yield* f.permission.ask({ ...base, action: "external_directory", resources: ["/tmp/tool-output/*"] })).effect,
      ).toBe("deny")
    }),
  )

  scoped("uses build permissions when the Session agent is omitted", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.sessions.create({ id: "ses_none" })
      yield* f.setAgentRules("build", [r("todowrite", "*", "allow")])
      expect(
        (yield* f.permission.ask({ id: "per_t", sessionID: "ses_none", action: "todowrite", resources: ["*"] })).effect,
      ).toBe("allow")
      expect(yield* f.permission.list()).toEqual([])
    }),
  )

  scoped("denies omitted-agent permissions when no primary default agent exists", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.sessions.create({ id: "ses_none" })
      yield* f.setAgentRules("build", [r("*", "*", "allow")])
      yield* f.setAgentRules("test", null)
      yield* f.setAgentRules("build", null)
      const input = { id: "per_t", sessionID: "ses_none", action: "todowrite", resources: ["*"] }
      expect((yield* f.permission.ask(input)).effect).toBe("deny")
      expect(yield* f.permission.list()).toEqual([])
      // The deny-all fallback's rule is what BlockedError carries.
      expect(failureOf(yield* Effect.exit(f.permission.assert(input)))).toMatchObject({
        rules: [r("*", "*", "deny")],
        resources: ["*"],
      })
    }),
  )

  scoped("evaluates bash with the normal configured-rule semantics", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.setRules([r("*", "*", "allow")])
      const bash = { id: "per_b", sessionID: "ses_test", action: "bash", resources: ["pwd"], save: ["pwd"] }
      expect((yield* f.permission.ask(bash)).effect).toBe("allow")
      yield* f.setRules([])
      expect((yield* f.permission.ask(bash)).effect).toBe("ask")
      expect((yield* f.permission.list()).map((request) => request.id)).toEqual(["per_b"])
    }),
  )

  scoped("uses saved bash approvals while preserving configured deny precedence", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const saved = yield* PermissionSaved.Service
      // a `global` Location reads the rows filed under its own directory (docs/trust/approvals.md)
      const directory = (yield* Location.Service).directory
      yield* saved.add({ projectID: "global", directory, action: "bash", resources: ["pwd"] })
      const bash = { sessionID: "ses_test", action: "bash", resources: ["pwd"] }
      expect((yield* f.permission.ask({ ...bash, id: "per_1" })).effect).toBe("allow")
      yield* f.setRules([r("bash", "*", "deny")])
      expect((yield* f.permission.ask({ ...bash, id: "per_2" })).effect).toBe("deny")
      // Removing the saved row takes effect at once (rows are read on every evaluation).
      yield* f.setRules([])
      const [row] = yield* saved.list({ projectID: "global" })
      yield* saved.remove(row!.id)
      expect((yield* f.permission.ask({ ...bash, id: "per_3" })).effect).toBe("ask")
    }),
  )

  scoped("resolves an asked permission once", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const fiber = yield* f.waitForRequest(base)
      const directory = (yield* Location.Service).directory
      const request = {
        id: "per_test",
        sessionID: "ses_test",
        action: "read",
        resources: ["src/index.ts"],
        always: { action: "read", entries: [], scope: { kind: "directory", projectID: "global", directory } },
      }
      expect(yield* f.permission.list()).toEqual([request])
      expect(yield* f.permission.forSession("ses_test")).toEqual([request])
      expect(yield* f.permission.forSession("ses_other")).toEqual([])
      expect(yield* f.permission.get("per_test")).toEqual(request)
      expect(f.log.map((event) => event.type)).toEqual(["permission.v2.asked"])
      expect(f.log[0]?.data).toEqual(request)
      yield* f.permission.reply({ requestID: "per_test", reply: "once" })
      expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
      expect(yield* f.permission.list()).toEqual([])
      expect(yield* f.permission.get("per_test")).toBeUndefined()
      expect(f.replied()).toEqual([{ sessionID: "ses_test", requestID: "per_test", reply: "once" }])
      // `once` saved nothing: the next identical assert asks again.
      expect((yield* f.permission.ask({ ...base, id: "per_again" })).effect).toBe("ask")
    }),
  )

  scoped("defects when an asked permission is declined", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const fiber = yield* f.waitForRequest(base)
      yield* f.permission.reply({ requestID: "per_test", reply: "reject" })
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(dieOf(exit)).toBeInstanceOf(PermissionV2.DeclinedError)
      expect(PermissionV2.isDeclined((exit as Exit.Failure<unknown, unknown>).cause)).toBe(true)
      expect(failureOf(exit)).toBeUndefined()
      expect(yield* f.permission.list()).toEqual([])
      expect(f.replied()).toEqual([{ sessionID: "ses_test", requestID: "per_test", reply: "reject" }])
    }),
  )

  scoped("stores and removes saved resources for a project", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const sql = yield* SqlClient.SqlClient
      const saved = yield* PermissionSaved.Service
      const fiber = yield* f.waitForRequest({ ...base, save: ["src/*"] })
      yield* f.permission.reply({ requestID: "per_test", reply: "always" })
      expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
      const directory = (yield* Location.Service).directory
      const rows = yield* sql<{ project_id: string; directory: string; action: string; resource: string }>`
        SELECT project_id, directory, action, resource FROM permission`
      expect(rows).toEqual([{ project_id: "global", directory, action: "read", resource: "src/*" }])
      const list = yield* saved.list()
      expect(list).toHaveLength(1)
      expect(list[0]).toEqual({
        id: list[0]!.id,
        projectID: "global",
        directory,
        action: "read",
        resource: "src/*",
        timeCreated: list[0]!.timeCreated,
        // Who answered is unknown to `reply`; its channel is `in-process`; no TTL.
        channel: "in-process",
      })
      expect(list[0]!.timeCreated).toBeGreaterThan(0)
      expect(list[0]!.id).toMatch(/^psv_/)
      yield* f.permission.assert({ ...base, id: "per_next", resources: ["src/next.ts"] })
      expect(f.asked().map((request) => request.id)).toEqual(["per_test"])
      yield* saved.remove(list[0]!.id)
      expect(yield* saved.list()).toEqual([])
      expect((yield* f.permission.ask({ ...base, id: "per_after", resources: ["src/next.ts"] })).effect).toBe("ask")
    }),
  )

  scoped("empty resources is a defect, before any session lookup", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const input = { id: "per_e", sessionID: "ses_missing", action: "read", resources: [] }
      for (const effect of [f.permission.ask(input), f.permission.assert(input)] as const) {
        const exit = yield* Effect.exit(effect as Effect.Effect<unknown, unknown>)
        const defect = dieOf(exit)
        expect(defect).toBeInstanceOf(Error)
        expect((defect as Error).message).toBe("Permission request for read must name at least one resource")
      }
      expect(yield* f.permission.list()).toEqual([])
    }),
  )

  scoped("a missing session fails Session.NotFoundError", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const input = { ...base, sessionID: "ses_missing" }
      for (const effect of [f.permission.ask(input), f.permission.assert(input)] as const) {
        const error = failureOf(yield* Effect.exit(effect as Effect.Effect<unknown, unknown>))
        expect(error).toBeInstanceOf(SessionV2.NotFoundError)
        expect(error).toMatchObject({ _tag: "Session.NotFoundError", sessionID: "ses_missing" })
      }
    }),
  )

  scoped("reject with feedback", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const fiber = yield* f.waitForRequest(base)
      yield* f.permission.reply({ requestID: "per_test", reply: "reject", message: "use src/" })
      const exit = yield* Fiber.await(fiber)
      const error = failureOf(exit)
      expect(error).toBeInstanceOf(PermissionV2.CorrectedError)
      expect(error).toMatchObject({ feedback: "use src/" })
      expect(PermissionV2.isDeclined((exit as Exit.Failure<unknown, unknown>).cause)).toBe(false)
      expect(PermissionV2.toToolFailure(error as PermissionV2.CorrectedError).message).toBe(
        "The user rejected permission to use this specific tool call with the following feedback: use src/",
      )
      // The Replied event carries no message.
      expect(f.log.at(-1)?.data).toEqual({ sessionID: "ses_test", requestID: "per_test", reply: "reject" })
      // An empty message is a plain decline.
      const second = yield* f.waitForRequest({ ...base, id: "per_empty" })
      yield* f.permission.reply({ requestID: "per_empty", reply: "reject", message: "" })
      expect(dieOf(yield* Fiber.await(second))).toBeInstanceOf(PermissionV2.DeclinedError)
    }),
  )

  scoped("same-session cascade", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.sessions.create({ id: "ses_other", agent: "test" })
      const a = yield* f.waitForRequest({ ...base, id: "per_a" })
      const b = yield* f.waitForRequest({ ...base, id: "per_b", action: "bash", resources: ["ls"] })
      const other = yield* f.waitForRequest({ ...base, id: "per_o", sessionID: "ses_other" })
      const queued = yield* f.permission.ask({ ...base, id: "per_q" })
      expect(queued.effect).toBe("ask")
      yield* f.permission.reply({ requestID: "per_a", reply: "reject", message: "no" })
      expect(failureOf(yield* Fiber.await(a))).toMatchObject({ feedback: "no" })
      const exitB = yield* Fiber.await(b)
      expect(dieOf(exitB)).toBeInstanceOf(PermissionV2.DeclinedError)
      expect(f.replied()).toEqual([
        { sessionID: "ses_test", requestID: "per_a", reply: "reject" },
        { sessionID: "ses_test", requestID: "per_b", reply: "reject" },
        { sessionID: "ses_test", requestID: "per_q", reply: "reject" },
      ])
      expect((yield* f.permission.list()).map((request) => request.id)).toEqual(["per_o"])
      expect(other.unsafePoll()).toBeNull()
      yield* f.permission.reply({ requestID: "per_o", reply: "once" })
      expect(Exit.isSuccess(yield* Fiber.await(other))).toBe(true)
    }),
  )

  scoped("always auto-resolve spans sessions", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.sessions.create({ id: "ses_two", agent: "test" })
      yield* f.sessions.create({ id: "ses_gone", agent: "test" })
      yield* f.setAgentRules("strict", [r("read", "src/b.ts", "deny")])
      const sql = yield* SqlClient.SqlClient
      const first = yield* f.waitForRequest({ ...base, id: "per_1", resources: ["src/a.ts"], save: ["src/*"] })
      const sameSession = yield* f.waitForRequest({ ...base, id: "per_2", resources: ["src/b.ts"] })
      const otherSession = yield* f.waitForRequest({
        ...base,
        id: "per_3",
        sessionID: "ses_two",
        resources: ["src/c.ts", "src/d.ts"],
      })
      const partly = yield* f.waitForRequest({
        ...base,
        id: "per_4",
        sessionID: "ses_two",
        resources: ["src/e.ts", "lib/x.ts"],
      })
      const otherAction = yield* f.waitForRequest({ ...base, id: "per_5", action: "edit", resources: ["src/a.ts"] })
      const strict = yield* f.waitForRequest({ ...base, id: "per_6", agent: "strict", resources: ["src/z.ts"] })
      const gone = yield* f.waitForRequest({ ...base, id: "per_7", sessionID: "ses_gone", resources: ["src/g.ts"] })
      const strictDenied = yield* f.permission.ask({ ...base, id: "per_8", agent: "strict", resources: ["src/x.ts"] })
      expect(strictDenied.effect).toBe("ask")
      // Now the configured rules deny per_8's resource: auto-resolve must skip it even though src/* is saved.
      yield* f.setAgentRules("strict", [r("read", "src/x.ts", "deny")])
      yield* sql`DELETE FROM session WHERE id = 'ses_gone'`
      yield* f.permission.reply({ requestID: "per_1", reply: "always" })
      for (const fiber of [first, sameSession, otherSession, strict])
        expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
      expect(f.replied()).toEqual([
        { sessionID: "ses_test", requestID: "per_1", reply: "always" },
        { sessionID: "ses_test", requestID: "per_2", reply: "always" },
        { sessionID: "ses_two", requestID: "per_3", reply: "always" },
        { sessionID: "ses_test", requestID: "per_6", reply: "always" },
      ])
      expect((yield* f.permission.list()).map((request) => request.id)).toEqual(["per_4", "per_5", "per_7", "per_8"])
      for (const fiber of [partly, otherAction, gone]) expect(fiber.unsafePoll()).toBeNull()
    }),
  )

  scoped("always without save", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const fiber = yield* f.waitForRequest(base)
      const other = yield* f.waitForRequest({ ...base, id: "per_other" })
      yield* f.permission.reply({ requestID: "per_test", reply: "always" })
      expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
      expect(f.replied()).toEqual([{ sessionID: "ses_test", requestID: "per_test", reply: "always" }])
      expect(yield* (yield* PermissionSaved.Service).list()).toEqual([])
      // Like once: nothing else is released.
      expect((yield* f.permission.list()).map((request) => request.id)).toEqual(["per_other"])
      expect(other.unsafePoll()).toBeNull()
    }),
  )

  it.scoped("scope close declines every pending request without events", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      // The database outlives the Location, so a request after shutdown gets as far as queueing.
      const database = Layer.succeedContext(yield* Layer.build(Database.layerMemory))
      const scope = yield* Scope.make()
      const context = yield* buildStack(dir, database).pipe(Scope.extend(scope))
      const f = yield* Effect.provide(fixture, context)
      const a = yield* f.waitForRequest(base)
      const b = yield* f.waitForRequest({ ...base, id: "per_b" })
      yield* Effect.provide(f.permission.ask({ ...base, id: "per_c" }), context)
      const before = f.log.length
      yield* Scope.close(scope, Exit.void)
      for (const fiber of [a, b]) {
        const exit = yield* Fiber.await(fiber)
        expect(dieOf(exit)).toBeInstanceOf(PermissionV2.DeclinedError)
      }
      expect(f.log.length).toBe(before)
      expect(yield* f.permission.list()).toEqual([])
      // A request after shutdown cannot wait forever: it is declined at once.
      const late = yield* Effect.exit(f.permission.assert({ ...base, id: "per_late" }))
      expect(dieOf(late)).toBeInstanceOf(PermissionV2.DeclinedError)
      expect(f.log.length).toBe(before)
    }),
  )

  scoped("duplicate pending id", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const first = yield* f.waitForRequest(base)
      for (const effect of [f.permission.ask(base), f.permission.assert(base)] as const) {
        const defect = dieOf(yield* Effect.exit(effect as Effect.Effect<unknown, unknown>))
        expect((defect as Error).message).toBe("Duplicate pending permission ID: per_test")
      }
      expect(f.asked()).toHaveLength(1)
      expect(yield* f.permission.list()).toHaveLength(1)
      yield* f.permission.reply({ requestID: "per_test", reply: "once" })
      expect(Exit.isSuccess(yield* Fiber.await(first))).toBe(true)
    }),
  )

  scoped("unknown reply", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const error = failureOf(yield* Effect.exit(f.permission.reply({ requestID: "per_nope", reply: "once" })))
      expect(error).toBeInstanceOf(PermissionV2.NotFoundError)
      expect(error).toMatchObject({ _tag: "PermissionV2.NotFoundError", requestID: "per_nope" })
      expect(f.log).toEqual([])
    }),
  )

  scoped("saved dedupe", () =>
    Effect.gen(function* () {
      const saved = yield* PermissionSaved.Service
      yield* saved.add({ projectID: "global", action: "read", resources: ["a", "a", "b"] })
      const first = yield* saved.list({ projectID: "global" })
      expect(first.map((row) => row.resource).sort()).toEqual(["a", "b"])
      yield* saved.add({ projectID: "global", action: "read", resources: ["a"] })
      yield* saved.add({ projectID: "global", action: "edit", resources: ["a"] })
      const second = yield* saved.list({ projectID: "global" })
      expect(second).toHaveLength(3)
      const idOf = (rows: ReadonlyArray<PermissionSaved.Info>) =>
        rows.find((row) => row.action === "read" && row.resource === "a")?.id
      expect(idOf(second)).toBe(idOf(first))
      yield* saved.add({ projectID: "global", action: "read", resources: [] })
      expect(yield* saved.list()).toHaveLength(3)
    }),
  )

  scoped("Asked is rolled back when publishing fails", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.events.listen((envelope) => {
        if (envelope.type === "permission.v2.asked") throw new Error("listener down")
      })
      const exit = yield* Effect.exit(f.permission.ask(base))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* f.permission.list()).toEqual([])
      expect(yield* f.permission.get("per_test")).toBeUndefined()
      const exitAssert = yield* Effect.exit(f.permission.assert(base))
      expect(Exit.isFailure(exitAssert)).toBe(true)
      expect(yield* f.permission.list()).toEqual([])
    }),
  )

  scoped("BlockedError.rules: every configured rule whose action matches, any effect, in order", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const saved = yield* PermissionSaved.Service
      // A saved approval for the denied resource is neither consulted nor reported.
      yield* saved.add({ projectID: "global", action: "read", resources: ["src/*"] })
      yield* f.setRules([
        r("read", "*", "allow"),
        r("*", "*", "ask"),
        r("edit", "*", "deny"),
        r("r?ad", "src/*", "deny"),
        r("bash", "*", "allow"),
        r("read", "lib/*", "ask"),
      ])
      const error = failureOf(yield* Effect.exit(f.permission.assert({ ...base, resources: ["lib/a", "src/b"] })))
      expect(error).toBeInstanceOf(PermissionV2.BlockedError)
      expect((error as PermissionV2.BlockedError).rules).toEqual([
        r("read", "*", "allow"),
        r("*", "*", "ask"),
        r("r?ad", "src/*", "deny"),
        r("read", "lib/*", "ask"),
      ])
      expect((error as PermissionV2.BlockedError).resources).toEqual(["src/b"])
    }),
  )

  scoped("always persists the save patterns before resolving the request; a failed save is a SaveError", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const sql = yield* SqlClient.SqlClient
      const fiber = yield* f.waitForRequest({ ...base, save: ["src/*"] })
      // Without its project row the insert violates the foreign key: the save fails, so nothing may resolve.
      yield* sql`DELETE FROM project WHERE id = 'global'`
      const error = yield* Effect.flip(f.permission.reply({ requestID: "per_test", reply: "always" }))
      expect(error._tag).toBe("PermissionV2.SaveError")
      expect(error.message).toBe(
        "Could not save the approval of permission request per_test (read) to :memory:: Failed to execute statement: SQLITE_CONSTRAINT_FOREIGNKEY: FOREIGN KEY constraint failed. The request is still pending: answer it once or reject it.",
      )
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
      expect(fiber.unsafePoll()).toBeNull()
      expect((yield* f.permission.list()).map((request) => request.id)).toEqual(["per_test"])
      // No Replied event, and the request is still answerable.
      expect(f.replied()).toEqual([])
      yield* f.permission.reply({ requestID: "per_test", reply: "once" })
      expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
    }),
  )

  scoped("events: evt_ envelopes stamped with the Location; Event.Definitions lists Asked, Replied, Answered, Expired", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const location = yield* Location.Service
      const fiber = yield* f.waitForRequest(base)
      yield* f.permission.reply({ requestID: "per_test", reply: "once" })
      yield* Fiber.join(fiber)
      expect(f.log.map((envelope) => envelope.type)).toEqual([
        "permission.v2.asked",
        "permission.v2.answered",
        "permission.v2.replied",
      ])
      for (const envelope of f.log) {
        expect(envelope.id).toMatch(/^evt_[0-9a-f]{12}[0-9A-Za-z]{14}$/)
        expect(envelope.location).toEqual({ directory: location.directory })
      }
      expect(f.log[1]!.data).toEqual({ sessionID: "ses_test", requestID: "per_test", choice: "once", channel: "in-process" })
      expect(f.log[2]!.data).toEqual({ sessionID: "ses_test", requestID: "per_test", reply: "once" })
      expect(PermissionV2.Event.Definitions.map((definition) => definition.type)).toEqual([
        "permission.v2.asked",
        "permission.v2.replied",
        "permission.v2.answered",
        "permission.v2.expired",
      ])
    }),
  )

  scoped("Asked is published after insertion and Replied before settling", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.sessions.create({ id: "ses_other", agent: "test" })
      const seen: Array<string> = []
      yield* f.events.listen(
        (envelope) => {
          const id = envelope.type === "permission.v2.asked" ? envelope.data.id : envelope.data.requestID
          const visible = Effect.runSync(f.permission.get(id)) !== undefined
          seen.push(`${envelope.type}:${id}:${visible ? "pending" : "gone"}`)
        },
        ...PermissionV2.Event.Definitions,
      )
      const a = yield* f.waitForRequest({ ...base, id: "per_a", save: ["*"] })
      const b = yield* f.waitForRequest({ ...base, id: "per_b", sessionID: "ses_other" })
      const c = yield* f.waitForRequest({ ...base, id: "per_c", action: "edit" })
      const d = yield* f.waitForRequest({ ...base, id: "per_d", action: "edit" })
      yield* f.permission.reply({ requestID: "per_a", reply: "always" })
      yield* f.permission.reply({ requestID: "per_c", reply: "reject" })
      for (const fiber of [a, b]) expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
      for (const fiber of [c, d])
        expect(PermissionV2.isDeclined(((yield* Fiber.await(fiber)) as Exit.Failure<void, unknown>).cause)).toBe(true)
      expect(seen).toEqual([
        "permission.v2.asked:per_a:pending",
        "permission.v2.asked:per_b:pending",
        "permission.v2.asked:per_c:pending",
        "permission.v2.asked:per_d:pending",
        "permission.v2.answered:per_a:pending",
        "permission.v2.replied:per_a:pending",
        "permission.v2.answered:per_b:pending",
        "permission.v2.replied:per_b:pending",
        "permission.v2.answered:per_c:pending",
        "permission.v2.replied:per_c:pending",
        "permission.v2.answered:per_d:pending",
        "permission.v2.replied:per_d:pending",
      ])
    }),
  )

  scoped("an interrupted waiter is removed silently", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const fiber = yield* f.waitForRequest(base)
      expect(yield* f.permission.list()).toHaveLength(1)
      yield* Fiber.interrupt(fiber)
      expect(yield* f.permission.list()).toEqual([])
      expect(f.replied()).toEqual([])
      expect(
        failureOf(yield* Effect.exit(f.permission.reply({ requestID: "per_test", reply: "once" }))),
      ).toBeInstanceOf(PermissionV2.NotFoundError)
    }),
  )
})

describe("PermissionV2 persistence", () => {
  it.scoped("saved approvals survive a restart on a file database and stay per project", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const file = path.join(yield* tempDir("toolgate-db-"), "toolgate.db")
      const database = () => Database.layerFile(file)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const context = yield* buildStack(dir, database())
          const f = yield* Effect.provide(fixture, context)
          const fiber = yield* f.waitForRequest({
            ...base,
            action: "bash",
            resources: ["make test"],
            save: ["make test"],
          })
          yield* f.permission.reply({ requestID: "per_test", reply: "always" })
          expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
        }),
      )
      expect(fs.existsSync(file)).toBe(true)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const context = yield* buildStack(dir, database())
          const permission = Context.get(context, PermissionV2.Service)
          const sessions = Context.get(context, SessionV2.Service)
          const sql = Context.get(context, SqlClient.SqlClient)
          expect(yield* sessions.get("ses_test")).toMatchObject({ id: "ses_test", agent: "test" })
          // Agents are not persisted (the empty agent layer starts over): give agent `test` no rules again.
          const setRules = yield* Effect.provide(agentControl, context)
          yield* setRules("test", [])
          const result = yield* permission.ask({ ...base, id: "per_2", action: "bash", resources: ["make test"] })
          expect(result.effect).toBe("allow")
          // Another project does not see the row.
          yield* sql`INSERT INTO project (id, worktree, time_created, time_updated) VALUES ('other', '/x', 0, 0)`
          yield* sql`INSERT INTO session (id, project_id, directory, agent, time_created, time_updated)
            VALUES ('ses_x', 'other', '/x', 'test', 0, 0)`
          const saved = Context.get(context, PermissionSaved.Service)
          expect(yield* saved.list({ projectID: "other" })).toEqual([])
          expect((yield* saved.list({ projectID: "global" })).map((row) => row.resource)).toEqual(["make test"])
        }),
      )
    }),
  )
})

describe("PermissionV2 shared semantics", () => {
  it("evaluate", () => {
    const ev = (action: string, resource: string, ...sets: ReadonlyArray<ReadonlyArray<Rule>>) =>
      PermissionV2.evaluate(action, resource, ...sets).effect
    // exact match, wildcard
    expect(ev("bash", "ls", [r("bash", "ls", "allow")])).toBe("allow")
    expect(ev("bash", "ls -la", [r("bash", "ls *", "allow")])).toBe("allow")
    // last match wins in either direction
    expect(ev("edit", "a", [r("edit", "*", "deny"), r("edit", "a", "allow")])).toBe("allow")
    expect(ev("edit", "a", [r("edit", "a", "allow"), r("edit", "*", "deny")])).toBe("deny")
    // glob patterns and order-dependent specificity
    expect(ev("read", "src/a/b.ts", [r("read", "src/*", "ask"), r("read", "*.ts", "allow")])).toBe("allow")
    expect(ev("read", "src/a/b.ts", [r("read", "*.ts", "allow"), r("read", "src/*", "ask")])).toBe("ask")
    // unknown action, empty ruleset, no match → ask with the synthetic rule
    expect(PermissionV2.evaluate("mystery", "x", [r("read", "*", "allow")])).toEqual(r("mystery", "*", "ask"))
    expect(PermissionV2.evaluate("read", "x")).toEqual(r("read", "*", "ask"))
    expect(PermissionV2.evaluate("read", "x", [])).toEqual(r("read", "*", "ask"))
    // wildcard action and glob action
    expect(ev("anything", "x", [r("*", "*", "deny")])).toBe("deny")
    expect(ev("mcp_github_search", "x", [r("mcp_*", "*", "allow")])).toBe("allow")
    expect(ev("bash", "x", [r("mcp_*", "*", "allow")])).toBe("ask")
    // combinations across rulesets: later sets win
    expect(ev("read", "x", [r("read", "*", "deny")], [r("read", "x", "allow")])).toBe("allow")
    expect(ev("read", "x", [r("read", "x", "allow")], [r("read", "*", "deny")], [])).toBe("deny")
  })

  it("merge", () => {
    const defaults = [r("*", "*", "allow"), r("read", "*.env", "ask")]
    const config = [r("read", "*.env", "deny")]
    expect(PermissionV2.merge(defaults, config)).toEqual([...defaults, ...config])
    expect(PermissionV2.merge(defaults, defaults)).toHaveLength(4)
    expect(PermissionV2.evaluate("read", ".env", PermissionV2.merge(defaults, config)).effect).toBe("deny")
  })

  it("disabled (catalogue hiding) follows the last rule matching the action", () => {
    const hidden = ToolRegistry.whollyDisabled
    // edit, write and apply_patch all use the action `edit`.
    expect(hidden("edit", [r("edit", "*", "deny")])).toBe(true)
    expect(hidden("read", [r("edit", "*", "deny")])).toBe(false)
    // A partial deny does not hide; ask does not hide; a later allow un-hides.
    expect(hidden("edit", [r("edit", "src/*", "deny")])).toBe(false)
    expect(hidden("edit", [r("edit", "*", "ask")])).toBe(false)
    expect(hidden("edit", [r("*", "*", "deny"), r("edit", "docs/*", "allow")])).toBe(false)
    expect(hidden("edit", [r("edit", "docs/*", "allow"), r("*", "*", "deny")])).toBe(true)
  })

  scoped("multi-pattern deny beats earlier ask", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      yield* f.setRules([r("read", "*", "ask"), r("read", "secret/*", "deny")])
      const exit = yield* Effect.exit(
        f.permission.assert({ ...base, resources: ["a.ts", "secret/k", "b.ts", "secret/j"] }),
      )
      expect(failureOf(exit)).toMatchObject({ resources: ["secret/k", "secret/j"] })
      expect(yield* f.permission.list()).toEqual([])
    }),
  )

  scoped("always approves later asks and reject cancels only the same session", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const fiber = yield* f.waitForRequest({ ...base, action: "edit", resources: ["a.ts"], save: ["*"] })
      yield* f.permission.reply({ requestID: "per_test", reply: "always" })
      yield* Fiber.join(fiber)
      expect((yield* f.permission.ask({ ...base, id: "per_x", action: "edit", resources: ["z/y.ts"] })).effect).toBe(
        "allow",
      )
      expect((yield* f.permission.ask({ ...base, id: "per_y", action: "read", resources: ["z/y.ts"] })).effect).toBe(
        "ask",
      )
    }),
  )

  // The reference shares `global` rows between every non-git directory; we file them per directory
  // (docs/trust/approvals.md), so this sharing is shown with two Locations of one git repository.
  it.scoped("saved approvals are shared by the project's Locations; auto-resolve stays in the replying Location", () =>
    Effect.gen(function* () {
      const database = Layer.succeedContext(yield* Layer.build(Database.layerMemory))
      const repository = yield* tempDir()
      gitRepository(repository)
      fs.mkdirSync(path.join(repository, "a"))
      fs.mkdirSync(path.join(repository, "b"))
      const a = yield* buildStack(path.join(repository, "a"), database)
      const b = yield* buildStack(path.join(repository, "b"), database)
      const fa = yield* Effect.provide(fixture, a)
      const pb = Context.get(b, PermissionV2.Service)
      yield* Effect.provide(agentControl, b)
      // B queues a request that A's approval will cover: it is not in A's pending map, so it stays pending.
      expect((yield* pb.ask({ ...base, id: "per_b", resources: ["src/b.ts"] })).effect).toBe("ask")
      const fiber = yield* fa.waitForRequest({ ...base, resources: ["src/a.ts"], save: ["src/*"] })
      yield* fa.permission.reply({ requestID: "per_test", reply: "always" })
      yield* Fiber.join(fiber)
      expect((yield* pb.list()).map((request) => request.id)).toEqual(["per_b"])
      // Both Locations belong to the repository's project: B's next evaluation sees the saved row.
      expect((yield* pb.ask({ ...base, id: "per_b2", resources: ["src/c.ts"] })).effect).toBe("allow")
    }),
  )

  it.scoped("isolation by directory: two Locations keep separate pending maps", () =>
    Effect.gen(function* () {
      const dirA = yield* tempDir()
      const dirB = yield* tempDir()
      const database = Layer.succeedContext(yield* Layer.build(Database.layerMemory))
      const a = yield* buildStack(dirA, database)
      const b = yield* buildStack(dirB, database)
      const fa = yield* Effect.provide(fixture, a)
      const pb = Context.get(b, PermissionV2.Service)
      yield* Effect.provide(agentControl, b)
      const fiber = yield* fa.waitForRequest(base)
      expect(yield* pb.list()).toEqual([])
      expect(failureOf(yield* Effect.exit(pb.reply({ requestID: "per_test", reply: "once" })))).toBeInstanceOf(
        PermissionV2.NotFoundError,
      )
      // The session is shared (same project), so B can queue its own request with the same id.
      expect((yield* pb.ask(base)).effect).toBe("ask")
      expect((yield* pb.list()).map((request) => request.id)).toEqual(["per_test"])
      yield* fa.permission.reply({ requestID: "per_test", reply: "once" })
      yield* Fiber.join(fiber)
      expect((yield* pb.list()).map((request) => request.id)).toEqual(["per_test"])
      expect(Context.get(a, EventV2.Service)).not.toBe(Context.get(b, EventV2.Service))
    }),
  )
})
