/**
 * `@toolgate/core/permission`: the policy floor — permission rules, asks and replies, saved approvals, agents
 * (which carry permission rules), questions and the shell-command reading bash rules use — with `Wildcard`, the
 * matcher the rules use.
 *
 * @since 0.2.0
 */
export * as AgentV2 from "../policy/agent.js"
export * as BashArity from "../policy/bash-arity.js"
export * as PermissionExplain from "../policy/permission-explain.js"
export * as PermissionLint from "../policy/permission-lint.js"
export * as PermissionSaved from "../policy/permission-saved.js"
export * as PermissionV2 from "../policy/permission.js"
export * as QuestionV2 from "../policy/question.js"
export * as ShellCommand from "../policy/shell-command.js"
export * as Wildcard from "../values/wildcard.js"
