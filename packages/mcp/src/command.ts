/**
 * The `toolgate-mcp` command line — `--dir`, `--agent`, `--data`, `--heartbeat`, `--no-watch`, `--help`,
 * `--version` — parsed without a framework so the server starts fast, and the check of those options that
 * `toolgate mcp` shares (they load neither the server nor `@toolgate/core`): `check` turns the flags into `McpServer.RunOptions` or one `ArgumentError` line. Exit codes
 * of `main`: 0 (served until the client disconnected, or `--help` / `--version`), 1 (a directory that cannot be
 * served, or a failure to start: an unknown agent, a database that cannot be opened), 2 (a usage error: an unknown
 * argument, a flag without its value, no `--dir`, a bad `--heartbeat`).
 *
 * @since 0.2.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
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

const VALUED: Readonly<Record<string, keyof Flags>> = {
  "--dir": "dir",
  "--agent": "agent",
  "--data": "data",
  "--heartbeat": "heartbeat",
}

/**
 * Parses the arguments (`--flag value` or `--flag=value`).
 *
 * @since 0.1.0
 * @category utilities
 */
export const parseArgs = (argv: ReadonlyArray<string>): Either.Either<Parsed, ArgumentError> => {
  const flags: Record<string, string | boolean> = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--help" || arg === "-h") return Either.right({ _tag: "Help" })
    if (arg === "--version" || arg === "-V") return Either.right({ _tag: "Version" })
    if (arg === "--no-watch") {
      flags["watch"] = false
      continue
    }
    const equals = arg.indexOf("=")
    const name = arg.startsWith("--") && equals > 0 ? arg.slice(0, equals) : arg
    const key = Object.hasOwn(VALUED, name) ? VALUED[name] : undefined
    if (key === undefined) return usage(`unexpected argument: ${arg} (see toolgate-mcp --help)`)
    const value = equals > 0 && name !== arg ? arg.slice(equals + 1) : argv[i + 1]
    if (value === undefined || value === "" || (name === arg && value.startsWith("--")))
      return usage(`${name} needs a value`)
    flags[key] = value
    if (name === arg) i++
  }
  return Either.right({ _tag: "Serve", flags: flags as Flags })
}

/**
 * Parses `argv` and serves over stdio until the client disconnects. `--help` and `--version` print to stdout; a
 * usage error sets exit code 2 and an unusable directory exit code 1, each with one line on stderr; a failure to
 * start (an unknown agent, a database that cannot be opened) rejects, for the entry point to print in one line.
 *
 * @since 0.1.0
 * @category utilities
 */
export const main = async (argv: ReadonlyArray<string>): Promise<void> => {
  const parsed = parseArgs(argv)
  const checked = Either.flatMap(parsed, (command): Either.Either<McpServer.RunOptions | Parsed, ArgumentError> =>
    command._tag === "Serve" ? check(command.flags) : Either.right(command),
  )
  if (Either.isLeft(checked)) {
    process.stderr.write(`toolgate-mcp: ${checked.left.message}\n`)
    process.exitCode = checked.left.usage ? 2 : 1
    return
  }
  const command = checked.right
  if ("_tag" in command) {
    process.stdout.write(`${command._tag === "Help" ? HELP : Package.VERSION}\n`)
    return
  }
  // The server and the library load only now: help, version and argument errors answer without them.
  const McpServer = await import("./server.js")
  await Effect.runPromise(McpServer.run(command))
}
