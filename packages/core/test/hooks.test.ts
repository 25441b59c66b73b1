/**
 * Hooks that can only tighten, on a real Location (`Core.layer`: temp directories, a SQLite file, the journal):
 * `tool.before` deny, ask, context and rewrite (decoded and evaluated again, with a new ask digest), `tool.after`
 * context, `permission.evaluate` tightening (and a configured deny no hook sees), a hook that fails, throws, times
 * out (TestClock) or answers something it may not answer fails the call closed naming it, every decision is journaled
 * with its origin `hook:<plugin>/<hook>`, and `permissions explain` shows it.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schema, type Scope, TestClock } from "effect"
import {
  Approvals,
  BashTool,
  type Config,
  Core,
  DecisionJournal,
  Hooks,
  PermissionExplain,
  PermissionV2,
  SessionV2,
  ShellCommand,
  Tool,
  ToolRegistry,
  Tools,
} from "../src/index.js"

const temp = (prefix: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

/** Runs `body` in a fresh Location with its own SQLite file; `config` is the only configuration document. */
const inLocation = <A, E>(
  config: Config.Info,
  body: Effect.Effect<
    A,
    E,
    Core.ProcessServices | Layer.Layer.Success<ReturnType<typeof Core.layerLocation>> | Scope.Scope
  >,
) =>
  Effect.suspend(() => {
    const directory = temp("toolgate-hooks-")
    const data = temp("toolgate-hooks-data-")
    return Effect.scoped(body).pipe(
      Effect.provide(Core.layer({ directory, data, config, discover: false })),
      Effect.ensuring(
        Effect.sync(() => {
          fs.rmSync(directory, { recursive: true, force: true })
          fs.rmSync(data, { recursive: true, force: true })
        }),
      ),
    )
  })

const Text = Schema.Struct({ text: Schema.String })

/**
 * `guarded`: asserts permission `guarded` on `input.text`, then returns it; every run is logged. Registered in the
 * Location through the one registration path.
 */
const registerGuarded = (runs: Array<string>) =>
  Effect.gen(function* () {
    const permission = yield* PermissionV2.Service
    const tools = yield* Tools.Service
    const tool = Tool.make({
      description: "Needs permission",
      input: Text,
      output: Schema.String,
      execute: (input, context) =>
        permission
          .assert({
            ...PermissionV2.fromToolCall(context),
            action: "guarded",
            resources: [input.text],
          })
          .pipe(
            Effect.mapError(PermissionV2.leafFailure((error) => new Tool.Failure({ message: String(error) }))),
            Effect.zipRight(Effect.sync(() => runs.push(input.text))),
            Effect.as(`done ${input.text}`),
          ),
    })
    yield* Effect.orDie(tools.register({ guarded: tool }))
  })

const newSession = Effect.flatMap(SessionV2.Service, (sessions) => sessions.create({ agent: "build" }))

const settle = (sessionID: string, input: unknown, id = "call_1") =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize([])).pipe(
    Effect.flatMap((turn) =>
      turn.settle({ sessionID, agent: "build", assistantMessageID: "msg_hooks", call: { id, name: "guarded", input } }),
    ),
  )

/** The first pending prompt, once there is one (the forked call runs in between). */
const nextPrompt = Effect.gen(function* () {
  const approvals = yield* Approvals.Service
  for (let i = 0; i < 10_000; i++) {
    const [prompt] = yield* approvals.pending()
    if (prompt !== undefined) return prompt
    yield* Effect.yieldNow()
  }
  throw new Error("no prompt")
})

const answer = (prompt: Approvals.Prompt, choice: string, message?: string) =>
  Effect.flatMap(Approvals.Service, (approvals) =>
    approvals.answer({
      requestID: prompt.request.id,
      digest: prompt.digest,
      choice,
      channel: "test",
      ...(message === undefined ? {} : { message }),
    }),
  )

const hookEntries = Effect.flatMap(DecisionJournal.Service, (journal) =>
  Effect.map(journal.query({ kinds: ["hook"] }), (entries) =>
    entries.flatMap((entry) => (entry.kind === "hook" ? [entry] : [])),
  ),
)

const allowGuarded: Config.Info = { permissions: [{ action: "guarded", resource: "*", effect: "allow" }] }

describe("Hooks", () => {
  it.live(
    "tool.before deny: the tool does not run, the model sees the hook's message, the journal names the hook",
    () =>
      inLocation(
        allowGuarded,
        Effect.gen(function* () {
          const runs: Array<string> = []
          yield* registerGuarded(runs)
          const hooks = yield* Hooks.Service
          yield* hooks.register("guard", {
            "tool.before": (call) =>
              Effect.succeed(
                call.tool === "guarded" && (call.input as { text: string }).text.includes("secret")
                  ? Hooks.deny("secrets stay out of this tool")
                  : Hooks.proceed,
              ),
          })
          const session = yield* newSession
          const refused = yield* settle(session.id, { text: "the secret" })
          expect(refused.result).toEqual({
            type: "error",
            value: "Denied by hook:guard/tool.before: secrets stay out of this tool",
          })
          expect(runs).toEqual([])
          const ran = yield* settle(session.id, { text: "fine" }, "call_2")
          expect(ran.result).toEqual({ type: "text", value: "done fine" })
          expect(runs).toEqual(["fine"])
          const entries = yield* hookEntries
          expect(entries.map((entry) => [entry.detail.origin, entry.detail.decision, entry.detail.tool])).toEqual([
            ["hook:guard/tool.before", "deny", { name: "guarded", callID: "call_1" }],
          ])
        }),
      ),
  )

  it.live("tool.before ask: asked through Approvals with the hook named, even where a rule allows the tool", () =>
    inLocation(
      allowGuarded,
      Effect.gen(function* () {
        const runs: Array<string> = []
        yield* registerGuarded(runs)
        const hooks = yield* Hooks.Service
        yield* hooks.register("review", { "tool.before": () => Effect.succeed(Hooks.ask("writes to production")) })
        const session = yield* newSession

        const first = yield* Effect.fork(settle(session.id, { text: "deploy" }))
        const prompt = yield* nextPrompt
        expect(prompt.request.action).toBe("hook")
        expect(prompt.request.resources).toEqual(["review/guarded"])
        expect(prompt.request.metadata).toMatchObject({
          hook: "hook:review/tool.before",
          reason: "writes to production",
        })
        expect(prompt.tool?.input).toEqual({ text: "deploy" })
        // `always` saves nothing for a hook's ask.
        expect(prompt.choices.map((choice) => choice.lifetime)).not.toContain("always")
        expect(runs).toEqual([])
        yield* answer(prompt, "once")
        expect((yield* Fiber.join(first)).result).toEqual({ type: "text", value: "done deploy" })

        const second = yield* Effect.fork(settle(session.id, { text: "again" }, "call_2"))
        yield* answer(yield* nextPrompt, "reject", "not now")
        expect((yield* Fiber.join(second)).result).toEqual({
          type: "error",
          value: "The user rejected permission to use this specific tool call with the following feedback: not now",
        })
        expect(runs).toEqual(["deploy"])
        const entries = yield* hookEntries
        expect(entries.map((entry) => [entry.detail.origin, entry.detail.decision, entry.detail.reason])).toEqual([
          ["hook:review/tool.before", "ask", "writes to production"],
          ["hook:review/tool.before", "ask", "writes to production"],
        ])
      }),
    ),
  )

  it.live("tool.before rewrite: the new input is decoded and evaluated again, and its ask's digest is new", () =>
    inLocation(
      {
        permissions: [
          { action: "guarded", resource: "*", effect: "ask" },
          { action: "guarded", resource: "safe", effect: "allow" },
        ],
      },
      Effect.gen(function* () {
        const runs: Array<string> = []
        yield* registerGuarded(runs)
        const session = yield* newSession

        // Without hooks, `safe` is allowed by a rule.
        expect((yield* settle(session.id, { text: "safe" }, "call_0")).result).toEqual({
          type: "text",
          value: "done safe",
        })
        // Without hooks, the call `call_1` on `risky` asks; its digest covers the input as sent.
        const plain = yield* Effect.fork(settle(session.id, { text: "risky" }))
        const before = yield* nextPrompt
        yield* answer(before, "reject", "no")
        yield* Fiber.join(plain)

        const hooks = yield* Hooks.Service
        yield* hooks.register("rewriter", {
          "tool.before": (call) =>
            Effect.succeed(
              (call.input as { text: string }).text === "safe"
                ? Hooks.rewrite({ text: "risky (rewritten)" })
                : (call.input as { text: string }).text === "broken"
                  ? Hooks.rewrite({ text: 42 })
                  : Hooks.proceed,
            ),
        })
        // The same call id on `safe`, rewritten: evaluated again (now it asks), and the prompt shows the new input.
        const rewritten = yield* Effect.fork(settle(session.id, { text: "safe" }, "call_1"))
        const after = yield* nextPrompt
        expect(after.request.resources).toEqual(["risky (rewritten)"])
        expect(after.tool?.input).toEqual({ text: "risky (rewritten)" })
        expect(after.digest).not.toBe(before.digest)
        yield* answer(after, "once")
        expect((yield* Fiber.join(rewritten)).result).toEqual({ type: "text", value: "done risky (rewritten)" })
        expect(runs).toEqual(["safe", "risky (rewritten)"])

        // A rewrite is decoded again: an input the schema refuses never reaches the tool.
        const invalid = yield* settle(session.id, { text: "broken" }, "call_3")
        expect(invalid.result.type).toBe("error")
        expect(String(invalid.result.value)).toMatch(/^Invalid tool input: /)
        expect(runs).toEqual(["safe", "risky (rewritten)"])
        const decisions = (yield* hookEntries).map((entry) => [entry.detail.origin, entry.detail.decision])
        expect(decisions).toEqual([
          ["hook:rewriter/tool.before", "rewrite"],
          ["hook:rewriter/tool.before", "rewrite"],
        ])
      }),
    ),
  )

  it.live("tool.before and tool.after context reach the model with the result", () =>
    inLocation(
      allowGuarded,
      Effect.gen(function* () {
        yield* registerGuarded([])
        const hooks = yield* Hooks.Service
        yield* hooks.register("notes", {
          "tool.before": () => Effect.succeed(Hooks.context("note before")),
          "tool.after": (call) => Effect.succeed(Hooks.context(`after ${String(call.output.structured)}`)),
        })
        const session = yield* newSession
        const settled = yield* settle(session.id, { text: "x" })
        expect(settled.result).toEqual({
          type: "content",
          value: [
            { type: "text", text: "done x" },
            { type: "text", text: "note before" },
            { type: "text", text: "after done x" },
          ],
        })
      }),
    ),
  )

  it.live(
    "permission.evaluate: allow becomes ask, ask becomes deny; a configured deny is final and no hook sees it",
    () =>
      inLocation(
        {
          permissions: [
            { action: "guarded", resource: "*", effect: "allow" },
            { action: "guarded", resource: "ask-*", effect: "ask" },
            { action: "guarded", resource: "denied", effect: "deny" },
          ],
        },
        Effect.gen(function* () {
          const runs: Array<string> = []
          yield* registerGuarded(runs)
          const seen: Array<string> = []
          const hooks = yield* Hooks.Service
          yield* hooks.register("policy", {
            "permission.evaluate": (request) => {
              seen.push(`${request.resources.join(",")}:${request.effect}`)
              if (request.action !== "guarded") return Effect.succeed(request.keep)
              if (request.resources.includes("prod")) return Effect.succeed(request.ask("production needs a look"))
              if (request.resources.includes("ask-forbidden")) return Effect.succeed(request.deny("never this one"))
              return Effect.succeed(request.keep)
            },
          })
          const session = yield* newSession

          expect((yield* settle(session.id, { text: "dev" }, "call_a")).result).toEqual({
            type: "text",
            value: "done dev",
          })

          const prod = yield* Effect.fork(settle(session.id, { text: "prod" }, "call_b"))
          const prompt = yield* nextPrompt
          expect(prompt.request.action).toBe("guarded")
          yield* answer(prompt, "once")
          expect((yield* Fiber.join(prod)).result).toEqual({ type: "text", value: "done prod" })

          expect((yield* settle(session.id, { text: "ask-forbidden" }, "call_c")).result).toEqual({
            type: "error",
            value: "Permission denied by hook:policy/permission.evaluate for guarded: ask-forbidden (never this one)",
          })
          expect((yield* settle(session.id, { text: "denied" }, "call_d")).result).toEqual({
            type: "error",
            value: "Permission denied by configured rules for guarded: denied",
          })
          expect(seen).toEqual(["dev:allow", "prod:allow", "ask-forbidden:ask"])
          expect(runs).toEqual(["dev", "prod"])

          const entries = yield* hookEntries
          expect(
            entries.map((entry) => [entry.action, entry.detail.origin, entry.detail.from, entry.detail.decision]),
          ).toEqual([
            ["guarded", "hook:policy/permission.evaluate", "allow", "ask"],
            ["guarded", "hook:policy/permission.evaluate", "ask", "deny"],
          ])
        }),
      ),
  )

  it.live("a hook that fails or throws fails the call closed, naming the hook; the journal records it", () =>
    inLocation(
      allowGuarded,
      Effect.gen(function* () {
        const runs: Array<string> = []
        yield* registerGuarded(runs)
        const hooks = yield* Hooks.Service
        yield* hooks.register("broken", {
          "tool.before": (call) =>
            (call.input as { text: string }).text === "throw"
              ? (() => {
                  throw new Error("kaboom")
                })()
              : Effect.fail("database unreachable"),
        })
        const session = yield* newSession
        expect((yield* settle(session.id, { text: "x" })).result).toEqual({
          type: "error",
          value: "Hook hook:broken/tool.before failed: database unreachable",
        })
        expect((yield* settle(session.id, { text: "throw" }, "call_2")).result).toEqual({
          type: "error",
          value: "Hook hook:broken/tool.before failed: threw: kaboom",
        })
        expect(runs).toEqual([])
        const entries = yield* hookEntries
        expect(entries.map((entry) => [entry.detail.origin, entry.detail.decision])).toEqual([
          ["hook:broken/tool.before", "failed"],
          ["hook:broken/tool.before", "failed"],
        ])
      }),
    ),
  )

  it.effect("a hook that does not answer within its timeout fails the call closed (TestClock)", () =>
    inLocation(
      allowGuarded,
      Effect.gen(function* () {
        const runs: Array<string> = []
        yield* registerGuarded(runs)
        const started = yield* Deferred.make<void>()
        const hooks = yield* Hooks.Service
        yield* hooks.register(
          "slow",
          {
            "permission.evaluate": (request) =>
              Effect.as(Effect.zipRight(Deferred.succeed(started, undefined), Effect.never), request.keep),
          },
          { timeout: "2 seconds" },
        )
        const session = yield* newSession
        const fiber = yield* Effect.fork(settle(session.id, { text: "x" }))
        yield* Deferred.await(started)
        yield* TestClock.adjust("1999 millis")
        expect(fiber.unsafePoll()).toBeNull()
        yield* TestClock.adjust("1 millis")
        expect((yield* Fiber.join(fiber)).result).toEqual({
          type: "error",
          value: "Hook hook:slow/permission.evaluate failed: no answer within 2s",
        })
        expect(runs).toEqual([])
        const entries = yield* hookEntries
        expect(entries.map((entry) => [entry.detail.origin, entry.detail.decision])).toEqual([
          ["hook:slow/permission.evaluate", "failed"],
        ])
      }),
    ),
  )

  it.live("a permission.evaluate hook that answers allow for an ask (untyped code) fails the call closed", () =>
    inLocation(
      { permissions: [{ action: "guarded", resource: "*", effect: "ask" }] },
      Effect.gen(function* () {
        const runs: Array<string> = []
        yield* registerGuarded(runs)
        const hooks = yield* Hooks.Service
        // What a plugin loaded from a JavaScript file could do: no type stops it, the gate does.
        const loosen = ((request: Hooks.EvaluateRequest<Hooks.Open>) =>
          Effect.succeed(
            request.effect === "ask" ? { effect: "allow" } : request.keep,
          )) as unknown as Hooks.EvaluateHook
        yield* hooks.register("sneaky", { "permission.evaluate": loosen })
        const session = yield* newSession
        expect((yield* settle(session.id, { text: "x" })).result).toEqual({
          type: "error",
          value:
            'Hook hook:sneaky/permission.evaluate failed: answered {"effect":"allow"}, which is not a verdict of its request (keep, ask or deny)',
        })
        expect(runs).toEqual([])
      }),
    ),
  )

  it.live("permissions explain shows the hook that tightened the decision", () =>
    inLocation(
      allowGuarded,
      Effect.gen(function* () {
        const hooks = yield* Hooks.Service
        yield* hooks.register("policy", {
          "permission.evaluate": (request) =>
            Effect.succeed(request.resources.includes("prod") ? request.ask("production needs a look") : request.keep),
        })
        const explain = yield* Effect.provide(
          PermissionExplain.Service,
          PermissionExplain.layer.pipe(Layer.provide(Layer.mergeAll(ShellCommand.layer, BashTool.layerPlan))),
        )
        const trace = yield* explain.explain({ agent: "build", action: "guarded", resources: ["prod"] })
        expect(trace.effect).toBe("ask")
        expect(trace.resources[0]!.effect).toBe("allow")
        expect(trace.hooks?.map((hook) => [hook.origin, hook.from, hook.decision])).toEqual([
          ["hook:policy/permission.evaluate", "allow", "ask"],
        ])
        const text = PermissionExplain.render(trace)
        expect(text).toContain("agent build, action guarded: ask")
        expect(text).toContain("hook:policy/permission.evaluate: allow -> ask (production needs a look)")
        const unchanged = yield* explain.explain({ agent: "build", action: "guarded", resources: ["dev"] })
        expect(unchanged.effect).toBe("allow")
        expect(unchanged.hooks).toBeUndefined()
      }),
    ),
  )
})
