/**
 * The configuration entries the library reads, lowest to highest priority. Documents are schema-validated
 * `toolgate.json(c)` files; directory entries point at `.toolgate`-style folders (agents, skills). Discovery runs
 * from the project root down to the Location plus the user's configuration directory, and every discovered file is
 * confined like `read` (see docs/trust/protected-paths.md).
 *
 * This module names everything embedders import; each concept lives in `internal/`: the schemas
 * (`config-schema.ts`), the deprecated spellings of keys (`config-keys.ts`), the document model and its service
 * (`config-document.ts`), the markdown agent files (`config-agent-files.ts`) and discovery with its confinement and
 * layers (`config-discovery.ts`).
 *
 * @since 0.1.0
 */
import * as Keys from "./internal/config-keys.js"
import * as internalConfigSchema from "./internal/config-schema.js"
import * as internalConfigDocument from "./internal/config-document.js"
import * as internalConfigAgentFiles from "./internal/config-agent-files.js"
import * as internalConfigDiscovery from "./internal/config-discovery.js"

/**
 * A permission rule as configured (the same shape as `PermissionV2.Rule`). `ignore_case` makes the resource pattern
 * match without regard to letter case on every platform (the secret-file rules use it; see docs/trust/secrets.md).
 * Other keys inside a rule are ignored.
 *
 * @since 0.1.0
 * @category models
 */
export const PermissionRule = internalConfigSchema.PermissionRule
/**
 * Tool output truncation thresholds.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolOutput = internalConfigSchema.ToolOutput
/**
 * Image attachment limits used by `read`.
 *
 * @since 0.1.0
 * @category models
 */
export const ImageAttachments = internalConfigSchema.ImageAttachments
/**
 * `bash.sandbox`: opt-in containment of the bash tool's child processes (see docs/sandbox.md). Keys are snake_case;
 * the camelCase spellings (`readOnly`, …) are deprecated aliases (`ALIASES`).
 *
 * @since 0.1.0
 * @category models
 */
export const BashSandbox = internalConfigSchema.BashSandbox
/**
 * `bash.env`: which variables of the runner's environment a bash child sees (see docs/sandbox.md).
 *
 * @since 0.1.0
 * @category models
 */
export const BashEnv = internalConfigSchema.BashEnv
/**
 * The `bash` section: settings of the bash tool.
 *
 * @since 0.1.0
 * @category models
 */
export const Bash = internalConfigSchema.Bash
/**
 * One `agents.<id>` entry.
 *
 * @since 0.1.0
 * @category models
 */
export const Agent = internalConfigSchema.Agent
/**
 * The named rule sets every built-in agent starts from (see docs/permissions.md). `reference` (the default) is the
 * reference's: everything is allowed except what asks for a reason (outside directories, secret files). `guarded`
 * asks for bash except a few read-only commands whose file arguments pass the `read` rules, and asks for every web
 * fetch (once per host with "always") and web search; writes outside the Location ask in both.
 *
 * @since 0.3.0
 * @category models
 */
export const Preset = internalConfigSchema.Preset
/**
 * @see Preset
 *
 * @since 0.3.0
 * @category models
 */
export type Preset = internalConfigSchema.Preset
/**
 * The `permission` section: settings of the permission gate (its rules are `permissions`). `ask_timeout` is how long
 * an ask waits for an answer, in milliseconds (default: no limit); an ask nobody answered in time fails as "approval
 * timed out" (see docs/approvals.md).
 *
 * @since 0.3.0
 * @category models
 */
export const Permission = internalConfigSchema.Permission
/**
 * The `journal` section: how long the decision journal keeps a project's entries (see docs/decisions.md). Entries
 * older than `retention_days` (default 30) go, and with `max_entries` all but the newest that many of the project;
 * both are applied when a Location opens and every hour while it is open.
 *
 * @since 0.3.0
 * @category models
 */
export const Journal = internalConfigSchema.Journal
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
export const McpServer = internalConfigSchema.McpServer
/**
 * @see McpServer
 *
 * @since 0.4.0
 * @category models
 */
export type McpServer = internalConfigSchema.McpServer
/**
 * A configuration document. An unknown top-level key is an error (`parseDocument`); unknown keys deeper down are
 * ignored. `$schema` is accepted for editors.
 *
 * @since 0.1.0
 * @category models
 */
export const Info = internalConfigSchema.Info
/**
 * @see Info
 *
 * @since 0.1.0
 * @category models
 */
export type Info = internalConfigSchema.Info
/**
 * A parsed configuration document.
 *
 * @since 0.1.0
 * @category models
 */
export type Document = internalConfigDocument.Document
/**
 * A key inside a rule object that the schema ignores: the rule (`permissions[4]`, `agents.<id>.permissions[0]`) and
 * the key.
 *
 * @since 0.3.0
 * @category models
 */
export type UnknownRuleKey = internalConfigDocument.UnknownRuleKey
/**
 * A configuration directory (e.g. `.toolgate/`), for agent markdown files and skills.
 *
 * @since 0.1.0
 * @category models
 */
export type Directory = internalConfigDocument.Directory
/**
 * One configuration entry.
 *
 * @since 0.1.0
 * @category models
 */
export type Entry = internalConfigDocument.Entry
/**
 * The Config service: entries from lowest to highest priority.
 *
 * @since 0.1.0
 * @category models
 */
export type Interface = internalConfigDocument.Interface
export {
  /**
   * The Config service tag.
   *
   * @since 0.1.0
   * @category tags
   */
  Service,
} from "./internal/config-document.js"
/**
 * The documents among `entries`, in priority order.
 *
 * @since 0.1.0
 * @category utilities
 */
export const documents = internalConfigDocument.documents
/**
 * The value of `key` from the last document that defines it.
 *
 * @since 0.1.0
 * @category utilities
 */
export const latest = internalConfigDocument.latest
/**
 * A fixed configuration, for tests and embedders.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromEntries = internalConfigDocument.layerFromEntries
/**
 * A configuration with no entries.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmpty = internalConfigDocument.layerEmpty
export {
  /**
   * A configuration file that exists but cannot be read, parsed as JSONC, or decoded as `Info`.
   *
   * @since 0.1.0
   * @category errors
   */
  InvalidError,
} from "./internal/config-document.js"
/**
 * Parses and decodes one document's text. JSONC: comments and trailing commas are allowed. The error message names
 * the file and either the syntax error position, the unknown top-level keys, both spellings of one key, or every
 * offending field path. A deprecated camelCase key is read as its snake_case name (`Config.ALIASES`). Keys inside
 * rules that the schema ignores and the deprecated spellings used are kept on the document (`unknownRuleKeys`,
 * `deprecatedKeys`), so nothing reads the text again.
 *
 * @since 0.1.0
 * @category utilities
 */
export const parseDocument = internalConfigDocument.parseDocument
/**
 * Something discovery left out, with the reason the user is told.
 *
 * @since 0.2.0
 * @category models
 */
export type Skipped = internalConfigAgentFiles.Skipped
/**
 * The markdown agent files of a configuration directory (`agent/`, `agents/` recursively; `mode/`, `modes/` as
 * primary agents), sorted per pair of folders. Confined like `read` (`ConfinedWalk`): a file or folder whose real
 * path leaves the directory through a symlink is listed in `skipped` and never read. Files whose front matter does
 * not decode as an agent entry are in `invalid` (discovery fails on them; an embedder's directory entry only warns).
 *
 * @since 0.2.0
 * @category utilities
 */
export const agentFiles = internalConfigAgentFiles.agentFiles
/**
 * The document file names, in priority order within one directory.
 *
 * @since 0.1.0
 * @category constants
 */
export const FILE_NAMES = internalConfigDiscovery.FILE_NAMES
/**
 * The per-directory configuration folder.
 *
 * @since 0.1.0
 * @category constants
 */
export const DIRECTORY_NAME = internalConfigDiscovery.DIRECTORY_NAME
/**
 * The directories discovery reads, farthest first: from the project root (the git worktree root) down to the
 * Location. Outside git — or when the Location is not below its project's directory — only the Location itself:
 * nothing above the project can add rules (see docs/trust/protected-paths.md).
 *
 * @since 0.2.0
 * @category utilities
 */
export const projectChain = internalConfigDiscovery.projectChain
/**
 * Where a discovered path really is: `inside` with its real path when it resolves within the real path of `root`,
 * `outside` (with the real path it resolves to) when a symlink on its way leads elsewhere, `missing` when it does not
 * resolve at all.
 *
 * @since 0.2.0
 * @category models
 */
export type Confinement = internalConfigDiscovery.Confinement
/**
 * Resolves `target` and checks it against `root`, the same confinement `read` applies: a configuration file, agent
 * file or skill that resolves through a symlink outside its root is not used.
 *
 * @since 0.2.0
 * @category utilities
 */
export const confine = internalConfigDiscovery.confine
/**
 * Logs that `target` was skipped because it resolves to `real`, outside `root` (or to an unprotected file). Nothing
 * of the skipped file reaches the model; the warning names it for the user.
 *
 * @since 0.2.0
 * @category utilities
 */
export const warnSkipped = internalConfigDiscovery.warnSkipped
/**
 * The Location-scoped configuration discovered on disk, read once when the layer is built: the user's configuration
 * directory, then `toolgate.json(c)` files farthest-first, then `.toolgate/` directories farthest-first, from the
 * project root down to the Location (never above it). A file that does not parse or decode, or has an unknown
 * top-level key, fails the layer with `InvalidError` naming the file and the field; a file or folder that resolves
 * outside its directory through a symlink is skipped with a warning.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = internalConfigDiscovery.layer
/**
 * Like `layer`, but unreadable, unparsable or undecodable files are skipped silently, as the reference does.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLenient = internalConfigDiscovery.layerLenient

/**
 * A deprecated spelling of a configuration key: in the objects at `section`, `alias` is read as `canonical`.
 *
 * @since 0.4.0
 * @category models
 */
export type Alias = Keys.Alias

/**
 * A deprecated spelling found in a document: the key as written and its canonical name.
 *
 * @since 0.4.0
 * @category models
 */
export type DeprecatedKey = Keys.DeprecatedKey

/**
 * Every deprecated (camelCase) spelling of a configuration key, by section; the canonical keys are snake_case.
 *
 * @since 0.4.0
 * @category constants
 */
export const ALIASES: ReadonlyArray<Alias> = Keys.ALIASES

/**
 * A raw document with its deprecated spellings renamed to their canonical keys, and the spellings found; or the
 * message for an object holding both spellings of one key. `parseDocument` runs it before decoding.
 *
 * @since 0.4.0
 * @category utilities
 */
export const canonicalKeys = Keys.canonicalKeys
