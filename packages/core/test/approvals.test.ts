/**
 * The approval protocol over the real permission stack (SQLite in memory, a real Location, EventV2, SessionV2,
 * PermissionSaved): prompts, digests, choices and what each saves, lifetimes over a TestClock, expiry.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, Layer, Option, Cause, Schema, Stream, TestClock, type Scope } from "effect"
import {
  AgentV2,
  Approvals,
  Config,
  Core,
  Database,
  DecisionJournal,
  EventV2,
  Location,
  PermissionSaved,
  PermissionV2,
  SessionV2,
  Tool,
  ToolRegistry,
  Wildcard,
} from "../src/index.js"
import { tempDir } from "./support/location.js"
import { agentControl } from "./support/permission-stack.js"

type Rule = PermissionV2.Rule

const stack = (directory: string, config: Config.Info = {}) =>
  Approvals.layer.pipe(
    Layer.provideMerge(PermissionV2.layer),
    Layer.provideMerge(
      Layer.mergeAll(
        EventV2.layer,
        AgentV2.layerEmpty,
        SessionV2.layer,
        PermissionSaved.layer,
        DecisionJournal.layer,
        Config.layerFromEntries([{ type: "document", info: config }]),
      ),
    ),
    Layer.provideMerge(Location.layer({ directory }).pipe(Layer.orDie)),
    Layer.provideMerge(Database.layerMemory),
  )

type Services = Layer.Layer.Success<ReturnType<typeof stack>>

/** A test on a fresh in-memory stack (with `config`) in a fresh temp Location; session `ses_a` of agent `test`. */
const scoped = <A, E>(
  name: string,
  body: () => Effect.Effect<A, E, Services | Scope.Scope>,
  config: Config.Info = {},
) =>
  it.scoped(name, () =>
    Effect.gen(function* () {
      const directory = yield* tempDir()
      const context = yield* Layer.build(stack(directory, config))
      return yield* Effect.provide(
        Effect.gen(function* () {
          const setRules = yield* agentControl
          yield* setRules("test", [])
          const sessions = yield* SessionV2.Service
          yield* sessions.create({ id: "ses_a", agent: "test" })
          yield* sessions.create({ id: "ses_b", agent: "test" })
          return yield* body()
        }),
        context,
      )
    }),
  )

const edit = (id: string, resources: ReadonlyArray<string>, sessionID = "ses_a"): PermissionV2.AssertInput => ({
  id,
  sessionID,
  action: "edit",
  resources,
  save: ["*"],
})

/** A `write`-like tool with `description`: two of them differ only in their definition. */
const writeTool = (description: string) =>
  Tool.make({
    description,
    input: Schema.Struct({ path: Schema.String, content: Schema.String }),
    output: Schema.String,
    execute: () => Effect.succeed("written"),
  })
const WRITE = writeTool("Write a file")

/**
 * An edit ask raised by tool call `callID` of `write` (as a leaf raises it: `PermissionV2.fromToolCall` over the
 * context a materialization gives, with the call and the advertised definition).
 */
const fromCall = (id: string, input: unknown, tool = WRITE, callID = "call_w"): PermissionV2.AssertInput => ({
  ...edit(id, ["src/a.ts"]),
  ...PermissionV2.fromToolCall({
    sessionID: "ses_a",
    agent: "test",
    assistantMessageID: "msg_w",
    toolCallID: callID,
    call: { id: callID, name: "write", input },
    definition: Tool.definition("write", tool),
  }),
})

/** Forks an assert and returns once its ask is pending. */
const waiting = (input: PermissionV2.AssertInput) =>
  Effect.gen(function* () {
    const permission = yield* PermissionV2.Service
    const fiber = yield* Effect.fork(permission.assert(input))
    yield* Effect.yieldNow()
    while ((yield* permission.get(input.id!)) === undefined) yield* Effect.yieldNow()
    return fiber
  })

const failureOf = (exit: Exit.Exit<unknown, unknown>): unknown =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

describe("Approvals", () => {
  scoped("the right digest resumes the suspended call", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      const fiber = yield* waiting(edit("per_1", ["src/a.ts"]))
      const prompt = yield* approvals.get("per_1")
      expect(prompt.digest).toMatch(/^[0-9a-f]{64}$/)
      expect(prompt.choices.map((choice) => choice.id)).toEqual([
        "once",
        "always:exact",
        "always:directory",
        "session",
        "always:pattern",
        "reject",
      ])
      yield* approvals.answer({ requestID: "per_1", digest: prompt.digest, choice: "once", channel: "test" })
      expect(yield* Fiber.await(fiber)).toEqual(Exit.void)
      expect(yield* approvals.pending()).toEqual([])
    }),
  )

  scoped("a wrong digest, a missing digest, a second answer and an unknown id fail typed and change nothing", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      const saved = yield* PermissionSaved.Service
      const fiber = yield* waiting(edit("per_1", ["src/a.ts"]))
      const prompt = yield* approvals.get("per_1")
      const wrong = yield* Effect.flip(
        approvals.answer({ requestID: "per_1", digest: "0".repeat(64), choice: "always:pattern", channel: "http" }),
      )
      expect(wrong).toBeInstanceOf(Approvals.DigestMismatchError)
      const missing = yield* Effect.flip(approvals.answer({ requestID: "per_1", choice: "always:pattern", channel: "http" }))
      expect(missing).toBeInstanceOf(Approvals.DigestMismatchError)
      const unknownChoice = yield* Effect.flip(
        approvals.answer({ requestID: "per_1", digest: prompt.digest, choice: "always:everything", channel: "http" }),
      )
      expect(unknownChoice).toBeInstanceOf(Approvals.UnknownChoiceError)
      const unknown = yield* Effect.flip(
        approvals.answer({ requestID: "per_nope", digest: prompt.digest, choice: "once", channel: "http" }),
      )
      expect(unknown).toBeInstanceOf(PermissionV2.NotFoundError)
      // Nothing changed: still pending, nothing saved, the call still waits.
      expect((yield* approvals.pending()).map((p) => p.request.id)).toEqual(["per_1"])
      expect(yield* saved.list()).toEqual([])
      expect(fiber.unsafePoll()).toBeNull()

      yield* approvals.answer({ requestID: "per_1", digest: prompt.digest, choice: "reject", channel: "http" })
      const second = yield* Effect.flip(
        approvals.answer({ requestID: "per_1", digest: prompt.digest, choice: "once", channel: "http" }),
      )
      expect(second).toBeInstanceOf(Approvals.AlreadyAnsweredError)
      expect(yield* saved.list()).toEqual([])
      const exit = yield* Fiber.await(fiber)
      expect(PermissionV2.isDeclined(Exit.isFailure(exit) ? exit.cause : Cause.empty)).toBe(true)
    }),
  )

  scoped("PermissionV2.reply keeps its shape and checks a digest when given", () =>
    Effect.gen(function* () {
      const permission = yield* PermissionV2.Service
      const approvals = yield* Approvals.Service
      const fiber = yield* waiting(edit("per_1", ["src/a.ts"]))
      const wrong = yield* Effect.flip(permission.reply({ requestID: "per_1", reply: "once", digest: "x" }))
      expect(wrong).toBeInstanceOf(Approvals.DigestMismatchError)
      const { digest } = yield* approvals.get("per_1")
      yield* permission.reply({ requestID: "per_1", reply: "once", digest })
      expect(yield* Fiber.await(fiber)).toEqual(Exit.void)
      // A second reply is NotFound, as before.
      const again = yield* Effect.flip(permission.reply({ requestID: "per_1", reply: "once" }))
      expect(again).toBeInstanceOf(PermissionV2.NotFoundError)
    }),
  )

  scoped("prompts delivers Asked for what is pending, then live events in order", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      const permission = yield* PermissionV2.Service
      yield* permission.ask(edit("per_1", ["a.ts"]))
      yield* permission.ask(edit("per_other", ["b.ts"], "ses_b"))
      const events = yield* EventV2.Service
      const before = yield* events.subscribers(PermissionV2.Event.Asked)
      const collected = yield* Effect.fork(
        Stream.runCollect(approvals.prompts({ sessionID: "ses_a" }).pipe(Stream.take(4))),
      )
      // A prompts stream counts as a subscriber of Asked once it listens.
      while ((yield* events.subscribers(PermissionV2.Event.Asked)) === before) yield* Effect.yieldNow()
      yield* permission.ask(edit("per_2", ["c.ts"]))
      yield* permission.ask(edit("per_other2", ["d.ts"], "ses_b"))
      const first = yield* approvals.get("per_1")
      yield* approvals.answer({ requestID: "per_1", digest: first.digest, choice: "once", channel: "cli", by: "ann" })
      const second = yield* approvals.get("per_2")
      yield* approvals.answer({ requestID: "per_2", digest: second.digest, choice: "reject", channel: "cli" })
      const delivered = Chunk.toArray(yield* Fiber.join(collected))
      expect(delivered.map((event) => (event._tag === "Asked" ? `Asked ${event.prompt.request.id}` : `${event._tag} ${event.requestID}`))).toEqual([
        "Asked per_1",
        "Asked per_2",
        "Answered per_1",
        "Answered per_2",
      ])
      expect(delivered[2]).toEqual({ _tag: "Answered", requestID: "per_1", sessionID: "ses_a", choice: "once", by: "ann", channel: "cli" })
    }),
  )

  scoped("always:pattern saves what it showed, with who, channel and no end", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      const saved = yield* PermissionSaved.Service
      const fiber = yield* waiting(edit("per_1", ["src/a.ts"]))
      const prompt = yield* approvals.get("per_1")
      const choice = prompt.choices.find((c) => c.id === "always:pattern")!
      expect(choice.saves.map((s) => s.pattern)).toEqual(["*"])
      yield* approvals.answer({ requestID: "per_1", digest: prompt.digest, choice: "always:pattern", channel: "http", by: "bob" })
      expect(yield* Fiber.await(fiber)).toEqual(Exit.void)
      const rows = yield* saved.list()
      expect(rows.map((row) => ({ action: row.action, resource: row.resource, by: row.by, channel: row.channel, until: row.until }))).toEqual([
        { action: "edit", resource: "*", by: "bob", channel: "http", until: undefined },
      ])
    }),
  )

  scoped("session allows the session's matching asks until it ends or its TTL runs out, and saves nothing", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      const permission = yield* PermissionV2.Service
      const saved = yield* PermissionSaved.Service
      const fiber = yield* waiting(edit("per_1", ["src/a.ts"]))
      const prompt = yield* approvals.get("per_1")
      const session = prompt.choices.find((c) => c.id === "session")!
      expect(session.saves.map((s) => s.pattern)).toEqual(["*"])
      yield* approvals.answer({ requestID: "per_1", digest: prompt.digest, choice: "session", ttlMillis: 60_000, channel: "test" })
      expect(yield* Fiber.await(fiber)).toEqual(Exit.void)
      expect(yield* saved.list()).toEqual([])
      // The same session: allowed; another session: still asks.
      expect((yield* permission.ask(edit("per_2", ["src/other.ts"]))).effect).toBe("allow")
      expect((yield* permission.ask(edit("per_3", ["src/other.ts"], "ses_b"))).effect).toBe("ask")
      yield* TestClock.adjust(59_999)
      expect((yield* permission.check({ sessionID: "ses_a", action: "edit", resources: ["x.ts"] }))).toEqual(["allow"])
      yield* TestClock.adjust(1)
      expect((yield* permission.check({ sessionID: "ses_a", action: "edit", resources: ["x.ts"] }))).toEqual(["ask"])
    }),
  )

  scoped("a session answer releases the session's other pending asks it covers, not another session's", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      const a = yield* waiting(edit("per_1", ["a.ts"]))
      const b = yield* waiting(edit("per_2", ["b.ts"]))
      const other = yield* waiting(edit("per_3", ["c.ts"], "ses_b"))
      const prompt = yield* approvals.get("per_1")
      yield* approvals.answer({ requestID: "per_1", digest: prompt.digest, choice: "session", channel: "test" })
      expect(yield* Fiber.await(a)).toEqual(Exit.void)
      expect(yield* Fiber.await(b)).toEqual(Exit.void)
      expect(other.unsafePoll()).toBeNull()
      expect((yield* approvals.pending()).map((p) => p.request.id)).toEqual(["per_3"])
    }),
  )

  scoped("an always with a TTL is saved with its end and stops applying then", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      const permission = yield* PermissionV2.Service
      const saved = yield* PermissionSaved.Service
      yield* TestClock.setTime(1_000_000)
      const fiber = yield* waiting(edit("per_1", ["src/a.ts"]))
      const prompt = yield* approvals.get("per_1")
      yield* approvals.answer({
        requestID: "per_1",
        digest: prompt.digest,
        choice: "always:pattern",
        ttlMillis: 5_000,
        channel: "http",
        by: "carol",
      })
      expect(yield* Fiber.await(fiber)).toEqual(Exit.void)
      const rows = yield* saved.list()
      expect(rows.map((row) => [row.resource, row.until, row.by, row.channel])).toEqual([["*", 1_005_000, "carol", "http"]])
      expect((yield* permission.ask(edit("per_2", ["b.ts"]))).effect).toBe("allow")
      yield* TestClock.adjust(4_999)
      expect((yield* permission.ask(edit("per_3", ["b.ts"]))).effect).toBe("allow")
      yield* TestClock.adjust(1)
      expect((yield* permission.ask(edit("per_4", ["b.ts"]))).effect).toBe("ask")
      // A later answer without a TTL makes the row permanent (the original row stays, extended).
      // (A file at the top: its directory is the Location, so `always:directory` stands for the pattern `*`.)
      const next = yield* approvals.get("per_4")
      const always = Approvals.replyChoice(next, "always")!
      expect(always.id).toBe("always:directory")
      yield* approvals.answer({ requestID: "per_4", digest: next.digest, choice: always.id, channel: "cli" })
      const after = yield* saved.list()
      expect(after.map((row) => [row.id, row.until, row.channel])).toEqual([[rows[0]!.id, undefined, "cli"]])
      yield* TestClock.adjust(1_000_000)
      expect((yield* permission.ask(edit("per_5", ["b.ts"]))).effect).toBe("allow")
    }),
  )

  // An answer never reaches beyond the rule that asked: every choice says what it grants and saves exactly that.
  const SECRET_RULES: ReadonlyArray<Rule> = [
    { action: "*", resource: "*", effect: "allow" },
    { action: "read", resource: "*.env", effect: "ask", ignore_case: true },
    { action: "read", resource: "*.env.*", effect: "ask", ignore_case: true },
    { action: "external_directory", resource: "*", effect: "ask" },
    { action: "bash", resource: "git push *", effect: "ask" },
  ]
  const cases = [
    {
      name: "a secret-file read",
      input: { action: "read", resources: ["config/.env"], save: ["*"] },
      choices: {
        once: "Allow once (this call only)",
        "always:exact": 'Always allow exactly this: saved, grants read "config/.env" exactly',
        "always:directory": "Always allow in this directory: saved, grants read config/*.env",
        session: "Allow for this session: grants read *.env until the session ends, nothing saved",
        "always:pattern": "Always allow this pattern: saved, grants read *.env",
        reject: "Reject",
      },
      saves: {
        "always:exact": [Wildcard.literal("config/.env")],
        "always:directory": [Wildcard.literal("config/") + "*.env"],
        "always:pattern": ["*.env"],
      },
      // Another secret file of another kind, and one the `*.env` pattern matches only ignoring case.
      still: ["config/.env.production", "src/.env.local", "config/.ENV"],
    },
    {
      name: "an outside-directory ask",
      input: { action: "external_directory", resources: ["/srv/outside/*"], save: ["/srv/outside/*"] },
      choices: {
        once: "Allow once (this call only)",
        "always:exact": 'Always allow exactly this: saved, grants external_directory "/srv/outside/*" exactly',
        session:
          "Allow for this session: grants external_directory /srv/outside/* until the session ends, nothing saved",
        "always:pattern": "Always allow this pattern: saved, grants external_directory /srv/outside/*",
        reject: "Reject",
      },
      saves: {
        "always:exact": [Wildcard.literal("/srv/outside/*")],
        "always:pattern": ["/srv/outside/*"],
      },
      still: ["/srv/elsewhere/*"],
    },
    {
      name: "a bash ask whose tool offered a wider pattern than the rule",
      input: { action: "bash", resources: ["git push origin main"], save: ["git *"] },
      choices: {
        once: "Allow once (this call only)",
        "always:exact": 'Always allow exactly this: saved, grants bash "git push origin main" exactly',
        session: "Allow for this session: grants bash git push * until the session ends, nothing saved",
        "always:pattern": "Always allow this pattern: saved, grants bash git push *",
        reject: "Reject",
      },
      saves: {
        "always:exact": [Wildcard.literal("git push origin main")],
        "always:pattern": ["git push *"],
      },
      // Everything else of bash is allowed by the rules; what matters is that `git *` was never saved.
      still: [],
    },
  ] as const
  for (const example of cases) {
    for (const scope of Object.keys(example.choices).filter((id) => id !== "once" && id !== "reject")) {
      it.scoped(`${example.name}: ${scope} is labelled with what it grants and saves exactly that`, () =>
        Effect.gen(function* () {
          const directory = yield* tempDir()
          const context = yield* Layer.build(stack(directory))
          yield* Effect.gen(function* () {
            yield* (yield* agentControl)("test", SECRET_RULES)
            yield* (yield* SessionV2.Service).create({ id: "ses_a", agent: "test" })
            const approvals = yield* Approvals.Service
            const permission = yield* PermissionV2.Service
            const saved = yield* PermissionSaved.Service
            const fiber = yield* waiting({ id: "per_1", sessionID: "ses_a", ...example.input })
            const prompt = yield* approvals.get("per_1")
            // Narrowest first, each label naming the pattern and how long it holds.
            expect(Object.fromEntries(prompt.choices.map((choice) => [choice.id, choice.label]))).toEqual(example.choices)
            expect(prompt.choices.map((choice) => choice.id)).toEqual(Object.keys(example.choices))
            yield* approvals.answer({ requestID: "per_1", digest: prompt.digest, choice: scope, channel: "test" })
            expect(yield* Fiber.await(fiber)).toEqual(Exit.void)
            const rows = yield* saved.list()
            const expected = (example.saves as Record<string, ReadonlyArray<string>>)[scope] ?? []
            expect(rows.map((row) => row.resource).sort()).toEqual([...expected].sort())
            expect(rows.map((row) => row.resource)).not.toContain("*")
            let n = 2
            for (const resource of example.still) {
              const asked = yield* permission.ask({ id: `per_${n++}`, sessionID: "ses_a", ...example.input, resources: [resource] })
              expect(asked.effect).toBe("ask")
            }
          }).pipe(Effect.provide(context))
        }),
      )
    }
  }

  for (const [scope, allowed, asks] of [
    ["always:exact", ["src/x/a.ts", "lib/b.ts"], ["src/x/c.ts", "lib/c.ts"]],
    ["always:directory", ["src/x/c.ts", "src/x/y/z.ts", "lib/c.ts"], ["src/a.ts", "other/b.ts"]],
    ["always:pattern", ["src/a.ts", "anything/else.ts"], []],
  ] as const) {
    scoped(`${scope} saves exactly what its choice showed, and allows exactly that`, () =>
      Effect.gen(function* () {
        const approvals = yield* Approvals.Service
        const permission = yield* PermissionV2.Service
        const saved = yield* PermissionSaved.Service
        const fiber = yield* waiting(edit("per_1", ["src/x/a.ts", "lib/b.ts"]))
        const prompt = yield* approvals.get("per_1")
        const choice = prompt.choices.find((c) => c.id === scope)!
        const shown = {
          "always:exact": [Wildcard.literal("src/x/a.ts"), Wildcard.literal("lib/b.ts")],
          "always:directory": [Wildcard.literal("src/x/") + "*", Wildcard.literal("lib/") + "*"],
          "always:pattern": ["*"],
        }[scope]
        expect(choice.saves.map((s) => s.pattern)).toEqual(shown)
        expect(choice.where).toEqual(prompt.request.always!.scope)
        yield* approvals.answer({ requestID: "per_1", digest: prompt.digest, choice: scope, channel: "test" })
        expect(yield* Fiber.await(fiber)).toEqual(Exit.void)
        const rows = yield* saved.list()
        expect(new Set(rows.map((row) => row.resource))).toEqual(new Set(choice.saves.map((s) => s.pattern)))
        expect(rows.every((row) => row.action === "edit" && row.directory === choice.where!.directory)).toBe(true)
        let n = 2
        for (const resource of allowed) expect((yield* permission.ask(edit(`per_${n++}`, [resource]))).effect).toBe("allow")
        for (const resource of asks) expect((yield* permission.ask(edit(`per_${n++}`, [resource]))).effect).toBe("ask")
      }),
    )
  }

  scoped("a protected_path ask offers only once and reject; an unresolved command no exact or directory", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      const permission = yield* PermissionV2.Service
      yield* permission.ask({ id: "per_p", sessionID: "ses_a", action: "protected_path", resources: [".git/config"], save: ["*"] })
      expect((yield* approvals.get("per_p")).choices.map((c) => c.id)).toEqual(["once", "reject"])
      yield* permission.ask({
        id: "per_b",
        sessionID: "ses_a",
        action: "bash",
        resources: [`${PermissionV2.UNRESOLVED_PREFIX}eval "$x"`],
        save: [`${PermissionV2.UNRESOLVED_PREFIX}eval *`],
      })
      expect((yield* approvals.get("per_b")).choices.map((c) => c.id)).toEqual(["once", "session", "always:pattern", "reject"])
    }),
  )

  scoped(
    "an ask nobody answers before permission.ask_timeout fails the call as timed out and publishes Expired",
    () =>
      Effect.gen(function* () {
        const approvals = yield* Approvals.Service
        const permission = yield* PermissionV2.Service
        const events = yield* EventV2.Service
        const before = yield* events.subscribers(PermissionV2.Event.Asked)
        const stream = yield* Effect.fork(Stream.runCollect(approvals.prompts().pipe(Stream.take(4))))
        while ((yield* events.subscribers(PermissionV2.Event.Asked)) === before) yield* Effect.yieldNow()
        const fiber = yield* waiting(edit("per_1", ["a.ts"]))
        yield* permission.ask(edit("per_2", ["b.ts"], "ses_b"))
        const prompt = yield* approvals.get("per_1")
        expect(prompt.deadline).toBe(prompt.askedAt + 1_000)
        yield* TestClock.adjust(999)
        expect(fiber.unsafePoll()).toBeNull()
        yield* TestClock.adjust(1)
        const exit = yield* Fiber.await(fiber)
        const error = failureOf(exit)
        expect(error).toBeInstanceOf(Approvals.TimedOutError)
        expect(PermissionV2.toToolFailure(error as Approvals.TimedOutError).message).toBe(
          "Approval timed out: nobody answered the permission request for edit within 1000 ms.",
        )
        expect(yield* approvals.pending()).toEqual([])
        const late = yield* Effect.flip(
          approvals.answer({ requestID: "per_1", digest: prompt.digest, choice: "once", channel: "http" }),
        )
        expect(late).toBeInstanceOf(Approvals.AlreadyAnsweredError)
        const delivered = Chunk.toArray(yield* Fiber.join(stream)).map((event) =>
          event._tag === "Asked" ? `Asked ${event.prompt.request.id}` : `${event._tag} ${event.requestID}`,
        )
        expect(delivered.slice(0, 2)).toEqual(["Asked per_1", "Asked per_2"])
        // Both were asked at the same instant, so both expire (an ask without a waiter too).
        expect(delivered.slice(2).sort()).toEqual(["Expired per_1", "Expired per_2"])
      }),
    { permission: { ask_timeout: 1_000 } },
  )

  scoped("an ask raised by a tool call shows the call exactly, and its digest covers the input and the definition", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      const input = { path: "src/a.ts", content: "one\n" }
      yield* waiting(fromCall("per_1", input))
      const prompt = yield* approvals.get("per_1")
      const definition = Approvals.definitionDigest(Tool.definition("write", WRITE))
      expect(prompt.tool).toEqual({ name: "write", callID: "call_w", input, definition })
      expect(prompt.tool!.input).toBe(input)
      expect(prompt.digest).toBe(Approvals.digest(prompt.request, { name: "write", definition, input }))
      // The request keeps only the call's ids: the input is shown once, in `tool`.
      expect(prompt.request.source).toEqual({ type: "tool", messageID: "msg_w", callID: "call_w" })
      expect(JSON.stringify(prompt.request)).not.toContain("one\\n")
      // The prompt's JSON (HTTP, SSE) carries the tool call.
      expect(Schema.encodeSync(Approvals.Prompt)(prompt).tool).toEqual({ name: "write", callID: "call_w", input, definition })
      // The journal's ask names the call.
      const journal = yield* DecisionJournal.Service
      const asked = (yield* journal.query({ projectID: "global" })).find((entry) => entry.kind === "asked")!
      expect(asked.detail).toMatchObject({ digest: prompt.digest, tool: { name: "write", callID: "call_w" } })
    }),
  )

  it("describeTool shows the call and every input property, escaped; nothing for an ask without a call", () => {
    const tool = {
      name: "write",
      callID: "call_1",
      input: { path: "a\u202e.txt", content: "one\n\x1b[2Jtwo", mode: 420, tags: ["x"] },
      definition: "d",
    }
    expect(Approvals.describeTool({ tool })).toEqual([
      "tool: write (call call_1)",
      "input:",
      '  path: "a\\u202e.txt"',
      '  content: "one\\n\\x1b[2Jtwo"',
      "  mode: 420",
      '  tags: ["x"]',
    ])
    expect(Approvals.describeTool({ tool: { ...tool, input: "raw" } })).toEqual(["tool: write (call call_1)", 'input: "raw"'])
    expect(Approvals.describeTool({})).toEqual([])
  })

  scoped("two asks that differ only in the tool input or the tool's definition have different digests", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      yield* waiting(fromCall("per_1", { path: "src/a.ts", content: "one\n" }))
      yield* waiting(fromCall("per_2", { path: "src/a.ts", content: "two\n" }))
      yield* waiting(fromCall("per_3", { path: "src/a.ts", content: "one\n" }, writeTool("Write a file, anywhere")))
      yield* waiting(fromCall("per_4", { content: "one\n", path: "src/a.ts" }))
      const [one, two, redefined, reordered] = yield* Effect.forEach(["per_1", "per_2", "per_3", "per_4"], approvals.get)
      // Same action, resources and saves; only the input (two) or the description (redefined) differs.
      expect(one!.request.resources).toEqual(two!.request.resources)
      expect(new Set([one!.digest, two!.digest, redefined!.digest]).size).toBe(3)
      expect(redefined!.tool!.definition).not.toBe(one!.tool!.definition)
      // The canonical JSON of the input: key order does not matter.
      expect(reordered!.digest).toBe(one!.digest)
    }),
  )

  scoped("an answer naming the digest of a prompt whose tool input differed is refused and changes nothing", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      const permission = yield* PermissionV2.Service
      const saved = yield* PermissionSaved.Service
      const first = yield* waiting(fromCall("per_1", { path: "src/a.ts", content: "one\n" }, WRITE, "call_1"))
      const second = yield* waiting(fromCall("per_2", { path: "src/a.ts", content: "two\n" }, WRITE, "call_2"))
      const shown = yield* approvals.get("per_1")
      const stale = yield* Effect.flip(
        approvals.answer({ requestID: "per_2", digest: shown.digest, choice: "always:pattern", channel: "http" }),
      )
      expect(stale).toEqual(new Approvals.DigestMismatchError({ requestID: "per_2" }))
      const inProcess = yield* Effect.flip(permission.reply({ requestID: "per_2", reply: "always", digest: shown.digest }))
      expect(inProcess).toBeInstanceOf(Approvals.DigestMismatchError)
      expect((yield* approvals.pending()).map((prompt) => prompt.request.id)).toEqual(["per_1", "per_2"])
      expect(yield* saved.list()).toEqual([])
      expect(first.unsafePoll()).toBeNull()
      expect(second.unsafePoll()).toBeNull()
      yield* approvals.answer({ requestID: "per_1", digest: shown.digest, choice: "once", channel: "http" })
      expect(yield* Fiber.await(first)).toEqual(Exit.void)
      expect(second.unsafePoll()).toBeNull()
    }),
  )

  scoped("an ask raised outside a tool call has no tool, and its digest covers no call", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      yield* waiting(edit("per_1", ["src/a.ts"]))
      // A source without the call (a caller that only knows the ids) shows no tool either.
      yield* waiting({ ...edit("per_2", ["src/a.ts"]), source: { type: "tool", messageID: "msg_x", callID: "call_x" } })
      for (const id of ["per_1", "per_2"]) {
        const prompt = yield* approvals.get(id)
        expect("tool" in prompt).toBe(false)
        expect(prompt.digest).toBe(Approvals.digest(prompt.request, undefined))
      }
    }),
  )

  it.scoped("an edit's prompt carries the diff it would make; answering once runs the edit", () =>
    Effect.gen(function* () {
      const directory = yield* tempDir()
      const data = yield* tempDir("toolgate-data-")
      fs.writeFileSync(path.join(directory, "hello.txt"), "before\nrest\n")
      const layer = Core.layerLocation({
        directory,
        discover: false,
        config: { agents: { build: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] } } },
      }).pipe(Layer.provideMerge(Core.layerProcess({ data, memoryDatabase: true })))
      const context = yield* Layer.build(layer)
      yield* Effect.provide(
        Effect.gen(function* () {
          const approvals = yield* Approvals.Service
          const sessions = yield* SessionV2.Service
          const registry = yield* ToolRegistry.Service
          yield* sessions.create({ id: "ses_e", agent: "build" })
          const turn = yield* registry.materialize()
          const input = { path: "hello.txt", oldString: "before", newString: "after" }
          const settled = yield* Effect.fork(
            turn.settle({ sessionID: "ses_e", agent: "build", assistantMessageID: "msg_e", call: { id: "call_e", name: "edit", input } }),
          )
          const asked = yield* approvals.prompts({ sessionID: "ses_e" }).pipe(
            Stream.filter((event) => event._tag === "Asked" && event.prompt.request.action === "edit"),
            Stream.runHead,
          )
          const prompt = (Option.getOrThrow(asked) as Extract<Approvals.PromptEvent, { _tag: "Asked" }>).prompt
          expect(prompt.diff).toContain("-before\n+after")
          // The tool call as the materialization settled it, with the definition it advertised.
          const advertised = turn.definitions.find((definition) => definition.name === "edit")!
          expect(prompt.tool).toEqual({
            name: "edit",
            callID: "call_e",
            input,
            definition: Approvals.definitionDigest(advertised),
          })
          expect(prompt.diff).toMatch(/--- hello\.txt\n\+\+\+ hello\.txt/)
          expect(fs.readFileSync(path.join(directory, "hello.txt"), "utf8")).toBe("before\nrest\n")
          yield* approvals.answer({ requestID: prompt.request.id, digest: prompt.digest, choice: "once", channel: "test" })
          const result = yield* Fiber.join(settled)
          expect(result.result).toMatchObject({ type: "text" })
          expect(fs.readFileSync(path.join(directory, "hello.txt"), "utf8")).toBe("after\nrest\n")
        }),
        context,
      )
    }),
  )

  scoped("the journal records each ask, answer (who, channel, scope, what it saved), release and cascade", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      const journal = yield* DecisionJournal.Service
      const a = yield* waiting(edit("per_1", ["src/a.ts"]))
      const b = yield* waiting(edit("per_2", ["src/b.ts"]))
      const c = yield* waiting(edit("per_3", ["c.ts"], "ses_b"))
      const d = yield* waiting(edit("per_4", ["d.ts"], "ses_b"))
      const first = yield* approvals.get("per_1")
      yield* approvals.answer({ requestID: "per_1", digest: first.digest, choice: "always:directory", channel: "http", by: "dan" })
      const third = yield* approvals.get("per_3")
      yield* approvals.answer({ requestID: "per_3", digest: third.digest, choice: "reject", channel: "cli" })
      for (const fiber of [a, b, c, d]) yield* Fiber.await(fiber)
      const entries = yield* journal.query({ projectID: "global" })
      const summary = entries.map((entry) => `${entry.kind} ${entry.requestID}`)
      expect(summary.filter((line) => line.startsWith("asked")).sort()).toEqual(["asked per_1", "asked per_2", "asked per_3", "asked per_4"])
      // Each ask's evaluation is journaled too (decision-journal-permission.test.ts checks their content).
      expect(summary.filter((line) => line.startsWith("evaluated")).sort()).toEqual(["evaluated per_1", "evaluated per_2", "evaluated per_3", "evaluated per_4"])
      expect(summary.filter((line) => !line.startsWith("asked") && !line.startsWith("evaluated"))).toEqual([
        "answered per_1",
        "auto-resolved per_2",
        "answered per_3",
        "cascaded per_4",
      ])
      const answered = entries.find((entry) => entry.kind === "answered" && entry.requestID === "per_1")!
      expect(answered.detail).toMatchObject({
        choice: "always:directory",
        lifetime: "always",
        scope: "directory",
        channel: "http",
        by: "dan",
        saved: [Wildcard.literal("src/") + "*"],
      })
      const asked = entries.find((entry) => entry.kind === "asked" && entry.requestID === "per_1")!
      expect(asked.detail).toMatchObject({ digest: first.digest, choices: first.choices.map((choice) => choice.id) })
      expect(entries.find((entry) => entry.kind === "auto-resolved")!.detail).toMatchObject({ cause: "per_1" })
      expect(entries.find((entry) => entry.kind === "cascaded")!.detail).toEqual({ cause: "per_3", choice: "cascade" })
    }),
  )
})
