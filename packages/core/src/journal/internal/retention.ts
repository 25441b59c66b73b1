/**
 * The decision journal's retention: the `journal` section of a Location's configuration (`retention_days`,
 * `max_entries`) applied to the entries of the Location's project when the Location opens and every hour while it
 * is open. Each project keeps its entries as its own configuration says; a project no Location opens keeps its
 * entries until one does.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Config from "../../place/config.js"
import * as Location from "../../place/location.js"
import type { Prune } from "./schema.js"
import { Service } from "./service.js"

/**
 * How many days entries are kept when no configuration document sets `journal.retention_days`.
 *
 * @since 0.3.0
 * @category constants
 */
export const DEFAULT_RETENTION_DAYS = 30

/**
 * How often an open Location prunes its project's entries again.
 *
 * @since 0.3.0
 * @category constants
 */
export const PRUNE_INTERVAL = "1 hour"

const DAY_MS = 86_400_000

/**
 * What the configuration keeps: each field from the latest document that sets it.
 *
 * @since 0.3.0
 * @category models
 */
export interface Retention {
  readonly days: number
  readonly maxEntries: number | undefined
}

/**
 * The retention `entries` configure (lowest priority first, as `Config.Service` lists them).
 *
 * @since 0.3.0
 * @category constructors
 */
export const retentionOf = (entries: ReadonlyArray<Config.Entry>): Retention => {
  let days = DEFAULT_RETENTION_DAYS
  let maxEntries: number | undefined
  for (const entry of entries) {
    if (entry.type !== "document") continue
    const journal = entry.info.journal
    if (journal?.retention_days !== undefined) days = journal.retention_days
    if (journal?.max_entries !== undefined) maxEntries = journal.max_entries
  }
  return { days, maxEntries }
}

/**
 * What `retention` prunes of `projectID` at `now` (epoch milliseconds).
 *
 * @since 0.3.0
 * @category constructors
 */
export const pruneOf = (projectID: string, retention: Retention, now: number): Prune => ({
  projectID,
  olderThan: now - retention.days * DAY_MS,
  ...(retention.maxEntries === undefined ? {} : { keep: retention.maxEntries }),
})

/**
 * The Location-scoped retention job: prunes the project's entries when the Location opens (before the layer is
 * built) and every `PRUNE_INTERVAL` after, in a fiber closed with the Location. A failed prune is logged as a
 * warning and tried again at the next interval; it never stops the Location.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerRetention: Layer.Layer<never, never, Service | Config.Service | Location.Service> =
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const journal = yield* Service
      const location = yield* Location.Service
      const retention = retentionOf(yield* (yield* Config.Service).entries())
      const prune = Effect.flatMap(
        Effect.clockWith((clock) => clock.currentTimeMillis),
        (now) => journal.prune(pruneOf(location.project.id, retention, now)),
      ).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning(`DecisionJournal: could not prune the entries of ${location.project.id}`, error),
        ),
      )
      yield* prune
      yield* Effect.forkScoped(Effect.schedule(prune, Schedule.spaced(PRUNE_INTERVAL)))
    }),
  )
