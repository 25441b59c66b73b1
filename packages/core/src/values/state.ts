/**
 * A replayable-transform state container. The visible value is rebuilt by replaying every active transform, in
 * registration order, onto a fresh initial value; only a complete fold becomes visible. Rebuilds replay captured
 * values and never create new ones, which is what keeps registry identities stable.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Scope from "effect/Scope"

/**
 * A transform edits the draft; a returned Effect runs as part of the rebuild and its failures become defects.
 *
 * @since 0.1.0
 * @category models
 */
export type Transform<D> = (draft: D) => void | Effect.Effect<void, unknown>

/**
 * Handle returned by `transform`; `dispose` is idempotent and uninterruptible.
 *
 * @since 0.1.0
 * @category models
 */
export interface Registration {
  readonly dispose: Effect.Effect<void>
}

/**
 * A state container.
 *
 * @since 0.1.0
 * @category models
 */
export interface State<A, D> {
  /** The last committed value. */
  readonly get: () => A
  /** Installs a transform until the caller's Scope closes; `get()` reflects it as soon as this returns. */
  readonly transform: (fn: Transform<D>) => Effect.Effect<Registration, never, Scope.Scope>
  /** Rebuilds from scratch, re-running every active transform. */
  readonly reload: Effect.Effect<void>
}

/**
 * Options of `create`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<A, D> {
  readonly initial: () => A
  readonly draft: (value: A) => D
  readonly finalize?: (draft: D) => void
}

const pending = FiberRef.unsafeMake<Set<Effect.Effect<void>> | undefined>(undefined)

/**
 * Defers every rebuild requested inside `effect` until the outermost batch ends; each affected state rebuilds once.
 *
 * @since 0.1.0
 * @category utilities
 */
export const batch = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(FiberRef.get(pending), (outer) => {
    if (outer !== undefined) return effect
    const reloads = new Set<Effect.Effect<void>>()
    return Effect.locally(effect, pending, reloads).pipe(
      Effect.ensuring(Effect.suspend(() => Effect.forEach(reloads, (reload) => reload, { discard: true }))),
    )
  })

/**
 * Creates a state container.
 *
 * @since 0.1.0
 * @category constructors
 */
export const create = <A, D>(options: Options<A, D>): Effect.Effect<State<A, D>> =>
  Effect.gen(function* () {
    const semaphore = yield* Effect.makeSemaphore(1)
    const transforms: Array<{ readonly fn: Transform<D> }> = []
    let current = options.initial()

    const rebuild = Effect.suspend(() => {
      const value = options.initial()
      const draft = options.draft(value)
      return Effect.forEach(
        [...transforms],
        (entry) => {
          const result = entry.fn(draft)
          return Effect.isEffect(result) ? Effect.orDie(result) : Effect.void
        },
        { discard: true },
      ).pipe(
        Effect.tap(() => {
          options.finalize?.(draft)
          current = value
        }),
      )
    })

    const reload: Effect.Effect<void> = semaphore.withPermits(1)(rebuild)

    const reloadOrDefer = Effect.flatMap(FiberRef.get(pending), (reloads) => {
      if (reloads === undefined) return reload
      reloads.add(reload)
      return Effect.void
    })

    const transform = (fn: Transform<D>) =>
      Effect.uninterruptible(
        Effect.gen(function* () {
          const entry = { fn }
          yield* semaphore.withPermits(1)(Effect.sync(() => transforms.push(entry)))
          let disposed = false
          const dispose = Effect.uninterruptible(
            Effect.suspend(() => {
              if (disposed) return Effect.void
              disposed = true
              const index = transforms.indexOf(entry)
              if (index !== -1) transforms.splice(index, 1)
              return reloadOrDefer
            }),
          )
          const scope = yield* Effect.scope
          yield* Scope.addFinalizer(scope, dispose)
          if (!disposed) yield* reloadOrDefer
          return { dispose } satisfies Registration
        }),
      )

    return { get: () => current, transform, reload } satisfies State<A, D>
  })
