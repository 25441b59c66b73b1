/**
 * The configuration entries the library reads, lowest to highest priority. Documents are schema-validated
 * `toolgate.json(c)` files; directory entries point at `.toolgate`-style folders (agents, skills). Discovery runs
 * from the project root down to the Location plus the user's configuration directory, and every discovered file is
 * confined like `read` (see docs/trust/protected-paths.md).
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as jsonc from "jsonc-parser"
import * as YAML from "yaml"
import * as Global from "../system/global.js"
import * as Location from "./location.js"
import * as Path from "../values/path.js"
import * as Wildcard from "../values/wildcard.js"
import * as ProtectedPath from "./protected-path.js"

/**
 * A permission rule as configured (the same shape as `PermissionV2.Rule`). `ignore_case` makes the resource pattern
 * match without regard to letter case on every platform (the secret-file rules use it; see docs/trust/secrets.md).
 * Other keys inside a rule are ignored.
 *
 * @since 0.1.0
 */
export const PermissionRule = Schema.Struct({
  action: Schema.String,
  resource: Schema.String,
  effect: Schema.Literal("allow", "deny", "ask"),
  ignore_case: Schema.optional(Schema.Boolean),
})

interface RawRule {
  readonly action?: unknown
  readonly resource?: unknown
  readonly effect?: unknown
  readonly ignore_case?: unknown
  readonly examples?: { readonly match?: unknown; readonly notMatch?: unknown }
}

const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : []

/**
 * The first failing rule example of a document (`examples: { match: [...], notMatch: [...] }` on a rule, resources
 * the rule must and must not match), read from the raw document: where, and why. See docs/shell.md.
 */
const failingExample = (value: unknown): string | undefined => {
  const check = (rules: unknown, where: string): string | undefined => {
    if (!Array.isArray(rules)) return undefined
    for (const [i, raw] of rules.entries()) {
      if (raw === null || typeof raw !== "object") continue
      const rule = raw as RawRule
      if (typeof rule.resource !== "string" || rule.examples === undefined || rule.examples === null) continue
      const pattern = rule.resource
      const matches = (resource: string) =>
        rule.ignore_case === true ? exampleMatcher.match(resource, pattern) : Wildcard.match(resource, pattern)
      const describe = `${String(rule.action)} ${JSON.stringify(pattern)} ${String(rule.effect)}`
      for (const example of strings(rule.examples.match)) {
        if (!matches(example))
          return `${where}.${i}.examples.match: the rule ${describe} does not match ${JSON.stringify(example)}`
      }
      for (const example of strings(rule.examples.notMatch)) {
        if (matches(example))
          return `${where}.${i}.examples.notMatch: the rule ${describe} matches ${JSON.stringify(example)}`
      }
    }
    return undefined
  }
  if (value === null || typeof value !== "object") return undefined
  const document = value as { readonly permissions?: unknown; readonly agents?: unknown }
  const top = check(document.permissions, "permissions")
  if (top !== undefined) return top
  if (document.agents === null || typeof document.agents !== "object") return undefined
  for (const [id, agent] of Object.entries(document.agents as Record<string, { readonly permissions?: unknown }>)) {
    const found = check(agent?.permissions, `agents.${id}.permissions`)
    if (found !== undefined) return found
  }
  return undefined
}

const exampleMatcher = Wildcard.make({ caseInsensitive: true })

const PositiveInt = Schema.Int.pipe(Schema.positive())

/**
 * Tool output truncation thresholds.
 *
 * @since 0.1.0
 */
export const ToolOutput = Schema.Struct({
  max_lines: Schema.optional(PositiveInt),
  max_bytes: Schema.optional(PositiveInt),
}).annotations({ description: "Tool output truncation thresholds" })

/**
 * Image attachment limits used by `read`.
 *
 * @since 0.1.0
 */
export const ImageAttachments = Schema.Struct({
  auto_resize: Schema.optional(Schema.Boolean),
  max_width: Schema.optional(PositiveInt),
  max_height: Schema.optional(PositiveInt),
  max_base64_bytes: Schema.optional(PositiveInt),
})

/**
 * `bash.sandbox`: opt-in containment of the bash tool's child processes (see docs/sandbox.md).
 *
 * @since 0.1.0
 */
export const BashSandbox = Schema.Struct({
  mode: Schema.Literal("none", "bubblewrap"),
  /** `false` (the default): no network; `true`: the host's network; `"rules"`: through the egress proxy. */
  network: Schema.optional(Schema.Union(Schema.Boolean, Schema.Literal("rules"))),
  writable: Schema.optional(Schema.Array(Schema.String)),
  readOnly: Schema.optional(Schema.Array(Schema.String)),
  /** Paths replaced by an empty file or directory inside the sandbox. */
  denyRead: Schema.optional(Schema.Array(Schema.String)),
  /** Unix sockets the sandbox may connect to (every other socket stays unreachable). */
  allowUnixSockets: Schema.optional(Schema.Array(Schema.String)),
  /** A bash segment that would only ask `bash` runs without asking while the sandbox is active. */
  autoAllow: Schema.optional(Schema.Boolean),
  failIfUnavailable: Schema.optional(Schema.Boolean),
})

/**
 * `bash.env`: which variables of the runner's environment a bash child sees (see docs/sandbox.md).
 *
 * @since 0.1.0
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
 * A configuration document. An unknown top-level key is an error (`parseDocument`); unknown keys deeper down are
 * ignored. `$schema` is accepted for editors.
 *
 * @since 0.1.0
 */
export const Info = Schema.Struct({
  $schema: Schema.optional(Schema.String),
  preset: Schema.optional(Preset),
  permissions: Schema.optional(Schema.Array(PermissionRule)),
  agents: Schema.optional(Schema.Record({ key: Schema.String, value: Agent })),
  default_agent: Schema.optional(Schema.String),
  tool_output: Schema.optional(ToolOutput),
  shell: Schema.optional(Schema.String),
  bash: Schema.optional(Bash),
  attachments: Schema.optional(Schema.Struct({ image: Schema.optional(ImageAttachments) })),
})
/**
 * @see Info
 *
 * @since 0.1.0
 */
export type Info = typeof Info.Type

/**
 * A parsed configuration document.
 *
 * @since 0.1.0
 */
export interface Document {
  readonly type: "document"
  readonly path?: string
  readonly info: Info
}

/**
 * A configuration directory (e.g. `.toolgate/`), for agent markdown files and skills.
 *
 * @since 0.1.0
 */
export interface Directory {
  readonly type: "directory"
  readonly path: string
}

/**
 * One configuration entry.
 *
 * @since 0.1.0
 */
export type Entry = Document | Directory

/**
 * The Config service: entries from lowest to highest priority.
 *
 * @since 0.1.0
 */
export interface Interface {
  readonly entries: () => Effect.Effect<ReadonlyArray<Entry>>
}

/**
 * The Config service tag.
 *
 * @since 0.1.0
 */
export class Service extends Context.Tag("@toolgate/v2/Config")<Service, Interface>() {}

/**
 * The documents among `entries`, in priority order.
 *
 * @since 0.1.0
 */
export const documents = (entries: ReadonlyArray<Entry>): ReadonlyArray<Document> =>
  entries.filter((entry): entry is Document => entry.type === "document")

/**
 * The value of `key` from the last document that defines it.
 *
 * @since 0.1.0
 */
export const latest = <K extends keyof Info>(entries: ReadonlyArray<Entry>, key: K): Info[K] | undefined => {
  let value: Info[K] | undefined
  for (const document of documents(entries)) if (document.info[key] !== undefined) value = document.info[key]
  return value
}

/**
 * A fixed configuration, for tests and embedders.
 *
 * @since 0.1.0
 */
export const layerFromEntries = (entries: ReadonlyArray<Entry>): Layer.Layer<Service> =>
  Layer.succeed(Service, Service.of({ entries: () => Effect.succeed(entries) }))

/**
 * A configuration with no entries.
 *
 * @since 0.1.0
 */
export const layerEmpty: Layer.Layer<Service> = layerFromEntries([])

/**
 * A configuration file that exists but cannot be read, parsed as JSONC, or decoded as `Info`.
 *
 * @since 0.1.0
 */
export class InvalidError extends Schema.TaggedError<InvalidError>()("Config.InvalidError", {
  path: Schema.String,
  message: Schema.String,
}) {}

/**
 * The document file names, in priority order within one directory.
 *
 * @since 0.1.0
 */
export const FILE_NAMES = ProtectedPath.CONFIG_FILES
/**
 * The per-directory configuration folder.
 *
 * @since 0.1.0
 */
export const DIRECTORY_NAME = ".toolgate"

const lineAndColumn = (text: string, offset: number): { readonly line: number; readonly column: number } => {
  let line = 1
  let start = 0
  for (let at = text.indexOf("\n"); at !== -1 && at < offset; at = text.indexOf("\n", at + 1)) {
    line++
    start = at + 1
  }
  return { line, column: offset - start + 1 }
}

const fieldPath = (segments: ReadonlyArray<PropertyKey>): string =>
  segments.length === 0 ? "(root)" : segments.map((segment) => String(segment)).join(".")

/** Every offending field path of a decode failure, `; `-separated. */
const describeIssues = (error: ParseResult.ParseError): string => {
  const all = ParseResult.ArrayFormatter.formatErrorSync(error)
  // `Schema.optional` adds an `undefined` member to each field's union; its "Expected undefined" issue is noise.
  const meaningful = all.filter((issue) => !issue.message.startsWith("Expected undefined"))
  return (meaningful.length > 0 ? meaningful : all)
    .map((issue) => `${fieldPath(issue.path)}: ${issue.message}`)
    .join("; ")
}

const KNOWN_KEYS: ReadonlySet<string> = new Set(Object.keys(Info.fields))

/**
 * Parses and decodes one document's text. JSONC: comments and trailing commas are allowed. The error message names
 * the file and either the syntax error position, the unknown top-level keys, or every offending field path.
 *
 * @since 0.1.0
 */
export const parseDocument = (file: string, text: string): Either.Either<Document, InvalidError> => {
  const errors: Array<jsonc.ParseError> = []
  const value: unknown = jsonc.parse(text, errors, { allowTrailingComma: true, disallowComments: false })
  const syntax = errors[0]
  if (syntax !== undefined) {
    const { line, column } = lineAndColumn(text, syntax.offset)
    return Either.left(
      new InvalidError({
        path: file,
        message: `Invalid JSONC in ${file} at line ${line}, column ${column} (offset ${syntax.offset}): ${jsonc.printParseErrorCode(syntax.error)}`,
      }),
    )
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const unknown = Object.keys(value).filter((key) => !KNOWN_KEYS.has(key))
    if (unknown.length > 0) {
      return Either.left(
        new InvalidError({
          path: file,
          message: `Invalid config in ${file}: unknown top-level ${unknown.length === 1 ? "key" : "keys"} ${unknown.map((key) => JSON.stringify(key)).join(", ")}`,
        }),
      )
    }
  }
  return Schema.decodeUnknownEither(Info)(value, { errors: "all", onExcessProperty: "ignore" }).pipe(
    Either.mapLeft(
      (error) => new InvalidError({ path: file, message: `Invalid config in ${file} at ${describeIssues(error)}` }),
    ),
    Either.flatMap((info) => {
      const failed = failingExample(value)
      return failed === undefined
        ? Either.right<Document>({ type: "document", path: file, info })
        : Either.left(new InvalidError({ path: file, message: `Invalid config in ${file} at ${failed}` }))
    }),
  )
}

/**
 * The directories discovery reads, farthest first: from the project root (the git worktree root) down to the
 * Location. Outside git — or when the Location is not below its project's directory — only the Location itself:
 * nothing above the project can add rules (see docs/trust/protected-paths.md).
 *
 * @since 0.2.0
 */
export const projectChain = (location: Location.Interface): ReadonlyArray<string> => {
  const here = path.resolve(location.directory)
  if (location.vcs === undefined) return [here]
  const top = path.resolve(location.project.directory)
  if (here === top || !Path.isWithin(top, here)) return [here]
  const relative = path.relative(top, here)
  const out = [top]
  let current = top
  for (const part of relative.split(path.sep)) {
    current = path.join(current, part)
    out.push(current)
  }
  return out
}

/**
 * Where a discovered path really is: `inside` with its real path when it resolves within the real path of `root`,
 * `outside` (with the real path it resolves to) when a symlink on its way leads elsewhere, `missing` when it does not
 * resolve at all.
 *
 * @since 0.2.0
 */
export type Confinement =
  | { readonly _tag: "inside"; readonly real: string }
  | { readonly _tag: "outside"; readonly real: string }
  | { readonly _tag: "missing" }

/**
 * Resolves `target` and checks it against `root`, the same confinement `read` applies: a configuration file, agent
 * file or skill that resolves through a symlink outside its root is not used.
 *
 * @since 0.2.0
 */
export const confine = (target: string, root: string): Effect.Effect<Confinement, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const realRoot = yield* fs.realPath(root).pipe(Effect.orElseSucceed(() => path.resolve(root)))
    const real = yield* Effect.option(fs.realPath(target))
    if (real._tag === "None") return { _tag: "missing" } as const
    return Path.isWithin(realRoot, real.value)
      ? ({ _tag: "inside", real: real.value } as const)
      : ({ _tag: "outside", real: real.value } as const)
  })

/**
 * Logs that `target` was skipped because it resolves to `real`, outside `root` (or to an unprotected file). Nothing
 * of the skipped file reaches the model; the warning names it for the user.
 *
 * @since 0.2.0
 */
export const warnSkipped = (target: string, real: string, root: string): Effect.Effect<void> =>
  Effect.logWarning(`Skipped ${target}: it resolves to ${real}, outside ${root}`).pipe(
    Effect.annotateLogs({ skipped: target, resolved: real, root }),
  )

// ---------------------------------------------------------------------------------------------------------------
// Markdown agent files

const SOURCES = [
  { roots: ["agent", "agents"], recursive: true, primary: false },
  { roots: ["mode", "modes"], recursive: false, primary: true },
] as const

/**
 * Something discovery left out, with the reason the user is told.
 *
 * @since 0.2.0
 */
export interface Skipped {
  readonly file: string
  readonly reason: string
}

const realOrUndefined = (target: string): string | undefined => {
  try {
    return fs.realpathSync(target)
  } catch {
    return undefined
  }
}

/**
 * The markdown files below `directory`, confined to `root` like `read`: a file or folder whose real path leaves
 * `root` through a symlink is skipped (and reported in `skipped`), and nothing of it is read.
 */
const listMarkdown = (directory: string, recursive: boolean, root: string, skipped: Array<Skipped>): Array<string> => {
  const out: Array<string> = []
  const seen = new Set<string>()
  const outside = (target: string, real: string) =>
    skipped.push({ file: target, reason: `it resolves to ${real}, outside ${root}` })
  const walk = (dir: string) => {
    const real = realOrUndefined(dir)
    if (real === undefined) return
    if (!Path.isWithin(root, real)) return outside(dir, real)
    if (seen.has(real)) return
    seen.add(real)
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name)
      let stat: fs.Stats
      try {
        stat = fs.statSync(full)
      } catch {
        continue
      }
      if (stat.isDirectory()) {
        if (recursive) walk(full)
      } else if (stat.isFile() && entry.name.endsWith(".md")) {
        const file = realOrUndefined(full)
        if (file === undefined) continue
        if (!Path.isWithin(root, file)) outside(full, file)
        else out.push(full)
      }
    }
  }
  walk(directory)
  return out
}

/** Splits `---` front matter from the body; `undefined` when the front matter is unterminated or not YAML. */
const parseMarkdown = (
  content: string,
): { readonly data: Record<string, unknown>; readonly body: string } | undefined => {
  const text = content.replace(/^\uFEFF/, "")
  const open = /^---[ \t]*\r?\n/.exec(text)
  if (open === null) return { data: {}, body: text }
  const rest = text.slice(open[0].length)
  const close = /^---[ \t]*(?:\r?\n|$)/m.exec(rest)
  if (close === null) return undefined
  let data: unknown
  try {
    data = YAML.parse(rest.slice(0, close.index))
  } catch {
    return undefined
  }
  if (data === null || data === undefined) data = {}
  if (typeof data !== "object" || Array.isArray(data)) return undefined
  return { data: data as Record<string, unknown>, body: rest.slice(close.index + close[0].length) }
}

/** Reads one markdown agent file into a configuration document, a reason to skip it, or why it is invalid. */
const markdownDocument = (
  directory: string,
  file: string,
  primary: boolean,
): Document | { readonly skipped: string } | InvalidError => {
  let content: string
  try {
    content = fs.readFileSync(file, "utf8")
  } catch (error) {
    return { skipped: `it cannot be read (${error instanceof Error ? error.message : String(error)})` }
  }
  const markdown = parseMarkdown(content)
  if (markdown === undefined) {
    return new InvalidError({
      path: file,
      message: `Invalid agent file ${file}: its front matter is unterminated or not a YAML mapping`,
    })
  }
  const id = path
    .relative(directory, file)
    .replaceAll("\\", "/")
    .replace(/^(agent|agents|mode|modes)\//, "")
    .replace(/\.md$/, "")
  const decoded = Schema.decodeUnknownEither(Agent)(
    { ...markdown.data, system: markdown.body.trim() },
    { errors: "all", onExcessProperty: "ignore" },
  )
  if (Either.isLeft(decoded)) {
    return new InvalidError({
      path: file,
      message: `Invalid agent file ${file} at ${describeIssues(decoded.left)}`,
    })
  }
  const agent = decoded.right
  return { type: "document", path: file, info: { agents: { [id]: primary ? { ...agent, mode: "primary" } : agent } } }
}

/**
 * The markdown agent files of a configuration directory (`agent/`, `agents/` recursively; `mode/`, `modes/` as
 * primary agents), each folder sorted. Confined like `read`: a file or folder whose real path leaves the directory
 * through a symlink is listed in `skipped` and never read. Files whose front matter does not decode as an agent
 * entry are in `invalid` (discovery fails on them; an embedder's directory entry only warns).
 *
 * @since 0.2.0
 */
export const agentFiles = (
  directory: string,
): {
  readonly documents: ReadonlyArray<Document>
  readonly skipped: ReadonlyArray<Skipped>
  readonly invalid: ReadonlyArray<InvalidError>
} => {
  const skipped: Array<Skipped> = []
  const invalid: Array<InvalidError> = []
  const root = realOrUndefined(directory) ?? path.resolve(directory)
  const documents = SOURCES.flatMap((source) =>
    source.roots
      .flatMap((folder) => listMarkdown(path.join(directory, folder), source.recursive, root, skipped))
      .sort()
      .flatMap((file) => {
        const document = markdownDocument(directory, file, source.primary)
        if (document instanceof InvalidError) {
          invalid.push(document)
          return []
        }
        if ("skipped" in document) {
          skipped.push({ file, reason: document.skipped })
          return []
        }
        return [document]
      }),
  )
  return { documents, skipped, invalid }
}

/** How discovery treats a file that cannot be read, parsed or decoded. */
type Mode = "strict" | "lenient"

const discover = (mode: Mode) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const global = yield* Global.Service
    const location = yield* Location.Service
    const protectedRoots = ProtectedPath.roots(location, global)

    const realOrResolved = (target: string) =>
      fs.realPath(target).pipe(Effect.orElseSucceed(() => path.resolve(target)))
    const isType = (target: string, type: "File" | "Directory") =>
      fs.stat(target).pipe(
        Effect.map((info) => info.type === type),
        Effect.orElseSucceed(() => false),
      )

    // One file may be reachable twice (the walk crossing the global directory); it is read once, first wins.
    const seen = new Set<string>()
    const entries: Array<Entry> = []

    /**
     * A document is used only when it resolves inside `root` and its real file is itself protected, so the model
     * cannot change the rules by writing an unprotected file a `toolgate.json` symlink points at.
     */
    const readDocument = (file: string, root: string) =>
      Effect.gen(function* () {
        if (!(yield* isType(file, "File"))) return
        const where = yield* confine(file, root)
        if (where._tag === "missing") return
        if (where._tag === "outside" || ProtectedPath.classify(where.real, protectedRoots) === undefined) {
          return yield* warnSkipped(file, where.real, root)
        }
        if (seen.has(where.real)) return
        seen.add(where.real)
        const text = yield* fs.readFileString(where.real).pipe(
          Effect.mapError(
            (cause) => new InvalidError({ path: file, message: `Unable to read ${file}: ${cause.message}` }),
          ),
          Effect.either,
        )
        const parsed = Either.flatMap(text, (content) => parseDocument(file, content))
        if (Either.isRight(parsed)) entries.push(parsed.right)
        else if (mode === "strict") return yield* parsed.left
      })

    const addDirectory = (directory: string, root: string) =>
      Effect.gen(function* () {
        const where = yield* confine(directory, root)
        if (where._tag === "outside") return yield* warnSkipped(directory, where.real, root)
        // A missing directory is still listed (it contributes nothing); its resolved path keeps it unique.
        const key = where._tag === "inside" ? where.real : path.resolve(directory)
        if (seen.has(key)) return
        seen.add(key)
        if (mode === "strict" && where._tag === "inside") {
          const invalid = agentFiles(directory).invalid[0]
          if (invalid !== undefined) return yield* invalid
        }
        entries.push({ type: "directory", path: directory })
      })

    const globalDirectory = path.resolve(global.config)
    for (const name of FILE_NAMES) yield* readDocument(path.join(globalDirectory, name), globalDirectory)
    yield* addDirectory(globalDirectory, globalDirectory)

    const here = yield* realOrResolved(location.directory)
    if (here === (yield* realOrResolved(globalDirectory))) return entries as ReadonlyArray<Entry>

    const walk = projectChain(location)
    for (const directory of walk) {
      for (const name of FILE_NAMES) yield* readDocument(path.join(directory, name), directory)
    }
    for (const directory of walk) {
      const folder = path.join(directory, DIRECTORY_NAME)
      if (!(yield* isType(folder, "Directory"))) continue
      // The folder's real place must itself be protected, or the model could edit the agents it holds.
      const where = yield* confine(folder, directory)
      if (where._tag === "missing") continue
      if (where._tag === "outside" || ProtectedPath.classify(where.real, protectedRoots) === undefined) {
        yield* warnSkipped(folder, where.real, directory)
        continue
      }
      for (const name of FILE_NAMES) yield* readDocument(path.join(folder, name), folder)
      yield* addDirectory(folder, directory)
    }
    return entries as ReadonlyArray<Entry>
  })

/**
 * The Location-scoped configuration discovered on disk, read once when the layer is built: the user's configuration
 * directory, then `toolgate.json(c)` files farthest-first, then `.toolgate/` directories farthest-first, from the
 * project root down to the Location (never above it). A file that does not parse or decode, or has an unknown
 * top-level key, fails the layer with `InvalidError` naming the file and the field; a file or folder that resolves
 * outside its directory through a symlink is skipped with a warning.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<Service, InvalidError, FileSystem.FileSystem | Global.Service | Location.Service> =
  Layer.effect(
    Service,
    Effect.map(discover("strict"), (entries) => Service.of({ entries: () => Effect.succeed(entries) })),
  )

/**
 * Like `layer`, but unreadable, unparsable or undecodable files are skipped silently, as the reference does.
 *
 * @since 0.1.0
 */
export const layerLenient: Layer.Layer<Service, never, FileSystem.FileSystem | Global.Service | Location.Service> =
  Layer.effect(
    Service,
    Effect.map(Effect.orDie(discover("lenient")), (entries) => Service.of({ entries: () => Effect.succeed(entries) })),
  )
