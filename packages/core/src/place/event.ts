/**
 * Typed live events. Listeners run synchronously inside `publish`, so a failing listener fails the publish (the
 * permission service relies on this to roll back a pending request); `subscribe` offers a scoped Stream. Naming
 * definitions in `subscribe`, `queue` or `listen` narrows the envelopes to those types, with typed data.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Identifier from "../values/identifier.js"
import * as Location from "./location.js"

/**
 * An event type and the schema of its data.
 *
 * @since 0.1.0
 * @category models
 */
export interface Definition<Type extends string = string, Data = unknown> {
  readonly type: Type
  readonly schema: Schema.Schema<Data, any, never>
}

/**
 * Declares an event type.
 *
 * @since 0.1.0
 * @category utilities
 */
export const define = <const Type extends string, Data>(
  type: Type,
  schema: Schema.Schema<Data, any, never>,
): Definition<Type, Data> => ({ type, schema })

/**
 * What subscribers receive; `Type` and `Data` are narrowed when the subscription names definitions.
 *
 * @since 0.1.0
 * @category models
 */
export interface Envelope<Data = unknown, Type extends string = string> {
  readonly id: string
  readonly type: Type
  readonly location?: { readonly directory: string; readonly workspaceID?: string }
  readonly data: Data
  readonly metadata?: Record<string, unknown>
}

/**
 * The envelope union of a list of definitions, discriminated by `type`.
 *
 * @since 0.2.0
 * @category models
 */
export type EnvelopeOf<D> = D extends Definition<infer Type, infer Data> ? Envelope<Data, Type> : never

/**
 * Narrows an envelope of any subscription to one definition's typed envelope.
 *
 * @since 0.2.0
 * @category utilities
 */
export const is =
  <Type extends string, Data>(definition: Definition<Type, Data>) =>
  (envelope: Envelope): envelope is Envelope<Data, Type> =>
    envelope.type === definition.type

/**
 * A synchronous listener; throwing fails the publish.
 *
 * @since 0.1.0
 * @category models
 */
export type Listener<E extends Envelope = Envelope> = (envelope: E) => void

type Selected<Ds extends ReadonlyArray<Definition<any, any>>> = Ds extends readonly []
  ? Envelope
  : EnvelopeOf<Ds[number]>

/**
 * The bus operations. Naming definitions narrows what a subscription receives and types it; none means all.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  readonly publish: <Type extends string, Data>(
    definition: Definition<Type, Data>,
    data: NoInfer<Data>,
    metadata?: Record<string, unknown>,
  ) => Effect.Effect<void, unknown>
  /**
   * Publishes one event per element of `data`, in order, exactly as that many `publish` calls one after the other
   * would: each envelope reaches every listener before the next is built, so every subscriber sees the same events
   * in the same order. It is one effect for the whole batch. `delivered(index)` runs right after element `index`
   * reached every listener; the first listener failure (or a throw from `delivered`) stops the batch and fails it,
   * and later elements are not published.
   *
   * @since 0.2.0
   */
  readonly publishAll: <Type extends string, Data>(
    definition: Definition<Type, Data>,
    data: ReadonlyArray<NoInfer<Data>>,
    delivered?: (index: number) => void,
  ) => Effect.Effect<void, unknown>
  /** The events of the given definitions (all events when none is named) from now until the scope closes. */
  readonly subscribe: <const Ds extends ReadonlyArray<Definition<any, any>>>(
    ...definitions: Ds
  ) => Effect.Effect<Stream.Stream<Selected<Ds>>, never, Scope.Scope>
  /** A queue of the given definitions' events (all events when none is named) from now until the scope closes. */
  readonly queue: <const Ds extends ReadonlyArray<Definition<any, any>>>(
    ...definitions: Ds
  ) => Effect.Effect<Queue.Dequeue<Selected<Ds>>, never, Scope.Scope>
  /** Calls `listener` synchronously for every event of the given definitions (all when none) until the scope closes. */
  readonly listen: <const Ds extends ReadonlyArray<Definition<any, any>>>(
    listener: Listener<Selected<Ds>>,
    ...definitions: Ds
  ) => Effect.Effect<void, never, Scope.Scope>
  /**
   * How many subscriptions (listeners, queues and streams) an event of `definition` would reach now; a subscription
   * to every event counts. For callers that need to know whether anyone is there to react: the AI SDK adapter fails
   * an ask at once when nothing in the process answers asks.
   *
   * @since 0.3.0
   */
  readonly subscribers: (definition: Definition<any, any>) => Effect.Effect<number>
}

/**
 * The EventV2 service (Location-scoped).
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Event")<Service, Interface>() {}

/**
 * Builds a bus stamped with the current Location. Every subscriber is a synchronous listener, so queues and
 * streams see events in publish order and a publish returns only after every subscriber has it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Interface, never, Location.Service | Scope.Scope> = Effect.gen(function* () {
  const location = yield* Location.Service
  const listeners = new Set<Listener>()
  /** The event types each listener receives; `undefined` for every event. */
  const kinds = new Map<Listener, ReadonlySet<string> | undefined>()
  const stamp =
    location.workspaceID === undefined
      ? { directory: location.directory }
      : { directory: location.directory, workspaceID: location.workspaceID }

  const deliver = (type: string, data: unknown, metadata: Record<string, unknown> | undefined): void => {
    const envelope: Envelope =
      metadata === undefined
        ? { id: Identifier.create("evt"), type, location: stamp, data }
        : { id: Identifier.create("evt"), type, location: stamp, data, metadata }
    for (const listener of listeners) listener(envelope)
  }

  // `publish` runs on every queued permission ask: a suspend with its own try/catch costs a third of `Effect.try`
  // (which wraps the call for its stack-trace handling), with the same outcome: a listener's throw is the failure.
  const publish = <Type extends string, Data>(
    definition: Definition<Type, Data>,
    data: Data,
    metadata?: Record<string, unknown>,
  ): Effect.Effect<void, unknown> =>
    Effect.suspend(() => {
      try {
        deliver(definition.type, data, metadata)
        return Effect.void
      } catch (error) {
        return Effect.fail(error)
      }
    })

  const publishAll = <Type extends string, Data>(
    definition: Definition<Type, Data>,
    data: ReadonlyArray<Data>,
    delivered?: (index: number) => void,
  ): Effect.Effect<void, unknown> =>
    data.length === 0
      ? Effect.void
      : Effect.suspend(() => {
          try {
            for (let i = 0; i < data.length; i++) {
              deliver(definition.type, data[i], undefined)
              delivered?.(i)
            }
            return Effect.void
          } catch (error) {
            return Effect.fail(error)
          }
        })

  const selecting = (definitions: ReadonlyArray<Definition<any, any>>): ((envelope: Envelope) => boolean) => {
    if (definitions.length === 0) return () => true
    const types = new Set(definitions.map((definition) => definition.type))
    return (envelope) => types.has(envelope.type)
  }

  const listen = <const Ds extends ReadonlyArray<Definition<any, any>>>(
    listener: Listener<Selected<Ds>>,
    ...definitions: Ds
  ): Effect.Effect<void, never, Scope.Scope> => {
    const selected = selecting(definitions)
    // The only place envelopes are narrowed: `selected` admits exactly the named definitions' types.
    const wrapped: Listener = (envelope) => {
      if (selected(envelope)) listener(envelope as Selected<Ds>)
    }
    const types = definitions.length === 0 ? undefined : new Set(definitions.map((definition) => definition.type))
    return Effect.acquireRelease(
      Effect.sync(() => {
        listeners.add(wrapped)
        kinds.set(wrapped, types)
      }),
      () =>
        Effect.sync(() => {
          listeners.delete(wrapped)
          kinds.delete(wrapped)
        }),
    ).pipe(Effect.asVoid)
  }

  const queue = <const Ds extends ReadonlyArray<Definition<any, any>>>(...definitions: Ds) =>
    Effect.gen(function* () {
      const dequeue = yield* Effect.acquireRelease(Queue.unbounded<Selected<Ds>>(), Queue.shutdown)
      yield* listen<Ds>((envelope) => void Queue.unsafeOffer(dequeue, envelope), ...definitions)
      return dequeue as Queue.Dequeue<Selected<Ds>>
    })

  const subscribe = <const Ds extends ReadonlyArray<Definition<any, any>>>(...definitions: Ds) =>
    Effect.map(queue(...definitions), (dequeue) => Stream.fromQueue(dequeue))

  const subscribers = (definition: Definition<any, any>): Effect.Effect<number> =>
    Effect.sync(() => {
      let count = 0
      for (const types of kinds.values()) if (types === undefined || types.has(definition.type)) count++
      return count
    })

  return Service.of({ publish, publishAll, subscribe, queue, listen, subscribers })
})

/**
 * The Location-scoped layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, Location.Service> = Layer.scoped(Service, make)
