/**
 * `materialize` on a large registry: 10,000 Location tools (each with its own schema) under 20 visibility rules.
 * Times the first call (which derives every definition), later calls with nothing changed, and the first call
 * after one registration is added and after it is removed, against a full rebuild of the catalogue on every call
 * (`fullRebuild` below), timed in the same run. The full rebuild's first call runs on a second,
 * identical set of tools so that both first calls derive their definitions from scratch. Before timing, the
 * definitions of both are checked to be identical (names, order, content).
 *
 * Times are process CPU time. Run: npx tsx --conditions=@toolgate/source bench/materialize.ts   (NODE_OPTIONS=--expose-gc
 * collects before each first call, so neither pays for the other's garbage; `--gate`: 1,000 tools, 5 rounds, ending
 * with a `GATE` line for scripts/bench-gate.mjs)
 */
import { ApplicationTools, Tool, ToolOutputStore, ToolRegistry } from "@toolgate/core"
import { Effect, Exit, Layer, Schema, Scope } from "effect"
import { report } from "./gate-report.js"

/** `--gate`: 1,000 tools and 5 rounds, ending with a `GATE` line for scripts/bench-gate.mjs. */
const gate = process.argv.includes("--gate")
const TOOLS = gate ? 1_000 : 10_000
const ROUNDS = gate ? 5 : 15

const makeTools = (count = TOOLS): Record<string, Tool.AnyTool> => {
  const tools: Record<string, Tool.AnyTool> = {}
  for (let i = 0; i < count; i++) {
    tools[`tool_${i}`] = Tool.make({
      description: `Tool number ${i}`,
      input: Schema.Struct({
        path: Schema.String,
        limit: Schema.optional(Schema.Number),
        [`field_${i}`]: Schema.Boolean,
      }),
      output: Schema.String,
      execute: () => Effect.succeed("ok"),
    })
  }
  return tools
}

const rules: ReadonlyArray<ToolRegistry.VisibilityRule> = [
  { action: "*", resource: "*", effect: "ask" },
  ...Array.from({ length: 18 }, (_, i) => ({ action: `tool_${i}*`, resource: "src/**", effect: "allow" as const })),
  { action: "tool_9*", resource: "*", effect: "deny" },
]

/** What every materialize did before the catalogue was kept: merge, filter and list all tools. */
const fullRebuild = (
  apps: ReadonlyMap<string, ApplicationTools.Entry>,
  local: ReadonlyMap<string, Tool.AnyTool>,
  permissions: ReadonlyArray<ToolRegistry.VisibilityRule>,
) => {
  const captured = new Map<string, { readonly tool: Tool.AnyTool }>(apps)
  for (const [name, tool] of local) captured.set(name, { tool })
  for (const [name, registration] of captured) {
    if (ToolRegistry.whollyDisabled(Tool.permission(registration.tool, name), permissions)) captured.delete(name)
  }
  return Array.from(captured, ([name, registration]) => Tool.definition(name, registration.tool))
}

/** Process CPU time of `run`, in ms (a loaded machine disturbs it far less than wall time). */
const ms = (run: () => void): number => {
  const start = process.cpuUsage()
  run()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}
const best = (run: () => void): number => {
  run() // warm-up
  let min = Number.POSITIVE_INFINITY
  for (let i = 0; i < ROUNDS; i++) min = Math.min(min, ms(run))
  return min
}

const main = Effect.gen(function* () {
  const registry = yield* ToolRegistry.Service
  const applications = yield* ApplicationTools.Service
  // Warm both paths up (JIT) on a separate small set, so neither first call below pays for the other's warm-up.
  const warm = new Map(Object.entries(makeTools(gate ? 200 : 500)))
  const warmScope = yield* Scope.make()
  yield* Scope.extend(registry.register(Object.fromEntries(warm)), warmScope)
  yield* registry.materialize(rules)
  fullRebuild(applications.entries(), new Map(Object.entries(makeTools(gate ? 200 : 500))), rules)
  yield* Scope.close(warmScope, Exit.void)

  const gc = (globalThis as { gc?: () => void }).gc
  const tools = makeTools()
  const local = new Map(Object.entries(tools))
  yield* registry.register(tools)
  const materialize = () => Effect.runSync(registry.materialize(rules))

  // first calls: both derive 10k definitions
  let turn!: ToolRegistry.Materialization
  gc?.()
  const firstNew = ms(() => (turn = materialize()))
  const baselineLocal = new Map(Object.entries(makeTools()))
  let baseline!: ReadonlyArray<unknown>
  gc?.()
  const firstOld = ms(() => (baseline = fullRebuild(applications.entries(), baselineLocal, rules)))
  const expected = JSON.stringify(fullRebuild(applications.entries(), local, rules))
  if (JSON.stringify(turn.definitions) !== expected) throw new Error("definitions differ from the full rebuild")
  if (baseline.length !== turn.definitions.length) throw new Error("baseline lists a different number of tools")

  const laterNew = best(materialize)
  const laterOld = best(() => fullRebuild(applications.entries(), local, rules))

  // one registration added, then removed: the first call after each change (min over rounds)
  const extra = Tool.make({
    description: "Extra",
    input: Schema.Struct({}),
    output: Schema.String,
    execute: () => Effect.succeed(""),
  })
  let addNew = Number.POSITIVE_INFINITY
  let removeNew = Number.POSITIVE_INFINITY
  for (let i = 0; i <= ROUNDS; i++) {
    const scope = Effect.runSync(Scope.make())
    Effect.runSync(Scope.extend(registry.register({ [`extra_${i % 2}`]: extra }), scope))
    const added = ms(materialize)
    Effect.runSync(Scope.close(scope, Exit.void))
    const removed = ms(materialize)
    if (i === 0) continue
    addNew = Math.min(addNew, added)
    removeNew = Math.min(removeNew, removed)
  }
  const withExtra = new Map(local).set("extra_0", extra)
  const changedOld = best(() => fullRebuild(applications.entries(), withExtra, rules))
  if (JSON.stringify(materialize().definitions) !== expected) throw new Error("definitions differ after churn")

  const f = (value: number) => `${value.toFixed(3)} ms`
  console.log(`${TOOLS} Location tools, ${rules.length} rules, ${turn.definitions.length} visible; min of ${ROUNDS}`)
  console.log(
    `first materialize     : ${f(firstNew)} (full rebuild ${f(firstOld)}, ${(firstOld / firstNew).toFixed(2)}x)`,
  )
  console.log(
    `later, unchanged      : ${f(laterNew)} (full rebuild ${f(laterOld)}, ${(laterOld / laterNew).toFixed(1)}x)`,
  )
  console.log(
    `first after a register: ${f(addNew)} (full rebuild ${f(changedOld)}, ${(changedOld / addNew).toFixed(1)}x)`,
  )
  console.log(
    `first after a removal : ${f(removeNew)} (full rebuild ${f(laterOld)}, ${(laterOld / removeNew).toFixed(1)}x)`,
  )
  if (gate)
    report("materialize", {
      materialize_unchanged_speedup: laterOld / laterNew,
      materialize_register_speedup: changedOld / addNew,
    })
})

const layer = ToolRegistry.layer.pipe(
  Layer.provideMerge(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
)
Effect.runSync(Effect.scoped(Effect.provide(main, layer)))
