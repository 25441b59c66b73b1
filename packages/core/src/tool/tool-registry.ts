/**
 * The Location-scoped tool registry. Location registrations stack per name over the process-wide
 * `ApplicationTools`; `materialize` captures one provider turn's catalogue and identities, and its `settle` is the
 * only way to execute a tool. Visibility filtering is not authorization: this module never consults PermissionV2.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Config from "../place/config.js"
import type * as Global from "../system/global.js"
import type * as LLM from "../values/llm.js"
import * as LLMValues from "../values/llm.js"
import * as ToolOutputStore from "./tool-output-store.js"
import * as Wildcard from "../values/wildcard.js"
import * as ApplicationTools from "./application-tools.js"
import * as Runtime from "./internal/runtime.js"
import * as Tool from "./tool.js"
import * as ToolHooks from "./tool-hooks.js"
import * as Tools from "./tools.js"

/**
 * One tool call to settle, with the identity of the turn it belongs to.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecuteInput {
  readonly sessionID: string
  readonly agent: string
  readonly assistantMessageID: string
  readonly call: LLM.ToolCall
  /** Receives the call's progress reports (see `Tool.Context.progress`). */
  readonly progress?: (update: Tool.Progress) => void
}

/**
 * The outcome of one call; `outputPaths` appears only when bounding kept a managed file.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settlement {
  readonly result: LLM.ToolResultValue
  readonly output?: LLM.ToolOutput
  readonly outputPaths?: ReadonlyArray<string>
}

/**
 * One provider turn's catalogue and its execution boundary.
 *
 * @since 0.1.0
 * @category models
 */
export interface Materialization {
  readonly definitions: ReadonlyArray<LLM.ToolDefinition>
  readonly settle: (input: ExecuteInput) => Effect.Effect<Settlement, ToolOutputStore.Error>
}

/**
 * A rule as used for catalogue visibility (the shape of `PermissionV2.Rule`).
 *
 * @since 0.1.0
 * @category models
 */
export interface VisibilityRule {
  readonly action: string
  readonly resource: string
  readonly effect: "allow" | "deny" | "ask"
}

/**
 * The registry's public operations: nothing else executes or lists tools.
 *
 * @since 0.1.0
 * @category models
 */
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

/**
 * The ToolRegistry service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/ToolRegistry")<Service, Interface>() {}

/**
 * True iff the last rule whose action pattern matches `action` has resource exactly `"*"` and effect `deny`.
 * The resource is compared literally: `"**"` does not hide.
 *
 * @since 0.1.0
 * @category utilities
 */
export const whollyDisabled = (action: string, rules: ReadonlyArray<VisibilityRule>): boolean => {
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!
    if (Wildcard.match(action, rule.action)) return rule.resource === "*" && rule.effect === "deny"
  }
  return false
}

const sameRules = (a: ReadonlyArray<VisibilityRule>, b: ReadonlyArray<VisibilityRule>): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!
    const y = b[i]!
    if (x.action !== y.action || x.resource !== y.resource || x.effect !== y.effect) return false
  }
  return true
}

interface Registration {
  readonly identity: object
  readonly tool: Tool.AnyTool
}

const rejected = (value: string): Settlement => ({ result: { type: "error", value } })

/** A call and the context it runs with, as read from an `ExecuteInput`. */
interface Invocation {
  readonly call: LLM.ToolCall
  readonly context: Tool.Context
  /** The registration the materialization advertised under the call's name. */
  readonly identity: object
}

/** What a materialization captured for one advertised name: its registration and the definition it advertised. */
interface Captured {
  readonly identity: object
  readonly definition: LLM.ToolDefinition
}

/**
 * The invocation of `call` against the captured catalogue; `undefined` for a name it does not advertise. The context
 * carries the call and the advertised definition (the same object for every call of a registered tool), so a
 * permission prompt the call raises shows them and its digest covers them.
 */
const invocation = (
  sessionID: string,
  agent: string,
  assistantMessageID: string,
  call: LLM.ToolCall,
  progress: ((update: Tool.Progress) => void) | undefined,
  captured: ReadonlyMap<string, Captured>,
): Invocation | undefined => {
  const entry = captured.get(call.name)
  if (entry === undefined) return undefined
  const definition = entry.definition
  return {
    call,
    identity: entry.identity,
    context:
      progress === undefined
        ? { sessionID, agent, assistantMessageID, toolCallID: call.id, call, definition }
        : { sessionID, agent, assistantMessageID, toolCallID: call.id, progress, call, definition },
  }
}

/**
 * Reads `input` once. Callers often build it by spreading an identity object (`{ ...identity, call }`), to which V8
 * gives a hidden class of its own per object, so each read by name is a slow megamorphic lookup (about 0.1 µs);
 * enumerating the keys of such an object is not. The enumeration is taken only when it sees exactly the object's own
 * properties (a plain or null-prototype object, every own key enumerable); any other object is read by name.
 */
const readInput = (input: ExecuteInput, captured: ReadonlyMap<string, Captured>): Invocation | undefined => {
  const prototype: unknown = Object.getPrototypeOf(input)
  if (prototype === Object.prototype || prototype === null) {
    let sessionID: unknown, agent: unknown, assistantMessageID: unknown, call: unknown, progress: unknown
    let seen = 0
    for (const key in input) {
      seen++
      const value = (input as unknown as Record<string, unknown>)[key]
      if (key === "call") call = value
      else if (key === "sessionID") sessionID = value
      else if (key === "agent") agent = value
      else if (key === "assistantMessageID") assistantMessageID = value
      else if (key === "progress") progress = value
    }
    if (seen > 0 && Object.getOwnPropertyNames(input).length === seen)
      return invocation(
        sessionID as string,
        agent as string,
        assistantMessageID as string,
        call as LLM.ToolCall,
        progress as ((update: Tool.Progress) => void) | undefined,
        captured,
      )
  }
  return invocation(input.sessionID, input.agent, input.assistantMessageID, input.call, input.progress, captured)
}

/**
 * Builds one Location's registry.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Interface, never, ApplicationTools.Service | ToolOutputStore.Service> = Effect.gen(
  function* () {
    const applications = yield* ApplicationTools.Service
    const store = yield* ToolOutputStore.Service
    const hooks = Option.getOrUndefined(yield* Effect.serviceOption(ToolHooks.Service))
    const local = new Map<string, Array<{ readonly token: object; readonly registration: Registration }>>()
    const hub = yield* PubSub.unbounded<void>()
    const changes = Stream.merge(Stream.fromPubSub(hub), applications.changes)

    const effective = (name: string): Registration | undefined =>
      local.get(name)?.at(-1)?.registration ?? applications.entries().get(name)

    // The effective catalogue, kept current instead of rebuilt per materialize. Its order is the one a full rebuild
    // gives: application names in their order (a Location registration of the same name takes that place), then
    // Location-only names in the order they were first registered. A Location change patches it in place, which
    // keeps that order; an application change (ApplicationTools rebuilds its entries map) rebuilds it.
    const catalogue = new Map<string, Registration>()
    let catalogueApps: ReadonlyMap<string, Registration> | undefined
    let version = 0

    const current = (): ReadonlyMap<string, Registration> => {
      const apps = applications.entries()
      if (apps !== catalogueApps) {
        catalogue.clear()
        for (const [name, entry] of apps) catalogue.set(name, entry)
        for (const [name, stack] of local) catalogue.set(name, stack.at(-1)!.registration)
        catalogueApps = apps
        version++
      }
      return catalogue
    }

    /** Sets `name`'s catalogue entry after its Location stack changed. */
    const patch = (name: string) => {
      version++
      const top = local.get(name)?.at(-1)?.registration ?? catalogueApps?.get(name)
      if (top === undefined) catalogue.delete(name)
      else catalogue.set(name, top)
    }

    const remove = (token: object, names: ReadonlyArray<string>) => {
      for (const name of names) {
        const stack = local.get(name)
        if (stack === undefined) continue
        const kept = stack.filter((entry) => entry.token !== token)
        if (kept.length === 0) local.delete(name)
        else local.set(name, kept)
        patch(name)
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
            patch(name)
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

    // Settlement runs untraced (the store traces only an over-limit spill). On the common path (a settled executor
    // result, output within limits) the one suspend and the final result are its only Effects: the continuations
    // are shared by every call (the call's identity comes back with its context), and a bound that is already
    // settled is mapped in place.
    const bound = store.bound
    const toSettlement = (bounded: ToolOutputStore.BoundResult): Settlement => {
      const result = LLMValues.toResultValue(bounded.output)
      if (result.type === "error") return { result }
      return bounded.outputPaths.length > 0
        ? { result, output: bounded.output, outputPaths: bounded.outputPaths }
        : { result, output: bounded.output }
    }
    const continuations = {
      onFailure: (failure: LLM.ToolFailure): Effect.Effect<Settlement> => Effect.succeed(rejected(failure.message)),
      onSuccess: (output: LLM.ToolOutput, context: Tool.Context): Effect.Effect<Settlement, ToolOutputStore.Error> => {
        const bounded = bound({ sessionID: context.sessionID, toolCallID: context.toolCallID, output })
        return Exit.isExit(bounded) && Exit.isSuccess(bounded)
          ? Effect.succeed(toSettlement((bounded as Exit.Success<ToolOutputStore.BoundResult, never>).value))
          : Effect.map(bounded, toSettlement)
      },
    }

    // With tool hooks: `before` may refuse, ask or rewrite (the rewritten call is decoded and evaluated as a new
    // input, and the context shows it), `after` sees the output before it is bounded.
    const hooked = (
      port: ToolHooks.Interface,
      tool: Tool.AnyTool,
      call: LLM.ToolCall,
      context: Tool.Context,
    ): Effect.Effect<Settlement, ToolOutputStore.Error> =>
      Effect.matchEffect(port.before(call, context), {
        onFailure: continuations.onFailure,
        onSuccess: (prepared) => {
          const settled = prepared.call === call ? context : { ...context, call: prepared.call }
          return Runtime.of<Tool.Context>(tool).settle(
            prepared.call,
            settled,
            (output, ran) =>
              Effect.matchEffect(port.after(prepared, ran, output), {
                onFailure: continuations.onFailure,
                onSuccess: (after) => continuations.onSuccess(after, ran),
              }),
            continuations.onFailure,
          )
        },
      })

    // A call to a name whose registration changed since the materialization (replaced or removed) is stale.
    const settleWith = ({ call, context, identity }: Invocation): Effect.Effect<Settlement, ToolOutputStore.Error> =>
      Effect.suspend(() => {
        const current = effective(call.name)
        if (current === undefined || current.identity !== identity)
          return Effect.succeed(rejected(`Stale tool call: ${call.name}`))
        if (hooks !== undefined && hooks.active()) return hooked(hooks, current.tool, call, context)
        return Runtime.of<Tool.Context>(current.tool).settle(
          call,
          context,
          continuations.onSuccess,
          continuations.onFailure,
        )
      })

    // The last materialized catalogue: reused while neither the registrations nor the rules changed. `hidden`
    // remembers, for the rules in `rules`, whether an action is wholly denied.
    let rules: ReadonlyArray<VisibilityRule> = []
    let hidden = new Map<string, boolean>()
    let last:
      | {
          readonly version: number
          readonly definitions: ReadonlyArray<LLM.ToolDefinition>
          readonly settle: Materialization["settle"]
        }
      | undefined

    const capture = (permissions: ReadonlyArray<VisibilityRule>) => {
      const entries = current()
      if (!sameRules(rules, permissions)) {
        rules = permissions.map(({ action, resource, effect }) => ({ action, resource, effect }))
        hidden = new Map()
        last = undefined
      }
      if (last !== undefined && last.version === version) return last
      if (hidden.size > 2 * entries.size + 64) hidden = new Map() // names churned away
      const captured = new Map<string, Captured>()
      const definitions: Array<LLM.ToolDefinition> = []
      for (const [name, registration] of entries) {
        const action = Tool.permission(registration.tool, name)
        let denied = hidden.get(action)
        if (denied === undefined) hidden.set(action, (denied = whollyDisabled(action, rules)))
        if (denied) continue
        const definition = Tool.definition(name, registration.tool)
        captured.set(name, { identity: registration.identity, definition })
        definitions.push(definition)
      }
      const settle = (input: ExecuteInput): Effect.Effect<Settlement, ToolOutputStore.Error> => {
        const read = readInput(input, captured)
        return read === undefined ? Effect.succeed(rejected(`Unknown tool: ${input.call.name}`)) : settleWith(read)
      }
      last = { version, definitions, settle }
      return last
    }

    const materialize = Effect.fn("ToolRegistry.materialize")(function* (
      permissions: ReadonlyArray<VisibilityRule> = [],
    ) {
      const { definitions, settle } = capture(permissions)
      return { definitions: definitions.slice(), settle } satisfies Materialization
    })

    return Service.of({ materialize, register, changes })
  },
)

/**
 * The Location layer: provides both `ToolRegistry.Service` and its registration-only view `Tools.Service`.
 *
 * @since 0.1.0
 * @category layers
 */
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
 *
 * @since 0.1.0
 * @category layers
 */
export const defaultLayer: Layer.Layer<
  Service | Tools.Service | ApplicationTools.Service,
  never,
  FileSystem.FileSystem | Global.Service | Config.Service
> = layer.pipe(Layer.provideMerge(ApplicationTools.layer), Layer.provide(ToolOutputStore.layer))
