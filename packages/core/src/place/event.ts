/**
 * Typed live events. Listeners run synchronously inside `publish`, so a failing listener fails the publish (the
 * permission service relies on this to roll back a pending request); `subscribe` offers a scoped Stream.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, PubSub, Queue, type Schema, type Scope, Stream } from "effect"
import * as Identifier from "../values/identifier.js"
import * as Location from "./location.js"

/** An event type and the schema of its data. */
export interface Definition<Type extends string = string, Data = unknown> {
  readonly type: Type
  readonly schema: Schema.Schema<Data, any, never>
}

/** Declares an event type. */
export const define = <const Type extends string, Data>(
  type: Type,
  schema: Schema.Schema<Data, any, never>,
): Definition<Type, Data> => ({ type, schema })

/** What subscribers receive. */
export interface Envelope<Data = unknown> {
  readonly id: string
  readonly type: string
  readonly location?: { readonly directory: string; readonly workspaceID?: string }
  readonly data: Data
  readonly metadata?: Record<string, unknown>
}

/** A synchronous listener; throwing fails the publish. */
export type Listener = (envelope: Envelope) => void

/** The bus operations. */
export interface Interface {
  readonly publish: <Data>(
    definition: Definition<string, Data>,
    data: Data,
    metadata?: Record<string, unknown>,
  ) => Effect.Effect<void, unknown>
  /** All events from now until the scope closes. */
  readonly subscribe: () => Effect.Effect<Stream.Stream<Envelope>, never, Scope.Scope>
  /** A queue of all events from now until the scope closes. */
  readonly queue: () => Effect.Effect<Queue.Dequeue<Envelope>, never, Scope.Scope>
  /** Calls `listener` synchronously for every event until the scope closes. */
  readonly listen: (listener: Listener) => Effect.Effect<void, never, Scope.Scope>
}

/** The EventV2 service (Location-scoped). */
export class Service extends Context.Tag("@toolgate/v2/Event")<Service, Interface>() {}

/** Builds a bus stamped with the current Location. */
export const make: Effect.Effect<Interface, never, Location.Service | Scope.Scope> = Effect.gen(function* () {
  const location = yield* Location.Service
  const hub = yield* Effect.acquireRelease(PubSub.unbounded<Envelope>(), PubSub.shutdown)
  const listeners = new Set<Listener>()
  const stamp =
    location.workspaceID === undefined
      ? { directory: location.directory }
      : { directory: location.directory, workspaceID: location.workspaceID }

  const publish = Effect.fn("EventV2.publish")(function* <Data>(
    definition: Definition<string, Data>,
    data: Data,
    metadata?: Record<string, unknown>,
  ) {
    const envelope: Envelope = {
      id: Identifier.create("evt"),
      type: definition.type,
      location: stamp,
      data,
      ...(metadata === undefined ? {} : { metadata }),
    }
    yield* Effect.try({
      try: () => {
        for (const listener of listeners) listener(envelope)
      },
      catch: (error) => error,
    })
    yield* PubSub.publish(hub, envelope)
  })

  const queue = () => PubSub.subscribe(hub)
  const subscribe = () => Effect.map(queue(), (dequeue) => Stream.fromQueue(dequeue))
  const listen = (listener: Listener) =>
    Effect.acquireRelease(
      Effect.sync(() => listeners.add(listener)),
      () => Effect.sync(() => listeners.delete(listener)),
    ).pipe(Effect.asVoid)

  return Service.of({ publish, subscribe, queue, listen })
})

/** The Location-scoped layer. */
export const layer: Layer.Layer<Service, never, Location.Service> = Layer.scoped(Service, make)
