/**
 * `@toolgate/core` — the tool layer and permission gate of an agent runner. Every module is a namespace.
 *
 * This file is the list of public namespaces, one documented `export * as` each, and holds no logic.
 *
 * @since 0.1.0
 * @category modules
 */
export * as AgentV2 from "./agent/agent.js"
/**
 * Process-wide tool registrations that embedding applications make once and every Location sees.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ApplicationTools from "./tool/application-tools.js"
/**
 * The `apply_patch` built-in: applies a multi-file patch after approving every target.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ApplyPatchTool from "./builtin/apply-patch-tool.js"
/**
 * Child processes run on a tool's behalf, in their own process group, with bounded output capture.
 *
 * @since 0.1.0
 * @category modules
 */
export * as AppProcess from "./world/app-process.js"
/**
 * How many leading words of a command a saved bash approval keeps (`git commit *`, `npm run test *`).
 *
 * @since 0.2.0
 * @category modules
 */
export * as BashArity from "./shell/bash-arity.js"
/**
 * The `bash` built-in: runs one command string through the configured shell.
 *
 * @since 0.1.0
 * @category modules
 */
export * as BashTool from "./builtin/bash-tool.js"
/**
 * The twelve built-in tools as one Location-scoped layer.
 *
 * @since 0.1.0
 * @category modules
 */
export * as BuiltInTools from "./builtin/built-in-tools.js"
/**
 * Which of the runner's environment variables a bash child sees.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ChildEnvironment from "./world/child-environment.js"
/**
 * The configuration a Location reads: `toolgate.json(c)` documents and `.toolgate` folders, by priority.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Config from "./place/config.js"
/**
 * The confined directory walk: files below a directory whose real paths stay inside a root.
 *
 * @since 0.3.0
 * @category modules
 */
export * as ConfinedWalk from "./system/confined-walk.js"
/**
 * Embedding in one call: the process-wide layer and the Location layer built on it.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Core from "./assembly/core.js"
/**
 * The database behind sessions, approvals, the decision journal and the call journal: SQLite (WAL, foreign keys) or
 * Postgres, one set of migrations.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Database from "./system/database.js"
/**
 * Which database a process opens: `TOOLGATE_DATABASE_URL`, else `database.url` / `database.pool` of the user's
 * configuration file, else SQLite.
 *
 * @since 0.3.0
 * @category modules
 */
export * as DatabaseConfig from "./system/database-config.js"
/**
 * The database's health check and migration report (`toolgate db check` / `db migrate`): connects without migrating.
 *
 * @since 0.3.0
 * @category modules
 */
export * as DatabaseHealth from "./system/database-health.js"
/**
 * LISTEN/NOTIFY on the database (Postgres; silent on SQLite): how an answer given on one host wakes the process that
 * asked.
 *
 * @since 0.3.0
 * @category modules
 */
export * as Notifications from "./system/notifications.js"
/**
 * The `edit` built-in: replaces an exact string in a file.
 *
 * @since 0.1.0
 * @category modules
 */
export * as EditTool from "./builtin/edit-tool.js"
/**
 * Typed live events published inside a Location and the subscriptions to them.
 *
 * @since 0.1.0
 * @category modules
 */
export * as EventV2 from "./place/event.js"
/**
 * The per-file change summary that mutating tools report: a unified patch and line counts.
 *
 * @since 0.1.0
 * @category modules
 */
export * as FileDiff from "./values/file-diff.js"
/**
 * Locked, symlink-checked file writes shared by write, edit and apply_patch.
 *
 * @since 0.1.0
 * @category modules
 */
export * as FileMutation from "./world/file-mutation.js"
/**
 * The platform error of a failed node:fs call, shaped like `NodeFileSystem`'s (one errno table).
 *
 * @since 0.3.0
 * @category modules
 */
export * as FsError from "./system/fs-error.js"
/**
 * Where toolgate keeps its files: the data, config and tmp directories.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Global from "./system/global.js"
/**
 * The `glob` built-in: lists the files under a directory that match a glob.
 *
 * @since 0.1.0
 * @category modules
 */
export * as GlobTool from "./builtin/glob-tool.js"
/**
 * The `grep` built-in: searches file contents by regular expression.
 *
 * @since 0.1.0
 * @category modules
 */
export * as GrepTool from "./builtin/grep-tool.js"
/**
 * The Location's tool hooks in settlement: `tool.before` and `tool.after` through the registry's port, asks through
 * the permission gate, every decision journaled.
 *
 * @since 0.4.0
 * @category modules
 */
export * as HookGate from "./assembly/hook-gate.js"
/**
 * Plugins: tools and hooks registered the canonical way, from code or from the configuration's `plugins` modules
 * (a project's module loads only after a `project_program` approval).
 *
 * @since 0.4.0
 * @category modules
 */
export * as Plugin from "./assembly/plugin.js"
/**
 * Hooks that can only tighten: `tool.before`, `tool.after` and `permission.evaluate`.
 *
 * @since 0.4.0
 * @category modules
 */
export * as Hooks from "./permission/hooks.js"
/**
 * Time-ordered identifiers for sessions, calls and requests.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Identifier from "./values/identifier.js"
/**
 * Image normalisation for `read`: keeps an image within the configured size limits.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Image from "./world/image.js"
/**
 * Model-facing tool types: calls, definitions, content, outputs and results.
 *
 * @since 0.1.0
 * @category modules
 */
export * as LLM from "./values/llm.js"
/**
 * The directory a session acts in and the project it belongs to; the root of every Location-scoped layer.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Location from "./place/location.js"
/**
 * Resolves the paths tools read and write against the Location and refuses escapes.
 *
 * @since 0.1.0
 * @category modules
 */
export * as LocationMutation from "./world/location-mutation.js"
/**
 * The model interface the runner drives: one request streams text, tool calls and results.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Model from "./assembly/model.js"
/**
 * Pure path arithmetic: containment, home expansion from `Global.home`, and the surrogate checks of a path.
 *
 * @since 0.3.0
 * @category modules
 */
export * as Path from "./values/path.js"
/**
 * The `apply_patch` text format: parsing an envelope into hunks and applying an update's chunks.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Patch from "./builtin/patch.js"
/**
 * The decision journal: every evaluation, ask, answer, expiry, release, cascade and revoke, with provenance.
 *
 * @since 0.3.0
 * @category modules
 */
export * as DecisionJournal from "./journal/decision-journal.js"
/**
 * Why a request is allowed, asked or denied: every rule considered, and the one that decided.
 *
 * @since 0.2.0
 * @category modules
 */
export * as PermissionExplain from "./permission/permission-explain.js"
/**
 * Mistakes in permission rules that would otherwise fail silently.
 *
 * @since 0.2.0
 * @category modules
 */
export * as PermissionLint from "./permission/permission-lint.js"
/**
 * The one approval protocol: prompts with everything a client must show, and digest-bound answers.
 *
 * @since 0.3.0
 * @category modules
 */
export * as Approvals from "./approvals/approvals.js"
/**
 * Saved approvals: what a user allowed with `always`, per project and directory.
 *
 * @since 0.1.0
 * @category modules
 */
export * as PermissionSaved from "./permission/permission-saved.js"
/**
 * The permission gate: allow, deny and ask rules (last match wins) and the pending asks.
 *
 * @since 0.1.0
 * @category modules
 */
export * as PermissionV2 from "./permission/permission.js"
/**
 * The approval to start a program a project's own document names (an MCP server, a plugin): action
 * `project_program`, the exact program as the resource, never saved as a wildcard.
 *
 * @since 0.4.0
 * @category modules
 */
export * as ProjectProgram from "./permission/project-program.js"
/**
 * Text as a person must see it before approving it: controls, escape sequences, bidi and invisible characters
 * shown as visible escapes.
 *
 * @since 0.3.0
 * @category modules
 */
export * as Printable from "./values/printable.js"
/**
 * The one process spawner: process groups, capped capture, line streaming, early stop, death with the runner.
 *
 * @since 0.3.0
 * @category modules
 */
export * as ProcessGroup from "./system/process-group.js"
/**
 * Which project a directory belongs to, and its stable id.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Project from "./place/project.js"
/**
 * JSON Schemas rewritten into the form model providers accept.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ProviderSchema from "./values/provider-schema.js"
/**
 * The files and folders that decide a Location's rules and identity, which tools may not change silently.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ProtectedPath from "./place/protected-path.js"
/**
 * The `question` built-in: asks the user multiple-choice questions.
 *
 * @since 0.1.0
 * @category modules
 */
export * as QuestionTool from "./builtin/question-tool.js"
/**
 * Questions a tool puts to the user, answered or dismissed by a client.
 *
 * @since 0.1.0
 * @category modules
 */
export * as QuestionV2 from "./agent/question.js"
/**
 * The `read` built-in: reads a text file by pages, an image as media, or a directory listing.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ReadTool from "./builtin/read-tool.js"
/**
 * The file-system side of `read`, as a service that tests can replace.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ReadToolFileSystem from "./builtin/read-tool-file-system.js"
/**
 * The turn loop: streams model requests and settles the tool calls they make.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Runner from "./assembly/runner.js"
/**
 * A model that replays a script of turns, for tests and the demo.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ScriptedModel from "./assembly/scripted-model.js"
/**
 * File search for `glob` and `grep`, on ripgrep or a built-in Node engine with the same results.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Search from "./world/search/search.js"
/**
 * A session's todo list, stored in SQLite.
 *
 * @since 0.1.0
 * @category modules
 */
export * as SessionTodo from "./world/session-todo.js"
/**
 * The session store the permission service needs.
 *
 * @since 0.1.0
 * @category modules
 */
export * as SessionV2 from "./place/session.js"
/**
 * The one builder of settle inputs: an identity (session, agent, assistant message) plus one call.
 *
 * @since 0.3.0
 * @category modules
 */
export * as SettleInput from "./tool/settle-input.js"
/**
 * What a shell command string will run, read with the tree-sitter bash grammar.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ShellCommand from "./shell/shell-command.js"
/**
 * The one planner of the bash leaf and `permissions explain`: a command's segments become the permission groups and
 * asserts the leaf makes.
 *
 * @since 0.3.0
 * @category modules
 */
export * as ShellPlan from "./shell/shell-plan.js"
/**
 * The `skill` built-in: loads one discovered skill's instructions.
 *
 * @since 0.1.0
 * @category modules
 */
export * as SkillTool from "./builtin/skill-tool.js"
/**
 * Markdown skills (`SKILL.md`) discovered for a Location.
 *
 * @since 0.1.0
 * @category modules
 */
export * as SkillV2 from "./world/skill.js"
/**
 * A state container rebuilt by replaying registered transforms onto a fresh initial value.
 *
 * @since 0.1.0
 * @category modules
 */
export * as State from "./values/state.js"
/**
 * The `todowrite` built-in: replaces the session's todo list.
 *
 * @since 0.1.0
 * @category modules
 */
export * as TodoWriteTool from "./builtin/todo-write-tool.js"
/**
 * The tool contract: making tools as opaque values and settling their calls.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Tool from "./tool/tool.js"
/**
 * The runner's durable log of tool calls, owned by one runner at a time.
 *
 * @since 0.2.0
 * @category modules
 */
export * as ToolCallJournal from "./assembly/tool-call-journal.js"
/**
 * The one place model output is bounded; over a limit the full text is kept in a file.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ToolOutputStore from "./tool/tool-output-store.js"
/**
 * The Location-scoped tool registry: registrations, turn materializations and settlement.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ToolRegistry from "./tool/tool-registry.js"
/**
 * The settlement port of tool hooks: what a materialization runs around a call when the Location has hooks.
 *
 * @since 0.4.0
 * @category modules
 */
export * as ToolHooks from "./tool/tool-hooks.js"
/**
 * The registration-only view of the registry that Location producers receive.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Tools from "./tool/tools.js"
/**
 * Web addresses as permission resources, and the network addresses they reach.
 *
 * @since 0.2.0
 * @category modules
 */
export * as WebAddress from "./world/web-address.js"
/**
 * The `webfetch` built-in: one permission-checked HTTP(S) GET returned as text, Markdown or HTML.
 *
 * @since 0.1.0
 * @category modules
 */
export * as WebFetchTool from "./builtin/web-fetch-tool.js"
/**
 * The `websearch` built-in: a web search through an Exa or Parallel MCP endpoint.
 *
 * @since 0.1.0
 * @category modules
 */
export * as WebSearchTool from "./builtin/web-search-tool.js"
/**
 * Permission wildcard matching (`*`, `?`) in time linear in the input.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Wildcard from "./values/wildcard.js"
/**
 * The `write` built-in: writes a whole file.
 *
 * @since 0.1.0
 * @category modules
 */
export * as WriteTool from "./builtin/write-tool.js"
