/**
 * The values, errors, service tag and digests of the approval protocol (`Approvals` names everything exported here):
 * prompts, choices, answers, the prompt events and the typed failures of `answer`. They live beside the permission
 * queue because the queue implements the protocol: it builds each pending ask's prompt and claims answers.
 *
 * The digest a reply must name is sha-256 (hex) over the RFC 8785 canonical JSON of
 * `{ tool: { name, definition, input } | null, action, resources, save }`, where `definition` is itself the
 * `definitionDigest` of the tool's definition (name, description, input JSON schema). Two asks with the same digest
 * showed the same thing; anything a prompt shows that could change what the answer allows is inside it.
 *
 * @since 0.3.0
 */
import { createHash } from "node:crypto"
import * as Canonicalize from "canonicalize"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import { ID, Request, SaveEntry, SaveScope } from "./schema.js"
import type { NotFoundError, SaveError } from "./error.js"

/**
 * How long an answer holds: `once` (this call only), `session` (every matching ask of this session until it ends),
 * `always` (saved; see `AlwaysScope`), or `reject`.
 *
 * @since 0.3.0
 * @category models
 */
export const Lifetime = Schema.Literal("once", "session", "always", "reject")
/**
 * @since 0.3.0
 * @category models
 */
export type Lifetime = typeof Lifetime.Type

/**
 * What an `always` saves: `exact` (exactly these resources, as literals), `directory` (the resources' directories)
 * or `pattern` (the tool's whole save pattern, the reference behaviour: `*` for edits).
 *
 * @since 0.3.0
 * @category models
 */
export const AlwaysScope = Schema.Literal("exact", "directory", "pattern")
/**
 * @since 0.3.0
 * @category models
 */
export type AlwaysScope = typeof AlwaysScope.Type

/**
 * One choice a prompt offers, with what it would save and where (`saves` is empty for `once` and `reject`).
 * `label` is raw text (it may name a hostile pattern): a client escapes it when it shows it (`Printable.show`).
 * `id` is stable and is what a client sends back (`once`, `session`, `always:exact`, `always:directory`,
 * `always:pattern`, `reject`).
 *
 * @since 0.3.0
 * @category models
 */
export const Choice = Schema.Struct({
  id: Schema.String,
  lifetime: Lifetime,
  scope: Schema.optional(AlwaysScope),
  label: Schema.String,
  action: Schema.String,
  saves: Schema.Array(SaveEntry),
  where: Schema.optional(SaveScope),
})
/**
 * @since 0.3.0
 * @category models
 */
export type Choice = typeof Choice.Type

/**
 * The tool call an ask came from, when it came from one: its name, call id, full input and a digest of the tool's
 * definition (so a reply cannot be carried over to a different tool of the same name).
 *
 * @since 0.3.0
 * @category models
 */
export const ToolCall = Schema.Struct({
  name: Schema.String,
  callID: Schema.String,
  input: Schema.Unknown,
  definition: Schema.String,
})
/**
 * @since 0.3.0
 * @category models
 */
export type ToolCall = typeof ToolCall.Type

/**
 * Everything a client must show before it answers. `digest` is the sha-256 (hex) over the canonical tool input, the
 * tool's definition, the action, the resources and the save patterns; an answer must name it. `command` is the whole
 * command of a shell ask (escaped as `PermissionV2.describeCommand` renders it), `diff` the rendered unified diff of
 * a write, edit or apply_patch. `askedAt` and `deadline` are epoch milliseconds (no deadline: waits until answered).
 *
 * @since 0.3.0
 * @category models
 */
export const Prompt = Schema.Struct({
  request: Request,
  digest: Schema.String,
  tool: Schema.optional(ToolCall),
  command: Schema.optional(Schema.String),
  diff: Schema.optional(Schema.String),
  choices: Schema.Array(Choice),
  askedAt: Schema.Number,
  deadline: Schema.optional(Schema.Number),
})
/**
 * @since 0.3.0
 * @category models
 */
export type Prompt = typeof Prompt.Type

/**
 * An answer. `choice` is one of the prompt's `Choice.id`s; `digest` must equal the prompt's (in-process callers of
 * `PermissionV2.reply` may omit it; every remote channel sends it). `ttlMillis` bounds an `always`; `message` goes
 * to the model with a `reject`. `by` names who answered and `channel` through what (`cli`, `mcp`, `ai-sdk`, `http`,
 * `test`, …); both are recorded with what is saved and in the decision journal.
 *
 * @since 0.3.0
 * @category models
 */
export const Answer = Schema.Struct({
  requestID: ID,
  digest: Schema.optional(Schema.String),
  choice: Schema.String,
  ttlMillis: Schema.optional(Schema.Number.pipe(Schema.positive())),
  message: Schema.optional(Schema.String),
  by: Schema.optional(Schema.String),
  channel: Schema.String,
})
/**
 * @since 0.3.0
 * @category models
 */
export type Answer = typeof Answer.Type

/**
 * What a prompt stream delivers: a new ask, an answer (by whom, through which channel, with which choice) or an
 * expiry. A stream first delivers an `Asked` for every ask already pending, then live events in publish order.
 *
 * @since 0.3.0
 * @category models
 */
export const PromptEvent = Schema.Union(
  Schema.TaggedStruct("Asked", { prompt: Prompt }),
  Schema.TaggedStruct("Answered", {
    requestID: Schema.String,
    sessionID: Schema.String,
    choice: Schema.String,
    by: Schema.optional(Schema.String),
    channel: Schema.String,
  }),
  Schema.TaggedStruct("Expired", { requestID: Schema.String, sessionID: Schema.String }),
)
/**
 * @since 0.3.0
 * @category models
 */
export type PromptEvent = typeof PromptEvent.Type

/**
 * The channel of an answer given in the same process without a client (`PermissionV2.reply`): the only channel on
 * which `Approvals.answer` accepts an answer without a digest.
 *
 * @since 0.3.0
 * @category constants
 */
export const IN_PROCESS = "in-process"

/**
 * Which prompts a client wants; all of them when empty.
 *
 * @since 0.3.0
 * @category models
 */
export interface Filter {
  readonly sessionID?: string | undefined
}

/**
 * The answer's digest is not the digest of the pending ask: the client showed something else (a stale screen, a
 * different call). Nothing changed. HTTP 409.
 *
 * @since 0.3.0
 * @category errors
 */
export class DigestMismatchError extends Schema.TaggedError<DigestMismatchError>()("Approvals.DigestMismatchError", {
  requestID: Schema.String,
}) {
  override get message(): string {
    return `The answer to permission request ${this.requestID} was given for a different prompt than the one pending; nothing changed. Reload and answer again.`
  }
}

/**
 * The request was already answered (or expired, or withdrawn). Nothing changed. HTTP 409.
 *
 * @since 0.3.0
 * @category errors
 */
export class AlreadyAnsweredError extends Schema.TaggedError<AlreadyAnsweredError>()(
  "Approvals.AlreadyAnsweredError",
  { requestID: Schema.String },
) {
  override get message(): string {
    return `Permission request ${this.requestID} was already answered; nothing changed.`
  }
}

/**
 * The answer names a choice the prompt does not offer. Nothing changed. HTTP 400.
 *
 * @since 0.3.0
 * @category errors
 */
export class UnknownChoiceError extends Schema.TaggedError<UnknownChoiceError>()("Approvals.UnknownChoiceError", {
  requestID: Schema.String,
  choice: Schema.String,
}) {
  override get message(): string {
    return `Permission request ${this.requestID} offers no choice "${this.choice}"; nothing changed.`
  }
}

/**
 * An ask nobody answered before `permission.ask_timeout`: the waiting call fails with this, model-visibly, as
 * "approval timed out" (not as a user's decline).
 *
 * @since 0.3.0
 * @category errors
 */
export class TimedOutError extends Schema.TaggedError<TimedOutError>()("Approvals.TimedOutError", {
  requestID: Schema.String,
  action: Schema.String,
  timeoutMillis: Schema.Number,
}) {
  override get message(): string {
    return `Approval timed out: nobody answered the permission request for ${this.action} within ${this.timeoutMillis} ms.`
  }
}

/**
 * The failures of `answer`.
 *
 * @since 0.3.0
 * @category errors
 */
export type AnswerError = NotFoundError | AlreadyAnsweredError | DigestMismatchError | UnknownChoiceError | SaveError

/**
 * The approval protocol of one Location.
 *
 * @since 0.3.0
 * @category models
 */
export interface Interface {
  /** The asks pending now, oldest first. */
  readonly pending: (filter?: Filter) => Effect.Effect<ReadonlyArray<Prompt>>
  /** One pending prompt, or `NotFoundError`. */
  readonly get: (requestID: string) => Effect.Effect<Prompt, NotFoundError>
  /** `Asked` for every ask pending at subscription, then live `Asked`/`Answered`/`Expired` in publish order. */
  readonly prompts: (filter?: Filter) => Stream.Stream<PromptEvent>
  /** Answers a pending ask; a failure changes nothing. */
  readonly answer: (answer: Answer) => Effect.Effect<void, AnswerError>
}

/**
 * The Approvals service tag.
 *
 * @since 0.3.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Approvals")<Service, Interface>() {}

/** RFC 8785 canonical JSON; a value JSON cannot carry (a cycle, a BigInt) is a defect of the caller. */
const canonical = (value: unknown): string => {
  const text = (Canonicalize.default as unknown as (input: unknown) => string | undefined)(value)
  if (text === undefined) throw new globalThis.Error("Approvals: the value has no canonical JSON form")
  return text
}

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/**
 * The digest of a tool's definition: sha-256 over the canonical JSON of its name, description and input schema.
 *
 * @since 0.3.0
 * @category digest
 */
export const definitionDigest = (definition: {
  readonly name: string
  readonly description: string
  readonly inputSchema: unknown
}): string =>
  sha256(canonical({ name: definition.name, description: definition.description, inputSchema: definition.inputSchema }))

/**
 * The digest of a pending ask: over the tool call it came from (name, definition digest, full input; `null` for an
 * ask raised outside a tool call), the action, the resources in request order and the save patterns.
 *
 * @since 0.3.0
 * @category digest
 */
export const digest = (
  request: Pick<Request, "action" | "resources" | "save">,
  tool:
    | { readonly name: string; readonly definition: string; readonly input: unknown }
    | undefined,
): string =>
  sha256(
    canonical({
      tool: tool === undefined ? null : { name: tool.name, definition: tool.definition, input: tool.input },
      action: request.action,
      resources: request.resources,
      save: request.save ?? [],
    }),
  )
