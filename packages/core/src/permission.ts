/**
 * PermissionV2: allow / deny / ask rules where the last match wins and no match means ask. Tools assert their own
 * permissions; asks suspend on a Deferred until a client replies once, always or reject. "always" approvals are
 * saved per project and read on every evaluation, but never lift a configured deny.
 *
 * @since 0.1.0
 */
import { Context, type Cause, Schema } from "effect"
import type * as Fx from "effect/Effect"
import * as Config from "./config.js"
import * as Identifier from "./id.js"
import * as LLM from "./llm.js"
import * as EventV2 from "./bus.js"
import type * as SessionV2 from "./session.js"
import * as Wildcard from "./wildcard.js"

/** A rule's effect. */
export const Effect = Schema.Literal("allow", "deny", "ask")
/** @see Effect */
export type Effect = typeof Effect.Type

/** `{ action, resource, effect }`; both patterns are Wildcard patterns. */
export const Rule = Config.PermissionRule
/** @see Rule */
export type Rule = typeof Rule.Type

/** An ordered list of rules; the last match wins. */
export const Ruleset = Schema.Array(Rule)
/** @see Ruleset */
export type Ruleset = ReadonlyArray<Rule>

/** A permission request id (`per…`). */
export const ID = Schema.String.pipe(Schema.startsWith("per"))
/** @see ID */
export type ID = typeof ID.Type

/** Returns `id` (validated) or a fresh `per_…` id. */
export const createID = (id?: string): ID => {
  if (id === undefined) return Identifier.create("per")
  return Schema.decodeSync(ID)(id)
}

/** Where a request came from. */
export const Source = Schema.Struct({
  type: Schema.Literal("tool"),
  messageID: Schema.String,
  callID: Schema.String,
})
/** @see Source */
export type Source = typeof Source.Type

/** A pending request as clients see it (there is deliberately no `agent` field). */
export const Request = Schema.Struct({
  id: ID,
  sessionID: Schema.String,
  action: Schema.String,
  resources: Schema.Array(Schema.String),
  save: Schema.optional(Schema.Array(Schema.String)),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  source: Schema.optional(Source),
})
/** @see Request */
export type Request = typeof Request.Type

/** The input of `ask` and `assert`. `resources` are evaluated now; `save` is persisted on an `always` reply. */
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
/** @see AssertInput */
export type AssertInput = typeof AssertInput.Type

/** A client's answer. */
export const Reply = Schema.Literal("once", "always", "reject")
/** @see Reply */
export type Reply = typeof Reply.Type

/** The input of `reply`. */
export const ReplyInput = Schema.Struct({
  requestID: ID,
  reply: Reply,
  message: Schema.optional(Schema.String),
})
/** @see ReplyInput */
export type ReplyInput = typeof ReplyInput.Type

/** What `ask` returns. */
export interface AskResult {
  readonly id: ID
  readonly effect: Effect
}

/** The user rejected without a message (or a same-session cascade, or shutdown). Always delivered as a defect. */
export class DeclinedError extends Schema.TaggedError<DeclinedError>()("PermissionV2.DeclinedError", {}) {}

/** The user rejected with a message; the model sees the feedback. */
export class CorrectedError extends Schema.TaggedError<CorrectedError>()("PermissionV2.CorrectedError", {
  feedback: Schema.String,
}) {}

/** Configured rules deny the request; `resources` are the denied ones, in request order. */
export class BlockedError extends Schema.TaggedError<BlockedError>()("PermissionV2.BlockedError", {
  rules: Ruleset,
  action: Schema.String,
  resources: Schema.Array(Schema.String),
}) {}

/** A reply names no pending request. */
export class NotFoundError extends Schema.TaggedError<NotFoundError>()("PermissionV2.NotFoundError", {
  requestID: Schema.String,
}) {}

/** The typed failures of `assert`. */
export type Error = BlockedError | CorrectedError

/** Events (live only). */
export const Event = {
  Asked: EventV2.define("permission.v2.asked", Request),
  Replied: EventV2.define(
    "permission.v2.replied",
    Schema.Struct({ sessionID: Schema.String, requestID: Schema.String, reply: Reply }),
  ),
} as const

/** Every event this module publishes. */
export const Definitions = [Event.Asked, Event.Replied] as const

/** The permission service, one per Location. */
export interface Interface {
  /** Evaluates and, on ask, queues a prompt without waiting. */
  readonly ask: (input: AssertInput) => Fx.Effect<AskResult, SessionV2.NotFoundError>
  /** Blocks until allowed; a reject without message arrives as a `DeclinedError` defect. */
  readonly assert: (input: AssertInput) => Fx.Effect<void, BlockedError | CorrectedError | SessionV2.NotFoundError>
  readonly reply: (input: ReplyInput) => Fx.Effect<void, NotFoundError>
  readonly get: (id: string) => Fx.Effect<Request | undefined>
  readonly forSession: (sessionID: string) => Fx.Effect<ReadonlyArray<Request>>
  readonly list: () => Fx.Effect<ReadonlyArray<Request>>
}

/** The PermissionV2 service tag. */
export class Service extends Context.Tag("@toolgate/v2/Permission")<Service, Interface>() {}

/** Last match wins; no match gives `{ action, resource: "*", effect: "ask" }`. */
export const evaluate = (action: string, resource: string, ...rulesets: ReadonlyArray<Ruleset>): Rule => {
  for (let set = rulesets.length - 1; set >= 0; set--) {
    const rules = rulesets[set]!
    for (let i = rules.length - 1; i >= 0; i--) {
      const rule = rules[i]!
      if (Wildcard.match(action, rule.action) && Wildcard.match(resource, rule.resource)) return rule
    }
  }
  return { action, resource: "*", effect: "ask" }
}

/** Concatenates rulesets in argument order. */
export const merge = (...rulesets: ReadonlyArray<Ruleset>): Ruleset => rulesets.flat()

/** The model-visible failure for a blocked or corrected permission (P5). */
export const toToolFailure = (error: BlockedError | CorrectedError): LLM.ToolFailure =>
  error._tag === "PermissionV2.CorrectedError"
    ? new LLM.ToolFailure({
        message: `The user rejected permission to use this specific tool call with the following feedback: ${error.feedback}`,
      })
    : new LLM.ToolFailure({
        message: `Permission denied by configured rules for ${error.action}: ${error.resources.join(", ")}`,
      })

/** True iff the cause carries a `DeclinedError` defect (P6). */
export const isDeclined = (cause: Cause.Cause<unknown>): boolean => LLM.hasDefectTag(cause, "PermissionV2.DeclinedError")
