/**
 * The explicit resource prefixes: a resource that starts with one of them is allowed only by a rule whose resource
 * pattern names the same prefix (`PermissionV2.EXPLICIT_RESOURCE_PREFIXES`). They are plain values here so that the
 * shell planner, the egress proxy and the permission gate share one spelling without importing each other.
 *
 * @since 0.4.0
 */

/**
 * The prefix of a resource that reaches a loopback, private, link-local or metadata address (`private:<URL>`,
 * `private:net:<host>:<port>`). Explicit: see `PermissionV2.EXPLICIT_RESOURCE_PREFIXES`.
 *
 * @since 0.3.0
 * @category constants
 */
export const PRIVATE_PREFIX = "private:"

/**
 * The prefix of a shell command that cannot be resolved statically (`unresolved:<text>`). Explicit: see
 * `EXPLICIT_RESOURCE_PREFIXES`.
 *
 * @since 0.3.0
 * @category constants
 */
export const UNRESOLVED_PREFIX = "unresolved:"

/**
 * The prefix of a sandboxed command's outgoing connection (`net:<host>:<port>`). Explicit: see
 * `EXPLICIT_RESOURCE_PREFIXES`.
 *
 * @since 0.3.0
 * @category constants
 */
export const NET_PREFIX = "net:"

/**
 * The action of starting a program a project's own document names (an MCP server, a plugin module): see
 * `ProjectProgram`. Explicit: only a rule naming it allows it (`PermissionV2.EXPLICIT_ACTIONS`), and an approval of
 * it is always saved as the exact program, never a wildcard.
 *
 * @since 0.4.0
 * @category constants
 */
export const PROJECT_PROGRAM_ACTION = "project_program"

/**
 * The prefix of an MCP tool approval bound to the tool's definition (`definition:<server>/<tool>@<digest>`, see
 * docs/mcp-tools.md): what an MCP tool's ask evaluates and saves, so a saved approval is void once the server changes
 * the tool's description or input schema. Explicit: see `EXPLICIT_RESOURCE_PREFIXES`.
 *
 * @since 0.4.0
 * @category constants
 */
export const DEFINITION_PREFIX = "definition:"

/**
 * The action of an MCP server's elicitation request, asked through the approval protocol (resource: the server's
 * name). Explicit: only a rule naming it allows it.
 *
 * @since 0.4.0
 * @category constants
 */
export const MCP_ELICITATION_ACTION = "mcp_elicitation"
