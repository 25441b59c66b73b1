/**
 * ShellCommand: what a shell command string will run, read with the tree-sitter bash grammar (WASM), failing closed.
 * A command is split into its simple commands — across `;`, `&&`, `||`, `|`, `&`, newlines, subshells, groups,
 * `if`/`while`/`for`/`case`, function bodies (at their definition and at every call), `$(…)`, backticks, `<(…)`,
 * here-documents and the command strings of shells, `eval` and wrappers (recursively). Each segment has its argv
 * normalised (quotes and escapes removed), assignments judged (harmless ones dropped, behaviour-changing ones
 * unresolved, the rest kept in the resource), wrappers unwrapped, and the files it writes, reads and links recorded
 * together with every directory the shell may be in when it runs.
 *
 * The analysis understands an explicit subset of the shell; anything outside it — an unknown node type, an option
 * of a shell, wrapper or file command that is not modelled, a construct whose meaning differs between bash and the
 * shell that runs the command, input past the bounds — is an unresolved segment, never nothing. `parse` never
 * fails and never throws, for any input. See docs/shell.md.
 *
 * The grammar is loaded once per process (the first `layer` build); parsing itself is synchronous.
 *
 * @since 0.2.0
 */
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Language, Parser } from "web-tree-sitter"
import * as CorePackage from "../system/core-package.js"
import { FILE_COMMANDS } from "./programs/files.js"
import { READER_NAMES } from "./programs/readers.js"
import * as Segments from "./internal/segment.js"
import * as Traversal from "./internal/traversal.js"
import * as Variables from "./internal/variables.js"
import * as Verdicts from "./internal/verdicts.js"
import * as Shells from "./internal/shells.js"
import * as Runners from "./internal/runners.js"
import * as Wrappers from "./internal/wrappers.js"
import type * as Words from "./internal/words.js"

/**
 * A word of a command after quote removal (see `internal/words.ts`).
 *
 * @since 0.2.0
 * @category models
 */
export type Word = Words.Word

/**
 * One simple command, as the permission gate evaluates it.
 *
 * @since 0.2.0
 * @category models
 */
export type Segment = Segments.Segment

/**
 * The simple commands of a command string.
 *
 * @since 0.2.0
 * @category models
 */
export type Parsed = Segments.Parsed

/**
 * A file a segment writes or reads.
 *
 * @since 0.3.0
 * @category models
 */
export type PathUse = Segments.PathUse

/**
 * A link a segment creates.
 *
 * @since 0.3.0
 * @category models
 */
export type Link = Segments.Link

/**
 * A copy or move a segment makes.
 *
 * @since 0.3.0
 * @category models
 */
export type Mirror = Segments.Mirror

/**
 * Where a segment runs.
 *
 * @since 0.3.0
 * @category models
 */
export type Place = Segments.Place

/**
 * A directory the shell may be in: `cd` steps from the start.
 *
 * @since 0.3.0
 * @category models
 */
export type Directory = Segments.Directory

/**
 * One `cd` step.
 *
 * @since 0.3.0
 * @category models
 */
export type CdStep = Segments.CdStep

/**
 * The grammar a command is read with: bash's, or a POSIX `sh`'s (constructs that differ from bash are unresolved).
 *
 * @since 0.3.0
 * @category models
 */
export type Grammar = Shells.Grammar

/**
 * The decision for one segment.
 *
 * @since 0.2.0
 * @category models
 */
export type Verdict = Verdicts.Verdict

/**
 * The grammar could not be loaded (missing or incompatible `.wasm`).
 *
 * @since 0.2.0
 * @category errors
 */
export class LoadError extends Schema.TaggedError<LoadError>()("ShellCommand.LoadError", {
  message: Schema.String,
}) {}

/**
 * The parser.
 *
 * @since 0.2.0
 * @category models
 */
export interface Interface {
  /**
   * Parses a command read with `grammar` (default bash); waits for the grammar on the first call only. Never fails
   * and never throws for any input.
   */
  readonly parse: (command: string, grammar?: Grammar) => Effect.Effect<Parsed>
}

/**
 * The ShellCommand service (process-wide).
 *
 * @since 0.2.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/ShellCommand")<Service, Interface>() {}

/**
 * How deep command strings of shells, `eval` and wrappers are followed; deeper strings are unresolved.
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_DEPTH = Traversal.MAX_DEPTH

/**
 * How deep the syntax tree is walked; a deeper command is one unresolved segment.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_NESTING = Traversal.MAX_NESTING

/**
 * The longest command parsed; a longer one is one unresolved segment.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_LENGTH = Traversal.MAX_LENGTH

/**
 * The resource prefix of a segment that cannot be resolved statically.
 *
 * @since 0.2.0
 * @category constants
 */
export const UNRESOLVED_PREFIX = Verdicts.UNRESOLVED_PREFIX

/**
 * The deny-relevant forms of a segment.
 *
 * @since 0.2.0
 * @category utilities
 */
export const forms = Verdicts.forms

/**
 * Evaluates the segments of a parsed command against one bash-resource oracle.
 *
 * @since 0.2.0
 * @category utilities
 */
export const evaluate = Verdicts.evaluate

/**
 * The wrappers the gate unwraps (`sudo`, `env`, `nice`, `timeout`, `flock`, `xargs`, …).
 *
 * @since 0.3.0
 * @category constants
 */
export const WRAPPER_NAMES: ReadonlyArray<string> = [...Wrappers.WRAPPERS.keys()]

/**
 * Commands whose segments are unresolved because they run commands in ways the gate does not follow.
 *
 * @since 0.3.0
 * @category constants
 */
export const UNMODELLED_RUNNERS: ReadonlySet<string> = Runners.UNMODELLED_RUNNERS

/**
 * The commands whose file arguments are writes (`rm`, `mv`, `cp`, `ln`, `touch`, `mkdir`, `chmod`, `tar`, …).
 *
 * @since 0.3.0
 * @category constants
 */
export const FILE_COMMAND_NAMES: ReadonlyArray<string> = [...FILE_COMMANDS.keys()]

/**
 * The commands whose file arguments are reads (`cat`, `head`, `grep`, …; `tee`, `sort -o` and `uniq` also write).
 *
 * @since 0.3.0
 * @category constants
 */
export const READING_COMMAND_NAMES: ReadonlyArray<string> = READER_NAMES

/**
 * Variables whose assignment is dropped from a segment's resource.
 *
 * @since 0.3.0
 * @category constants
 */
export const HARMLESS_VARIABLES: ReadonlyArray<string> = Variables.HARMLESS_VARIABLES

/**
 * Variables (`*` ends a prefix) whose assignment makes a segment unresolved.
 *
 * @since 0.3.0
 * @category constants
 */
export const BEHAVIOUR_VARIABLES: ReadonlyArray<string> = Variables.BEHAVIOUR_VARIABLES

/**
 * The grammar of the shell at `shell` (a path or a name): `bash` for bash, `posix` for `sh`, `dash` and `ash`,
 * `undefined` for a shell the gate does not model (its commands are unresolved as a whole).
 *
 * @since 0.3.0
 * @category utilities
 */
export const grammarOf = (shell: string): Grammar | undefined => Shells.SHELLS.get(path.posix.basename(shell))

/**
 * A command judged as one unresolved segment (a shell the gate does not model runs it), with `reason`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const unresolvedCommand = (command: string, reason: string): Parsed =>
  Segments.unresolvedWhole(command, reason, false)

/**
 * A synchronous parser over a loaded grammar (for benchmarks and pure tests; the service wraps the same function).
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeParser = (language: Language): ((command: string, grammar?: Grammar) => Parsed) => {
  const parser = new Parser()
  parser.setLanguage(language)
  return (command, grammar = "bash") => Traversal.parseWith(parser, command, grammar)
}

let loading: Promise<Language> | undefined

const load = (): Promise<Language> => {
  loading ??= (async () => {
    await Parser.init()
    return Language.load(CorePackage.require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"))
  })().catch((error: unknown) => {
    loading = undefined
    throw error
  })
  return loading
}

/**
 * Loads the grammar, once per process: later calls share the same promise (a failed load is retried).
 *
 * @since 0.2.0
 * @category utilities
 */
export const loadLanguage: Effect.Effect<Language, LoadError> = Effect.tryPromise({
  try: load,
  catch: (error) => new LoadError({ message: `Unable to load the bash grammar: ${String(error)}` }),
})

/**
 * The process-wide layer. Building it starts loading the grammar without waiting for it (tool registration is not
 * delayed); the first `parse` waits for the load, later ones run synchronously. A grammar that cannot be loaded is
 * a defect (the package ships it).
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<Service> = Layer.sync(Service, () => {
  // Started now, awaited by the first parse; a failure surfaces there.
  load().catch(() => undefined)
  let ready: ((command: string, grammar?: Grammar) => Parsed) | undefined
  const start = Effect.map(Effect.orDie(loadLanguage), (language) => {
    ready ??= makeParser(language)
    return ready
  })
  return Service.of({
    parse: (command, grammar) =>
      ready !== undefined
        ? Effect.sync(() => ready!(command, grammar))
        : Effect.map(start, (parse) => parse(command, grammar)),
  })
})
