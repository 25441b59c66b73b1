/**
 * `toolgate permissions explain` reports what the bash leaf asks (docs/shell.md): a property over the shell oracle's
 * generator (`support/shell-oracle/grammar.ts`). For each generated command, the real bash leaf is settled on a real
 * Location (every ask answered once, nothing spawned for real) and `PermissionExplain` plans the same command on the
 * same Location and rules; the leaf's asks must be explain's asking groups, in order and with the same resources, a
 * deny from explain must be the leaf's refusal before any ask, and an allow from explain must run with no ask. Under
 * the built-in `build` and `plan` agents and under a user configuration (`bash * ask`, `ls *` and `git status*`
 * allowed, `rm *` denied).
 */
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, FastCheck as fc, FiberRef, Layer, Queue } from "effect"
import {
  AgentV2,
  ApplicationTools,
  AppProcess,
  BashTool,
  Config,
  Database,
  EventV2,
  Global,
  Location,
  LocationMutation,
  PermissionExplain,
  PermissionSaved,
  PermissionV2,
  ProtectedPath,
  SessionV2,
  ShellCommand,
  ToolOutputStore,
  ToolRegistry,
} from "../src/index.js"
import { Sandbox } from "../src/entry/sandbox.js"
import * as Fixture from "./support/shell-oracle/fixture.js"
import * as Grammar from "./support/shell-oracle/grammar.js"

/** Commands per profile; `TOOLGATE_EXPLAIN_RUNS` raises it, `TOOLGATE_EXPLAIN_SEED` replays a run. */
const RUNS = Number(process.env.TOOLGATE_EXPLAIN_RUNS ?? 60)
const SEED =
  process.env.TOOLGATE_EXPLAIN_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.TOOLGATE_EXPLAIN_SEED)

const USER_RULES: ReadonlyArray<PermissionV2.Rule> = [
  { action: "bash", resource: "*", effect: "ask" },
  { action: "bash", resource: "ls *", effect: "allow" },
  { action: "bash", resource: "git status*", effect: "allow" },
  { action: "bash", resource: "rm *", effect: "deny" },
]

const registry = ToolRegistry.layer.pipe(
  Layer.provide(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
)

/** Which settle a spawn belongs to. */
const CurrentCall = FiberRef.unsafeMake<string | undefined>(undefined)

interface Observed {
  readonly asks: ReadonlyArray<readonly [string, ReadonlyArray<string>]>
  readonly refused: string | undefined
  readonly spawned: boolean
}

/** The leaf and explain on one Location, under the built-in agents and the configuration `entries`. */
const harness = (space: Fixture.Workspace, entries: ReadonlyArray<Config.Entry>) =>
  Effect.gen(function* () {
    const globals = Global.layerWith({
      data: path.join(space.base, "gate", "data"),
      config: path.join(space.base, "gate", "config"),
      tmp: path.join(space.base, "gate", "tmp"),
      home: space.home,
    })
    const place = Layer.mergeAll(
      Location.layer({ directory: space.project }).pipe(Layer.orDie),
      globals,
      Config.layerFromEntries(entries),
      NodeContext.layer,
    ).pipe(Layer.provideMerge(Database.layerMemory))
    const stack = PermissionV2.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(EventV2.layer, AgentV2.layer, SessionV2.layer, PermissionSaved.layer)),
      Layer.provideMerge(place),
    )
    const base = yield* Layer.build(stack)
    const real = Context.get(base, PermissionV2.Service)
    const refusals = new Map<string, string>()
    const spawned = new Set<string>()
    const permission = PermissionV2.Service.of({
      ...real,
      assert: (input) =>
        real.assert(input).pipe(
          Effect.tapError((error) =>
            Effect.sync(() => {
              if (error._tag === "PermissionV2.BlockedError") refusals.set(input.sessionID, error.action)
            }),
          ),
        ),
    })
    const recording = AppProcess.Service.of({
      run: (command) =>
        Effect.flatMap(FiberRef.get(CurrentCall), (call) =>
          Effect.sync(() => {
            if (call !== undefined) spawned.add(call)
            const empty = new Uint8Array()
            return {
              command: AppProcess.describe(command),
              exitCode: 0,
              output: empty,
              stdout: empty,
              stderr: empty,
              outputTruncated: false,
              stdoutTruncated: false,
              stderrTruncated: false,
            }
          }),
        ),
    })
    const context = yield* Layer.build(
      Layer.mergeAll(
        BashTool.layer.pipe(
          Layer.provideMerge(
            Layer.mergeAll(
              registry,
              LocationMutation.layer,
              Layer.succeed(AppProcess.Service, recording),
              ProtectedPath.layer,
              Sandbox.layerNone,
              ToolOutputStore.layerPassthrough,
            ),
          ),
        ),
        PermissionExplain.layer.pipe(
          Layer.provide(
            Layer.mergeAll(
              ShellCommand.layer,
              BashTool.layerPlan.pipe(Layer.provide(LocationMutation.layer)),
              ProtectedPath.layer,
            ),
          ),
        ),
      ).pipe(Layer.provideMerge(Layer.succeedContext(Context.add(base, PermissionV2.Service, permission)))),
    )

    const asks = new Map<string, Array<readonly [string, ReadonlyArray<string>]>>()
    const queue = yield* Context.get(context, EventV2.Service).queue(PermissionV2.Event.Asked)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(queue), (envelope) => {
          const request = envelope.data
          const list = asks.get(request.sessionID) ?? []
          list.push([request.action, request.resources])
          asks.set(request.sessionID, list)
          return Effect.ignore(real.reply({ requestID: request.id, reply: "once" }))
        }),
      ),
    )
    const sessions = Context.get(context, SessionV2.Service)
    const tools = Context.get(context, ToolRegistry.Service)
    const explain = Context.get(context, PermissionExplain.Service)
    let counter = 0

    const leaf = (command: string, agent: string) =>
      Effect.gen(function* () {
        counter += 1
        const sessionID = `ses_explain_${counter}`
        yield* Effect.orDie(sessions.create({ id: sessionID, agent }))
        const turn = yield* tools.materialize()
        const exit = yield* Effect.exit(
          Effect.locally(
            turn.settle({
              sessionID,
              agent,
              assistantMessageID: "msg_explain",
              call: { id: `call_explain_${counter}`, name: "bash", input: { command } },
            }),
            CurrentCall,
            sessionID,
          ),
        )
        if (Exit.isFailure(exit)) return yield* Effect.failCause(exit.cause)
        return {
          asks: asks.get(sessionID) ?? [],
          refused: refusals.get(sessionID),
          spawned: spawned.has(sessionID),
        } satisfies Observed
      })

    return { leaf, explain: (command: string, agent: string) => explain.explain({ agent, action: "bash", command }) }
  })

const PROFILES: ReadonlyArray<readonly [name: string, agent: string, rules: ReadonlyArray<PermissionV2.Rule>]> = [
  ["build", "build", []],
  ["plan", "plan", []],
  ["user configuration", "build", USER_RULES],
]

describe.skipIf(process.platform === "win32")("permissions explain agrees with the bash leaf", () => {
  for (const [name, agent, rules] of PROFILES) {
    it.scopedLive(
      `${name}: on generated commands, explain's asking groups are the leaf's asks and its deny the leaf's refusal`,
      () =>
        Effect.gen(function* () {
          const space = yield* Fixture.workspace
          const entries: ReadonlyArray<Config.Entry> =
            rules.length === 0
              ? []
              : [{ type: "document", path: path.join(space.project, "toolgate.json"), info: { permissions: rules } }]
          const h = yield* harness(space, entries)
          const tally = { allow: 0, ask: 0, deny: 0 }
          const agree = (item: Grammar.Case) =>
            Effect.gen(function* () {
              const trace = yield* Effect.orDie(h.explain(item.text, agent))
              tally[trace.effect] += 1
              const seen = yield* h.leaf(item.text, agent)
              const view = `${item.text}\nexplain: ${trace.effect} ${JSON.stringify(
                (trace.groups ?? []).map((g) => [g.action, g.effect, g.resources.map((r) => r.resource)]),
              )}\nleaf: ${JSON.stringify(seen)}`
              if (trace.effect === "deny") {
                expect(seen.refused, view).toBeDefined()
                expect(seen.asks, view).toEqual([])
                // A denied segment is in the per-segment verdicts; a denied file or directory in its group.
                const denied = [
                  ...(trace.resources.some((r) => r.effect === "deny") ? ["bash"] : []),
                  ...(trace.groups ?? []).filter((g) => g.effect === "deny").map((g) => g.action),
                ]
                expect(denied, view).toContain(seen.refused)
                expect(seen.spawned, view).toBe(false)
                return
              }
              expect(seen.refused, view).toBeUndefined()
              const asking = (trace.groups ?? [])
                .filter((g) => g.effect === "ask")
                .map((g) => [g.action, g.resources.map((r) => r.resource)] as const)
              expect(seen.asks, view).toEqual(asking)
              expect(seen.asks.length === 0, view).toBe(trace.effect === "allow")
              expect(seen.spawned, view).toBe(true)
            })
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(Grammar.cases(space), (item) =>
                Effect.runPromise(agree(item)),
              ),
              { numRuns: RUNS, seed: SEED, endOnFailure: true },
            ),
          )
          console.log(`explain vs leaf (${name}, seed ${SEED}): ${JSON.stringify(tally)}`)
          // The generator reaches asks under every profile; a run of nothing but allows would compare nothing.
          expect(tally.ask).toBeGreaterThan(0)
        }),
      { timeout: 300_000 },
    )
  }
})
