/**
 * DecisionJournal: every decision of the permission gate, appended to the `decision` table — each evaluation per
 * resource with the rule that decided and where it came from, each ask, answer (who, through which channel, the
 * choice and what it saved), expiry, release by a saved approval, same-session cascade and revoke. Process-wide;
 * `toolgate decisions` prints it. See docs/decisions.md.
 *
 * This module names everything embedders import: the values live in `internal/schema.ts`, the service in
 * `internal/service.ts` (over the statements of `internal/store.ts`), the Location-scoped retention job in
 * `internal/retention.ts`.
 *
 * @since 0.3.0
 */
import * as internalSchema from "./internal/schema.js"
import * as internalService from "./internal/service.js"
import * as internalRetention from "./internal/retention.js"

/**
 * What an entry records: `evaluated` (a request evaluated, per resource, with the rule that decided), `asked` (an
 * ask queued), `answered` (a reply: who, through which channel, the choice and what it saved), `expired` (nobody
 * answered in time), `auto-resolved` (an ask released because a saved approval now covers it), `cascaded` (an ask
 * settled by the answer to another ask of the same session) and `revoked` (a saved approval removed).
 *
 * @since 0.3.0
 * @category models
 */
export const Kind = internalSchema.Kind
/**
 * @since 0.3.0
 * @category models
 */
export type Kind = internalSchema.Kind
/**
 * Where the rule that decided came from, as `PermissionExplain.Origin` describes it (a built-in default, a
 * configuration file and index, an agent entry or agent file, a saved approval), plus `session` (an approval
 * answered for this session, kept in memory) and `default`: no rule matched, so the request asks.
 *
 * @since 0.3.0
 * @category models
 */
export const Origin = internalSchema.Origin
/**
 * @since 0.3.0
 * @category models
 */
export type Origin = internalSchema.Origin
/**
 * The decision for one resource: its effect, the rule that decided (absent when none matched) and where that rule
 * came from. `note` says why a matching rule was passed over (an explicit action or resource prefix).
 *
 * @since 0.3.0
 * @category models
 */
export const ResourceDecision = internalSchema.ResourceDecision
/**
 * @since 0.3.0
 * @category models
 */
export type ResourceDecision = internalSchema.ResourceDecision
/**
 * Where an answer saved its approvals: the project and the directory (`""` for the whole project).
 *
 * @since 0.3.0
 * @category models
 */
export const Where = internalSchema.Where
/**
 * @since 0.3.0
 * @category models
 */
export type Where = internalSchema.Where
/**
 * `evaluated`: the agent the request was evaluated for, the aggregate effect and one decision per resource.
 *
 * @since 0.3.0
 * @category models
 */
export const Evaluated = internalSchema.Evaluated
/**
 * `asked`: the digest the answer must name, the patterns an `always` would save, the choice ids offered, the tool
 * call, and the deadline (epoch milliseconds) when there is one.
 *
 * @since 0.3.0
 * @category models
 */
export const Asked = internalSchema.Asked
/**
 * `answered`: the choice id and what it means (`lifetime`: an `Approvals.Lifetime`; `scope`: an `always`'s
 * `Approvals.AlwaysScope`), who answered through which channel, the patterns saved and where, the TTL and the time
 * the approval lapses, and a reject's message. Lifetime and scope are read as plain strings, so entries written by
 * a later version that knows more of them still read.
 *
 * @since 0.3.0
 * @category models
 */
export const Answered = internalSchema.Answered
/**
 * `expired`: the timeout that ran out.
 *
 * @since 0.3.0
 * @category models
 */
export const Expired = internalSchema.Expired
/**
 * `auto-resolved`: the request whose answer saved the covering approval (absent when it was saved elsewhere: another
 * Location or process) and, per resource, the rule that now allows it.
 *
 * @since 0.3.0
 * @category models
 */
export const AutoResolved = internalSchema.AutoResolved
/**
 * `cascaded`: the request whose answer settled this one, and that answer's choice id.
 *
 * @since 0.3.0
 * @category models
 */
export const Cascaded = internalSchema.Cascaded
/**
 * `revoked`: the saved approval's id and directory, and who removed it through which channel.
 *
 * @since 0.3.0
 * @category models
 */
export const Revoked = internalSchema.Revoked
/**
 * `hook`: which hook decided (`origin` is `hook:<plugin>/<hook>`), what it decided (`deny`, `ask`, `context`,
 * `rewrite`, or the effect a `permission.evaluate` hook left), the effect before it (`permission.evaluate`), its
 * reason, and the tool call it saw (tool hooks).
 *
 * @since 0.4.0
 * @category models
 */
export const Hook = internalSchema.Hook
/**
 * One journal entry: id, time, project, session and request (when there are ones), kind, action, resources, and
 * the kind's detail.
 *
 * @since 0.3.0
 * @category models
 */
export const Entry = internalSchema.Entry
/**
 * @since 0.3.0
 * @category models
 */
export type Entry = internalSchema.Entry
/**
 * An entry to append: everything but `id` and `time`, which the journal gives it when it is recorded.
 *
 * @since 0.3.0
 * @category models
 */
export type Draft = internalSchema.Draft
/**
 * Which entries to read. All fields narrow; entries come oldest first, and with `limit` the newest `limit` of the
 * matching ones (still oldest first).
 *
 * @since 0.3.0
 * @category models
 */
export type Query = internalSchema.Query
/**
 * What `prune` deletes: entries older than `olderThan` (epoch milliseconds) and, with `keep`, all but the newest
 * `keep` entries — of one project, or of every project.
 *
 * @since 0.3.0
 * @category models
 */
export type Prune = internalSchema.Prune
/**
 * How often buffered entries are written (milliseconds).
 *
 * @since 0.3.0
 * @category constants
 */
export const FLUSH_INTERVAL_MS = internalService.FLUSH_INTERVAL_MS
/**
 * How many buffered entries start a write before the interval is up.
 *
 * @since 0.3.0
 * @category constants
 */
export const FLUSH_BATCH = internalService.FLUSH_BATCH
/**
 * The most entries the buffer holds while writes fail; beyond it the oldest are dropped (with a warning).
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_BUFFERED = internalService.MAX_BUFFERED
/**
 * Returns a fresh `dec_…` id.
 *
 * @since 0.3.0
 * @category constructors
 */
export const createID = internalService.createID
/**
 * The decision journal.
 *
 * @since 0.3.0
 * @category models
 */
export type Interface = internalService.Interface
export {
  /**
   * The DecisionJournal service tag.
   *
   * @since 0.3.0
   * @category tags
   */
  Service,
} from "./internal/service.js"
/**
 * Builds the journal over the current `SqlClient`: the buffer, its writer fiber (in the layer's scope) and a last
 * write when the scope closes.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = internalService.make
/**
 * The process-wide journal on the `decision` table (build it once per process, beside `PermissionSaved.layer`).
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = internalService.layer
/**
 * How many days entries are kept when no configuration document sets `journal.retention_days`.
 *
 * @since 0.3.0
 * @category constants
 */
export const DEFAULT_RETENTION_DAYS = internalRetention.DEFAULT_RETENTION_DAYS
/**
 * How often an open Location prunes its project's entries again.
 *
 * @since 0.3.0
 * @category constants
 */
export const PRUNE_INTERVAL = internalRetention.PRUNE_INTERVAL
/**
 * What the configuration keeps: each field from the latest document that sets it.
 *
 * @since 0.3.0
 * @category models
 */
export type Retention = internalRetention.Retention
/**
 * The retention `entries` configure (lowest priority first, as `Config.Service` lists them).
 *
 * @since 0.3.0
 * @category constructors
 */
export const retentionOf = internalRetention.retentionOf
/**
 * What `retention` prunes of `projectID` at `now` (epoch milliseconds).
 *
 * @since 0.3.0
 * @category constructors
 */
export const pruneOf = internalRetention.pruneOf
/**
 * The Location-scoped retention job: prunes the project's entries when the Location opens (before the layer is
 * built) and every `PRUNE_INTERVAL` after, in a fiber closed with the Location. A failed prune is logged as a
 * warning and tried again at the next interval; it never stops the Location.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerRetention = internalRetention.layerRetention
