/**
 * The `toolgate` command tree (`@effect/cli`): `demo`, `mcp`, `mcp-servers`, `serve`, `permissions list|revoke|explain|lint`,
 * `decisions` and `db migrate|check`.
 *
 * @since 0.1.0
 */
import { createRequire } from "node:module"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { CliError, UsageError } from "./errors.js"
import { command as db } from "./db.js"
import { command as decisions } from "./decisions.js"
import * as Paths from "./paths.js"

/**
 * The CLI version: the version in `@toolgate/cli`'s own package.json (one folder above `src/`, `dist/` and
 * `bundle/` alike).
 *
 * @since 0.1.0
 * @category constants
 */
export const VERSION: string = (createRequire(import.meta.url)("../package.json") as { readonly version: string })
  .version

/** Imports a command's implementation on first use (the library is only loaded when a command needs it). */
const load = <A>(importer: () => Promise<A>): Effect.Effect<A> => Effect.promise(importer)

const data = Options.text("data").pipe(
  Options.withDescription("Data directory for the database and managed tool output (default: $XDG_DATA_HOME/toolgate)"),
  Options.optional,
)

const demo = Command.make(
  "demo",
  {
    dir: Options.text("dir").pipe(
      Options.withDescription(
        "Copy the sample project into this new or empty directory instead of a fresh temp directory",
      ),
      Options.optional,
    ),
    yes: Options.boolean("yes").pipe(
      Options.withAlias("y"),
      Options.withDescription("Answer every permission ask with once and every question with its first option"),
    ),
    sandbox: Options.boolean("sandbox").pipe(
      Options.withDescription("Run the bash step inside the bubblewrap sandbox (fails if bubblewrap is unavailable)"),
    ),
    data,
  },
  (options) =>
    Effect.flatMap(Paths.projectDirectory(options.dir), (directory) =>
      Effect.flatMap(
        load(() => import("./demo.js")),
        (Demo) => Demo.run({ directory, yes: options.yes, data: options.data, sandbox: options.sandbox }),
      ),
    ),
).pipe(
  Command.withDescription("Run a scripted agent session on a sample project, with every permission ask as a prompt"),
)

const list = Command.make(
  "list",
  {
    project: Options.text("project").pipe(Options.withDescription("Only this project's approvals"), Options.optional),
    data,
  },
  (options) =>
    Effect.flatMap(
      load(() => import("./permissions.js")),
      (Permissions) => Permissions.list(options),
    ),
).pipe(Command.withDescription("List saved approvals (id, project, action, resource)"))

const revoke = Command.make(
  "revoke",
  { id: Args.text({ name: "ID" }).pipe(Args.withDescription("The saved approval's id (psv_…)")), data },
  (options) =>
    Effect.flatMap(
      load(() => import("./permissions.js")),
      (Permissions) => Permissions.revoke(options),
    ),
).pipe(Command.withDescription("Remove one saved approval"))

const explain = Command.make(
  "explain",
  {
    dir: Options.text("dir").pipe(
      Options.withDescription("The project directory whose rules apply (default: the working directory)"),
      Options.optional,
    ),
    agent: Options.text("agent").pipe(
      Options.withDescription("The agent whose rules apply (default: the project's default agent)"),
      Options.optional,
    ),
    data,
    action: Args.text({ name: "ACTION" }).pipe(Args.withDescription("The permission action (read, edit, bash, …)")),
    resources: Args.text({ name: "RESOURCE" }).pipe(
      Args.withDescription("The resources; for bash, the command (quoted)"),
      Args.atLeast(1),
    ),
  },
  (options) =>
    Effect.flatMap(Paths.existingDirectory(options.dir), (directory) =>
      Effect.flatMap(
        load(() => import("./explain.js")),
        (Explain) =>
          Explain.explain({
            directory,
            agent: options.agent,
            data: options.data,
            action: options.action,
            resources: options.resources,
          }),
      ),
    ),
).pipe(Command.withDescription("Show every rule considered for a request, where it came from, and which one decided"))

const lint = Command.make(
  "lint",
  {
    dir: Options.text("dir").pipe(
      Options.withDescription("The project directory whose rules are checked (default: the working directory)"),
      Options.optional,
    ),
    data,
  },
  (options) =>
    Effect.flatMap(Paths.existingDirectory(options.dir), (directory) =>
      Effect.flatMap(
        load(() => import("./lint.js")),
        (Lint) => Lint.lint({ directory, data: options.data }),
      ),
    ),
).pipe(Command.withDescription("Check permission rules and saved approvals for mistakes (exit 1 on errors)"))

const mcp = Command.make(
  "mcp",
  {
    // The options are McpCommand's, parsed and checked by the same function as `toolgate-mcp`'s.
    options: Args.text({ name: "option" }).pipe(
      Args.withDescription(
        "The options of toolgate-mcp: --dir DIR (required), --agent NAME, --data DIR, --heartbeat MS, --no-watch (see toolgate-mcp --help)",
      ),
      Args.repeated,
    ),
  },
  ({ options }) =>
    Effect.flatMap(
      load(() => import("@toolgate/mcp")),
      ({ McpCommand, McpServer }) =>
        Either.match(McpCommand.resolve(options), {
          onLeft: (error) =>
            Effect.fail(
              error.usage ? new UsageError({ message: error.message }) : new CliError({ message: error.message }),
            ),
          onRight: (command) =>
            command._tag === "Serve"
              ? McpServer.run(command.options).pipe(
                  Effect.mapError((error) => new CliError({ message: McpServer.describeFailure(error) })),
                )
              : Console.log(command._tag === "Help" ? McpCommand.HELP : McpCommand.VERSION),
        }),
    ),
).pipe(
  Command.withDescription("Serve the project's tools over stdio as an MCP server (permission asks via elicitation)"),
)

const mcpServers = Command.make(
  "mcp-servers",
  {
    dir: Options.text("dir").pipe(
      Options.withDescription("The project directory whose MCP servers are listed (default: the working directory)"),
      Options.optional,
    ),
    data,
  },
  (options) =>
    Effect.flatMap(Paths.existingDirectory(options.dir), (directory) =>
      Effect.flatMap(
        load(() => import("./mcp-servers.js")),
        (McpServers) => McpServers.list({ directory, data: options.data }),
      ),
    ),
).pipe(Command.withDescription("List the configured MCP servers, their state and their tools"))

const serve = Command.make(
  "serve",
  {
    dir: Options.text("dir").pipe(
      Options.withDescription(
        "The project directory whose asks are served (without it: every process's asks on the Postgres database in $TOOLGATE_DATABASE_URL)",
      ),
      Options.optional,
    ),
    port: Options.text("port").pipe(
      Options.withDescription("The port (default 7433; 0: a free one)"),
      Options.optional,
    ),
    host: Options.text("host").pipe(
      Options.withDescription("The address to bind (default 127.0.0.1)"),
      Options.optional,
    ),
    webhook: Options.text("webhook").pipe(
      Options.withDescription("POST each new ask here, signed with $TOOLGATE_WEBHOOK_SECRET"),
      Options.optional,
    ),
    data,
  },
  (options) =>
    Effect.flatMap(
      Option.match(options.dir, {
        onNone: () => Effect.succeed(undefined),
        onSome: (dir) => Paths.existingDirectory(Option.some(dir)),
      }),
      (directory) =>
        Effect.flatMap(
          load(() => import("./serve.js")),
          (Serve) => Serve.run({ ...options, directory }),
        ),
    ),
).pipe(
  Command.withDescription(
    "Serve the approval API and web page for a project, or for every process on Postgres (token printed at start)",
  ),
)

const permissions = Command.make("permissions", {}, () =>
  Effect.fail(
    new UsageError({
      message: "permissions needs a subcommand: list, revoke, explain or lint (see toolgate permissions --help)",
    }),
  ),
).pipe(
  Command.withDescription("Manage saved approvals and explain decisions"),
  Command.withSubcommands([list, revoke, explain, lint]),
)

const toolgate = Command.make("toolgate", {}, () =>
  Effect.fail(
    new UsageError({
      message: "missing command: demo, mcp, serve, permissions, decisions or db (see toolgate --help)",
    }),
  ),
).pipe(
  Command.withDescription("The toolgate command line: the demo session, saved approvals and the database"),
  Command.withSubcommands([demo, mcp, mcpServers, serve, permissions, decisions, db]),
)

/**
 * Runs the CLI on `process.argv`-style arguments.
 *
 * @since 0.1.0
 * @category utilities
 */
export const run = Command.run(toolgate, { name: "toolgate", version: VERSION })
