/**
 * Approvals: the one approval protocol every client speaks — the CLI prompt, MCP elicitation, the AI SDK bridge,
 * `Core.layerTest` and the HTTP approval server. A client reads `Prompt`s (everything it must show: the tool call
 * and its input, the resources, the command or diff, the choices with what each saves and where, the deadline) and
 * answers with one `answer`, naming the request id and the `digest` of what it showed. A reply to something other
 * than what was shown, a second answer or an unknown id fails with a typed error and changes nothing.
 *
 * `PermissionV2` holds the pending asks; this service is the client-facing view of the same queue (one per
 * Location), or of every process's asks on a shared database (`ApprovalsDatabase.layer`, in `@toolgate/core/hosts`).
 * See docs/approvals.md.
 *
 * This module names everything embedders import. The values, errors, tag and digests live beside the queue that
 * implements them (`permission/internal/protocol.ts`), as do the choices and prompts (`permission/internal/prompt.ts`);
 * how clients render a prompt is `internal/describe.ts` and the Location's layer `internal/service.ts`. The layer
 * with no Location, over the `pending_ask` table of a Postgres database every asking process writes, is
 * `ApprovalsDatabase` (`hosts/`).
 *
 * @since 0.3.0
 */
import * as internalProtocol from "../permission/internal/protocol.js"
import * as internalPrompt from "../permission/internal/prompt.js"
import * as internalDescribe from "./internal/describe.js"
import * as internalService from "./internal/service.js"

/**
 * How long an answer holds: `once` (this call only), `session` (every matching ask of this session until it ends),
 * `always` (saved; see `AlwaysScope`), or `reject`.
 *
 * @since 0.3.0
 * @category models
 */
export const Lifetime = internalProtocol.Lifetime
/**
 * @since 0.3.0
 * @category models
 */
export type Lifetime = internalProtocol.Lifetime
/**
 * What an `always` saves: `exact` (exactly these resources, as literals), `directory` (the resources' directories)
 * or `pattern` (the tool's whole save pattern, the reference behaviour: `*` for edits).
 *
 * @since 0.3.0
 * @category models
 */
export const AlwaysScope = internalProtocol.AlwaysScope
/**
 * @since 0.3.0
 * @category models
 */
export type AlwaysScope = internalProtocol.AlwaysScope
/**
 * One choice a prompt offers, with what it would save and where (`saves` is empty for `once` and `reject`).
 * `label` is raw text (it may name a hostile pattern): a client escapes it when it shows it (`Printable.show`).
 * `id` is stable and is what a client sends back (`once`, `session`, `always:exact`, `always:directory`,
 * `always:pattern`, `reject`).
 *
 * @since 0.3.0
 * @category models
 */
export const Choice = internalProtocol.Choice
/**
 * @since 0.3.0
 * @category models
 */
export type Choice = internalProtocol.Choice
/**
 * The tool call an ask came from, when it came from one: its name, call id, full input and a digest of the tool's
 * definition (so a reply cannot be carried over to a different tool of the same name).
 *
 * @since 0.3.0
 * @category models
 */
export const ToolCall = internalProtocol.ToolCall
/**
 * @since 0.3.0
 * @category models
 */
export type ToolCall = internalProtocol.ToolCall
/**
 * Everything a client must show before it answers. `digest` is the sha-256 (hex) over the canonical tool input, the
 * tool's definition, the action, the resources and the save patterns; an answer must name it. `command` is the whole
 * command of a shell ask (escaped as `PermissionV2.describeCommand` renders it), `diff` the rendered unified diff of
 * a write, edit or apply_patch. `askedAt` and `deadline` are epoch milliseconds (no deadline: waits until answered).
 *
 * @since 0.3.0
 * @category models
 */
export const Prompt = internalProtocol.Prompt
/**
 * @since 0.3.0
 * @category models
 */
export type Prompt = internalProtocol.Prompt
/**
 * An answer. `choice` is one of the prompt's `Choice.id`s; `digest` must equal the prompt's (in-process callers of
 * `PermissionV2.reply` may omit it; every remote channel sends it). `ttlMillis` bounds an `always`; `message` goes
 * to the model with a `reject`. `by` names who answered and `channel` through what (`cli`, `mcp`, `ai-sdk`, `http`,
 * `test`, …); both are recorded with what is saved and in the decision journal.
 *
 * @since 0.3.0
 * @category models
 */
export const Answer = internalProtocol.Answer
/**
 * @since 0.3.0
 * @category models
 */
export type Answer = internalProtocol.Answer
/**
 * What a prompt stream delivers: a new ask, an answer (by whom, through which channel, with which choice) or an
 * expiry. A stream first delivers an `Asked` for every ask already pending, then live events in publish order.
 *
 * @since 0.3.0
 * @category models
 */
export const PromptEvent = internalProtocol.PromptEvent
/**
 * @since 0.3.0
 * @category models
 */
export type PromptEvent = internalProtocol.PromptEvent
/**
 * The channel of an answer given in the same process without a client (`PermissionV2.reply`): the only channel on
 * which `Approvals.answer` accepts an answer without a digest.
 *
 * @since 0.3.0
 * @category constants
 */
export const IN_PROCESS = internalProtocol.IN_PROCESS
/**
 * Which prompts a client wants; all of them when empty.
 *
 * @since 0.3.0
 * @category models
 */
export type Filter = internalProtocol.Filter
export {
  /**
   * The answer's digest is not the digest of the pending ask: the client showed something else (a stale screen, a
   * different call). Nothing changed. HTTP 409.
   *
   * @since 0.3.0
   * @category errors
   */
  DigestMismatchError,
} from "../permission/internal/protocol.js"
export {
  /**
   * The request was already answered (or expired, or withdrawn). Nothing changed. HTTP 409.
   *
   * @since 0.3.0
   * @category errors
   */
  AlreadyAnsweredError,
} from "../permission/internal/protocol.js"
export {
  /**
   * The answer names a choice the prompt does not offer. Nothing changed. HTTP 400.
   *
   * @since 0.3.0
   * @category errors
   */
  UnknownChoiceError,
} from "../permission/internal/protocol.js"
export {
  /**
   * An ask nobody answered before `permission.askTimeout`: the waiting call fails with this, model-visibly, as
   * "approval timed out" (not as a user's decline).
   *
   * @since 0.3.0
   * @category errors
   */
  TimedOutError,
} from "../permission/internal/protocol.js"
/**
 * The failures of `answer`.
 *
 * @since 0.3.0
 * @category errors
 */
export type AnswerError = internalProtocol.AnswerError
/**
 * The approval protocol of one Location.
 *
 * @since 0.3.0
 * @category models
 */
export type Interface = internalProtocol.Interface
export {
  /**
   * The Approvals service tag.
   *
   * @since 0.3.0
   * @category tags
   */
  Service,
} from "../permission/internal/protocol.js"
/**
 * The digest of a tool's definition: sha-256 over the canonical JSON of its name, description and input schema.
 *
 * @since 0.3.0
 * @category digest
 */
export const definitionDigest = internalProtocol.definitionDigest
/**
 * The digest of a pending ask: over the tool call it came from (name, definition digest, full input; `null` for an
 * ask raised outside a tool call), the action, the resources in request order and the save patterns.
 *
 * @since 0.3.0
 * @category digest
 */
export const digest = internalProtocol.digest
/**
 * The actions whose resources are paths (relative to the Location, or absolute outside it), for which
 * `always:directory` is offered. Every other action's resources are commands, URLs or hosts: no directory.
 *
 * @since 0.3.0
 * @category constants
 */
export const PATH_ACTIONS = internalPrompt.PATH_ACTIONS
/**
 * What an ask may save, cut to the rules that raised it. When a configured or built-in rule narrower than `*` asked
 * for a resource (the secret-file rules, a configured `ask` rule), only the tool's save patterns that stay inside
 * that rule are kept, or else the rule's own pattern (and the resource exactly, when the rule matched it only
 * ignoring case); the request's other resources are then saved exactly. An answer never reaches beyond the rule that
 * asked. `save` is returned as given when every resource was asked by a `*` rule.
 *
 * @since 0.4.0
 * @category choices
 */
export const cutSaves = internalPrompt.cutSaves
/**
 * The choices of `request`, in the order a client shows them: `once`, `session`, `always:exact`,
 * `always:directory`, `always:pattern`, `reject`. `session` and the `always` choices are offered only when the
 * request saves something (a `protected_path` ask saves nothing); `always:exact` and `always:directory` only when
 * no resource carries an explicit prefix (`unresolved:`, `private:`, `net:`) and the action is not explicit; a
 * choice whose saves equal a narrower one's is left out (the narrower id stays). `session` holds the tool's save
 * patterns (what `always:pattern` would save) for this session only.
 *
 * @since 0.3.0
 * @category choices
 */
export const choices = internalPrompt.choices
/**
 * The choice a three-way `PermissionV2.Reply` stands for: `once` and `reject` by their ids; `always` the `always`
 * choice that saves exactly the tool's save patterns (`always:pattern`, or the narrower id offered in its place when
 * it saves the same). `undefined` for an `always` when the ask saves nothing (answer `once`: nothing to save).
 *
 * @since 0.3.0
 * @category choices
 */
export const replyChoice = internalPrompt.replyChoice
/**
 * The prompt of a pending ask: the request, its digest, the tool call it came from (when known), the command of a
 * shell ask (escaped), the rendered diff of a write, edit or apply_patch (`metadata.diff`, as the tool rendered it:
 * a client escapes it when it shows it), the choices, when it was asked and its deadline.
 *
 * @since 0.3.0
 * @category prompts
 */
export const prompt = internalPrompt.prompt
/**
 * The choice a three-way reply stands for: `once` and `reject` by their ids; `always`, for a whole prompt, the choice
 * that saves exactly the tool's save patterns (as `PermissionV2.reply("always")` does — `Approvals.replyChoice`),
 * and for a bare list of choices the widest `always` offered. `undefined` when the prompt offers no such choice (an
 * `always` that would save nothing is not offered: answer `once`).
 *
 * @since 0.3.0
 * @category choices
 */
export const choiceOf = internalDescribe.choiceOf
/**
 * The lines of one choice: `<id> — <label>`, then what it saves (a `session` choice: what it allows until the
 * session ends) and where, one pattern or exact value per line.
 *
 * @since 0.3.0
 * @category rendering
 */
export const describeChoice = internalDescribe.describeChoice
/**
 * The lines of every choice a prompt offers, in its order.
 *
 * @since 0.3.0
 * @category rendering
 */
export const describeChoices = internalDescribe.describeChoices
/**
 * The lines of the tool call a prompt came from: `tool: <name> (call <id>)`, then `input:` and the call's full input
 * (the input the digest covers), one `key: value` line per property of an object input (strings quoted, other
 * values as JSON, everything escaped), or the whole input as JSON. Empty for an ask raised outside a tool call.
 *
 * @since 0.3.0
 * @category rendering
 */
export const describeTool = internalDescribe.describeTool
/**
 * The lines of a prompt's diff (`diff:` and the diff, one escaped line per line); empty when it has none.
 *
 * @since 0.3.0
 * @category rendering
 */
export const describeDiff = internalDescribe.describeDiff
/**
 * The deadline line of a prompt (`answer by <ISO time>`), or nothing when it waits until answered.
 *
 * @since 0.3.0
 * @category rendering
 */
export const describeDeadline = internalDescribe.describeDeadline
/**
 * Builds the approval protocol over the current Location's permission queue.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = internalService.make
/**
 * The Location's approval protocol; needs `PermissionV2.layer` (which provides the queue) and the event bus.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = internalService.layer
