import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Option, Queue, Schema, Scope, Stream } from "effect"
import { ApplicationTools, Tool, ToolRegistry, Tools } from "../src/index.js"
import { call, diskFull, echoTool, identity, names, registryLayer, settleTool, storeCalls } from "./support/registry.js"

const withRegistry = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof registryLayer> | Scope.Scope>) =>
  Effect.scoped(Effect.provide(effect, registryLayer))

const register = (tools: Record<string, Tool.AnyTool>) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.register(tools))

const registerIn = (scope: Scope.Scope, tools: Record<string, Tool.AnyTool>) => Scope.extend(register(tools), scope)

describe("ToolRegistry", () => {
  it.effect("filters disabled tools with edit aliases and ordered wildcard precedence", () =>
    withRegistry(
      Effect.gen(function* () {
        yield* register({
          question: echoTool(),
          bash: echoTool(),
          edit: echoTool({ permission: "edit" }),
          write: echoTool({ permission: "edit" }),
          apply_patch: echoTool({ permission: "edit" }),
        })
        expect(yield* names([{ action: "question", resource: "*", effect: "deny" }])).toEqual([
          "bash",
          "edit",
          "write",
          "apply_patch",
        ])
        expect(
          yield* names([
            { action: "*", resource: "*", effect: "deny" },
            { action: "question", resource: "private", effect: "allow" },
          ]),
        ).toEqual(["question"])
        expect(
          yield* names([
            { action: "question", resource: "private", effect: "allow" },
            { action: "*", resource: "*", effect: "deny" },
          ]),
        ).toEqual([])
        expect(yield* names([{ action: "edit", resource: "*", effect: "deny" }])).toEqual(["question", "bash"])
        expect(yield* names([{ action: "bash", resource: "rm *", effect: "deny" }])).toContain("bash")
        expect(yield* names([{ action: "bash", resource: "**", effect: "deny" }])).toContain("bash")
        expect(yield* names([{ action: "bash", resource: "*", effect: "ask" }])).toContain("bash")
      }),
    ),
  )

  it.effect("keeps permission decoration isolated between registrations", () =>
    withRegistry(
      Effect.gen(function* () {
        const shared = echoTool()
        yield* register({ first: shared, second: Tool.withPermission(shared, "edit") })
        Tool.withPermission(shared, "question")
        expect(yield* names([{ action: "edit", resource: "*", effect: "deny" }])).toEqual(["first"])
        expect(Tool.permission(shared, "first")).toBe("first")
      }),
    ),
  )

  it.effect("reuses model definitions across provider turns", () =>
    withRegistry(
      Effect.gen(function* () {
        yield* register({ echo: echoTool() })
        const registry = yield* ToolRegistry.Service
        const one = yield* registry.materialize()
        const two = yield* registry.materialize()
        expect(one.definitions[0]).toBe(two.definitions[0])
      }),
    ),
  )

  it.effect("removes a scoped registration", () =>
    withRegistry(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        yield* registerIn(scope, { echo: echoTool() })
        expect(yield* names()).toEqual(["echo"])
        yield* Scope.close(scope, Exit.void)
        expect(yield* names()).toEqual([])
      }),
    ),
  )

  it.live("preserves an interrupted registration until its scope closes", () =>
    withRegistry(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const registered = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(
          Effect.zipRight(
            registerIn(scope, { echo: echoTool() }),
            Effect.zipRight(Deferred.succeed(registered, undefined), Effect.never),
          ),
        )
        yield* Deferred.await(registered)
        yield* Fiber.interrupt(fiber)
        expect(yield* names()).toEqual(["echo"])
        yield* Scope.close(scope, Exit.void)
        expect(yield* names()).toEqual([])
      }),
    ),
  )

  it.effect("returns model errors without swallowing interruption or defects", () =>
    withRegistry(
      Effect.gen(function* () {
        const denied = Tool.make({
          description: "Always denied",
          input: Schema.Struct({ text: Schema.String }),
          output: Schema.String,
          execute: () => Effect.fail(new Tool.Failure({ message: "Denied" })),
        })
        const broken = Tool.make({
          description: "Dies",
          input: Schema.Struct({ text: Schema.String }),
          output: Schema.String,
          execute: () => Effect.die("unexpected executor defect"),
        })
        yield* register({ denied, broken })
        expect((yield* settleTool(call("denied"))).result).toEqual({ type: "error", value: "Denied" })
        expect((yield* settleTool(call("missing"))).result).toEqual({ type: "error", value: "Unknown tool: missing" })
        const exit = yield* Effect.exit(settleTool(call("broken")))
        expect(Exit.isFailure(exit) && Cause.dieOption(exit.cause)).toEqual(Option.some("unexpected executor defect"))
      }),
    ),
  )

  it.live("propagates interruption of a running tool as interruption", () =>
    withRegistry(
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        yield* register({
          slow: echoTool({ onExecute: Effect.zipRight(Deferred.succeed(started, undefined), Effect.never) }),
        })
        const fiber = yield* Effect.fork(settleTool(call("slow")))
        yield* Deferred.await(started)
        const exit = yield* Fiber.interrupt(fiber)
        expect(Exit.isInterrupted(exit)).toBe(true)
      }),
    ),
  )

  it.effect("propagates retention failures through settlement", () =>
    withRegistry(
      Effect.gen(function* () {
        yield* register({ echo: echoTool() })
        const error = yield* Effect.flip(settleTool(call("echo", "call-retention-failure")))
        expect(error).toBe(diskFull)
        expect(error.message).toBe("Failed to write tool output: disk full")
      }),
    ),
  )

  it.effect("exposes settlement only through materialization", () =>
    withRegistry(
      Effect.gen(function* () {
        const registry = yield* ToolRegistry.Service
        expect(Object.keys(registry).sort()).toEqual(["changes", "materialize", "register"])
        expect("definitions" in registry || "execute" in registry || "settle" in registry).toBe(false)
        expect(typeof registry.materialize).toBe("function")
      }),
    ),
  )

  it.effect("passes complete invocation identity to the canonical handler", () =>
    withRegistry(
      Effect.gen(function* () {
        const seen: Array<Tool.Context> = []
        const contextual = Tool.make({
          description: "Record the context",
          input: Schema.Struct({ text: Schema.String }),
          output: Schema.String,
          execute: (_input, context) => Effect.sync(() => (seen.push(context), "ok")),
        })
        yield* register({ contextual })
        const input = call("contextual", "call-context")
        yield* settleTool(input)
        yield* settleTool(call("contextual", "call-context-2"))
        const registry = yield* ToolRegistry.Service
        const advertised = (yield* registry.materialize()).definitions.find((definition) => definition.name === "contextual")
        // The call as the model sent it and the definition the materialization advertised (one object per tool).
        expect(seen[0]).toEqual({ ...identity, toolCallID: "call-context", call: input.call, definition: advertised })
        expect(seen[0]!.call).toBe(input.call)
        expect(seen[1]!.definition).toBe(seen[0]!.definition)
        expect(Object.keys(seen[0]!).sort()).toEqual([
          "agent",
          "assistantMessageID",
          "call",
          "definition",
          "sessionID",
          "toolCallID",
        ])
      }),
    ),
  )

  it.effect("encodes output and applies generic settlement bounding", () =>
    withRegistry(
      Effect.gen(function* () {
        yield* register({ bounded: echoTool() })
        const settlement = yield* settleTool(call("bounded", "call-bounded"))
        expect(settlement).toEqual({
          result: { type: "text", value: "bounded reference" },
          output: { structured: {}, content: [{ type: "text", text: "bounded reference" }] },
          outputPaths: ["/managed/generic"],
        })
        expect(yield* storeCalls).toHaveLength(1)
      }),
    ),
  )

  it.effect("enforces transformed codecs at execution and projection boundaries", () =>
    withRegistry(
      Effect.gen(function* () {
        const YesNo = Schema.transform(Schema.Boolean, Schema.Literal("yes", "no"), {
          strict: true,
          decode: (value) => (value ? "yes" : "no") as "yes" | "no",
          encode: (value) => value === "yes",
        })
        const executed: Array<string> = []
        const transformed = Tool.make({
          description: "Transformed codecs",
          input: Schema.Struct({ value: YesNo }),
          output: Schema.Struct({ value: YesNo }),
          execute: (input) => Effect.sync(() => (executed.push(input.value), { value: input.value })),
          toModelOutput: ({ output }) => [{ type: "text", text: String(output.value) }],
        })
        const invalid = Tool.make({
          description: "Returns an unencodable value",
          input: Schema.Struct({}),
          output: Schema.Struct({ value: YesNo }),
          execute: () => Effect.succeed({ value: "maybe" as never }),
        })
        yield* register({ transformed, invalid })
        const ok = yield* settleTool({ ...identity, call: { id: "c1", name: "transformed", input: { value: true } } })
        expect(executed).toEqual(["yes"])
        expect(ok.result).toEqual({ type: "text", value: "true" })
        const bad = yield* settleTool({ ...identity, call: { id: "c2", name: "transformed", input: { value: "yes" } } })
        expect(bad.result.type).toBe("error")
        expect(String(bad.result.value)).toContain("Invalid tool input")
        expect(executed).toEqual(["yes"])
        const out = yield* settleTool({ ...identity, call: { id: "c3", name: "invalid", input: {} } })
        expect(out.result.type).toBe("error")
        expect(String(out.result.value)).toContain("invalid value for its output schema")
        expect(out.output).toBeUndefined()
      }),
    ),
  )

  it.effect("executes the unchanged registration advertised for a provider turn", () =>
    withRegistry(
      Effect.gen(function* () {
        yield* register({ echo: echoTool() })
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        expect((yield* turn.settle(call("echo"))).result).toEqual({ type: "text", value: "echo" })
      }),
    ),
  )

  it.effect("rejects a call when its advertised registration was removed", () =>
    withRegistry(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        yield* registerIn(scope, { echo: echoTool() })
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        yield* Scope.close(scope, Exit.void)
        expect((yield* turn.settle(call("echo"))).result).toEqual({ type: "error", value: "Stale tool call: echo" })
      }),
    ),
  )

  it.effect("rejects only the replaced name from a multi-tool provider turn", () =>
    withRegistry(
      Effect.gen(function* () {
        yield* register({ first: echoTool(), second: echoTool() })
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        yield* register({ first: echoTool() })
        expect((yield* turn.settle(call("first"))).result).toEqual({ type: "error", value: "Stale tool call: first" })
        expect((yield* turn.settle(call("second"))).result).toEqual({ type: "text", value: "second" })
      }),
    ),
  )

  it.effect("treats revealing a previous overlay as stale", () =>
    withRegistry(
      Effect.gen(function* () {
        let baseRuns = 0
        yield* register({ echo: echoTool({ onExecute: Effect.sync(() => void baseRuns++) }) })
        const scope = yield* Scope.make()
        yield* registerIn(scope, { echo: echoTool() })
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        yield* Scope.close(scope, Exit.void)
        expect((yield* turn.settle(call("echo"))).result).toEqual({ type: "error", value: "Stale tool call: echo" })
        expect(baseRuns).toBe(0)
      }),
    ),
  )

  it.effect("rejects an application call after a Location override is registered", () =>
    withRegistry(
      Effect.gen(function* () {
        yield* (yield* ApplicationTools.Service).register({ echo: echoTool() })
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        yield* register({ echo: echoTool() })
        expect((yield* turn.settle(call("echo"))).result).toEqual({ type: "error", value: "Stale tool call: echo" })
      }),
    ),
  )

  it.effect("rejects a Location call after removal reveals an application registration", () =>
    withRegistry(
      Effect.gen(function* () {
        yield* (yield* ApplicationTools.Service).register({ echo: echoTool() })
        const scope = yield* Scope.make()
        yield* registerIn(scope, { echo: echoTool() })
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        yield* Scope.close(scope, Exit.void)
        expect((yield* turn.settle(call("echo"))).result).toEqual({ type: "error", value: "Stale tool call: echo" })
      }),
    ),
  )

  it.live("keeps captured execution running after registration mutation", () =>
    withRegistry(
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const scope = yield* Scope.make()
        yield* registerIn(scope, {
          echo: echoTool({ onExecute: Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release)) }),
        })
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        const fiber = yield* Effect.fork(turn.settle(call("echo")))
        yield* Deferred.await(started)
        yield* Scope.close(scope, Exit.void)
        yield* register({ echo: echoTool() })
        yield* Deferred.succeed(release, undefined)
        expect(yield* Fiber.join(fiber)).toEqual({
          result: { type: "text", value: "echo" },
          output: { structured: { text: "echo" }, content: [{ type: "text", text: "echo" }] },
        })
      }),
    ),
  )
})

describe("ToolRegistry (derived)", () => {
  it.effect("an empty record registers nothing on both layers", () =>
    withRegistry(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        yield* registerIn(scope, {})
        yield* Scope.extend((yield* ApplicationTools.Service).register({}), scope)
        expect(yield* names()).toEqual([])
        yield* Scope.close(scope, Exit.void)
      }),
    ),
  )

  it.effect("a mixed valid and invalid record registers nothing and names the first invalid key", () =>
    withRegistry(
      Effect.gen(function* () {
        const error = yield* Effect.flip(register({ good: echoTool(), "bad name": echoTool(), "9worse": echoTool() }))
        expect(error).toBeInstanceOf(Tool.RegistrationError)
        expect(error).toMatchObject({
          _tag: "Tool.RegistrationError",
          name: "bad name",
          message: "Invalid tool name: bad name",
        })
        const applicationError = yield* Effect.flip(
          (yield* ApplicationTools.Service).register({ fine: echoTool(), "x.y": echoTool() }),
        )
        expect(applicationError.message).toBe("Invalid tool name: x.y")
        expect(yield* names()).toEqual([])
      }),
    ),
  )

  it.effect("re-registering the same tool value creates a new identity", () =>
    withRegistry(
      Effect.gen(function* () {
        const tool = echoTool()
        yield* register({ echo: tool })
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        yield* register({ echo: tool })
        expect((yield* turn.settle(call("echo"))).result).toEqual({ type: "error", value: "Stale tool call: echo" })
      }),
    ),
  )

  it.effect("a name registered after materialize is unknown to that turn and runs from a new one", () =>
    withRegistry(
      Effect.gen(function* () {
        const registry = yield* ToolRegistry.Service
        const turn = yield* registry.materialize()
        yield* register({ late: echoTool() })
        expect((yield* turn.settle(call("late"))).result).toEqual({ type: "error", value: "Unknown tool: late" })
        expect((yield* settleTool(call("late"))).result).toEqual({ type: "text", value: "late" })
      }),
    ),
  )

  it.effect("a wholly disabled name settles as unknown from the filtered materialization", () =>
    withRegistry(
      Effect.gen(function* () {
        yield* register({ hidden: echoTool() })
        const turn = yield* (yield* ToolRegistry.Service).materialize([
          { action: "hidden", resource: "*", effect: "deny" },
        ])
        expect((yield* turn.settle(call("hidden"))).result).toEqual({ type: "error", value: "Unknown tool: hidden" })
      }),
    ),
  )

  it.effect("unrelated application churn does not make an advertised application tool stale", () =>
    withRegistry(
      Effect.gen(function* () {
        const applications = yield* ApplicationTools.Service
        yield* applications.register({ echo: echoTool() })
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        const scope = yield* Scope.make()
        yield* Scope.extend(applications.register({ other: echoTool() }), scope)
        yield* Scope.close(scope, Exit.void)
        expect((yield* turn.settle(call("echo"))).result).toEqual({ type: "text", value: "echo" })
      }),
    ),
  )

  it.effect("closing a non-top registration keeps the top effective", () =>
    withRegistry(
      Effect.gen(function* () {
        const one = yield* Scope.make()
        const two = yield* Scope.make()
        let topRuns = 0
        yield* registerIn(one, { echo: echoTool() })
        yield* registerIn(two, { echo: echoTool({ onExecute: Effect.sync(() => void topRuns++) }) })
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        yield* Scope.close(one, Exit.void)
        expect((yield* turn.settle(call("echo"))).result).toEqual({ type: "text", value: "echo" })
        expect(topRuns).toBe(1)
        yield* Scope.close(two, Exit.void)
        expect(yield* names()).toEqual([])
      }),
    ),
  )

  it.effect("orders definitions: application names, overrides in place, then Location-only names", () =>
    withRegistry(
      Effect.gen(function* () {
        yield* (yield* ApplicationTools.Service).register({ alpha: echoTool(), beta: echoTool() })
        yield* register({ bash: echoTool(), edit: echoTool(), write: echoTool(), apply_patch: echoTool() })
        yield* register({ beta: echoTool() })
        expect(yield* names()).toEqual(["alpha", "beta", "bash", "edit", "write", "apply_patch"])
      }),
    ),
  )

  it.effect("ToolFailure bypasses the store and carries no output", () =>
    withRegistry(
      Effect.gen(function* () {
        const failing = Tool.make({
          description: "Fails",
          input: Schema.Struct({ text: Schema.String }),
          output: Schema.String,
          execute: () => Effect.fail(new Tool.Failure({ message: "nope", metadata: { secret: 1 } })),
        })
        yield* register({ failing })
        expect(yield* settleTool(call("failing"))).toEqual({ result: { type: "error", value: "nope" } })
        expect(yield* storeCalls).toEqual([])
      }),
    ),
  )

  it.effect("an invalid tool value is a defect at materialize", () =>
    withRegistry(
      Effect.gen(function* () {
        yield* register({ fake: Object.freeze({}) as Tool.AnyTool })
        const exit = yield* Effect.exit((yield* ToolRegistry.Service).materialize())
        expect(Exit.isFailure(exit) && Cause.dieOption(exit.cause).pipe(Option.map(String))).toEqual(
          Option.some("TypeError: Invalid Core Tool value"),
        )
      }),
    ),
  )

  it.effect("Tools.Service registers into the same Location instance", () =>
    withRegistry(
      Effect.gen(function* () {
        yield* (yield* Tools.Service).register({ via_tools: echoTool() })
        expect(yield* names()).toEqual(["via_tools"])
      }),
    ),
  )

  it.effect("does not leak a Location registration into an already closed scope", () =>
    withRegistry(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        yield* Scope.close(scope, Exit.void)
        yield* registerIn(scope, { echo: echoTool() })
        expect(yield* names()).toEqual([])
      }),
    ),
  )
})

describe("ToolRegistry.changes", () => {
  /** Collects change notifications into a queue, subscribed before anything happens. */
  const watch = Effect.gen(function* () {
    const registry = yield* ToolRegistry.Service
    const seen = yield* Queue.unbounded<void>()
    const subscribed = yield* Deferred.make<void>()
    yield* Effect.forkScoped(
      registry.changes.pipe(
        Stream.onStart(Deferred.succeed(subscribed, undefined)),
        Stream.runForEach((change) => Queue.offer(seen, change)),
      ),
    )
    yield* Deferred.await(subscribed)
    // The PubSub subscription is taken when the stream starts pulling; let the fork reach its first pull.
    yield* Effect.yieldNow()
    return seen
  })

  it.scoped("emits after a Location registration is added and after it is removed, once each", () =>
    Effect.provide(
      Effect.gen(function* () {
        const seen = yield* watch
        const scope = yield* Scope.make()
        yield* registerIn(scope, { echo: echoTool(), other: echoTool() })
        yield* Queue.take(seen)
        expect(yield* names()).toEqual(["echo", "other"])
        expect(yield* Queue.size(seen)).toBe(0)
        yield* Scope.close(scope, Exit.void)
        yield* Queue.take(seen)
        // The removal is visible by the time the change arrives.
        expect(yield* names()).toEqual([])
        expect(yield* Queue.size(seen)).toBe(0)
      }),
      registryLayer,
    ),
  )

  it.scoped("emits for application registrations too, after they are visible", () =>
    Effect.provide(
      Effect.gen(function* () {
        const seen = yield* watch
        const applications = yield* ApplicationTools.Service
        const scope = yield* Scope.make()
        yield* Scope.extend(applications.register({ app: echoTool() }), scope)
        yield* Queue.take(seen)
        expect(yield* names()).toEqual(["app"])
        yield* Scope.close(scope, Exit.void)
        yield* Queue.take(seen)
        expect(yield* names()).toEqual([])
      }),
      registryLayer,
    ),
  )

  it.scoped("a failed registration (invalid name) changes nothing and emits nothing", () =>
    Effect.provide(
      Effect.gen(function* () {
        const seen = yield* watch
        const exit = yield* Effect.exit(register({ "bad name": echoTool() }))
        expect(Exit.isFailure(exit)).toBe(true)
        yield* register({ ok: echoTool() })
        yield* Queue.take(seen)
        expect(yield* Queue.size(seen)).toBe(0)
      }),
      registryLayer,
    ),
  )
})
