/**
 * PermissionV2: allow / deny / ask rules where the last match wins and no match means ask. Tools assert their own
 * permissions; asks suspend on a Deferred until a client replies once, always or reject. "always" approvals are
 * saved per project and consulted on every evaluation (through a view re-read whenever the database changed), but
 * never lift a configured deny.
 *
 * `ask` and `assert` run on every tool call, so they carry no tracing span (a span costs more than the rest of a
 * request); the other methods are traced.
 *
 * This module names everything embedders import; each concept lives in `internal/`: the values and events
 * (`schema.ts`), the failures (`error.ts`), the compiled evaluator (`evaluate.ts`), what leaves and prompts share
 * (`leaf.ts`) and the Location's service (`service.ts`, over the views of `view.ts`) with its queue (`queue.ts`).
 *
 * @since 0.1.0
 */
import * as internalSchema from "./internal/schema.js"
import * as internalError from "./internal/error.js"
import * as internalEvaluate from "./internal/evaluate.js"
import * as ResourcePrefix from "../values/internal/resource-prefix.js"
import * as internalLeaf from "./internal/leaf.js"
import * as internalService from "./internal/service.js"

/**
 * A rule's effect.
 *
 * @since 0.1.0
 * @category models
 */
export const Effect = internalSchema.Effect
/**
 * @see Effect
 *
 * @since 0.1.0
 * @category models
 */
export type Effect = internalSchema.Effect
/**
 * `{ action, resource, effect }`; both patterns are Wildcard patterns.
 *
 * @since 0.1.0
 * @category models
 */
export const Rule = internalSchema.Rule
/**
 * @see Rule
 *
 * @since 0.1.0
 * @category models
 */
export type Rule = internalSchema.Rule
/**
 * An ordered list of rules; the last match wins.
 *
 * @since 0.1.0
 * @category models
 */
export const Ruleset = internalSchema.Ruleset
/**
 * @see Ruleset
 *
 * @since 0.1.0
 * @category models
 */
export type Ruleset = internalSchema.Ruleset
/**
 * A permission request id (`per…`).
 *
 * @since 0.1.0
 * @category constants
 */
export const ID = internalSchema.ID
/**
 * @see ID
 *
 * @since 0.1.0
 * @category models
 */
export type ID = internalSchema.ID
/**
 * Returns `id` (validated) or a fresh `per_…` id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createID = internalSchema.createID
/**
 * Where a request came from.
 *
 * @since 0.1.0
 * @category models
 */
export const Source = internalSchema.Source
/**
 * @see Source
 *
 * @since 0.1.0
 * @category models
 */
export type Source = internalSchema.Source
/**
 * One pattern an `always` reply saves: the stored Wildcard `pattern`, its human rendering `text`, and whether it is
 * a literal (matches exactly `text`, `*`/`?` included) rather than a wildcard pattern.
 *
 * @since 0.2.0
 * @category models
 */
export const SaveEntry = internalSchema.SaveEntry
/**
 * @see SaveEntry
 *
 * @since 0.1.0
 * @category models
 */
export type SaveEntry = internalSchema.SaveEntry
/**
 * Where an `always` reply saves: `project` (every Location of the project `projectID`, whose directory is
 * `directory`) or `directory` (the `global` project: only Locations in exactly `directory`).
 *
 * @since 0.2.0
 * @category models
 */
export const SaveScope = internalSchema.SaveScope
/**
 * @see SaveScope
 *
 * @since 0.1.0
 * @category models
 */
export type SaveScope = internalSchema.SaveScope
/**
 * What an `always` reply will save, so every prompt can show it before the user chooses: the action, the patterns
 * (empty: `always` saves nothing and acts like `once`) and the scope.
 *
 * @since 0.2.0
 * @category models
 */
export const Always = internalSchema.Always
/**
 * @see Always
 *
 * @since 0.1.0
 * @category models
 */
export type Always = internalSchema.Always
/**
 * A pending request as clients see it (there is deliberately no `agent` field). `save` holds Wildcard patterns
 * (build literal ones with `Wildcard.literal`); `always` describes them for display.
 *
 * @since 0.1.0
 * @category models
 */
export const Request = internalSchema.Request
/**
 * @see Request
 *
 * @since 0.1.0
 * @category models
 */
export type Request = internalSchema.Request
/**
 * The input of `ask` and `assert`. `resources` are evaluated now; `save` (Wildcard patterns; a resource that came
 * from a literal path or command must be saved as `Wildcard.literal(resource)`) is persisted on an `always` reply.
 *
 * @since 0.1.0
 * @category models
 */
export const AssertInput = internalSchema.AssertInput
/**
 * @see AssertInput
 *
 * @since 0.1.0
 * @category models
 */
export type AssertInput = internalSchema.AssertInput
/**
 * A client's answer.
 *
 * @since 0.1.0
 * @category models
 */
export const Reply = internalSchema.Reply
/**
 * @see Reply
 *
 * @since 0.1.0
 * @category models
 */
export type Reply = internalSchema.Reply
/**
 * The input of `reply`.
 *
 * @since 0.1.0
 * @category models
 */
export const ReplyInput = internalSchema.ReplyInput
/**
 * @see ReplyInput
 *
 * @since 0.1.0
 * @category models
 */
export type ReplyInput = internalSchema.ReplyInput
/**
 * The input of `check`: the caller, an action and the resources to evaluate. Nothing is asked or saved.
 *
 * @since 0.2.0
 * @category models
 */
export type CheckInput = internalSchema.CheckInput
/**
 * What `ask` returns.
 *
 * @since 0.1.0
 * @category models
 */
export type AskResult = internalSchema.AskResult
/**
 * Events (live only); `Event.Definitions` lists them. `Replied` (once / always / reject) is published for every
 * settled ask as before; `Answered` carries the approval protocol's view of the same answer (the choice id, who,
 * through which channel; `auto` when a saved or session approval released it, `cascade` when a rejection of another
 * ask of its session did), and `Expired` an ask nobody answered before `permission.askTimeout`.
 *
 * @since 0.1.0
 * @category models
 */
export const Event = internalSchema.Event
/**
 * Every event this module publishes (the same list as `Event.Definitions`).
 *
 * @since 0.1.0
 * @category models
 */
export const Definitions = internalSchema.Definitions
export {
  /**
   * The user rejected without a message (or a same-session cascade, or shutdown). Always delivered as a defect.
   *
   * @since 0.1.0
   * @category errors
   */
  DeclinedError,
} from "./internal/error.js"
export {
  /**
   * The user rejected with a message; the model sees the feedback.
   *
   * @since 0.1.0
   * @category errors
   */
  CorrectedError,
} from "./internal/error.js"
export {
  /**
   * Configured rules deny the request; `resources` are the denied ones, in request order.
   *
   * @since 0.1.0
   * @category errors
   */
  BlockedError,
} from "./internal/error.js"
export {
  /**
   * A reply names no pending request.
   *
   * @since 0.1.0
   * @category errors
   */
  NotFoundError,
} from "./internal/error.js"
export {
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
  SaveError,
} from "./internal/error.js"
/**
 * Actions only a rule naming them exactly can allow: an allow whose action is a wildcard (`* * allow`) counts as ask
 * for them. Denies and asks apply as usual. See docs/trust/protected-paths.md.
 *
 * @since 0.2.0
 * @category constants
 */
export const EXPLICIT_ACTIONS = internalEvaluate.EXPLICIT_ACTIONS
/**
 * The action of the ask a plugin's `tool.before` hook makes (resource `<plugin>/<tool>`): an explicit action, so a
 * hook's ask is asked unless a rule naming `hook` says otherwise. See docs/plugins.md.
 *
 * @since 0.4.0
 * @category constants
 */
export const HOOK_ACTION = internalEvaluate.HOOK_ACTION
/**
 * The prefix of a sandboxed command's outgoing connection (`net:<host>:<port>`). Explicit: see
 * `EXPLICIT_RESOURCE_PREFIXES`.
 *
 * @since 0.3.0
 * @category constants
 */
export const NET_PREFIX = ResourcePrefix.NET_PREFIX
/**
 * The prefix of a resource that reaches a loopback, private, link-local or metadata address (`private:<URL>`,
 * `private:net:<host>:<port>`). Explicit: see `PermissionV2.EXPLICIT_RESOURCE_PREFIXES`.
 *
 * @since 0.3.0
 * @category constants
 */
export const PRIVATE_PREFIX = ResourcePrefix.PRIVATE_PREFIX
/**
 * The prefix of a shell command that cannot be resolved statically (`unresolved:<text>`). Explicit: see
 * `EXPLICIT_RESOURCE_PREFIXES`.
 *
 * @since 0.3.0
 * @category constants
 */
export const UNRESOLVED_PREFIX = ResourcePrefix.UNRESOLVED_PREFIX
/**
 * The prefix of an MCP tool approval bound to the tool's definition (`definition:<server>/<tool>@<digest>`, see
 * docs/mcp-tools.md): what an MCP tool's ask evaluates and saves, so a saved approval is void once the server changes
 * the tool's description or input schema. Explicit: see `EXPLICIT_RESOURCE_PREFIXES`.
 *
 * @since 0.4.0
 * @category constants
 */
export const DEFINITION_PREFIX = ResourcePrefix.DEFINITION_PREFIX
/**
 * The action of an MCP server's elicitation request, asked through the approval protocol (resource: the server's
 * name). Explicit: only a rule naming it allows it.
 *
 * @since 0.4.0
 * @category constants
 */
export const MCP_ELICITATION_ACTION = ResourcePrefix.MCP_ELICITATION_ACTION
/**
 * Resource prefixes only a rule naming them can allow: for a resource that starts with one of them, an allow whose
 * resource pattern does not start with the same prefix is passed over (so `webfetch * allow` never allows
 * `private:…`, `bash * allow` never allows a shell command that cannot be resolved statically, `unresolved:…`, and
 * neither lets a sandboxed command's connection out, `net:…`). Denies and asks apply as usual. See
 * docs/trust/webfetch.md, docs/shell.md and docs/egress.md.
 *
 * @since 0.2.0
 * @category constants
 */
export const EXPLICIT_RESOURCE_PREFIXES = internalEvaluate.EXPLICIT_RESOURCE_PREFIXES
/**
 * Last match wins; no match gives `{ action, resource: "*", effect: "ask" }`. A rule with `ignore_case` matches its
 * resource without regard to letter case; an `EXPLICIT_ACTIONS` action is allowed only by a rule naming it, and a
 * resource with an `EXPLICIT_RESOURCE_PREFIXES` prefix only by a rule whose resource starts with that prefix.
 * The resource is prepared once per call and each ruleset compiled once (see docs/performance.md).
 *
 * @since 0.1.0
 * @category utilities
 */
export const evaluate = internalEvaluate.evaluate
/**
 * Concatenates rulesets in argument order.
 *
 * @since 0.1.0
 * @category utilities
 */
export const merge = internalEvaluate.merge
/**
 * All rules, in order, whose action pattern matches `action` (the `rules` payload of `BlockedError`).
 *
 * @since 0.1.0
 * @category utilities
 */
export const relevant = internalEvaluate.relevant
/**
 * The configured rules used when no agent resolves: everything is denied.
 *
 * @since 0.1.0
 * @category utilities
 */
export const denyAll = internalEvaluate.denyAll
/**
 * The save entry of a Wildcard pattern (see `SaveEntry`).
 *
 * @since 0.2.0
 * @category utilities
 */
export const saveEntry = internalLeaf.saveEntry
/**
 * The lines a prompt shows for what `always` will save (the same text in the CLI and the MCP elicitation), every
 * value through `Printable` so no control or invisible character in it reaches the screen raw.
 *
 * @since 0.2.0
 * @category utilities
 */
export const describeAlways = internalLeaf.describeAlways
/**
 * The lines a prompt shows for what will run, before the resources: the full command of a shell ask (`bash`, and the
 * edit, read, external_directory and protected_path asks a command raises carry it too) and the model's description
 * of it, each through `Printable.show`, so the user approves the command the shell will run, not only its parts.
 * Empty for asks without a command.
 *
 * @since 0.3.0
 * @category utilities
 */
export const describeCommand = internalLeaf.describeCommand
/**
 * The caller fields every leaf passes to `assert`, taken from its call context: session, agent and the tool call as
 * `source`. When the context carries the call and the tool's definition (a registry materialization gives both),
 * the ask's prompt shows the call (`Approvals.Prompt.tool`: name, call id, full input) and its digest covers the
 * input and the definition; `source` itself stays the ids only.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromToolCall = internalLeaf.fromToolCall
/**
 * The model-visible failure for a blocked or corrected permission, or an ask nobody answered in time ("Approval timed
 * out: …", not a user's decline).
 *
 * @since 0.1.0
 * @category utilities
 */
export const toToolFailure = internalLeaf.toToolFailure
/**
 * The leaf error mapping (permission errors first): a blocked, corrected or timed-out permission becomes its model-visible failure, a
 * `ToolFailure` passes through, and every other typed error becomes `otherwise(error)`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const leafFailure = internalLeaf.leafFailure
/**
 * True iff the cause carries a `DeclinedError` defect.
 *
 * @since 0.1.0
 * @category guards
 */
export const isDeclined = internalLeaf.isDeclined
/**
 * How often a Location with pending asks checks whether the saved approvals changed (another process or Location
 * saved one), so that an ask a new approval covers is released without waiting for a reply in this Location. Only
 * while asks are pending; a check is one read of the database's change stamp.
 *
 * @since 0.3.0
 * @category constants
 */
export const PENDING_RECHECK_INTERVAL_MS = internalService.PENDING_RECHECK_INTERVAL_MS
export {
  /**
   * The tag of the process-wide shared-asks service (`PermissionV2.SharedAsks`; provided by `Core.layerProcess`).
   *
   * @since 0.3.0
   * @category tags
   */
  SharedAsks,
} from "./internal/service.js"
/**
 * How often a process with shared asks pending reads its claimed rows when no notification came (a notification
 * lost while its connection was down, a Postgres restart).
 *
 * @since 0.3.0
 * @category constants
 */
export const SHARED_POLL_INTERVAL_MS = internalService.SHARED_POLL_INTERVAL_MS
/**
 * How often a process that shares asks touches its pending rows and prunes the table (one hour).
 *
 * @since 0.3.0
 * @category constants
 */
export const SHARED_PRUNE_INTERVAL_MS = internalService.SHARED_PRUNE_INTERVAL_MS
/**
 * How long a settled row, or a row whose owner is gone, stays in `pending_ask` (one day).
 *
 * @since 0.3.0
 * @category constants
 */
export const SHARED_RETENTION_MS = internalService.SHARED_RETENTION_MS
/**
 * The typed failures of `assert`: a configured deny, a rejection with feedback, and an ask nobody answered before
 * `permission.askTimeout` (`Approvals.TimedOutError`).
 *
 * @since 0.1.0
 * @category errors
 */
export type Error = internalService.Error
/**
 * The permission service, one per Location.
 *
 * @since 0.1.0
 * @category models
 */
export type Interface = internalService.Interface
export {
  /**
   * The PermissionV2 service tag.
   *
   * @since 0.1.0
   * @category tags
   */
  Service,
} from "./internal/service.js"
/**
 * Builds the permission service of the current Location.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = internalService.make
/**
 * The Location-scoped layer: the service and its pending queue (which `Approvals.layer` reads); closing the Location
 * declines every pending request (no events).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = internalService.layer
