/**
 * `toolgate serve [--dir DIR] [--port P] [--host H] [--webhook URL]`: the HTTP approval server beside a Location of
 * `DIR`, or, without `--dir` on Postgres (`TOOLGATE_DATABASE_URL`), of every process's asks on that database with the
 * saved approvals and journal of every project (see docs/approval-server.md). It prints the page's address, with the token in the URL fragment, and runs
 * until interrupted. The token comes from `TOOLGATE_SERVE_TOKEN` when set (never from the command line, which other
 * users can read in the process list), else it is generated; the webhook's secret comes from
 * `TOOLGATE_WEBHOOK_SECRET`, which `--webhook` requires.
 *
 * @since 0.3.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Core, Database, DatabaseConfig, Global } from "@toolgate/core"
import { ApprovalServer } from "@toolgate/core/server"
import { CliError, UsageError } from "./errors.js"
import { dataDirectory } from "./paths.js"

/**
 * The port `toolgate serve` listens on without `--port`.
 *
 * @since 0.3.0
 * @category constants
 */
export const DEFAULT_PORT = 7433

/**
 * The environment variables read: the token and the webhook secret.
 *
 * @since 0.3.0
 * @category constants
 */
export const ENV = { token: "TOOLGATE_SERVE_TOKEN", webhookSecret: "TOOLGATE_WEBHOOK_SECRET" } as const

/**
 * What `toolgate serve` takes.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options {
  /** The project directory; without it, every process's asks on the Postgres database. */
  readonly directory?: string | undefined
  readonly port: Option.Option<string>
  readonly host: Option.Option<string>
  readonly webhook: Option.Option<string>
  readonly data: Option.Option<string>
}

const parsePort = (text: Option.Option<string>): Effect.Effect<number, UsageError> =>
  Option.match(text, {
    onNone: () => Effect.succeed(DEFAULT_PORT),
    onSome: (value) =>
      /^\d{1,5}$/.test(value) && Number(value) <= 65535
        ? Effect.succeed(Number(value))
        : Effect.fail(
            new UsageError({ message: `--port must be a port number (0-65535), not ${JSON.stringify(value)}` }),
          ),
  })

const webhookOf = (url: Option.Option<string>) =>
  Option.match(url, {
    onNone: () => Effect.succeed(undefined),
    onSome: (value) => {
      if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
        return Effect.fail(
          new UsageError({ message: `--webhook must be an http(s) URL, not ${JSON.stringify(value)}` }),
        )
      const secret = process.env[ENV.webhookSecret]
      if (secret === undefined || secret.length < ApprovalServer.MIN_TOKEN_LENGTH)
        return Effect.fail(
          new UsageError({
            message: `--webhook needs the signing secret in ${ENV.webhookSecret} (at least ${ApprovalServer.MIN_TOKEN_LENGTH} characters)`,
          }),
        )
      return Effect.succeed({ url: value, secret: Redacted.make(secret) })
    },
  })

/**
 * Runs the server until interrupted.
 *
 * @since 0.3.0
 * @category utilities
 */
export const run = (options: Options) =>
  Effect.gen(function* () {
    const port = yield* parsePort(options.port)
    const webhook = yield* webhookOf(options.webhook)
    const data = yield* dataDirectory(options.data, () => Global.fromEnvironment().data)
    const configured = process.env[ENV.token]
    const host = Option.getOrUndefined(options.host)
    const server = {
      port,
      ...(host === undefined ? {} : { host }),
      ...(configured === undefined ? {} : { token: Redacted.make(configured) }),
      ...(webhook === undefined ? {} : { webhook }),
    }
    const directory = options.directory
    // The database every process would open: TOOLGATE_DATABASE_URL, else database.url of the user's file.
    const choice = yield* DatabaseConfig.resolve(
      { ...Global.fromEnvironment(), data },
      Database.urlFromEnvironment(),
    ).pipe(Effect.mapError((error) => new CliError({ message: error.message })))
    const url = choice.url
    if (directory === undefined && url === undefined)
      return yield* new UsageError({
        message: `toolgate serve needs --dir, or a Postgres database (${Database.URL_VARIABLE} or database.url in the user's configuration file) to serve every process's asks`,
      })
    const layer =
      directory !== undefined
        ? ApprovalServer.layer(server).pipe(Layer.provideMerge(Core.layer({ directory, data })))
        : ApprovalServer.layerDatabase(server).pipe(
            Layer.provideMerge(Layer.merge(Database.layerUrl(url!, choice.pool), NodeHttpClient.layer)),
          )
    const what = directory !== undefined ? `approvals of ${directory}` : "approvals of every process on the database"
    yield* Effect.scoped(
      Effect.gen(function* () {
        const context = yield* Layer.build(layer).pipe(
          Effect.mapError((error) => new CliError({ message: error.message })),
        )
        const running = yield* Effect.provide(ApprovalServer.Service, context)
        yield* Console.log(`toolgate serve: ${what} at ${running.url}`)
        yield* Console.log(`  open ${Redacted.value(running.pageURL)}`)
        yield* Console.log(
          configured === undefined
            ? `  token ${Redacted.value(running.token)} (send it as Authorization: Bearer <token>)`
            : `  token from ${ENV.token}`,
        )
        if (webhook !== undefined) yield* Console.log(`  webhook ${webhook.url} (signed with ${ENV.webhookSecret})`)
        yield* Console.log("Press Ctrl-C to stop.")
        return yield* Effect.never
      }),
    )
  })
