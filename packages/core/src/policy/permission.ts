/**
 * PermissionV2: allow / deny / ask rules where the last match wins and no match means ask. Tools assert their own
 * permissions; asks suspend on a Deferred until a client replies once, always or reject. "always" approvals are
 * saved per project and consulted on every evaluation (through a view re-read whenever the database changed), but
 * never lift a configured deny.
 *
 * `ask` and `assert` run on every tool call, so they carry no tracing span (a span costs more than the rest of a
 * request); the other methods are traced.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as Fx from "effect/Effect"
import * as AgentV2 from "./agent.js"
import * as Config from "../place/config.js"
import * as Identifier from "../values/identifier.js"
import * as LLM from "../values/llm.js"
import * as EventV2 from "../place/event.js"
import * as Location from "../place/location.js"
import * as PermissionSaved from "./permission-saved.js"
import * as Printable from "../values/printable.js"
import * as ProjectV2 from "../place/project.js"
import * as ProtectedPath from "../place/protected-path.js"
import * as SessionV2 from "../place/session.js"
import * as Wildcard from "../values/wildcard.js"

/**
 * A rule's effect.
 *
 * @since 0.1.0
 */
export const Effect = Schema.Literal("allow", "deny", "ask")
/**
 * @see Effect
 *
 * @since 0.1.0
 */
export type Effect = typeof Effect.Type

/**
 * `{ action, resource, effect }`; both patterns are Wildcard patterns.
 *
 * @since 0.1.0
 */
export const Rule = Config.PermissionRule
/**
 * @see Rule
 *
 * @since 0.1.0
 */
export type Rule = typeof Rule.Type

/**
 * An ordered list of rules; the last match wins.
 *
 * @since 0.1.0
 */
export const Ruleset = Schema.Array(Rule)
/**
 * @see Ruleset
 *
 * @since 0.1.0
 */
export type Ruleset = ReadonlyArray<Rule>

/**
 * A permission request id (`per…`).
 *
 * @since 0.1.0
 */
export const ID = Schema.String.pipe(Schema.startsWith("per"))
/**
 * @see ID
 *
 * @since 0.1.0
 */
export type ID = typeof ID.Type

/**
 * Returns `id` (validated) or a fresh `per_…` id.
 *
 * @since 0.1.0
 */
export const createID = (id?: string): ID => {
  if (id === undefined) return Identifier.create("per")
  return Schema.decodeSync(ID)(id)
}

/**
 * Where a request came from.
 *
 * @since 0.1.0
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
 */
export type Source = typeof Source.Type

/**
 * One pattern an `always` reply saves: the stored Wildcard `pattern`, its human rendering `text`, and whether it is
 * a literal (matches exactly `text`, `*`/`?` included) rather than a wildcard pattern.
 *
 * @since 0.2.0
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
 */
export type SaveEntry = typeof SaveEntry.Type

/**
 * Where an `always` reply saves: `project` (every Location of the project `projectID`, whose directory is
 * `directory`) or `directory` (the `global` project: only Locations in exactly `directory`).
 *
 * @since 0.2.0
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
 */
export type SaveScope = typeof SaveScope.Type

/**
 * What an `always` reply will save, so every prompt can show it before the user chooses: the action, the patterns
 * (empty: `always` saves nothing and acts like `once`) and the scope.
 *
 * @since 0.2.0
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
 */
export type Always = typeof Always.Type

/**
 * A pending request as clients see it (there is deliberately no `agent` field). `save` holds Wildcard patterns
 * (build literal ones with `Wildcard.literal`); `always` describes them for display.
 *
 * @since 0.1.0
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
 */
export type Request = typeof Request.Type

/**
 * The input of `ask` and `assert`. `resources` are evaluated now; `save` (Wildcard patterns; a resource that came
 * from a literal path or command must be saved as `Wildcard.literal(resource)`) is persisted on an `always` reply.
 *
 * @since 0.1.0
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
 */
export type AssertInput = typeof AssertInput.Type

/**
 * A client's answer.
 *
 * @since 0.1.0
 */
export const Reply = Schema.Literal("once", "always", "reject")
/**
 * @see Reply
 *
 * @since 0.1.0
 */
export type Reply = typeof Reply.Type

/**
 * The input of `reply`.
 *
 * @since 0.1.0
 */
export const ReplyInput = Schema.Struct({
  requestID: ID,
  reply: Reply,
  message: Schema.optional(Schema.String),
})
/**
 * @see ReplyInput
 *
 * @since 0.1.0
 */
export type ReplyInput = typeof ReplyInput.Type

/**
 * The input of `check`: the caller, an action and the resources to evaluate. Nothing is asked or saved.
 *
 * @since 0.2.0
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
 */
export interface AskResult {
  readonly id: ID
  readonly effect: Effect
}

/**
 * The user rejected without a message (or a same-session cascade, or shutdown). Always delivered as a defect.
 *
 * @since 0.1.0
 */
export class DeclinedError extends Schema.TaggedError<DeclinedError>()("PermissionV2.DeclinedError", {}) {}

/**
 * The user rejected with a message; the model sees the feedback.
 *
 * @since 0.1.0
 */
export class CorrectedError extends Schema.TaggedError<CorrectedError>()("PermissionV2.CorrectedError", {
  feedback: Schema.String,
}) {}

/**
 * Configured rules deny the request; `resources` are the denied ones, in request order.
 *
 * @since 0.1.0
 */
export class BlockedError extends Schema.TaggedError<BlockedError>()("PermissionV2.BlockedError", {
  rules: Ruleset,
  action: Schema.String,
  resources: Schema.Array(Schema.String),
}) {}

/**
 * A reply names no pending request.
 *
 * @since 0.1.0
 */
export class NotFoundError extends Schema.TaggedError<NotFoundError>()("PermissionV2.NotFoundError", {
  requestID: Schema.String,
}) {}

/**
 * An `always` reply whose approval could not be saved (a full disk, an unwritable or corrupt database): nothing
 * changed — nothing was saved, no `Replied` event was published, and the request is still pending and answerable.
 * The answerer may answer it `once` or `reject` (or `always` again once the cause is fixed). `filename` and `code`
 * (`SQLITE_FULL`, `SQLITE_IOERR_WRITE`, …) come from the database error, `detail` is its cause chain in one line.
 * See docs/permissions.md.
 *
 * @since 0.3.0
 * @category errors
 */
export class SaveError extends Schema.TaggedError<SaveError>()("PermissionV2.SaveError", {
  requestID: Schema.String,
  action: Schema.String,
  filename: Schema.optional(Schema.String),
  code: Schema.optional(Schema.String),
  detail: Schema.String,
}) {
  override get message(): string {
    return `Could not save the approval of permission request ${this.requestID} (${this.action}) to ${this.filename ?? "the database"}: ${this.detail}. The request is still pending: answer it once or reject it.`
  }
}

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
 * The typed failures of `assert`.
 *
 * @since 0.1.0
 */
export type Error = BlockedError | CorrectedError

const Asked = EventV2.define("permission.v2.asked", Request)
const Replied = EventV2.define(
  "permission.v2.replied",
  Schema.Struct({ sessionID: Schema.String, requestID: Schema.String, reply: Reply }),
)

/**
 * Events (live only); `Event.Definitions` lists both.
 *
 * @since 0.1.0
 */
export const Event = { Asked, Replied, Definitions: [Asked, Replied] as const } as const

/**
 * Every event this module publishes (the same list as `Event.Definitions`).
 *
 * @since 0.1.0
 */
export const Definitions = Event.Definitions

/**
 * The permission service, one per Location.
 *
 * @since 0.1.0
 */
export interface Interface {
  /** Evaluates and, on ask, queues a prompt without waiting. */
  readonly ask: (input: AssertInput) => Fx.Effect<AskResult, SessionV2.NotFoundError>
  /** Blocks until allowed; a reject without message arrives as a `DeclinedError` defect. */
  readonly assert: (input: AssertInput) => Fx.Effect<void, BlockedError | CorrectedError | SessionV2.NotFoundError>
  /**
   * Answers a pending request. An `always` whose approval cannot be saved fails with `SaveError` and changes
   * nothing: the request stays pending, so the answerer can still answer it `once` or `reject`.
   */
  readonly reply: (input: ReplyInput) => Fx.Effect<void, NotFoundError | SaveError>
  /**
   * Evaluates each resource as `assert` would (configured deny first, then configured rules plus saved allows),
   * without asking: one effect per resource, in order. An empty list gives an empty answer.
   *
   * @since 0.2.0
   */
  readonly check: (input: CheckInput) => Fx.Effect<ReadonlyArray<Effect>, SessionV2.NotFoundError>
  readonly get: (id: string) => Fx.Effect<Request | undefined>
  readonly forSession: (sessionID: string) => Fx.Effect<ReadonlyArray<Request>>
  readonly list: () => Fx.Effect<ReadonlyArray<Request>>
}

/**
 * The PermissionV2 service tag.
 *
 * @since 0.1.0
 */
export class Service extends Context.Tag("@toolgate/v2/Permission")<Service, Interface>() {}

/**
 * Actions only a rule naming them exactly can allow: an allow whose action is a wildcard (`* * allow`) counts as ask
 * for them. Denies and asks apply as usual. See docs/trust/protected-paths.md.
 *
 * @since 0.2.0
 */
export const EXPLICIT_ACTIONS: ReadonlySet<string> = new Set([ProtectedPath.ACTION])

/**
 * Resource prefixes only a rule naming them can allow: for a resource that starts with one of them, an allow whose
 * resource pattern does not start with the same prefix is passed over (so `webfetch * allow` never allows
 * `private:…`, `bash * allow` never allows a shell command that cannot be resolved statically, `unresolved:…`, and
 * neither lets a sandboxed command's connection out, `net:…`). Denies and asks apply as usual. See
 * docs/trust/webfetch.md, docs/shell.md and docs/egress.md.
 *
 * @since 0.2.0
 */
export const EXPLICIT_RESOURCE_PREFIXES: ReadonlyArray<string> = ["private:", "unresolved:", "net:"]

const explicitPrefixOf = (resource: string): string | undefined => {
  for (const prefix of EXPLICIT_RESOURCE_PREFIXES) if (resource.startsWith(prefix)) return prefix
  return undefined
}

/**
 * A ruleset compiled for `evaluate`, once per ruleset value (see docs/performance.md). Resource patterns compile
 * lazily the first time a rule is reached; for each action seen, the rules whose action pattern matches it are
 * listed once, so an evaluation visits only those. Rules with `ignore_case` compile their lower-cased pattern and are
 * tested against the lower-cased resource (every platform); see docs/trust/secrets.md.
 */
interface CompiledRuleset {
  readonly rules: Ruleset
  readonly first: Rule
  readonly last: Rule
  readonly resources: Array<Wildcard.Pattern | undefined>
  /** The distinct action patterns, and for each rule the index of its pattern. */
  readonly actionPatterns: ReadonlyArray<Wildcard.Pattern>
  readonly actionOf: Int32Array
  readonly byAction: Map<string, Int32Array>
}

/** Compiled rulesets by identity: a ruleset value is compiled once and dropped with it. */
const compiledRulesets = new WeakMap<Ruleset, CompiledRuleset>()
/** How many distinct actions one compiled ruleset lists before starting over (actions are tool names: few). */
const MAX_ACTIONS_PER_RULESET = 1024
const matcher = Wildcard.platform

const compileRuleset = (rules: Ruleset): CompiledRuleset => {
  const index = new Map<string, number>()
  const actionPatterns: Array<Wildcard.Pattern> = []
  const actionOf = new Int32Array(rules.length)
  for (let i = 0; i < rules.length; i++) {
    const source = rules[i]!.action
    let at = index.get(source)
    if (at === undefined) {
      at = actionPatterns.length
      index.set(source, at)
      actionPatterns.push(matcher.compile(source))
    }
    actionOf[i] = at
  }
  return {
    rules,
    first: rules[0]!,
    last: rules[rules.length - 1]!,
    resources: new Array<Wildcard.Pattern | undefined>(rules.length),
    actionPatterns,
    actionOf,
    byAction: new Map(),
  }
}

/** The compiled form of `rules`; recompiled if the array was changed in place since (rulesets are meant immutable). */
const compiledRuleset = (rules: Ruleset): CompiledRuleset => {
  const hit = compiledRulesets.get(rules)
  if (
    hit !== undefined &&
    hit.rules.length === rules.length &&
    hit.first === rules[0] &&
    hit.last === rules[rules.length - 1]
  )
    return hit
  const compiled = compileRuleset(rules)
  compiledRulesets.set(rules, compiled)
  return compiled
}

/** The indices (ascending) of the rules whose action pattern matches `action`. */
const rulesFor = (compiled: CompiledRuleset, action: string, normalized: string): Int32Array => {
  const hit = compiled.byAction.get(action)
  if (hit !== undefined) return hit
  const patterns = compiled.actionPatterns
  const matches = new Uint8Array(patterns.length)
  for (let p = 0; p < patterns.length; p++) matches[p] = matcher.test(normalized, patterns[p]!) ? 1 : 0
  const actionOf = compiled.actionOf
  let count = 0
  for (let i = 0; i < actionOf.length; i++) count += matches[actionOf[i]!]!
  const indices = new Int32Array(count)
  for (let i = 0, k = 0; i < actionOf.length; i++) if (matches[actionOf[i]!] === 1) indices[k++] = i
  if (compiled.byAction.size >= MAX_ACTIONS_PER_RULESET) compiled.byAction.clear()
  compiled.byAction.set(action, indices)
  return indices
}

const resourcePattern = (compiled: CompiledRuleset, i: number): Wildcard.Pattern => {
  let pattern = compiled.resources[i]
  if (pattern === undefined) {
    const rule = compiled.rules[i]!
    pattern = matcher.compile(rule.ignore_case === true ? rule.resource.toLowerCase() : rule.resource)
    compiled.resources[i] = pattern
  }
  return pattern
}

/**
 * Last match wins; no match gives `{ action, resource: "*", effect: "ask" }`. A rule with `ignore_case` matches its
 * resource without regard to letter case; an `EXPLICIT_ACTIONS` action is allowed only by a rule naming it, and a
 * resource with an `EXPLICIT_RESOURCE_PREFIXES` prefix only by a rule whose resource starts with that prefix.
 * The resource is prepared once per call and each ruleset compiled once (see docs/performance.md).
 *
 * @since 0.1.0
 */
export const evaluate = (action: string, resource: string, ...rulesets: ReadonlyArray<Ruleset>): Rule => {
  let normalizedAction: string | undefined
  let input: string | undefined
  let lowered: string | undefined
  const explicit = explicitPrefixOf(resource)
  for (let set = rulesets.length - 1; set >= 0; set--) {
    const rules = rulesets[set]!
    if (rules.length === 0) continue
    const compiled = compiledRuleset(rules)
    const indices = rulesFor(compiled, action, (normalizedAction ??= matcher.normalize(action)))
    for (let k = indices.length - 1; k >= 0; k--) {
      const i = indices[k]!
      const rule = rules[i]!
      const pattern = resourcePattern(compiled, i)
      const subject =
        rule.ignore_case === true
          ? (lowered ??= matcher.normalize(resource.toLowerCase()))
          : (input ??= matcher.normalize(resource))
      if (!matcher.test(subject, pattern)) continue
      if (explicit !== undefined && rule.effect === "allow" && !rule.resource.startsWith(explicit)) continue
      if (rule.effect === "allow" && rule.action !== action && EXPLICIT_ACTIONS.has(action)) {
        return { action, resource: rule.resource, effect: "ask" }
      }
      return rule
    }
  }
  return { action, resource: "*", effect: "ask" }
}

/**
 * The save entry of a Wildcard pattern (see `SaveEntry`).
 *
 * @since 0.2.0
 */
export const saveEntry = (pattern: string): SaveEntry => ({
  pattern,
  text: Wildcard.display(pattern),
  literal: Wildcard.isLiteral(pattern),
})

/**
 * The lines a prompt shows for what `always` will save (the same text in the CLI and the MCP elicitation), every
 * value through `Printable` so no control or invisible character in it reaches the screen raw.
 *
 * @since 0.2.0
 */
export const describeAlways = (always: Always | undefined): ReadonlyArray<string> => {
  if (always === undefined || always.entries.length === 0) return ["always: saves nothing (same as once)"]
  const where =
    always.scope.kind === "directory"
      ? `for the directory ${Printable.show(always.scope.directory)} only (no git repository)`
      : `for project ${Printable.show(always.scope.projectID)} (${Printable.show(always.scope.directory)}, all its directories)`
  return [
    `always: saves ${Printable.show(always.action)} ${where}:`,
    ...always.entries.map((entry) =>
      entry.literal ? `  exactly: ${Printable.quote(entry.text)}` : `  pattern: ${Printable.show(entry.text)}`,
    ),
  ]
}

/**
 * Concatenates rulesets in argument order.
 *
 * @since 0.1.0
 */
export const merge = (...rulesets: ReadonlyArray<Ruleset>): Ruleset => rulesets.flat()

/**
 * The caller fields every leaf passes to `assert`, taken from its call context: session, agent and the tool call as
 * `source`.
 *
 * @since 0.1.0
 */
export const fromToolCall = (context: {
  readonly sessionID: string
  readonly agent: string
  readonly assistantMessageID: string
  readonly toolCallID: string
}) => ({
  sessionID: context.sessionID,
  agent: context.agent,
  source: { type: "tool" as const, messageID: context.assistantMessageID, callID: context.toolCallID },
})

/**
 * The model-visible failure for a blocked or corrected permission.
 *
 * @since 0.1.0
 */
export const toToolFailure = (error: BlockedError | CorrectedError): LLM.ToolFailure =>
  error._tag === "PermissionV2.CorrectedError"
    ? new LLM.ToolFailure({
        message: `The user rejected permission to use this specific tool call with the following feedback: ${error.feedback}`,
      })
    : new LLM.ToolFailure({
        message: `Permission denied by configured rules for ${error.action}: ${error.resources.join(", ")}`,
      })

/**
 * The leaf error mapping (permission errors first): a blocked or corrected permission becomes its model-visible failure, a
 * `ToolFailure` passes through, and every other typed error becomes `otherwise(error)`.
 *
 * @since 0.1.0
 */
export const leafFailure =
  (otherwise: (error: unknown) => LLM.ToolFailure) =>
  (error: unknown): LLM.ToolFailure => {
    if (error instanceof BlockedError || error instanceof CorrectedError) return toToolFailure(error)
    if (error instanceof LLM.ToolFailure) return error
    return otherwise(error)
  }

/**
 * True iff the cause carries a `DeclinedError` defect.
 *
 * @since 0.1.0
 */
export const isDeclined = (cause: Cause.Cause<unknown>): boolean =>
  LLM.hasDefectTag(cause, "PermissionV2.DeclinedError")

/**
 * All rules, in order, whose action pattern matches `action` (the `rules` payload of `BlockedError`).
 *
 * @since 0.1.0
 */
export const relevant = (action: string, rules: Ruleset): Ruleset =>
  rules.filter((rule) => Wildcard.match(action, rule.action))

/**
 * The configured rules used when no agent resolves: everything is denied.
 *
 * @since 0.1.0
 */
export const denyAll: Ruleset = [{ action: "*", resource: "*", effect: "deny" }]

/**
 * A pending request; the agent it was evaluated for stays private (clients never see it). Only an `assert` waits, so
 * only its entry carries a Deferred: an `ask` entry has none, which halves the memory a queued ask holds.
 */
interface Pending {
  readonly request: Request
  readonly agent: string | undefined
  readonly deferred: Deferred.Deferred<void, CorrectedError> | undefined
}

/** Settles the waiter of `entry`, if it has one. */
const settle = (entry: Pending, exit: () => Exit.Exit<void, CorrectedError>): void => {
  if (entry.deferred !== undefined) Deferred.unsafeDone(entry.deferred, exit())
}
const releasedExit = () => Exit.void

type Decision =
  | { readonly effect: "deny"; readonly rules: Ruleset; readonly denied: ReadonlyArray<string> }
  | { readonly effect: "allow" | "ask" }

const declined = () => new DeclinedError()

/** How many found sessions the permission service keeps in its view before starting over. */
const MAX_SESSION_VIEW = 4096

/**
 * Aggregates per resource against the configured rules followed by the saved allows, for requests the
 * configured rules alone do not deny: allow when every resource evaluates to allow, else ask.
 */
const aggregate = (
  action: string,
  resources: ReadonlyArray<string>,
  configured: Ruleset,
  saved: Ruleset,
): "allow" | "ask" => {
  for (const resource of resources) {
    if (evaluate(action, resource, configured, saved).effect !== "allow") return "ask"
  }
  return "allow"
}

/**
 * Builds the permission service of the current Location.
 *
 * @since 0.1.0
 */
export const make = Fx.gen(function* () {
  const events = yield* EventV2.Service
  const location = yield* Location.Service
  const agents = yield* AgentV2.Service
  const sessions = yield* SessionV2.Service
  const saved = yield* PermissionSaved.Service
  const scope = ProjectV2.approvalScope(location.project.id, location.directory)
  const saveScope: SaveScope = {
    kind: scope.directory === "" ? "project" : "directory",
    projectID: scope.projectID,
    directory: scope.directory === "" ? location.project.directory : scope.directory,
  }
  const pending = new Map<ID, Pending>()
  let closed = false
  const layerScope = yield* Fx.scope
  const layerRuntime = yield* Fx.runtime<never>()

  // In-memory views of the saved rows and of the sessions looked up, valid while the database's change stamp stays
  // where it was when they were read: any write through this process's connection (a save, a revoke, a deleted
  // session) or any commit by another process moves it, and the next request re-reads. One stamp read per request
  // replaces a session read and a saved-row read.
  let stamp: string | undefined
  let savedView: Ruleset = []
  const sessionView = new Map<string, SessionV2.Info>()

  /** Re-reads the saved rows and forgets the sessions when the change stamp moved since they were read. */
  const refreshAt = (now: string): Fx.Effect<void> => {
    if (now === stamp) return Fx.void
    sessionView.clear()
    return Fx.map(saved.list(scope), (rows) => {
      const cached = savedView
      let same = cached.length === rows.length
      for (let i = 0; same && i < rows.length; i++) {
        same = cached[i]!.action === rows[i]!.action && cached[i]!.resource === rows[i]!.resource
      }
      // The same value while the rows are unchanged, so `evaluate` keeps its compiled form.
      if (!same)
        savedView = rows.map((row) => ({ action: row.action, resource: row.resource, effect: "allow" as const }))
      // The stamp read before the rows: a change in between makes the next request read again.
      stamp = now
    })
  }
  const refresh: Fx.Effect<void> = Fx.flatMap(saved.changeStamp, refreshAt)

  /** The session, from the view when it was read since the last change; only found sessions are kept. */
  const sessionOf = (sessionID: string): Fx.Effect<SessionV2.Info | undefined> => {
    const hit = sessionView.get(sessionID)
    if (hit !== undefined) return Fx.succeed(hit)
    const readUnder = stamp
    return Fx.map(sessions.get(sessionID), (session) => {
      // Kept only if no refresh moved the stamp while it was read (the row may predate that change).
      if (session !== undefined && stamp === readUnder) {
        if (sessionView.size >= MAX_SESSION_VIEW) sessionView.clear()
        sessionView.set(sessionID, session)
      }
      return session
    })
  }

  /** The configured rules of `agent ?? session.agent` (deny-all when no agent resolves). */
  const rulesOf = (session: SessionV2.Info, agent: string | undefined) =>
    Fx.map(agents.resolve(agent ?? session.agent), (info) => (info === undefined ? denyAll : info.permissions))

  /** The configured rules for a request, with the views refreshed; `undefined` when the session does not exist. */
  const configuredFor = (sessionID: string, agent: string | undefined): Fx.Effect<Ruleset | undefined> =>
    Fx.flatMap(saved.changeStamp, (now) => {
      // The common case, nothing changed and the session already read: straight to the agent.
      const hit = now === stamp ? sessionView.get(sessionID) : undefined
      if (hit !== undefined) return rulesOf(hit, agent)
      return Fx.flatMap(refreshAt(now), () =>
        Fx.flatMap(sessionOf(sessionID), (session) =>
          session === undefined ? Fx.succeed(undefined) : rulesOf(session, agent),
        ),
      )
    })

  const decide = (input: AssertInput, configured: Ruleset): Decision => {
    let denied: Array<string> | undefined
    for (const resource of input.resources) {
      if (evaluate(input.action, resource, configured).effect === "deny") (denied ??= []).push(resource)
    }
    if (denied !== undefined) return { effect: "deny", rules: relevant(input.action, configured), denied }
    return { effect: aggregate(input.action, input.resources, configured, savedView) }
  }

  const evaluateInput = (input: AssertInput): Fx.Effect<Decision, SessionV2.NotFoundError> => {
    if (input.resources.length === 0) {
      return Fx.die(new globalThis.Error(`Permission request for ${input.action} must name at least one resource`))
    }
    return Fx.flatMap(configuredFor(input.sessionID, input.agent), (configured) =>
      configured === undefined
        ? Fx.fail(new SessionV2.NotFoundError({ sessionID: input.sessionID }))
        : Fx.succeed(decide(input, configured)),
    )
  }

  // A protected_path ask saves nothing, whichever tool raised it: `always` acts as `once` (docs/trust/protected-paths.md).
  const savesOf = (input: AssertInput) => (input.action === ProtectedPath.ACTION ? [] : input.save)
  const toRequest = (input: AssertInput): Request => ({
    id: createID(input.id),
    sessionID: input.sessionID,
    action: input.action,
    resources: input.resources,
    ...(savesOf(input) === undefined ? {} : { save: savesOf(input)! }),
    always: { action: input.action, entries: (savesOf(input) ?? []).map(saveEntry), scope: saveScope },
    ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
    ...(input.source === undefined ? {} : { source: input.source }),
  })

  const drop = (entry: Pending) => {
    if (pending.get(entry.request.id) === entry) pending.delete(entry.request.id)
  }

  /**
   * Inserts a pending entry (with a Deferred when the caller waits) and publishes Asked; a failed publish removes the
   * entry again (as a defect).
   */
  const create = (request: Request, agent: string | undefined, waits: boolean): Fx.Effect<Pending> =>
    Fx.uninterruptible(
      Fx.suspend(() => {
        if (closed) return Fx.die(declined())
        if (pending.has(request.id)) {
          return Fx.die(new globalThis.Error(`Duplicate pending permission ID: ${request.id}`))
        }
        const deferred = waits ? Deferred.unsafeMake<void, CorrectedError>(FiberId.none) : undefined
        const entry: Pending = { request, agent, deferred }
        pending.set(request.id, entry)
        if (!watching) startWatching()
        // One match instead of onError + orDie + as: this is on every queued ask's path.
        return Fx.matchCauseEffect(events.publish(Event.Asked, request), {
          onFailure: (cause) => {
            drop(entry)
            return Fx.orDie(Fx.failCause(cause))
          },
          onSuccess: () => Fx.succeed(entry),
        })
      }),
    )

  const publishReplied = (entry: Pending, reply: Reply) =>
    Fx.orDie(events.publish(Event.Replied, { sessionID: entry.request.sessionID, requestID: entry.request.id, reply }))

  const succeedEntry = (entry: Pending) => settle(entry, releasedExit)
  const declineEntry = (entry: Pending) => settle(entry, () => Exit.die(declined()))

  /**
   * Settles `entries` with one Replied event each, in their order, published as one batch: each entry is removed
   * right after its event reached every listener (so listeners see it pending during its own event, as with one
   * publish per entry) and settled once the batch is over. A listener failure stops the batch there: the entries
   * before it are removed and settled, that one and the later ones stay pending, and the failure is a defect.
   */
  const releaseAll = (entries: ReadonlyArray<Pending>, reply: Reply, finish: (entry: Pending) => void) =>
    Fx.suspend(() => {
      let delivered = 0
      const data = entries.map((entry) => ({ sessionID: entry.request.sessionID, requestID: entry.request.id, reply }))
      return events
        .publishAll(Event.Replied, data, (index) => {
          drop(entries[index]!)
          delivered = index + 1
        })
        .pipe(
          Fx.ensuring(
            Fx.sync(() => {
              for (let i = 0; i < delivered; i++) finish(entries[i]!)
            }),
          ),
          Fx.orDie,
        )
    })

  // `ask` and `assert` are plain functions returning an Effect, without a span: they run on every tool call.
  const ask = (input: AssertInput): Fx.Effect<AskResult, SessionV2.NotFoundError> =>
    Fx.suspend(() =>
      Fx.flatMap(evaluateInput(input), (decision): Fx.Effect<AskResult> => {
        if (decision.effect !== "ask") return Fx.succeed({ id: createID(input.id), effect: decision.effect })
        const request = toRequest(input)
        return Fx.as(create(request, input.agent, false), { id: request.id, effect: decision.effect })
      }),
    )

  const assert = (input: AssertInput): Fx.Effect<void, Error | SessionV2.NotFoundError> =>
    Fx.uninterruptibleMask((restore) =>
      Fx.flatMap(evaluateInput(input), (decision): Fx.Effect<void, Error> => {
        if (decision.effect === "deny") {
          return Fx.fail(new BlockedError({ rules: decision.rules, action: input.action, resources: decision.denied }))
        }
        if (decision.effect === "allow") return Fx.void
        return Fx.flatMap(create(toRequest(input), input.agent, true), (entry) =>
          restore(Deferred.await(entry.deferred!)).pipe(Fx.ensuring(Fx.sync(() => drop(entry)))),
        )
      }),
    )

  /**
   * Releases every other pending entry that now evaluates to allow (any session of this Location), in queue order.
   * The saved rows are read once and each session and (agent, session) pair resolved once, for this reply only.
   */
  const autoResolve = Fx.gen(function* () {
    yield* refresh
    const approvals = savedView
    const entries = Array.from(pending.values())
    const keys = entries.map((entry) => `${entry.agent ?? ""}\u0000${entry.request.sessionID}`)
    // `undefined`: the session no longer exists, so its entries stay pending.
    const configuredBy = new Map<string, Ruleset | undefined>()
    for (let i = 0; i < entries.length; i++) {
      if (configuredBy.has(keys[i]!)) continue
      const entry = entries[i]!
      const session = yield* sessionOf(entry.request.sessionID)
      configuredBy.set(keys[i]!, session === undefined ? undefined : yield* rulesOf(session, entry.agent))
    }
    yield* Fx.suspend(() => {
      const released: Array<Pending> = []
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i]!
        if (pending.get(entry.request.id) !== entry) continue
        const configured = configuredBy.get(keys[i]!)
        if (configured === undefined) continue
        const { action, resources } = entry.request
        if (resources.some((resource) => evaluate(action, resource, configured).effect === "deny")) continue
        if (aggregate(action, resources, configured, approvals) !== "allow") continue
        released.push(entry)
      }
      return releaseAll(released, "always", succeedEntry)
    })
  })

  // One release pass at a time: a reply's pass and the watcher's must not both publish the same entry.
  const releasing = Fx.unsafeMakeSemaphore(1)
  const release = releasing.withPermits(1)(autoResolve)

  // While asks are pending, a change of the saved approvals made elsewhere (another process, another Location on
  // the same database) releases the ones it covers: the change stamp is read every PENDING_RECHECK_INTERVAL_MS, and
  // when it moved since the last pass the pending asks are evaluated again against the fresh saved rules.
  let watching = false
  let seen: string | undefined
  let warned = false
  const recheck = Fx.flatMap(saved.changeStamp, (now) => {
    if (now === seen) return Fx.void
    return Fx.as(release, undefined).pipe(
      Fx.tap(() =>
        Fx.sync(() => {
          seen = now
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
      if (closed || pending.size === 0) {
        watching = false
        return
      }
      yield* recheck
    }
  })
  /** Starts the watcher in the Location's runtime and scope (closing the Location stops it). */
  const startWatching = () => {
    watching = true
    seen = stamp
    Runtime.runFork(layerRuntime)(Fx.forkIn(watch, layerScope))
  }

  const reply = Fx.fn("PermissionV2.reply")(function* (input: ReplyInput) {
    yield* Fx.uninterruptible(
      Fx.gen(function* () {
        const entry = pending.get(input.requestID)
        if (entry === undefined) return yield* new NotFoundError({ requestID: input.requestID })
        if (input.reply !== "reject") return yield* approve(entry, input.reply)
        yield* publishReplied(entry, input.reply)
        drop(entry)
        const message = input.message
        if (message) settle(entry, () => Exit.fail(new CorrectedError({ feedback: message })))
        else declineEntry(entry)
        const sessionID = entry.request.sessionID
        yield* Fx.suspend(() =>
          releaseAll(
            Array.from(pending.values()).filter((other) => other.request.sessionID === sessionID),
            "reject",
            declineEntry,
          ),
        )
      }),
    )
  })

  /**
   * `once`, or `always`: the approval is saved first, so a failed save changes nothing (no event, still pending).
   * A request answered by someone else while its approval was being saved stays answered; the save still releases
   * what it covers.
   */
  const approve = (entry: Pending, reply: "once" | "always"): Fx.Effect<void, SaveError> =>
    Fx.gen(function* () {
      const save = entry.request.save
      const persist = reply === "always" && save !== undefined && save.length > 0
      if (persist) {
        yield* saved.add({ ...scope, action: entry.request.action, resources: save }).pipe(
          Fx.mapError(
            (error) =>
              new SaveError({
                requestID: entry.request.id,
                action: entry.request.action,
                ...(error.filename === undefined ? {} : { filename: error.filename }),
                ...(error.code === undefined ? {} : { code: error.code }),
                detail: error.detail,
              }),
          ),
        )
      }
      if (pending.get(entry.request.id) === entry) {
        yield* publishReplied(entry, reply)
        drop(entry)
        succeedEntry(entry)
      }
      if (persist) yield* release
    })

  const check = Fx.fn("PermissionV2.check")(function* (input: CheckInput) {
    if (input.resources.length === 0) return [] as ReadonlyArray<Effect>
    const configured = yield* configuredFor(input.sessionID, input.agent)
    if (configured === undefined) return yield* new SessionV2.NotFoundError({ sessionID: input.sessionID })
    const approvals = savedView
    return input.resources.map((resource): Effect => {
      const alone = evaluate(input.action, resource, configured).effect
      // Saved rows only ever allow, so a configured allow or deny is already the answer.
      return alone === "ask" ? aggregate(input.action, [resource], configured, approvals) : alone
    })
  })

  const get = Fx.fn("PermissionV2.get")(function* (id: string) {
    return pending.get(id as ID)?.request
  })
  const list = Fx.fn("PermissionV2.list")(function* () {
    return Array.from(pending.values(), (entry) => entry.request)
  })
  const forSession = Fx.fn("PermissionV2.forSession")(function* (sessionID: string) {
    return Array.from(pending.values())
      .filter((entry) => entry.request.sessionID === sessionID)
      .map((entry) => entry.request)
  })

  yield* Fx.addFinalizer(() =>
    Fx.gen(function* () {
      closed = true
      const entries = Array.from(pending.values())
      pending.clear()
      for (const entry of entries) declineEntry(entry)
    }),
  )

  return Service.of({ ask, assert, reply, check, get, forSession, list })
})

/**
 * The Location-scoped layer; closing the Location declines every pending request (no events).
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<
  Service,
  never,
  EventV2.Service | Location.Service | AgentV2.Service | SessionV2.Service | PermissionSaved.Service
> = Layer.scoped(Service, make)
