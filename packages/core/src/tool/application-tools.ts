/**
 * Process-wide tool registrations: the public registration API of embedding applications. One instance per
 * process, shared by every Location. Registrations are replayed State transforms, so rebuilds never mint new
 * identities and unrelated churn never makes an advertised tool stale.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as State from "../values/state.js"
import * as Tool from "./tool.js"

/**
 * One effective registration: a fresh identity per (name, registration) plus the tool.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly identity: object
  readonly tool: Tool.AnyTool
}

/**
 * The ApplicationTools operations.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /** Registers every tool of the record until the caller's Scope closes; the latest active registration wins. */
  readonly register: (
    tools: Readonly<Record<string, Tool.AnyTool>>,
  ) => Effect.Effect<void, Tool.RegistrationError, Scope.Scope>
  /**
   * The current effective name → entry map. Every change yields a new map (the old one is never edited), so map
   * identity tells a reader whether anything changed; the registry's catalogue relies on that.
   */
  readonly entries: () => ReadonlyMap<string, Entry>
  /**
   * One element each time a registration is added or removed, after the change is visible in `entries`. The
   * stream subscribes when it is run; changes before that are not replayed.
   *
   * @since 0.2.0
   */
  readonly changes: Stream.Stream<void>
}

/**
 * The ApplicationTools service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/ApplicationTools")<Service, Interface>() {}

/**
 * Builds a fresh registration set.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Interface> = Effect.gen(function* () {
  const state = yield* State.create<Map<string, Entry>, Map<string, Entry>>({
    initial: () => new Map(),
    draft: (value) => value,
  })

  const hub = yield* PubSub.unbounded<void>()
  const changed = PubSub.publish(hub, undefined)

  const register = Effect.fn("ApplicationTools.register")(function* (tools: Readonly<Record<string, Tool.AnyTool>>) {
    const entries = Object.entries(tools)
    if (entries.length === 0) return
    yield* Tool.validateNames(entries.map(([name]) => name))
    const pairs = entries.map(([name, tool]) => [name, { identity: {}, tool }] as const)
    // Added before the transform, so on close it runs after the removal (finalizers run last-in, first-out).
    yield* Effect.addFinalizer(() => changed)
    yield* state.transform((draft) => {
      for (const [name, entry] of pairs) draft.set(name, entry)
    })
    yield* changed
  })

  return Service.of({ register, entries: () => state.get(), changes: Stream.fromPubSub(hub) })
})

/**
 * The process-wide layer; build it once per process.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service> = Layer.effect(Service, make)
