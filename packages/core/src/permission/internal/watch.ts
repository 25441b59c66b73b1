/**
 * The watcher of a Location's pending asks: while asks are pending, a change of the saved approvals made elsewhere
 * (another process, another Location on the same database) releases the ones it covers. The change stamp is read
 * every `PENDING_RECHECK_INTERVAL_MS`; when it moved since the last pass the pending asks are evaluated again
 * against the fresh saved rules. It stops when nothing is pending and starts again with the next ask.
 *
 * @since 0.3.0
 * @internal
 */
import * as Fx from "effect/Effect"

/**
 * How often a Location with pending asks checks whether the saved approvals changed (another process or Location
 * saved one), so that an ask a new approval covers is released without waiting for a reply in this Location. Only
 * while asks are pending; a check is one read of the database's change stamp.
 *
 * @since 0.3.0
 * @category constants
 */
export const PENDING_RECHECK_INTERVAL_MS = 100

/**
 * Builds the watcher: `ensure` starts it (through `start`, in the Location's runtime and scope) unless it runs.
 *
 * @internal
 * @category constructors
 */
export const make = (deps: {
  readonly changeStamp: Fx.Effect<string>
  readonly stamp: () => string | undefined
  readonly release: Fx.Effect<void>
  readonly idle: () => boolean
  readonly start: (watch: Fx.Effect<void>) => void
}) => {
  let watching = false
  let seen: string | undefined
  let warned = false
  const recheck = Fx.flatMap(deps.changeStamp, (stamp) => {
    if (stamp === seen) return Fx.void
    return deps.release.pipe(
      Fx.tap(() =>
        Fx.sync(() => {
          seen = stamp
          warned = false
        }),
      ),
    )
  }).pipe(
    Fx.catchAllDefect((defect) =>
      warned
        ? Fx.void
        : Fx.zipRight(
            Fx.sync(() => (warned = true)),
            Fx.logWarning("PermissionV2: could not re-check pending asks against the saved approvals", defect),
          ),
    ),
  )
  const watch: Fx.Effect<void> = Fx.gen(function* () {
    for (;;) {
      yield* Fx.sleep(PENDING_RECHECK_INTERVAL_MS)
      if (deps.idle()) {
        watching = false
        return
      }
      yield* recheck
    }
  })
  return {
    ensure: () => {
      if (watching) return
      watching = true
      seen = deps.stamp()
      deps.start(watch)
    },
  }
}
