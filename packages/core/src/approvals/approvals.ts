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
 * This module is the namespace embedders import. The values, errors, tag and digests live beside the queue that
 * implements them (`permission/internal/protocol.ts`), as do the choices and prompts (`permission/internal/prompt.ts`);
 * how clients render a prompt is `internal/describe.ts` and the Location's layer `internal/service.ts`. The layer
 * with no Location, over the `pending_ask` table of a Postgres database every asking process writes, is
 * `ApprovalsDatabase` (`hosts/`).
 *
 * @since 0.3.0
 */

/**
 * `Prompt`, `Choice`, `Answer`, `PromptEvent`, `Filter`, the errors of `answer`, `TimedOutError`, `Interface`,
 * `Service`.
 *
 * @since 0.3.0
 */
export * from "../permission/internal/protocol.js"
/**
 * `choices` and `prompt`: what a pending ask offers and shows.
 *
 * @since 0.3.0
 */
export * from "../permission/internal/prompt.js"
/**
 * `choiceOf`, `describeChoice`, `describeChoices`, `describeDiff`, `describeDeadline`: how every client renders a
 * prompt and which choice a three-way reply stands for.
 *
 * @since 0.3.0
 */
export * from "./internal/describe.js"
/**
 * `make`, `layer`.
 *
 * @since 0.3.0
 */
export * from "./internal/service.js"
