/**
 * The `toolgate-mcp` command line: `--dir`, `--agent`, `--data` and `--no-watch`, parsed without a framework so
 * the server starts fast.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as McpServer from "./server.js"

/**
 * Usage text of `main`.
 *
 * @since 0.1.0
 */
export const USAGE = "usage: toolgate-mcp [--dir DIR] [--agent NAME] [--data DIR] [--no-watch]"

/**
 * Parses the arguments (the directory defaults to the working directory).
 *
 * @since 0.1.0
 */
export const parseArgs = (argv: ReadonlyArray<string>): McpServer.RunOptions | { readonly error: string } => {
  const values: Record<string, string> = {}
  let watch = true
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    if (flag === "--no-watch") {
      watch = false
      continue
    }
    const key = ({ "--dir": "directory", "--agent": "agent", "--data": "data" } as Record<string, string>)[flag]
    if (key === undefined) return { error: `unexpected argument: ${flag}\n${USAGE}` }
    const value = argv[i + 1]
    if (value === undefined || value.startsWith("--")) return { error: `${flag} needs a value\n${USAGE}` }
    values[key] = value
    i++
  }
  return {
    directory: values["directory"] ?? process.cwd(),
    ...(values["agent"] === undefined ? {} : { agent: values["agent"] }),
    ...(values["data"] === undefined ? {} : { data: values["data"] }),
    ...(watch ? {} : { watch: false }),
  }
}

/**
 * Parses `argv` and serves over stdio until the client disconnects. A usage error sets exit code 2; a failure to
 * start (a directory that does not exist, an unknown agent, a database that cannot be opened) rejects, for the
 * entry point to print in one line.
 *
 * @since 0.1.0
 */
export const main = async (argv: ReadonlyArray<string>): Promise<void> => {
  const options = parseArgs(argv)
  if ("error" in options) {
    process.stderr.write(`${options.error}\n`)
    process.exitCode = 2
    return
  }
  await Effect.runPromise(McpServer.run(options))
}
