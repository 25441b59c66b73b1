/**
 * The values of the decision journal: the kinds of entry, the winning rule's origin, what each kind records in its
 * `detail`, an entry as stored and read back, and the query. `DecisionJournal` names everything exported here.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import * as Config from "../../place/config.js"

/**
 * What an entry records: `evaluated` (a request evaluated, per resource, with the rule that decided), `asked` (an
 * ask queued), `answered` (a reply: who, through which channel, the choice and what it saved), `expired` (nobody
 * answered in time), `auto-resolved` (an ask released because a saved approval now covers it), `cascaded` (an ask
 * settled by the answer to another ask of the same session), `revoked` (a saved approval removed) and `hook` (a
 * plugin's hook denied, asked, rewrote, added context or tightened a decision; since 0.4.0).
 *
 * @since 0.3.0
 * @category models
 */
export const Kind = Schema.Literal(
  "evaluated",
  "asked",
  "answered",
  "expired",
  "auto-resolved",
  "cascaded",
  "revoked",
  "hook",
)
/**
 * @since 0.3.0
 * @category models
 */
export type Kind = typeof Kind.Type

/**
 * Where the rule that decided came from, as `PermissionExplain.Origin` describes it (a built-in default, a
 * configuration file and index, an agent entry or agent file, a saved approval), plus `session` (an approval
 * answered for this session, kept in memory) and `default`: no rule matched, so the request asks.
 *
 * @since 0.3.0
 * @category models
 */
export const Origin = Schema.Union(
  Schema.Struct({ type: Schema.Literal("builtin") }),
  Schema.Struct({ type: Schema.Literal("config"), path: Schema.optional(Schema.String), index: Schema.Number }),
  Schema.Struct({
    type: Schema.Literal("agent"),
    path: Schema.optional(Schema.String),
    agent: Schema.String,
    index: Schema.Number,
    file: Schema.Boolean,
  }),
  Schema.Struct({ type: Schema.Literal("saved"), id: Schema.String, timeCreated: Schema.Number }),
  Schema.Struct({ type: Schema.Literal("session") }),
  Schema.Struct({ type: Schema.Literal("unknown") }),
  Schema.Struct({ type: Schema.Literal("default") }),
)
/**
 * @since 0.3.0
 * @category models
 */
export type Origin = typeof Origin.Type

/**
 * The decision for one resource: its effect, the rule that decided (absent when none matched) and where that rule
 * came from. `note` says why a matching rule was passed over (an explicit action or resource prefix).
 *
 * @since 0.3.0
 * @category models
 */
export const ResourceDecision = Schema.Struct({
  resource: Schema.String,
  effect: Schema.Literal("allow", "deny", "ask"),
  rule: Schema.optional(Config.PermissionRule),
  origin: Origin,
  note: Schema.optional(Schema.String),
})
/**
 * @since 0.3.0
 * @category models
 */
export type ResourceDecision = typeof ResourceDecision.Type

/**
 * Where an answer saved its approvals: the project and the directory (`""` for the whole project).
 *
 * @since 0.3.0
 * @category models
 */
export const Where = Schema.Struct({ projectID: Schema.String, directory: Schema.String })
/**
 * @since 0.3.0
 * @category models
 */
export type Where = typeof Where.Type

/**
 * `evaluated`: the agent the request was evaluated for, the aggregate effect and one decision per resource.
 *
 * @since 0.3.0
 * @category models
 */
export const Evaluated = Schema.Struct({
  agent: Schema.optional(Schema.String),
  effect: Schema.Literal("allow", "deny", "ask"),
  decisions: Schema.Array(ResourceDecision),
})

/**
 * `asked`: the digest the answer must name, the patterns an `always` would save, the choice ids offered, the tool
 * call, and the deadline (epoch milliseconds) when there is one.
 *
 * @since 0.3.0
 * @category models
 */
export const Asked = Schema.Struct({
  digest: Schema.optional(Schema.String),
  save: Schema.optional(Schema.Array(Schema.String)),
  choices: Schema.optional(Schema.Array(Schema.String)),
  tool: Schema.optional(Schema.Struct({ name: Schema.String, callID: Schema.String })),
  deadline: Schema.optional(Schema.Number),
})

/**
 * `answered`: the choice id and what it means (`lifetime`: an `Approvals.Lifetime`; `scope`: an `always`'s
 * `Approvals.AlwaysScope`), who answered through which channel, the patterns saved and where, the TTL and the time
 * the approval lapses, and a reject's message. Lifetime and scope are read as plain strings, so entries written by
 * a later version that knows more of them still read.
 *
 * @since 0.3.0
 * @category models
 */
export const Answered = Schema.Struct({
  choice: Schema.String,
  lifetime: Schema.String,
  scope: Schema.optional(Schema.String),
  channel: Schema.String,
  by: Schema.optional(Schema.String),
  saved: Schema.Array(Schema.String),
  where: Schema.optional(Where),
  ttlMillis: Schema.optional(Schema.Number),
  until: Schema.optional(Schema.Number),
  message: Schema.optional(Schema.String),
})

/**
 * `expired`: the timeout that ran out.
 *
 * @since 0.3.0
 * @category models
 */
export const Expired = Schema.Struct({ timeoutMillis: Schema.Number })

/**
 * `auto-resolved`: the request whose answer saved the covering approval (absent when it was saved elsewhere: another
 * Location or process) and, per resource, the rule that now allows it.
 *
 * @since 0.3.0
 * @category models
 */
export const AutoResolved = Schema.Struct({
  cause: Schema.optional(Schema.String),
  decisions: Schema.Array(ResourceDecision),
})

/**
 * `cascaded`: the request whose answer settled this one, and that answer's choice id.
 *
 * @since 0.3.0
 * @category models
 */
export const Cascaded = Schema.Struct({ cause: Schema.String, choice: Schema.String })

/**
 * `revoked`: the saved approval's id and directory, and who removed it through which channel.
 *
 * @since 0.3.0
 * @category models
 */
export const Revoked = Schema.Struct({
  savedID: Schema.String,
  directory: Schema.String,
  channel: Schema.optional(Schema.String),
  by: Schema.optional(Schema.String),
})

/**
 * `hook`: which hook decided (`origin` is `hook:<plugin>/<hook>`), what it decided (`deny`, `ask`, `context`,
 * `rewrite`, or the effect a `permission.evaluate` hook left), the effect before it (`permission.evaluate`), its
 * reason, and the tool call it saw (tool hooks).
 *
 * @since 0.4.0
 * @category models
 */
export const Hook = Schema.Struct({
  origin: Schema.String,
  plugin: Schema.String,
  hook: Schema.String,
  decision: Schema.String,
  from: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  tool: Schema.optional(Schema.Struct({ name: Schema.String, callID: Schema.String })),
})

const fields = {
  /** `dec_…`, ascending within a process. */
  id: Schema.String,
  /** Epoch milliseconds. */
  time: Schema.Number,
  projectID: Schema.String,
  sessionID: Schema.optional(Schema.String),
  requestID: Schema.optional(Schema.String),
  action: Schema.String,
  resources: Schema.Array(Schema.String),
}

const variant = <K extends Kind, D extends Schema.Schema.Any>(kind: K, detail: D) =>
  Schema.Struct({ ...fields, kind: Schema.Literal(kind), detail })

/**
 * One journal entry: id, time, project, session and request (when there are ones), kind, action, resources, and
 * the kind's detail.
 *
 * @since 0.3.0
 * @category models
 */
export const Entry = Schema.Union(
  variant("evaluated", Evaluated),
  variant("asked", Asked),
  variant("answered", Answered),
  variant("expired", Expired),
  variant("auto-resolved", AutoResolved),
  variant("cascaded", Cascaded),
  variant("revoked", Revoked),
  variant("hook", Hook),
)
/**
 * @since 0.3.0
 * @category models
 */
export type Entry = typeof Entry.Type

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/**
 * An entry to append: everything but `id` and `time`, which the journal gives it when it is recorded.
 *
 * @since 0.3.0
 * @category models
 */
export type Draft = DistributiveOmit<Entry, "id" | "time">

/**
 * Which entries to read. All fields narrow; entries come oldest first, and with `limit` the newest `limit` of the
 * matching ones (still oldest first).
 *
 * @since 0.3.0
 * @category models
 */
export interface Query {
  readonly projectID?: string | undefined
  readonly sessionID?: string | undefined
  readonly requestID?: string | undefined
  /** Entries at or after this time (epoch milliseconds). */
  readonly since?: number | undefined
  readonly kinds?: ReadonlyArray<Kind> | undefined
  readonly limit?: number | undefined
}

/**
 * What `prune` deletes: entries older than `olderThan` (epoch milliseconds) and, with `keep`, all but the newest
 * `keep` entries — of one project, or of every project.
 *
 * @since 0.3.0
 * @category models
 */
export interface Prune {
  readonly projectID?: string | undefined
  readonly olderThan?: number | undefined
  readonly keep?: number | undefined
}
