/**
 * The `toolgate-mcp` command line — `--dir`, `--agent`, `--data`, `--heartbeat`, `--no-watch`, `--help`,
 * `--version` — parsed by `node:util`'s `parseArgs` and checked here for both `toolgate-mcp` and `toolgate mcp`
 * (`resolve`), without loading the server or `@toolgate/core`: `check` turns the flags into `McpServer.RunOptions`
 * or one `ArgumentError` line. Exit codes
 * of `main`: 0 (served until the client disconnected, or `--help` / `--version`), 1 (a directory that cannot be
 * served, or a failure to start: an unknown agent, a database that cannot be opened), 2 (a usage error: an unknown
 * argument, a flag without its value, no `--dir`, a bad `--heartbeat`).
 *
 * @since 0.2.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Util from "node:util"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Package from "./internal/package.js"
import type * as McpServer from "./server.js"

/**
 * Usage text of `main`.
 *
 * @since 0.1.0
 * @category constants
 */
export const USAGE = "usage: toolgate-mcp --dir DIR [--agent NAME] [--data DIR] [--heartbeat MS] [--no-watch]"

/**
 * What `toolgate-mcp --help` prints.
 *
 * @since 0.3.0
 * @category constants
 */
export const HELP = [
  USAGE,
  "",
  "Serves the tools of one project directory over stdio as an MCP server.",
  "",
  "  --dir DIR        the project directory whose tools are served (required)",
  "  --agent NAME     the agent whose permission rules apply (default: the project's default agent)",
  "  --data DIR       the data directory: database and managed tool output (default: $XDG_DATA_HOME/toolgate)",
  `  --heartbeat MS   milliseconds between progress heartbeats of a waiting call (default ${Duration.toMillis(Package.DEFAULT_HEARTBEAT)})`,
  "  --no-watch       do not rebuild the project when its configuration files change",
  "  --help           print this help",
  "  --version        print the version",
  "",
  "Exit codes: 0 ok, 1 failure, 2 usage error.",
].join("\n")

/**
 * The command-line options as given (values unchecked).
 *
 * @since 0.3.0
 * @category models
 */
export interface Flags {
  readonly dir?: string | undefined
  readonly agent?: string | undefined
  readonly data?: string | undefined
  readonly heartbeat?: string | undefined
  readonly watch?: boolean | undefined
}

/**
 * An option that cannot be used, in one line. `usage` is true for a mistake in the command line itself (exit 2)
 * and false for a path that cannot be served (exit 1).
 *
 * @since 0.3.0
 * @category errors
 */
export class ArgumentError extends Schema.TaggedError<ArgumentError>()("McpCommand.ArgumentError", {
  message: Schema.String,
  usage: Schema.Boolean,
}) {}

/**
 * The message when `--dir` is missing.
 *
 * @since 0.3.0
 * @category constants
 */
export const DIR_REQUIRED = "--dir is required: the project directory whose tools are served"

const usage = (message: string) => Either.left(new ArgumentError({ message, usage: true }))
const unusable = (message: string) => Either.left(new ArgumentError({ message, usage: false }))

/** `option`'s path: a directory (when `required`), or missing or a directory (`--data`, created when missing). */
const directory = (option: string, value: string, required: boolean): Either.Either<string, ArgumentError> => {
  const resolved = path.resolve(value)
  try {
    if (!fs.statSync(resolved).isDirectory()) return unusable(`${option} ${resolved} is not a directory`)
    return Either.right(fs.realpathSync(resolved))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ENOENT" && !required) return Either.right(resolved)
    if (code === "ENOENT") return unusable(`${option} ${resolved} does not exist`)
    if (code === "ENOTDIR") return unusable(`${option} ${resolved} is not a directory (a part of the path is a file)`)
    const detail = error instanceof Error ? error.message : String(error)
    return unusable(`${option} ${resolved} cannot be used: ${detail}`)
  }
}

/**
 * Checks the flags of `toolgate-mcp` and `toolgate mcp` alike: `--dir` must be given and be an existing directory
 * (resolved to its real path), `--data` must be a directory when it exists, `--heartbeat` a whole number of
 * milliseconds from 1 up.
 *
 * @since 0.3.0
 * @category checks
 */
export const check = (flags: Flags): Either.Either<McpServer.RunOptions, ArgumentError> => {
  if (flags.dir === undefined) return usage(DIR_REQUIRED)
  let heartbeat: number | undefined
  if (flags.heartbeat !== undefined) {
    heartbeat = /^\d{1,9}$/.test(flags.heartbeat) ? Number(flags.heartbeat) : 0
    if (heartbeat < 1) return usage(`--heartbeat ${flags.heartbeat} is not a whole number of milliseconds (1 or more)`)
  }
  return Either.flatMap(directory("--dir", flags.dir, true), (dir) =>
    Either.map(
      flags.data === undefined ? Either.right(undefined) : directory("--data", flags.data, false),
      (data): McpServer.RunOptions => ({
        directory: dir,
        ...(flags.agent === undefined ? {} : { agent: flags.agent }),
        ...(data === undefined ? {} : { data }),
        ...(heartbeat === undefined ? {} : { heartbeat: Duration.millis(heartbeat) }),
        ...(flags.watch === false ? { watch: false } : {}),
      }),
    ),
  )
}

/**
 * What a command line asks for: to serve with these flags, the help, or the version.
 *
 * @since 0.3.0
 * @category models
 */
export type Parsed =
  { readonly _tag: "Serve"; readonly flags: Flags } | { readonly _tag: "Help" } | { readonly _tag: "Version" }

/** The options of both commands, for `node:util`'s `parseArgs`; the valued ones map to their `Flags` key. */
const OPTIONS = {
  dir: { type: "string" },
  agent: { type: "string" },
  data: { type: "string" },
  heartbeat: { type: "string" },
  "no-watch": { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
} as const satisfies Util.ParseArgsConfig["options"]

const VALUED: Readonly<Record<string, "dir" | "agent" | "data" | "heartbeat">> = {
  dir: "dir",
  agent: "agent",
  data: "data",
  heartbeat: "heartbeat",
}

const unexpected = (argument: string) => `unexpected argument: ${argument} (see --help)`

/**
 * Parses the arguments of `toolgate-mcp` and `toolgate mcp` (`--flag value` or `--flag=value`; `-h`, `-V`) with
 * `node:util`'s `parseArgs`, then refuses what it let through: an option or positional these commands do not take,
 * a valued option without its value (missing, empty, or the next option), a value given to `--no-watch`. A repeated
 * option keeps its last value; `--help` and `--version` win over everything else.
 *
 * @since 0.1.0
 * @category utilities
 */
export const parseArgs = (argv: ReadonlyArray<string>): Either.Either<Parsed, ArgumentError> => {
  const { tokens } = Util.parseArgs({
    args: [...argv],
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  })
  if (tokens.some((token) => token.kind === "option" && (token.name === "help" || token.name === "version"))) {
    const help = tokens.some((token) => token.kind === "option" && token.name === "help")
    return Either.right(help ? { _tag: "Help" } : { _tag: "Version" })
  }
  const flags: { -readonly [K in keyof Flags]: Flags[K] } = {}
  for (const token of tokens) {
    if (token.kind === "option-terminator") continue
    if (token.kind === "positional") return usage(unexpected(token.value))
    if (token.name === "no-watch") {
      if (token.value !== undefined) return usage("--no-watch takes no value")
      flags.watch = false
      continue
    }
    const key = Object.hasOwn(VALUED, token.name) ? VALUED[token.name] : undefined
    if (key === undefined) return usage(unexpected(token.rawName))
    const value = token.value
    if (value === undefined || value === "" || (!token.inlineValue && value.startsWith("--")))
      return usage(`${token.rawName} needs a value`)
    flags[key] = value
  }
  return Either.right({ _tag: "Serve", flags })
}

/**
 * What a command line resolves to: the checked options to serve with, the help, or the version. Both commands run
 * this one function, so they take the same options and refuse them with the same messages.
 *
 * @since 0.4.0
 * @category models
 */
export type Command =
  | { readonly _tag: "Serve"; readonly options: McpServer.RunOptions }
  | { readonly _tag: "Help" }
  | { readonly _tag: "Version" }

/**
 * `parseArgs`, then `check` of the flags to serve with.
 *
 * @since 0.4.0
 * @category utilities
 */
export const resolve = (argv: ReadonlyArray<string>): Either.Either<Command, ArgumentError> =>
  Either.flatMap(parseArgs(argv), (parsed): Either.Either<Command, ArgumentError> =>
    parsed._tag === "Serve"
      ? Either.map(check(parsed.flags), (options) => ({ _tag: "Serve", options }))
      : Either.right(parsed),
  )

/**
 * The package version `--version` prints.
 *
 * @since 0.4.0
 * @category constants
 */
export const VERSION: string = Package.VERSION

/**
 * Parses `argv` and serves over stdio until the client disconnects. `--help` and `--version` print to stdout; a
 * usage error sets exit code 2 and an unusable directory exit code 1, each with one line on stderr; a failure to
 * start (an unknown agent, a database that cannot be opened) rejects, for the entry point to print in one line.
 *
 * @since 0.1.0
 * @category utilities
 */
export const main = async (argv: ReadonlyArray<string>): Promise<void> => {
  const resolved = resolve(argv)
  if (Either.isLeft(resolved)) {
    process.stderr.write(`toolgate-mcp: ${resolved.left.message}\n`)
    process.exitCode = resolved.left.usage ? 2 : 1
    return
  }
  const command = resolved.right
  if (command._tag !== "Serve") {
    process.stdout.write(`${command._tag === "Help" ? HELP : VERSION}\n`)
    return
  }
  // The server and the library load only now: help, version and argument errors answer without them.
  const McpServer = await import("./server.js")
  await Effect.runPromise(McpServer.run(command.options))
}
