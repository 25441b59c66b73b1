/**
 * `toolgate mcp-servers [--dir D]`: the MCP servers the project's configuration names (see docs/mcp-tools.md), each
 * with its origin, program, state (running, failed with the cause, waiting for approval, disabled) and tools. The
 * user's and embedders' servers are started to list their tools (and stopped again); a project document's server is
 * never started here: it is listed as waiting for its `project_program` approval.
 *
 * @since 0.4.0
 */
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Core, Global } from "@toolgate/core"
import { McpTools } from "@toolgate/mcp"
import { CliError } from "./errors.js"
import { dataDirectory } from "./paths.js"

/** How long the command waits for the servers to start before it lists them as they are. */
const START_WAIT = Duration.seconds(15)

const describeState = (state: McpTools.State): string => {
  switch (state._tag) {
    case "failed":
      return `failed: ${state.cause}`
    case "waiting":
      return "waiting for approval (project_program)"
    default:
      return state._tag
  }
}

/**
 * One server as printed: a header line and its tools.
 *
 * @since 0.4.0
 * @category utilities
 */
export const render = (servers: ReadonlyArray<McpTools.Status>): string => {
  if (servers.length === 0) return "No MCP servers are configured."
  return servers
    .map((server) =>
      [
        `${server.name} (${server.origin}${server.document === undefined ? "" : `, ${server.document}`})`,
        `  program: ${server.program}`,
        `  state: ${describeState(server.state)}`,
        `  tools: ${server.tools.length === 0 ? "none" : server.tools.join(", ")}`,
      ].join("\n"),
    )
    .join("\n")
}

/**
 * Lists the servers of `directory` once every server has left `starting` (or after 15 seconds).
 *
 * @since 0.4.0
 * @category utilities
 */
export const list = (options: {
  readonly directory: string
  readonly data: Option.Option<string>
}): Effect.Effect<void, CliError> =>
  Effect.gen(function* () {
    const data = yield* dataDirectory(options.data, () => Global.fromEnvironment().data)
    const servers = yield* Effect.gen(function* () {
      const mcp = yield* McpTools.Service
      const settled = Effect.gen(function* () {
        for (;;) {
          const listed = yield* mcp.servers()
          if (listed.every((server) => server.state._tag !== "starting")) return listed
          yield* Effect.sleep(Duration.millis(50))
        }
      })
      return yield* settled.pipe(
        Effect.timeoutTo({ duration: START_WAIT, onTimeout: () => mcp.servers(), onSuccess: Effect.succeed }),
        Effect.flatten,
      )
    }).pipe(
      Effect.provide(
        McpTools.layer.pipe(
          Layer.provideMerge(Core.layer({ directory: options.directory, data })),
        ),
      ),
      Effect.scoped,
      Effect.catchAllCause((cause) =>
        Effect.fail(new CliError({ message: `Cannot list the MCP servers: ${Cause.pretty(cause)}` })),
      ),
    )
    yield* Console.log(render(servers))
  })
