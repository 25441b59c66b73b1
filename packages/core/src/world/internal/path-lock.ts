/**
 * One writer per path in this process: `FileMutation` serialises its read-check-write steps on a path through a
 * lock keyed by the canonical path (other processes are covered by the descriptor checks, not by this lock).
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"

const locks = new Map<string, { readonly semaphore: Effect.Semaphore; users: number }>()

/**
 * Runs `effect` uninterruptibly while holding the process-local lock of `key` (a canonical path); a lock lives only
 * while someone holds or waits for it.
 *
 * @since 0.3.0
 * @internal
 */
export const withLock = <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.uninterruptible(
    Effect.acquireUseRelease(
      Effect.sync(() => {
        let lock = locks.get(key)
        if (lock === undefined) locks.set(key, (lock = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 }))
        lock.users++
        return lock
      }),
      (lock) => lock.semaphore.withPermits(1)(effect),
      (lock) =>
        Effect.sync(() => {
          if (--lock.users === 0) locks.delete(key)
        }),
    ),
  )
