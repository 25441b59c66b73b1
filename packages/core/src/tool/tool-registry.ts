/**
 * The Location-scoped tool registry. Location registrations stack per name over the process-wide
 * `ApplicationTools`; `materialize` captures one provider turn's catalogue and identities, and its `settle` is the
 * only way to execute a tool. Visibility filtering is not authorization: this module never consults PermissionV2.
 *
 * @since 0.1.0
 */
import type { FileSystem } from "@effect/platform"
import { Context, Effect, Layer, PubSub, Scope, Stream } from "effect"
import type * as Config from "../place/config.js"
import type * as Global from "../system/global.js"
import type * as LLM from "../values/llm.js"
import * as LLMValues from "../values/llm.js"
import * as ToolOutputStore from "./tool-output-store.js"
import * as Wildcard from "../values/wildcard.js"
import * as ApplicationTools from "./application-tools.js"
import * as Tool from "./tool.js"
import * as Tools from "./tools.js"

/** One tool call to settle, with the identity of the turn it belongs to. */
export interface ExecuteInput {
  readonly sessionID: string
  readonly agent: string
  readonly assistantMessageID: string
  readonly call: LLM.ToolCall
  /** Receives the call's progress reports (see `Tool.Context.progress`). */
  readonly progress?: (update: Tool.Progress) => void
}

/** The outcome of one call; `outputPaths` appears only when bounding kept a managed file. */
export interface Settlement {
  readonly result: LLM.ToolResultValue
  readonly output?: LLM.ToolOutput
  readonly outputPaths?: ReadonlyArray<string>
}

/** One provider turn's catalogue and its execution boundary. */
export interface Materialization {
  readonly definitions: ReadonlyArray<LLM.ToolDefinition>
  readonly settle: (input: ExecuteInput) => Effect.Effect<Settlement, ToolOutputStore.Error>
}

/** A rule as used for catalogue visibility (the shape of `PermissionV2.Rule`). */
export interface VisibilityRule {
  readonly action: string
  readonly resource: string
  readonly effect: "allow" | "deny" | "ask"
}

/** The registry's public operations: nothing else executes or lists tools. */
export interface Interface {
  /** Captures this turn's catalogue, hiding wholly denied tools. */
  readonly materialize: (permissions?: ReadonlyArray<VisibilityRule>) => Effect.Effect<Materialization>
  /**
   * One element each time the catalogue `materialize` sees may have changed: a Location registration added or
   * removed, or an application registration added or removed. Consumers materialize again and compare. The
   * stream subscribes when it is run; changes before that are not replayed.
   *
   * @since 0.2.0
   */
  readonly changes: Stream.Stream<void>
  /** Internal registration capability exposed publicly only through Tools.Service. */
  readonly register: (
    tools: Readonly<Record<string, Tool.AnyTool>>,
  ) => Effect.Effect<void, Tool.RegistrationError, Scope.Scope>
}

/** The ToolRegistry service. */
export class Service extends Context.Tag("@toolgate/v2/ToolRegistry")<Service, Interface>() {}

/**
 * True iff the last rule whose action pattern matches `action` has resource exactly `"*"` and effect `deny`.
 * The resource is compared literally: `"**"` does not hide.
 */
export const whollyDisabled = (action: string, rules: ReadonlyArray<VisibilityRule>): boolean => {
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!
    if (Wildcard.match(action, rule.action)) return rule.resource === "*" && rule.effect === "deny"
  }
  return false
}

interface Registration {
  readonly identity: object
  readonly tool: Tool.AnyTool
}

const rejected = (value: string): Settlement => ({ result: { type: "error", value } })

/** Builds one Location's registry. */
export const make: Effect.Effect<Interface, never, ApplicationTools.Service | ToolOutputStore.Service> = Effect.gen(
  function* () {
    const applications = yield* ApplicationTools.Service
    const store = yield* ToolOutputStore.Service
    const local = new Map<string, Array<{ readonly token: object; readonly registration: Registration }>>()
    const hub = yield* PubSub.unbounded<void>()
    const changes = Stream.merge(Stream.fromPubSub(hub), applications.changes)

    const effective = (name: string): Registration | undefined =>
      local.get(name)?.at(-1)?.registration ?? applications.entries().get(name)

    const remove = (token: object, names: ReadonlyArray<string>) => {
      for (const name of names) {
        const stack = local.get(name)
        if (stack === undefined) continue
        const kept = stack.filter((entry) => entry.token !== token)
        if (kept.length === 0) local.delete(name)
        else local.set(name, kept)
      }
    }

    const register = Effect.fn("ToolRegistry.register")(function* (tools: Readonly<Record<string, Tool.AnyTool>>) {
      const entries = Object.entries(tools)
      if (entries.length === 0) return
      yield* Tool.validateNames(entries.map(([name]) => name))
      const scope = yield* Effect.scope
      // Pushing the entries and attaching the finalizer is one step: an interrupted register did all or nothing.
      yield* Effect.uninterruptible(
        Effect.suspend(() => {
          const token = {}
          for (const [name, tool] of entries) {
            let stack = local.get(name)
            if (stack === undefined) local.set(name, (stack = []))
            stack.push({ token, registration: { identity: {}, tool } })
          }
          const names = entries.map(([name]) => name)
          return Scope.addFinalizer(
            scope,
            Effect.zipRight(
              Effect.sync(() => remove(token, names)),
              PubSub.publish(hub, undefined),
            ),
          ).pipe(Effect.zipRight(PubSub.publish(hub, undefined)))
        }),
      )
    })

    // Settlement runs untraced (the store traces only an over-limit spill) with no intermediate Effect beyond the
    // one suspend, the executor's continuation and bounding.
    const bound = ToolOutputStore.settlementBound(store)
    const toolFailed = (failure: LLM.ToolFailure): Effect.Effect<Settlement> =>
      Effect.succeed(rejected(failure.message))
    const toSettlement = (bounded: ToolOutputStore.BoundResult): Settlement => {
      const result = LLMValues.toResultValue(bounded.output)
      if (result.type === "error") return { result }
      return bounded.outputPaths.length > 0
        ? { result, output: bounded.output, outputPaths: bounded.outputPaths }
        : { result, output: bounded.output }
    }

    // Returns an anonymous closure: a named per-call closure costs a `defineProperty` under tsx (`keepNames`).
    const boundFor =
      (input: ExecuteInput) =>
      (output: LLM.ToolOutput): Effect.Effect<Settlement, ToolOutputStore.Error> =>
        Effect.map(bound({ sessionID: input.sessionID, toolCallID: input.call.id, output }), toSettlement)

    const settleWith = (input: ExecuteInput, advertised?: object): Effect.Effect<Settlement, ToolOutputStore.Error> =>
      Effect.suspend(() => {
        const name = input.call.name
        const current = effective(name)
        if (current === undefined)
          return Effect.succeed(rejected(advertised ? `Stale tool call: ${name}` : `Unknown tool: ${name}`))
        if (advertised !== undefined && current.identity !== advertised)
          return Effect.succeed(rejected(`Stale tool call: ${name}`))
        const context: Tool.Context =
          input.progress === undefined
            ? {
                sessionID: input.sessionID,
                agent: input.agent,
                assistantMessageID: input.assistantMessageID,
                toolCallID: input.call.id,
              }
            : {
                sessionID: input.sessionID,
                agent: input.agent,
                assistantMessageID: input.assistantMessageID,
                toolCallID: input.call.id,
                progress: input.progress,
              }
        return Tool.settleThen(current.tool, input.call, context, { onFailure: toolFailed, onSuccess: boundFor(input) })
      })

    const materialize = Effect.fn("ToolRegistry.materialize")(function* (
      permissions: ReadonlyArray<VisibilityRule> = [],
    ) {
      const captured = new Map<string, Registration>(applications.entries())
      for (const [name, stack] of local) {
        const top = stack.at(-1)
        if (top !== undefined) captured.set(name, top.registration)
      }
      for (const [name, registration] of captured) {
        if (whollyDisabled(Tool.permission(registration.tool, name), permissions)) captured.delete(name)
      }
      const definitions = Array.from(captured, ([name, registration]) => Tool.definition(name, registration.tool))
      const settle = (input: ExecuteInput): Effect.Effect<Settlement, ToolOutputStore.Error> => {
        const registration = captured.get(input.call.name)
        return registration === undefined
          ? Effect.succeed(rejected(`Unknown tool: ${input.call.name}`))
          : settleWith(input, registration.identity)
      }
      return { definitions, settle } satisfies Materialization
    })

    return Service.of({ materialize, register, changes })
  },
)

/** The Location layer: provides both `ToolRegistry.Service` and its registration-only view `Tools.Service`. */
export const layer: Layer.Layer<Service | Tools.Service, never, ApplicationTools.Service | ToolOutputStore.Service> =
  Layer.effectContext(
    Effect.map(make, (registry) =>
      Context.make(Service, registry).pipe(
        Context.add(Tools.Service, Tools.Service.of({ register: registry.register })),
      ),
    ),
  )

/**
 * The registry with its own `ApplicationTools` (also provided, so embedders can register application tools) and the
 * real `ToolOutputStore.layer`. The caller provides `FileSystem` (e.g. `NodeFileSystem.layer`), `Global` and the
 * Location's `Config` (`Config.layer`, or `Config.layerEmpty` for the default limits).
 */
export const defaultLayer: Layer.Layer<
  Service | Tools.Service | ApplicationTools.Service,
  never,
  FileSystem.FileSystem | Global.Service | Config.Service
> = layer.pipe(Layer.provideMerge(ApplicationTools.layer), Layer.provide(ToolOutputStore.layer))
