/**
 * The schemas of a configuration document: `Info` and its sections (rules, agents, bash, tool output, attachments,
 * the preset). `Config` names everything exported here.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import * as DatabaseConfig from "../../system/database-config.js"

/**
 * A permission rule as configured (the same shape as `PermissionV2.Rule`). `ignore_case` makes the resource pattern
 * match without regard to letter case on every platform (the secret-file rules use it; see docs/trust/secrets.md).
 * Other keys inside a rule are ignored.
 *
 * @since 0.1.0
 * @category models
 */
export const PermissionRule = Schema.Struct({
  action: Schema.String,
  resource: Schema.String,
  effect: Schema.Literal("allow", "deny", "ask"),
  ignore_case: Schema.optional(Schema.Boolean),
})

const PositiveInt = Schema.Int.pipe(Schema.positive())

/**
 * Tool output truncation thresholds.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolOutput = Schema.Struct({
  max_lines: Schema.optional(PositiveInt),
  max_bytes: Schema.optional(PositiveInt),
}).annotations({ description: "Tool output truncation thresholds" })

/**
 * Image attachment limits used by `read`.
 *
 * @since 0.1.0
 * @category models
 */
export const ImageAttachments = Schema.Struct({
  auto_resize: Schema.optional(Schema.Boolean),
  max_width: Schema.optional(PositiveInt),
  max_height: Schema.optional(PositiveInt),
  max_base64_bytes: Schema.optional(PositiveInt),
})

/**
 * `bash.sandbox`: opt-in containment of the bash tool's child processes (see docs/sandbox.md). Keys are snake_case;
 * the camelCase spellings (`readOnly`, …) are deprecated aliases (`ALIASES`).
 *
 * @since 0.1.0
 * @category models
 */
export const BashSandbox = Schema.Struct({
  mode: Schema.Literal("none", "bubblewrap"),
  /** `false` (the default): no network; `true`: the host's network; `"rules"`: through the egress proxy. */
  network: Schema.optional(Schema.Union(Schema.Boolean, Schema.Literal("rules"))),
  writable: Schema.optional(Schema.Array(Schema.String)),
  read_only: Schema.optional(Schema.Array(Schema.String)),
  /** Paths replaced by an empty file or directory inside the sandbox. */
  deny_read: Schema.optional(Schema.Array(Schema.String)),
  /** Unix sockets the sandbox may connect to (every other socket stays unreachable). */
  allow_unix_sockets: Schema.optional(Schema.Array(Schema.String)),
  /** A bash segment that would only ask `bash` runs without asking while the sandbox is active. */
  auto_allow: Schema.optional(Schema.Boolean),
  fail_if_unavailable: Schema.optional(Schema.Boolean),
})

/**
 * `bash.env`: which variables of the runner's environment a bash child sees (see docs/sandbox.md).
 *
 * @since 0.1.0
 * @category models
 */
export const BashEnv = Schema.Union(
  Schema.Literal("inherit", "scrub"),
  Schema.Struct({
    mode: Schema.optional(Schema.Literal("inherit", "scrub")),
    scrub: Schema.optional(Schema.Array(Schema.String)),
    allow: Schema.optional(Schema.Array(Schema.String)),
    set: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  }),
)

/**
 * The `bash` section: settings of the bash tool.
 *
 * @since 0.1.0
 * @category models
 */
export const Bash = Schema.Struct({
  sandbox: Schema.optional(BashSandbox),
  env: Schema.optional(BashEnv),
  /** Extra command-prefix arities for saved bash approvals, e.g. `{ "make": 2 }` (see docs/shell.md). */
  arity: Schema.optional(Schema.Record({ key: Schema.String, value: PositiveInt })),
})

/**
 * One `agents.<id>` entry.
 *
 * @since 0.1.0
 * @category models
 */
export const Agent = Schema.Struct({
  model: Schema.optional(Schema.String),
  variant: Schema.optional(Schema.String),
  request: Schema.optional(
    Schema.Struct({
      headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
      body: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    }),
  ),
  system: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mode: Schema.optional(Schema.Literal("subagent", "primary", "all")),
  hidden: Schema.optional(Schema.Boolean),
  color: Schema.optional(Schema.String),
  steps: Schema.optional(PositiveInt),
  disabled: Schema.optional(Schema.Boolean),
  permissions: Schema.optional(Schema.Array(PermissionRule)),
})

/**
 * The named rule sets every built-in agent starts from (see docs/permissions.md). `reference` (the default) is the
 * reference's: everything is allowed except what asks for a reason (outside directories, secret files). `guarded`
 * asks for bash except a few read-only commands whose file arguments pass the `read` rules, and asks for every web
 * fetch (once per host with "always") and web search; writes outside the Location ask in both.
 *
 * @since 0.3.0
 * @category models
 */
export const Preset = Schema.Literal("reference", "guarded").annotations({
  description: "The rule set every built-in agent starts from",
})
/**
 * @see Preset
 *
 * @since 0.3.0
 * @category models
 */
export type Preset = typeof Preset.Type

/**
 * The `permission` section: settings of the permission gate (its rules are `permissions`). `ask_timeout` is how long
 * an ask waits for an answer, in milliseconds (default: no limit); an ask nobody answered in time fails as "approval
 * timed out" (see docs/approvals.md).
 *
 * @since 0.3.0
 * @category models
 */
export const Permission = Schema.Struct({
  ask_timeout: Schema.optional(PositiveInt),
}).annotations({ description: "Settings of the permission gate" })

/**
 * The `journal` section: how long the decision journal keeps a project's entries (see docs/decisions.md). Entries
 * older than `retention_days` (default 30) go, and with `max_entries` all but the newest that many of the project;
 * both are applied when a Location opens and every hour while it is open.
 *
 * @since 0.3.0
 * @category models
 */
export const Journal = Schema.Struct({
  retention_days: Schema.optional(PositiveInt),
  max_entries: Schema.optional(PositiveInt),
}).annotations({ description: "Retention of the decision journal" })

const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })

/**
 * One `mcp.<name>` entry: an MCP server whose tools become toolgate tools (see docs/mcp-tools.md). Exactly one of
 * `command` (a local server: the program and its arguments, started with `cwd` and the scrubbed environment plus
 * `env`) or `url` (a remote server over streamable HTTP, with `headers`; `transport: "sse"` for the legacy SSE
 * transport). `env` and `headers` values may name variables of the runner's environment as `{env:NAME}` instead of
 * holding a secret. `timeout` bounds each call in milliseconds (default 60000); `enabled: false` leaves the server
 * off; `include` / `exclude` are Wildcard patterns of the server's tool names; `trusted` (honoured only in the
 * user's own configuration) lets the server's `readOnlyHint` tools run without the default ask.
 *
 * @since 0.4.0
 * @category models
 */
export const McpServer = Schema.Struct({
  command: Schema.optional(Schema.NonEmptyArray(Schema.String)),
  url: Schema.optional(Schema.String),
  transport: Schema.optional(Schema.Literal("streamable_http", "sse")),
  env: Schema.optional(StringMap),
  headers: Schema.optional(StringMap),
  cwd: Schema.optional(Schema.String),
  timeout: Schema.optional(PositiveInt),
  enabled: Schema.optional(Schema.Boolean),
  include: Schema.optional(Schema.Array(Schema.String)),
  exclude: Schema.optional(Schema.Array(Schema.String)),
  trusted: Schema.optional(Schema.Boolean),
}).pipe(
  Schema.filter((server) => {
    if ((server.command === undefined) === (server.url === undefined))
      return { path: [], message: "exactly one of command or url is required" }
    if (server.command !== undefined && (server.headers !== undefined || server.transport !== undefined))
      return { path: [server.headers !== undefined ? "headers" : "transport"], message: "only a url server has it" }
    if (server.url !== undefined && (server.env !== undefined || server.cwd !== undefined))
      return { path: [server.env !== undefined ? "env" : "cwd"], message: "only a command server has it" }
    if (server.url !== undefined && !URL.canParse(server.url)) return { path: ["url"], message: "not a URL" }
    return undefined
  }),
  Schema.annotations({ description: "An MCP server whose tools become toolgate tools" }),
)
/**
 * @see McpServer
 *
 * @since 0.4.0
 * @category models
 */
export type McpServer = typeof McpServer.Type

/**
 * A configuration document. An unknown top-level key is an error (`parseDocument`); unknown keys deeper down are
 * ignored. `$schema` is accepted for editors.
 *
 * @since 0.1.0
 * @category models
 */
export const Info = Schema.Struct({
  $schema: Schema.optional(Schema.String),
  preset: Schema.optional(Preset),
  permissions: Schema.optional(Schema.Array(PermissionRule)),
  permission: Schema.optional(Permission),
  agents: Schema.optional(Schema.Record({ key: Schema.String, value: Agent })),
  default_agent: Schema.optional(Schema.String),
  tool_output: Schema.optional(ToolOutput),
  shell: Schema.optional(Schema.String),
  bash: Schema.optional(Bash),
  attachments: Schema.optional(Schema.Struct({ image: Schema.optional(ImageAttachments) })),
  journal: Schema.optional(Journal),
  /** MCP servers whose tools become toolgate tools, by name (see docs/mcp-tools.md). */
  mcp: Schema.optional(Schema.Record({ key: Schema.String, value: McpServer })),
  /**
   * Plugin modules to load, as paths relative to this document's directory (or absolute): each module's default
   * export is a plugin (`Plugin.make`). A module named by a project's document loads only after a `project_program`
   * approval; one named in the user's configuration directory loads when the Location opens (see docs/plugins.md).
   */
  plugins: Schema.optional(
    Schema.Array(Schema.String.pipe(Schema.minLength(1))).annotations({
      description: "Plugin modules to load (paths relative to this file; the default export is a plugin)",
    }),
  ),
  /**
   * The process's database (`url`, `pool`): read by `Database.layer` from the user's configuration directory only
   * (see `DatabaseConfig`); a project's file holding it fails with `InvalidError`.
   */
  database: Schema.optional(DatabaseConfig.Section),
})
/**
 * @see Info
 *
 * @since 0.1.0
 * @category models
 */
export type Info = typeof Info.Type
