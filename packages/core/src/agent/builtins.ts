/**
 * The built-in agents with their default permission rules, and the configuration layering that runs on top of them
 * (top-level rules for every agent, per-agent entries, markdown agent files, home expansion of path rules).
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import * as Effect from "effect/Effect"
import type { Draft, MutableInfo } from "./info.js"
import * as Config from "../place/config.js"
import * as Global from "../system/global.js"
import * as Path from "../values/path.js"
import * as Wildcard from "../values/wildcard.js"
import * as ProtectedPath from "../place/protected-path.js"

type Rule = typeof Config.PermissionRule.Type

const rule = (action: string, resource: string, effect: Rule["effect"]): Rule => ({ action, resource, effect })

/**
 * External directories every agent may read: ask by default, but tmp and this project's managed tool output
 * (`output`, see docs/trust/managed-output.md; other projects' folders still ask) are allowed.
 *
 * @since 0.1.0
 * @category utilities
 */
export const readonlyExternalDirectory = (global: Global.Interface, output: string): ReadonlyArray<Rule> => [
  rule("external_directory", "*", "ask"),
  rule("external_directory", Wildcard.literal(`${output.replaceAll("\\", "/").replace(/\/$/, "")}/`) + "*", "allow"),
  rule("external_directory", path.join(global.tmp, "*"), "allow"),
]

/**
 * The secret-file family: `read` asks for these in every directory, in every letter case and on every platform
 * (`.env`, `.env.local`, `.env-prod`, `.env_prod`, `.env~`, `app.env`, `.envrc`). See docs/trust/secrets.md.
 *
 * @since 0.2.0
 * @category constants
 */
export const SECRET_FILES = [
  "*.env",
  "*.env.*",
  ".env-*",
  "*/.env-*",
  ".env_*",
  "*/.env_*",
  "*.env~",
  ".envrc",
  "*/.envrc",
] as const

/**
 * Templates of the secret family that stay readable without an ask.
 *
 * @since 0.2.0
 * @category constants
 */
export const SECRET_TEMPLATES = ["*.env.example", "*.env.sample"] as const

/**
 * The default `read` rules for the secret family, in order: ask for every `SECRET_FILES` pattern, then allow the
 * `SECRET_TEMPLATES`. Each matches without regard to letter case.
 *
 * @since 0.2.0
 * @category utilities
 */
export const secretRules: ReadonlyArray<Rule> = [
  ...SECRET_FILES.map((resource): Rule => ({ action: "read", resource, effect: "ask", ignore_case: true })),
  ...SECRET_TEMPLATES.map((resource): Rule => ({ action: "read", resource, effect: "allow", ignore_case: true })),
]

/**
 * The read-only commands the `guarded` preset runs without asking, each judged per simple command of a bash call.
 * Only commands the bash leaf checks the file arguments of (its `BashTool.READERS`), so `cat .env` asks `read` and
 * `head ../x` asks `external_directory`, plus `pwd`. Left out on purpose: `ls`, `find`, `du` and `git` (their path
 * arguments are not checked against the read rules, and `git log -p` shows tracked secrets), `echo` (a glob or
 * variable in its arguments prints names outside or the environment), `file` (`-f` reads names from a file) and
 * `diff` (`-r` reads whole trees).
 *
 * @since 0.3.0
 * @category constants
 */
export const GUARDED_READ_ONLY_COMMANDS = ["pwd", "cat", "head", "tail", "wc", "stat", "grep"] as const

/**
 * The rules of the `guarded` preset, placed right after the base `* * allow`: bash asks, except
 * `GUARDED_READ_ONLY_COMMANDS`; an option the leaf does not follow asks again (`wc --files0-from` reads names from a
 * file; every option of `grep`, since `-f`, `--file`, `-d recurse` and others read past the read rules); every web
 * fetch and search asks (an "always" on a fetch saves its origin, so it asks once per host).
 *
 * @since 0.3.0
 * @category constants
 */
export const guardedRules: ReadonlyArray<Rule> = [
  rule("bash", "*", "ask"),
  ...GUARDED_READ_ONLY_COMMANDS.map((command) => rule("bash", `${command} *`, "allow")),
  rule("bash", "wc *--files0-from*", "ask"),
  rule("bash", "grep -*", "ask"),
  rule("bash", "grep * -*", "ask"),
  rule("webfetch", "*", "ask"),
  rule("websearch", "*", "ask"),
]

/**
 * The rules every built-in agent starts with, for a preset (`reference` unless configured).
 *
 * @since 0.1.0
 * @category utilities
 */
export const defaults = (
  global: Global.Interface,
  output: string,
  preset: Config.Preset = "reference",
): ReadonlyArray<Rule> => [
  rule("*", "*", "allow"),
  ...(preset === "guarded" ? guardedRules : []),
  ...readonlyExternalDirectory(global, output),
  rule("question", "*", "deny"),
  rule("plan_enter", "*", "deny"),
  rule("plan_exit", "*", "deny"),
  rule("read", "*", "allow"),
  ...secretRules,
]

/**
 * Commands plan mode runs without asking, each judged per simple command of a bash call (see docs/shell.md): they
 * only read. Their file arguments still go through the `read` rules, and what they write through a redirection is
 * an edit (denied in plan mode).
 *
 * @since 0.2.0
 * @category constants
 */
export const PLAN_READ_ONLY_COMMANDS = [
  "ls",
  "pwd",
  "cat",
  "head",
  "tail",
  "wc",
  "grep",
  "rg",
  "find",
  "file",
  "stat",
  "du",
  "df",
  "which",
  "echo",
  "git status",
  "git log",
  "git diff",
  "git show",
  "git blame",
  "git ls-files",
  "git rev-parse",
] as const

/** Plan mode's bash rules: ask, except the read-only commands; options that write or run something ask again. */
const planBash: ReadonlyArray<Rule> = [
  rule("bash", "*", "ask"),
  ...PLAN_READ_ONLY_COMMANDS.map((command) => rule("bash", `${command} *`, "allow")),
  rule("bash", "git *--output*", "ask"),
  rule("bash", "rg *--pre*", "ask"),
]

/**
 * One built-in agent: its flags, description and the rules that follow `defaults`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Builtin {
  readonly id: string
  readonly mode: "primary" | "subagent"
  readonly hidden: boolean
  readonly description?: string
  readonly rules: ReadonlyArray<Rule>
}

/**
 * The seven built-in agents, in installation order. `worktree` is the Location directory, `output` the project's
 * managed tool-output folder.
 *
 * @since 0.1.0
 * @category utilities
 */
export const agents = (global: Global.Interface, worktree: string, output: string): ReadonlyArray<Builtin> => {
  const plans = path.join(global.data, "plans")
  const denyAll = [rule("*", "*", "deny")]
  return [
    {
      id: "build",
      mode: "primary",
      hidden: false,
      description: "The default agent. Executes tools based on configured permissions.",
      rules: [rule("question", "*", "allow"), rule("plan_enter", "*", "allow")],
    },
    {
      id: "plan",
      mode: "primary",
      hidden: false,
      description: "Plan mode. Disallows all edit tools.",
      rules: [
        rule("question", "*", "allow"),
        rule("plan_exit", "*", "allow"),
        rule("external_directory", path.join(plans, "*"), "allow"),
        rule("edit", "*", "deny"),
        rule("edit", ".toolgate/plans/*.md", "allow"),
        // `.toolgate/` is protected; plan files are the one part of it plan mode writes.
        rule(ProtectedPath.ACTION, ".toolgate/plans/*.md", "allow"),
        rule("edit", path.relative(worktree, path.join(plans, "*.md")), "allow"),
        ...planBash,
      ],
    },
    {
      id: "general",
      mode: "subagent",
      hidden: false,
      description:
        "General-purpose agent for researching complex questions and executing multi-step tasks. Use this agent to execute multiple units of work in parallel.",
      rules: [rule("todowrite", "*", "deny")],
    },
    {
      id: "explore",
      mode: "subagent",
      hidden: false,
      description:
        'Fast agent specialized for exploring codebases. Use this when you need to quickly find files by patterns (eg. "src/components/**/*.tsx"), search code for keywords (eg. "API endpoints"), or answer questions about the codebase (eg. "how do API endpoints work?"). When calling this agent, specify the desired thoroughness level: "quick" for basic searches, "medium" for moderate exploration, or "very thorough" for comprehensive analysis across multiple locations and naming conventions.',
      rules: [
        ...denyAll,
        rule("grep", "*", "allow"),
        rule("glob", "*", "allow"),
        rule("webfetch", "*", "allow"),
        rule("websearch", "*", "allow"),
        rule("read", "*", "allow"),
        ...readonlyExternalDirectory(global, output),
      ],
    },
    { id: "compaction", mode: "primary", hidden: true, rules: denyAll },
    { id: "title", mode: "primary", hidden: true, rules: denyAll },
    { id: "summary", mode: "primary", hidden: true, rules: denyAll },
  ]
}

/**
 * The transform that installs the built-in agents; rules are pushed onto whatever an agent already has. `preset`
 * chooses the rules they start from (`defaults`).
 *
 * @since 0.1.0
 * @category utilities
 */
export const builtins = (
  global: Global.Interface,
  worktree: string,
  output: string,
  preset: Config.Preset = "reference",
) => {
  const base = defaults(global, output, preset)
  const list = agents(global, worktree, output)
  return (draft: Draft): void => {
    for (const builtin of list) {
      draft.update(builtin.id, (agent) => {
        agent.mode = builtin.mode
        if (builtin.hidden) agent.hidden = true
        if (builtin.description !== undefined) agent.description = builtin.description
        agent.permissions.push(...base.map((r) => ({ ...r })), ...builtin.rules.map((r) => ({ ...r })))
      })
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Home expansion

const PATH_ACTIONS: ReadonlySet<string> = new Set(["external_directory", "read", "edit"])

/**
 * Expands a leading `~`, `~/`, `$HOME`, `$HOME/` or `$HOME\` to `home`; nothing in the middle of a path
 * (`Path.expandHome`).
 *
 * @since 0.1.0
 * @category utilities
 */
export const expandHome: (resource: string, home: string) => string = Path.expandHome

/**
 * Home-expands the resources of `external_directory`, `read` and `edit` rules; other rules (bash) stay raw.
 *
 * @since 0.1.0
 * @category utilities
 */
export const expandPermissions = (rules: ReadonlyArray<Rule>, home: string): Array<Rule> =>
  rules.map((r) => (PATH_ACTIONS.has(r.action) ? { ...r, resource: expandHome(r.resource, home) } : { ...r }))

// ---------------------------------------------------------------------------------------------------------------
// Markdown agent files (read by Config.agentFiles)

/**
 * The markdown agent files of one configuration directory, as documents (each source pattern sorted). Files that
 * resolve outside `directory` through a symlink, and files that cannot be used, are left out.
 *
 * @since 0.1.0
 * @category utilities
 */
export const directoryDocuments = (directory: string): ReadonlyArray<Config.Document> =>
  Config.agentFiles(directory).documents

/**
 * The configuration documents in priority order, each Directory entry replaced by its markdown agents. Every agent
 * file left out is logged as a warning naming it.
 *
 * @since 0.1.0
 * @category utilities
 */
export const loadDocuments = (entries: ReadonlyArray<Config.Entry>): Effect.Effect<ReadonlyArray<Config.Document>> =>
  Effect.gen(function* () {
    const out: Array<Config.Document> = []
    for (const entry of entries) {
      if (entry.type === "document") {
        out.push(entry)
        continue
      }
      const scan = Config.agentFiles(entry.path)
      for (const skipped of [
        ...scan.skipped,
        ...scan.invalid.map((error) => ({ file: error.path, reason: error.message })),
      ]) {
        yield* Effect.logWarning(`Skipped agent file ${skipped.file}: ${skipped.reason}`).pipe(
          Effect.annotateLogs({ skipped: skipped.file }),
        )
      }
      out.push(...scan.documents)
    }
    return out
  })

// ---------------------------------------------------------------------------------------------------------------
// Config layering

const parseModel = (model: string, variant: string | undefined): MutableInfo["model"] => {
  const slash = model.indexOf("/")
  if (slash <= 0 || slash === model.length - 1) return undefined
  return {
    providerID: model.slice(0, slash),
    id: model.slice(slash + 1),
    ...(variant === undefined ? {} : { variant }),
  }
}

const COLOR = /^#[0-9a-fA-F]{6}$/
const COLOR_NAMES: ReadonlySet<string> = new Set([
  "primary",
  "secondary",
  "accent",
  "success",
  "warning",
  "error",
  "info",
])

const applyEntry = (agent: MutableInfo, entry: typeof Config.Agent.Type, home: string): void => {
  if (entry.model !== undefined) {
    const model = parseModel(entry.model, entry.variant)
    if (model !== undefined) agent.model = model
  } else if (entry.variant !== undefined && agent.model !== undefined) agent.model.variant = entry.variant
  if (entry.request !== undefined) {
    Object.assign(agent.request.headers, entry.request.headers ?? {})
    Object.assign(agent.request.body, entry.request.body ?? {})
  }
  if (entry.system !== undefined) agent.system = entry.system
  if (entry.description !== undefined) agent.description = entry.description
  if (entry.mode !== undefined) agent.mode = entry.mode
  if (entry.hidden !== undefined) agent.hidden = entry.hidden
  if (entry.color !== undefined && (COLOR.test(entry.color) || COLOR_NAMES.has(entry.color))) agent.color = entry.color
  if (entry.steps !== undefined) agent.steps = entry.steps
  if (entry.permissions !== undefined) agent.permissions.push(...expandPermissions(entry.permissions, home))
}

/**
 * The configuration transform: top-level rules (home-expanded) appended to every agent, `default_agent`, then each
 * document's `agents.<id>` entries in order (`disabled` removes; a new agent first gets the top-level rules).
 *
 * @since 0.1.0
 * @category utilities
 */
export const configure = (documents: ReadonlyArray<Config.Document>, home: string) => {
  const permissions = expandPermissions(
    documents.flatMap((document) => document.info.permissions ?? []),
    home,
  )
  const defaultAgent = Config.latest(documents, "default_agent")
  return (draft: Draft): void => {
    if (defaultAgent !== undefined) draft.default(defaultAgent)
    for (const agent of draft.list()) {
      draft.update(agent.id, (info) => {
        info.permissions.push(...permissions.map((r) => ({ ...r })))
      })
    }
    for (const document of documents) {
      for (const [id, entry] of Object.entries(document.info.agents ?? {})) {
        if (entry.disabled === true) {
          draft.remove(id)
          continue
        }
        const existed = draft.get(id) !== undefined
        draft.update(id, (agent) => {
          if (!existed) agent.permissions.push(...permissions.map((r) => ({ ...r })))
          applyEntry(agent, entry, home)
        })
      }
    }
  }
}
