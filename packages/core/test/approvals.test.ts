/**
 * The approval protocol over the real permission stack (SQLite in memory, a real Location, EventV2, SessionV2,
 * PermissionSaved): prompts, digests, choices and what each saves, lifetimes over a TestClock, expiry.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, Layer, Option, Cause, Stream, TestClock, type Scope } from "effect"
import {
  AgentV2,
  Approvals,
  Config,
  Database,
  EventV2,
  Location,
  PermissionSaved,
  PermissionV2,
  SessionV2,
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
        "session",
        "always:exact",
        "always:directory",
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
})
