/**
 * Validation of the directories the commands take. Kept free of `@toolgate/core` so usage and directory errors are
 * reported before the library is loaded.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CliError } from "./errors.js"

const describeError = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Resolves `--data` (default: the Global data directory) and makes sure it is a usable directory.
 *
 * @since 0.1.0
 * @category utilities
 */
export const dataDirectory = (option: Option.Option<string>, fallback: () => string): Effect.Effect<string, CliError> =>
  Effect.try({
    try: () => {
      const directory = Option.match(option, { onNone: fallback, onSome: (value) => path.resolve(value) })
      if (fs.existsSync(directory) && !fs.statSync(directory).isDirectory())
        throw new Error(`--data ${directory} is not a directory`)
      fs.mkdirSync(directory, { recursive: true })
      return directory
    },
    catch: (error) => new CliError({ message: `Cannot use data directory: ${describeError(error)}` }),
  })

/**
 * A fresh temp directory, or `--dir`: created when missing (its parent must exist); an existing one must be an empty
 * directory, because the sample project is copied into it and edited.
 *
 * @since 0.1.0
 * @category utilities
 */
export const projectDirectory = (option: Option.Option<string>): Effect.Effect<string, CliError> =>
  Effect.try({
    try: () => {
      if (Option.isNone(option)) return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-demo-")))
      const directory = path.resolve(option.value)
      if (!fs.existsSync(directory)) {
        const parent = path.dirname(directory)
        if (!fs.existsSync(parent) || !fs.statSync(parent).isDirectory()) {
          throw new CliError({ message: `--dir ${directory}: the parent directory ${parent} does not exist` })
        }
        fs.mkdirSync(directory)
      } else if (!fs.statSync(directory).isDirectory()) {
        throw new CliError({ message: `--dir ${directory} is not a directory` })
      } else if (fs.readdirSync(directory).length > 0) {
        throw new CliError({
          message: `--dir ${directory} is not empty: the demo copies its sample project there and edits it (use a new or empty directory)`,
        })
      }
      return fs.realpathSync(directory)
    },
    catch: (error) =>
      error instanceof CliError ? error : new CliError({ message: `Cannot use --dir: ${describeError(error)}` }),
  })

/**
 * `--dir` (default: the working directory) as an existing directory, resolved to its real path.
 *
 * @since 0.1.0
 * @category utilities
 */
export const existingDirectory = (option: Option.Option<string>): Effect.Effect<string, CliError> =>
  Effect.try({
    try: () => {
      const directory = Option.match(option, { onNone: () => process.cwd(), onSome: (value) => path.resolve(value) })
      if (!fs.existsSync(directory) || !fs.statSync(directory).isDirectory()) {
        throw new CliError({ message: `--dir ${directory} is not a directory` })
      }
      return fs.realpathSync(directory)
    },
    catch: (error) =>
      error instanceof CliError ? error : new CliError({ message: `Cannot use --dir: ${describeError(error)}` }),
  })

/** The options that take a value, and what the value is. */
const VALUED: Readonly<Record<string, string>> = {
  "--dir": "a directory",
  "--data": "a data directory",
  "--agent": "an agent name",
  "--project": "a project id",
}

/**
 * The usage message for an option given without its value (`toolgate demo --dir`, `--dir --yes`, `--dir=`), or
 * `undefined`. Checked before parsing: the parser would otherwise report the bare option as an unknown argument.
 * `mcp` is left alone: its options are `toolgate-mcp`'s, checked by `McpCommand.parseArgs` with its messages.
 *
 * @since 0.2.0
 * @category utilities
 */
export const missingValue = (args: ReadonlyArray<string>): string | undefined => {
  if (args[0] === "mcp") return undefined
  for (const [index, arg] of args.entries()) {
    if (arg === "--") return undefined
    const [name, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg]
    const what = Object.hasOwn(VALUED, name!) ? VALUED[name!] : undefined
    if (what === undefined) continue
    const value = inline ?? args[index + 1]
    if (value === undefined || value === "" || (inline === undefined && value.startsWith("-"))) {
      return `${name} needs a value (${what}), e.g. ${name} <${what.split(" ").at(-1)}>`
    }
  }
  return undefined
}
