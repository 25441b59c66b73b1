import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, type Layer, Schema, Scope } from "effect"
import { ApplicationTools, Tool, ToolRegistry, Tools } from "../src/index.js"
import { echoTool, identity, names, registryLayer, settleTool } from "./support/registry.js"

const withRegistry = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof registryLayer> | Scope.Scope>) =>
  Effect.scoped(Effect.provide(effect, registryLayer))

/** `{ query }` → `{ answer }`; records its contexts; projects a text and an image part. */
const contextual = (description = "Read application context") => {
  const contexts: Array<Tool.Context> = []
  const tool = Tool.make({
    description,
    input: Schema.Struct({ query: Schema.String }),
    output: Schema.Struct({ answer: Schema.String }),
    execute: (input, context) => Effect.sync(() => (contexts.push(context), { answer: input.query.toUpperCase() })),
    toModelOutput: ({ output }) => [
      { type: "text", text: output.answer },
      { type: "file", data: "aGVsbG8=", mime: "image/png", name: "result.png" },
    ],
  })
  return { tool, contexts }
}

const image = { type: "file", uri: "data:image/png;base64,aGVsbG8=", mime: "image/png", name: "result.png" } as const

const run = (name: string, query: string, id = `call-${name}`) =>
  settleTool({ ...identity, call: { id, name, input: { query } } })

const applications = ApplicationTools.Service

describe("ApplicationTools", () => {
  it.effect("keeps the Core carrier opaque and executes its single handler", () =>
    withRegistry(
      Effect.gen(function* () {
        const { tool, contexts } = contextual()
        expect(Object.keys(tool)).toEqual([])
        expect(Object.isFrozen(tool)).toBe(true)
        yield* (yield* applications).register({ opaque: tool })
        const settlement = yield* run("opaque", "once", "call-opaque")
        expect(settlement.result).toEqual({ type: "content", value: [{ type: "text", text: "ONCE" }, image] })
        expect(contexts).toEqual([
          {
            ...identity,
            toolCallID: "call-opaque",
            call: { id: "call-opaque", name: "opaque", input: { query: "once" } },
            definition: expect.objectContaining({ name: "opaque" }),
          },
        ])
      }),
    ),
  )

  it.effect("exposes narrow scoped Location registration and validates names", () =>
    withRegistry(
      Effect.gen(function* () {
        const tools = yield* Tools.Service
        const scope = yield* Scope.make()
        yield* Scope.extend(tools.register({ location_tool: echoTool() }), scope)
        expect(yield* names()).toEqual(["location_tool"])
        const error = yield* Effect.flip(Scope.extend(tools.register({ "invalid name": echoTool() }), scope))
        expect(error).toBeInstanceOf(Tool.RegistrationError)
        expect(yield* names()).toEqual(["location_tool"])
        yield* Scope.close(scope, Exit.void)
        expect(yield* names()).toEqual([])
      }),
    ),
  )

  it.effect("filters an application tool by its name without adding execution authorization", () =>
    withRegistry(
      Effect.gen(function* () {
        const { tool, contexts } = contextual()
        yield* (yield* applications).register({ application_context: tool })
        expect(yield* names([{ action: "application_context", resource: "*", effect: "deny" }])).toEqual([])
        const settlement = yield* run("application_context", "hi")
        expect(settlement.result.type).toBe("content")
        expect(contexts).toHaveLength(1)
      }),
    ),
  )

  it.effect("advertises and executes a scoped application tool with Session context", () =>
    withRegistry(
      Effect.gen(function* () {
        const { tool } = contextual()
        yield* (yield* applications).register({ application_context: tool })
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        expect(turn.definitions).toMatchObject([
          { name: "application_context", description: "Read application context" },
        ])
        const settlement = yield* turn.settle({
          ...identity,
          call: { id: "call-1", name: "application_context", input: { query: "hello" } },
        })
        const content = [{ type: "text", text: "HELLO" }, image]
        expect(settlement).toEqual({
          result: { type: "content", value: content },
          output: { structured: { answer: "HELLO" }, content },
        })
        expect("outputPaths" in settlement).toBe(false)
      }),
    ),
  )

  it.effect("removes an application tool when its registration scope closes", () =>
    withRegistry(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        yield* Scope.extend((yield* applications).register({ contextual: contextual().tool }), scope)
        expect(yield* names()).toEqual(["contextual"])
        yield* Scope.close(scope, Exit.void)
        expect(yield* names()).toEqual([])
      }),
    ),
  )

  it.effect("removes a tool before settling a call produced from an earlier definition", () =>
    withRegistry(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        yield* Scope.extend((yield* applications).register({ contextual: contextual().tool }), scope)
        expect(yield* names()).toEqual(["contextual"])
        yield* Scope.close(scope, Exit.void)
        expect(yield* run("contextual", "late")).toEqual({
          result: { type: "error", value: "Unknown tool: contextual" },
        })
      }),
    ),
  )

  it.effect("does not leak a registration into an already closed scope", () =>
    withRegistry(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        yield* Scope.close(scope, Exit.void)
        yield* Scope.extend((yield* applications).register({ contextual: contextual().tool }), scope)
        expect(yield* names()).toEqual([])
        expect((yield* applications).entries().size).toBe(0)
      }),
    ),
  )

  it.live("preserves an interrupted application registration until its scope closes", () =>
    withRegistry(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const registered = yield* Deferred.make<void>()
        const service = yield* applications
        const fiber = yield* Effect.fork(
          Scope.extend(service.register({ contextual: contextual().tool }), scope).pipe(
            Effect.zipRight(Deferred.succeed(registered, undefined)),
            Effect.zipRight(Effect.never),
          ),
        )
        yield* Deferred.await(registered)
        yield* Fiber.interrupt(fiber)
        expect(yield* names()).toEqual(["contextual"])
        yield* Scope.close(scope, Exit.void)
        expect(yield* names()).toEqual([])
      }),
    ),
  )

  it.effect("captures the registered record before later State rebuilds", () =>
    withRegistry(
      Effect.gen(function* () {
        const service = yield* applications
        const record: Record<string, Tool.AnyTool> = { stable: echoTool() }
        yield* service.register(record)
        record.late = echoTool()
        const scope = yield* Scope.make()
        yield* Scope.extend(service.register({ churn: echoTool() }), scope)
        yield* Scope.close(scope, Exit.void)
        expect(yield* names()).toEqual(["stable"])
      }),
    ),
  )

  it.effect("settles with the current same-name application tool and restores earlier registrations", () =>
    withRegistry(
      Effect.gen(function* () {
        const service = yield* applications
        const first = contextual()
        const second = contextual()
        yield* service.register({ contextual: first.tool })
        const scope = yield* Scope.make()
        yield* Scope.extend(service.register({ contextual: second.tool }), scope)
        yield* run("contextual", "a", "call-second")
        yield* Scope.close(scope, Exit.void)
        yield* run("contextual", "b", "call-first")
        expect(second.contexts.map((context) => context.toolCallID)).toEqual(["call-second"])
        expect(first.contexts.map((context) => context.toolCallID)).toEqual(["call-first"])
      }),
    ),
  )

  it.effect("keeps the Location tool when an application tool has the same name", () =>
    withRegistry(
      Effect.gen(function* () {
        const location = contextual()
        const application = contextual()
        yield* (yield* Tools.Service).register({ shared: location.tool })
        yield* (yield* applications).register({ shared: application.tool })
        expect(yield* names([{ action: "shared", resource: "*", effect: "deny" }])).toEqual([])
        yield* run("shared", "x")
        expect(location.contexts).toHaveLength(1)
        expect(application.contexts).toEqual([])
      }),
    ),
  )
})
