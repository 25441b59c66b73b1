/**
 * The incremental catalogue: after any mix of Location and application registrations opening and closing, with
 * any visibility rules, `materialize` gives exactly the definitions (names, order, content) of a full rebuild done
 * the way the registry always did it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FastCheck as fc, Layer, Schema, Scope } from "effect"
import { ApplicationTools, type LLM, Tool, ToolOutputStore, ToolRegistry } from "../src/index.js"

const NAMES = ["alpha", "beta", "gamma", "delta", "eps"] as const

const makeTool = (variant: number) =>
  Tool.make({
    description: `Variant ${variant}`,
    input: variant % 2 === 0 ? Schema.Struct({ text: Schema.String }) : Schema.Struct({ n: Schema.Number }),
    output: Schema.String,
    execute: () => Effect.succeed(`variant ${variant}`),
  })

/** Plain tools and tools whose catalogue action is decorated (so visibility does not follow the name). */
const TOOLS: ReadonlyArray<Tool.AnyTool> = [
  makeTool(0),
  makeTool(1),
  makeTool(2),
  Tool.withPermission(makeTool(3), "edit"),
  Tool.withPermission(makeTool(4), "beta"),
]

type Op =
  | { readonly _tag: "local" | "app"; readonly tools: ReadonlyArray<readonly [string, number]> }
  | { readonly _tag: "close"; readonly index: number }
  | { readonly _tag: "materialize"; readonly rules: ReadonlyArray<ToolRegistry.VisibilityRule> }

const rule = fc.record({
  action: fc.constantFrom("*", "alpha", "beta", "edit", "g*", "*a", "de?ta"),
  resource: fc.constantFrom("*", "**", "x"),
  effect: fc.constantFrom("allow" as const, "deny" as const, "ask" as const),
})

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      _tag: fc.constantFrom("local" as const, "app" as const),
      tools: fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES), fc.nat(TOOLS.length - 1)), {
        minLength: 1,
        maxLength: 3,
        selector: ([name]) => name,
      }),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ _tag: fc.constant("close" as const), index: fc.nat(20) }), weight: 3 },
  {
    arbitrary: fc.record({
      _tag: fc.constant("materialize" as const),
      rules: fc.oneof(fc.constant([]), fc.array(rule, { maxLength: 4 })),
    }),
    weight: 3,
  },
)

/** The old full rebuild over the application entries and a model of the Location stacks. */
const reference = (
  apps: ReadonlyMap<string, ApplicationTools.Entry>,
  local: ReadonlyMap<string, ReadonlyArray<{ readonly token: object; readonly tool: Tool.AnyTool }>>,
  rules: ReadonlyArray<ToolRegistry.VisibilityRule>,
): ReadonlyArray<LLM.ToolDefinition> => {
  const captured = new Map<string, Tool.AnyTool>()
  for (const [name, entry] of apps) captured.set(name, entry.tool)
  for (const [name, stack] of local) captured.set(name, stack.at(-1)!.tool)
  for (const [name, tool] of captured) {
    if (ToolRegistry.whollyDisabled(Tool.permission(tool, name), rules)) captured.delete(name)
  }
  return Array.from(captured, ([name, tool]) => Tool.definition(name, tool))
}

const registryLayer = ToolRegistry.layer.pipe(
  Layer.provideMerge(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
)

const run = (ops: ReadonlyArray<Op>) =>
  Effect.gen(function* () {
    const registry = yield* ToolRegistry.Service
    const applications = yield* ApplicationTools.Service
    const local = new Map<string, Array<{ readonly token: object; readonly tool: Tool.AnyTool }>>()
    const open: Array<{ readonly scope: Scope.CloseableScope; readonly close: () => void }> = []
    let checked = 0

    const check = (rules: ReadonlyArray<ToolRegistry.VisibilityRule>) =>
      Effect.gen(function* () {
        const expected = reference(applications.entries(), local, rules)
        const first = yield* registry.materialize(rules)
        const again = yield* registry.materialize(rules.map((r) => ({ ...r })))
        expect(JSON.stringify(first.definitions)).toBe(JSON.stringify(expected))
        first.definitions.forEach((definition, i) => expect(definition).toBe(expected[i]))
        expect(JSON.stringify(again.definitions)).toBe(JSON.stringify(expected))
        // every advertised name settles (its registration is the current one), none is stale
        for (const definition of first.definitions) {
          const settled = yield* first.settle({
            sessionID: "ses_c",
            agent: "build",
            assistantMessageID: "msg_c",
            call: { id: "call_c", name: definition.name, input: {} },
          })
          if (settled.result.type === "error") expect(settled.result.value).not.toMatch(/Stale|Unknown/)
        }
        checked++
      })

    for (const step of [...ops, { _tag: "materialize", rules: [] } satisfies Op]) {
      if (step._tag === "materialize") {
        yield* check(step.rules)
        continue
      }
      if (step._tag === "close") {
        if (open.length === 0) continue
        const [entry] = open.splice(step.index % open.length, 1)
        yield* Scope.close(entry!.scope, Exit.void)
        entry!.close()
        continue
      }
      const tools = Object.fromEntries(step.tools.map(([name, variant]) => [name, TOOLS[variant]!]))
      const scope = yield* Scope.make()
      if (step._tag === "app") {
        yield* Scope.extend(applications.register(tools), scope)
        open.push({ scope, close: () => {} })
        continue
      }
      yield* Scope.extend(registry.register(tools), scope)
      const token = {}
      for (const [name, tool] of Object.entries(tools)) {
        let stack = local.get(name)
        if (stack === undefined) local.set(name, (stack = []))
        stack.push({ token, tool })
      }
      open.push({
        scope,
        close: () => {
          for (const name of Object.keys(tools)) {
            const kept = local.get(name)!.filter((entry) => entry.token !== token)
            if (kept.length === 0) local.delete(name)
            else local.set(name, kept)
          }
        },
      })
    }
    for (const entry of open) yield* Scope.close(entry.scope, Exit.void)
    return checked
  }).pipe(Effect.provide(registryLayer))

describe("incremental catalogue", () => {
  it("equals a full rebuild after any registration churn, in order and content", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        expect(Effect.runSync(run(ops))).toBeGreaterThan(0)
      }),
      { numRuns: 300 },
    )
  })

  it("a name that leaves the Location and comes back is listed after the names that stayed", () => {
    const ops: ReadonlyArray<Op> = [
      { _tag: "local", tools: [["alpha", 0]] },
      { _tag: "local", tools: [["beta", 1]] },
      { _tag: "materialize", rules: [] },
      { _tag: "close", index: 0 },
      { _tag: "local", tools: [["alpha", 2]] },
      { _tag: "app", tools: [["gamma", 0]] },
      { _tag: "materialize", rules: [] },
    ]
    expect(Effect.runSync(run(ops))).toBe(3)
    const names = Effect.runSync(
      Effect.gen(function* () {
        const registry = yield* ToolRegistry.Service
        const applications = yield* ApplicationTools.Service
        const scope = yield* Scope.make()
        yield* Scope.extend(registry.register({ alpha: TOOLS[0]!, beta: TOOLS[1]! }), scope)
        yield* registry.materialize()
        const inner = yield* Scope.make()
        yield* Scope.extend(registry.register({ alpha: TOOLS[2]! }), inner)
        yield* Scope.close(inner, Exit.void)
        yield* Scope.extend(applications.register({ gamma: TOOLS[0]!, beta: TOOLS[2]! }), scope)
        const turn = yield* registry.materialize()
        return turn.definitions.map((definition) => [definition.name, definition.description])
      }).pipe(Effect.provide(registryLayer)),
    )
    // application names first (beta there, with the Location's tool), then the Location-only alpha
    expect(names).toEqual([
      ["gamma", "Variant 0"],
      ["beta", "Variant 1"],
      ["alpha", "Variant 0"],
    ])
  })
})
