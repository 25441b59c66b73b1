/**
 * `toolgate db migrate` and `toolgate db check [--json]`: operating the database every toolgate process shares.
 * Both open the database the process would open (`TOOLGATE_DATABASE_URL`, else `database.url` of the user's
 * configuration file, else SQLite at `<data>/toolgate.db`) and name it as every message does (the file, or the URL
 * with `***` for its password). `migrate` applies the missing migrations and prints them; `check` connects without
 * migrating and exits 0 when the database is reachable and fully migrated, 1 otherwise with a one-line cause. The
 * commands are defined here; the library is loaded only when one runs. See docs/database.md.
 *
 * @since 0.3.0
 */
import * as path from "node:path"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type { DatabaseHealth } from "@toolgate/core"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CliError, UsageError } from "./errors.js"
import { dataDirectory } from "./paths.js"

const data = Options.text("data").pipe(
  Options.withDescription("Data directory of the SQLite database (default: $XDG_DATA_HOME/toolgate)"),
  Options.optional,
)

/** The library, the global directories (data from `--data`) and the database choice. */
const choose = (data: string) =>
  Effect.gen(function* () {
    const { Database, DatabaseConfig, DatabaseHealth, Global } = yield* Effect.promise(() => import("@toolgate/core"))
    const global = { ...Global.fromEnvironment(), data }
    const choice = yield* DatabaseConfig.resolve(global, Database.urlFromEnvironment()).pipe(
      Effect.mapError((error) => new CliError({ message: error.message })),
    )
    return { DatabaseHealth, global, choice }
  })

const from = (target: DatabaseHealth.Target): string =>
  target.source === "default" ? "the default SQLite file" : target.source

/**
 * The text `check` prints for a report (the cause goes to stderr as the failure).
 *
 * @since 0.3.0
 * @category rendering
 */
export const renderReport = (report: DatabaseHealth.Report): string =>
  [
    `engine: ${report.engine}`,
    `database: ${report.database} (from ${from(report)})`,
    `reachable: ${report.reachable ? "yes" : "no"}`,
    `latest applied: ${report.latestApplied ?? "none"}`,
    `expected: ${report.expected}`,
    ...(report.reachable && report.missing.length > 0 ? [`missing: ${report.missing.join(", ")}`] : []),
    `status: ${report.healthy ? "healthy" : "unhealthy"}`,
  ].join("\n")

/**
 * `toolgate db check`: prints the report (JSON with `--json`); unhealthy is a failure with its one-line cause.
 *
 * @since 0.3.0
 * @category commands
 */
export const check = (options: { readonly data: Option.Option<string>; readonly json: boolean }) =>
  Effect.gen(function* () {
    // A check creates nothing, not even the data directory.
    const { Global } = yield* Effect.promise(() => import("@toolgate/core"))
    const directory = Option.match(options.data, {
      onNone: () => Global.fromEnvironment().data,
      onSome: (value) => path.resolve(value),
    })
    const { DatabaseHealth, global, choice } = yield* choose(directory)
    const report = yield* DatabaseHealth.check(global, choice)
    yield* Console.log(options.json ? JSON.stringify(report, null, 2) : renderReport(report))
    if (!report.healthy) return yield* new CliError({ message: `db check: ${report.cause ?? "unhealthy"}` })
  })

/**
 * `toolgate db migrate`: applies the missing migrations and prints the engine, the database and what was applied.
 *
 * @since 0.3.0
 * @category commands
 */
export const migrate = (options: { readonly data: Option.Option<string> }) =>
  Effect.gen(function* () {
    const { Global } = yield* Effect.promise(() => import("@toolgate/core"))
    const directory = yield* dataDirectory(options.data, () => Global.fromEnvironment().data)
    const { DatabaseHealth, global, choice } = yield* choose(directory)
    const migrated = yield* DatabaseHealth.migrate(global, choice)
    yield* Console.log(
      [
        `engine: ${migrated.engine}`,
        `database: ${migrated.database} (from ${from(migrated)})`,
        ...(migrated.applied.length === 0
          ? [`nothing to apply: up to date at ${migrated.latest ?? "none"}`]
          : [
              `applied ${migrated.applied.length} migration${migrated.applied.length === 1 ? "" : "s"}:`,
              ...migrated.applied.map((name) => `  ${name}`),
              `latest: ${migrated.latest}`,
            ]),
      ].join("\n"),
    )
  })

/**
 * The `db` command with `migrate` and `check`, for the CLI's command table.
 *
 * @since 0.3.0
 * @category commands
 */
export const command = Command.make("db", {}, () =>
  Effect.fail(new UsageError({ message: "db needs a subcommand: migrate or check (see toolgate db --help)" })),
).pipe(
  Command.withDescription("Operate the database: apply migrations, check health"),
  Command.withSubcommands([
    Command.make("migrate", { data }, migrate).pipe(
      Command.withDescription(
        "Apply the missing migrations to the database (TOOLGATE_DATABASE_URL, database.url, or <data>/toolgate.db) and print them",
      ),
    ),
    Command.make(
      "check",
      { data, json: Options.boolean("json").pipe(Options.withDescription("Print the report as JSON")) },
      check,
    ).pipe(
      Command.withDescription(
        "Connect without migrating: engine, reachable, latest applied vs expected migration (exit 0 healthy, 1 not)",
      ),
    ),
  ]),
)
