/**
 * The values of the permission gate: rules and rulesets, requests and their ids, what an `always` reply saves and
 * where, the inputs of `ask`, `assert`, `reply` and `check`, and the two events. `PermissionV2` re-exports
 * everything here.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import * as Config from "../../place/config.js"
import * as EventV2 from "../../place/event.js"
import * as Identifier from "../../values/identifier.js"

/**
 * A rule's effect.
 *
 * @since 0.1.0
 * @category models
 */
export const Effect = Schema.Literal("allow", "deny", "ask")
/**
 * @see Effect
 *
 * @since 0.1.0
 * @category models
 */
export type Effect = typeof Effect.Type

/**
 * `{ action, resource, effect }`; both patterns are Wildcard patterns.
 *
 * @since 0.1.0
 * @category models
 */
export const Rule = Config.PermissionRule
/**
 * @see Rule
 *
 * @since 0.1.0
 * @category models
 */
export type Rule = typeof Rule.Type

/**
 * An ordered list of rules; the last match wins.
 *
 * @since 0.1.0
 * @category models
 */
export const Ruleset = Schema.Array(Rule)
/**
 * @see Ruleset
 *
 * @since 0.1.0
 * @category models
 */
export type Ruleset = ReadonlyArray<Rule>

/**
 * A permission request id (`per…`).
 *
 * @since 0.1.0
 * @category constants
 */
export const ID = Schema.String.pipe(Schema.startsWith("per"))
/**
 * @see ID
 *
 * @since 0.1.0
 * @category models
 */
export type ID = typeof ID.Type

/**
 * Returns `id` (validated) or a fresh `per_…` id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createID = (id?: string): ID => {
  if (id === undefined) return Identifier.create("per")
  return Schema.decodeSync(ID)(id)
}

/**
 * Where a request came from.
 *
 * @since 0.1.0
 * @category models
 */
export const Source = Schema.Struct({
  type: Schema.Literal("tool"),
  messageID: Schema.String,
  callID: Schema.String,
})
/**
 * @see Source
 *
 * @since 0.1.0
 * @category models
 */
export type Source = typeof Source.Type

/**
 * One pattern an `always` reply saves: the stored Wildcard `pattern`, its human rendering `text`, and whether it is
 * a literal (matches exactly `text`, `*`/`?` included) rather than a wildcard pattern.
 *
 * @since 0.2.0
 * @category models
 */
export const SaveEntry = Schema.Struct({
  pattern: Schema.String,
  text: Schema.String,
  literal: Schema.Boolean,
})
/**
 * @see SaveEntry
 *
 * @since 0.1.0
 * @category models
 */
export type SaveEntry = typeof SaveEntry.Type

/**
 * Where an `always` reply saves: `project` (every Location of the project `projectID`, whose directory is
 * `directory`) or `directory` (the `global` project: only Locations in exactly `directory`).
 *
 * @since 0.2.0
 * @category models
 */
export const SaveScope = Schema.Struct({
  kind: Schema.Literal("project", "directory"),
  projectID: Schema.String,
  directory: Schema.String,
})
/**
 * @see SaveScope
 *
 * @since 0.1.0
 * @category models
 */
export type SaveScope = typeof SaveScope.Type

/**
 * What an `always` reply will save, so every prompt can show it before the user chooses: the action, the patterns
 * (empty: `always` saves nothing and acts like `once`) and the scope.
 *
 * @since 0.2.0
 * @category models
 */
export const Always = Schema.Struct({
  action: Schema.String,
  entries: Schema.Array(SaveEntry),
  scope: SaveScope,
})
/**
 * @see Always
 *
 * @since 0.1.0
 * @category models
 */
export type Always = typeof Always.Type

/**
 * A pending request as clients see it (there is deliberately no `agent` field). `save` holds Wildcard patterns
 * (build literal ones with `Wildcard.literal`); `always` describes them for display.
 *
 * @since 0.1.0
 * @category models
 */
export const Request = Schema.Struct({
  id: ID,
  sessionID: Schema.String,
  action: Schema.String,
  resources: Schema.Array(Schema.String),
  save: Schema.optional(Schema.Array(Schema.String)),
  always: Schema.optional(Always),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  source: Schema.optional(Source),
})
/**
 * @see Request
 *
 * @since 0.1.0
 * @category models
 */
export type Request = typeof Request.Type

/**
 * The input of `ask` and `assert`. `resources` are evaluated now; `save` (Wildcard patterns; a resource that came
 * from a literal path or command must be saved as `Wildcard.literal(resource)`) is persisted on an `always` reply.
 *
 * @since 0.1.0
 * @category models
 */
export const AssertInput = Schema.Struct({
  id: Schema.optional(ID),
  sessionID: Schema.String,
  action: Schema.String,
  resources: Schema.Array(Schema.String),
  save: Schema.optional(Schema.Array(Schema.String)),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  source: Schema.optional(Source),
  agent: Schema.optional(Schema.String),
})
/**
 * @see AssertInput
 *
 * @since 0.1.0
 * @category models
 */
export type AssertInput = typeof AssertInput.Type

/**
 * A client's answer.
 *
 * @since 0.1.0
 * @category models
 */
export const Reply = Schema.Literal("once", "always", "reject")
/**
 * @see Reply
 *
 * @since 0.1.0
 * @category models
 */
export type Reply = typeof Reply.Type

/**
 * The input of `reply`.
 *
 * @since 0.1.0
 * @category models
 */
export const ReplyInput = Schema.Struct({
  requestID: ID,
  reply: Reply,
  message: Schema.optional(Schema.String),
  /** The prompt's digest (`Approvals.Prompt.digest`): checked when given, so a stale caller changes nothing. */
  digest: Schema.optional(Schema.String),
})
/**
 * @see ReplyInput
 *
 * @since 0.1.0
 * @category models
 */
export type ReplyInput = typeof ReplyInput.Type

/**
 * The input of `check`: the caller, an action and the resources to evaluate. Nothing is asked or saved.
 *
 * @since 0.2.0
 * @category models
 */
export interface CheckInput {
  readonly sessionID: string
  readonly agent?: string | undefined
  readonly action: string
  readonly resources: ReadonlyArray<string>
}

/**
 * What `ask` returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface AskResult {
  readonly id: ID
  readonly effect: Effect
}

const Asked = EventV2.define("permission.v2.asked", Request)
const Replied = EventV2.define(
  "permission.v2.replied",
  Schema.Struct({ sessionID: Schema.String, requestID: Schema.String, reply: Reply }),
)

const Answered = EventV2.define(
  "permission.v2.answered",
  Schema.Struct({
    sessionID: Schema.String,
    requestID: Schema.String,
    choice: Schema.String,
    by: Schema.optional(Schema.String),
    channel: Schema.String,
  }),
)
const Expired = EventV2.define(
  "permission.v2.expired",
  Schema.Struct({ sessionID: Schema.String, requestID: Schema.String }),
)

/**
 * Events (live only); `Event.Definitions` lists them. `Replied` (once / always / reject) is published for every
 * settled ask as before; `Answered` carries the approval protocol's view of the same answer (the choice id, who,
 * through which channel; `auto` when a saved or session approval released it, `cascade` when a rejection of another
 * ask of its session did), and `Expired` an ask nobody answered before `permission.ask_timeout`.
 *
 * @since 0.1.0
 * @category models
 */
export const Event = {
  Asked,
  Replied,
  Answered,
  Expired,
  Definitions: [Asked, Replied, Answered, Expired] as const,
} as const

/**
 * Every event this module publishes (the same list as `Event.Definitions`).
 *
 * @since 0.1.0
 * @category models
 */
export const Definitions = Event.Definitions
