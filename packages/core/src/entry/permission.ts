/**
 * `@toolgate/core/permission`: the policy floor — permission rules, asks and replies, saved approvals, agents
 * (which carry permission rules), questions and the shell-command reading bash rules use — with `Wildcard`, the
 * matcher the rules use.
 *
 * @since 0.2.0
 * @category modules
 */
export * as AgentV2 from "../agent/agent.js"
/**
 * The one approval protocol: prompts with everything a client must show, and digest-bound answers.
 *
 * @since 0.3.0
 * @category modules
 */
export * as Approvals from "../approvals/approvals.js"
/**
 * How many leading words of a command a saved bash approval keeps (`git commit *`, `npm run test *`).
 *
 * @since 0.2.0
 * @category modules
 */
export * as BashArity from "../shell/bash-arity.js"
/**
 * The decision journal: every evaluation, ask, answer, expiry, release, cascade and revoke, with provenance.
 *
 * @since 0.3.0
 * @category modules
 */
export * as DecisionJournal from "../journal/decision-journal.js"
/**
 * Hooks that can only tighten: `tool.before`, `tool.after` and `permission.evaluate`.
 *
 * @since 0.4.0
 * @category modules
 */
export * as Hooks from "../permission/hooks.js"
/**
 * Why a request is allowed, asked or denied: every rule considered, and the one that decided.
 *
 * @since 0.2.0
 * @category modules
 */
export * as PermissionExplain from "../permission/permission-explain.js"
/**
 * Mistakes in permission rules that would otherwise fail silently.
 *
 * @since 0.2.0
 * @category modules
 */
export * as PermissionLint from "../permission/permission-lint.js"
/**
 * Saved approvals: what a user allowed with `always`, per project and directory.
 *
 * @since 0.2.0
 * @category modules
 */
export * as PermissionSaved from "../permission/permission-saved.js"
/**
 * The permission gate: allow, deny and ask rules (last match wins) and the pending asks.
 *
 * @since 0.2.0
 * @category modules
 */
export * as PermissionV2 from "../permission/permission.js"
/**
 * The approval to start a program a project's own document names (an MCP server, a plugin): action
 * `project_program`, the exact program as the resource, never saved as a wildcard.
 *
 * @since 0.4.0
 * @category modules
 */
export * as ProjectProgram from "../permission/project-program.js"
/**
 * Questions a tool puts to the user, answered or dismissed by a client.
 *
 * @since 0.2.0
 * @category modules
 */
export * as QuestionV2 from "../agent/question.js"
/**
 * What a shell command string will run, read with the tree-sitter bash grammar.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ShellCommand from "../shell/shell-command.js"
/**
 * The one planner of the bash leaf and `permissions explain`: a command's segments become the permission groups and
 * asserts the leaf makes.
 *
 * @since 0.3.0
 * @category modules
 */
export * as ShellPlan from "../shell/shell-plan.js"
/**
 * Permission wildcard matching (`*`, `?`) in time linear in the input.
 *
 * @since 0.2.0
 * @category modules
 */
export * as Wildcard from "../values/wildcard.js"
