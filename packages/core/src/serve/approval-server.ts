/**
 * ApprovalServer: the HTTP approval API (`ApprovalApi`) and its web page, served beside one Location so a person can
 * answer its permission asks from a browser, a chat bot or a script. `layer` starts it in the layer's scope:
 *
 * - it binds 127.0.0.1 by default (`host` to change it; a non-loopback host is also accepted in `Host` headers);
 * - every `/api` endpoint but the OpenAPI document needs `Authorization: Bearer <token>`: the configured token, or
 *   one generated from 32 random bytes (read it from `Service`; `toolgate serve` prints it);
 * - cross-origin browser requests and foreign `Host` headers are refused before routing (no CORS, no DNS rebinding);
 * - a request body is read up to `MAX_BODY_BYTES` (413 past it) and nests at most `MAX_BODY_DEPTH` levels (400);
 * - the OpenAPI document is served at `/api/openapi.json`, the page at `/`;
 * - with `webhook`, every new ask is POSTed, HMAC-SHA256-signed, to a URL (see `internal/approval-server-webhook`).
 *
 * Answers are recorded with channel `http`. `layer` needs the Location's `Approvals`, `PermissionSaved`,
 * `DecisionJournal` and `Location` services (all in `Core.layer`) and an `HttpClient` for the webhook. `layerRemote`
 * runs with no Location, on a host of its own: over `ApprovalsDatabase.layer` it serves the asks of every process on
 * a Postgres database, and the saved approvals and journal of every project (`?projectID=` narrows). See
 * docs/approval-server.md. `layerDatabase` is `layerRemote` with those services built on the database in context.
 *
 * @since 0.3.0
 */
import { createServer } from "node:http"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Location from "../place/location.js"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Approvals from "../approvals/approvals.js"
import * as DecisionJournal from "../journal/decision-journal.js"
import * as PermissionSaved from "../permission/permission-saved.js"
import * as Notifications from "../system/notifications.js"
import * as ApprovalsDatabase from "../hosts/approvals-database.js"
import * as ApprovalApi from "./approval-api.js"
import * as Guard from "./internal/approval-server-guard.js"
import * as Handlers from "./internal/approval-server-handlers.js"
import * as Webhook from "./internal/approval-server-webhook.js"

/**
 * Where to listen, the token, the webhook.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options {
  /** The address to bind (default `127.0.0.1`). */
  readonly host?: string | undefined
  /** The port (default 0: a free port; read the one chosen from `Service`). */
  readonly port?: number | undefined
  /** The bearer token (at least 16 characters); default a fresh random one. */
  readonly token?: Redacted.Redacted<string> | string | undefined
  /** POST every new ask to `url`, signed with `secret`. */
  readonly webhook?: { readonly url: string; readonly secret: Redacted.Redacted<string> | string } | undefined
}

/**
 * The running server: its base URL, port and token, and the page's address with the token in the fragment (the
 * fragment never leaves the browser; the page moves it into memory and out of the address bar).
 *
 * @since 0.3.0
 * @category models
 */
export interface Interface {
  readonly url: string
  readonly port: number
  readonly token: Redacted.Redacted<string>
  readonly pageURL: Redacted.Redacted<string>
}

/**
 * The ApprovalServer service tag.
 *
 * @since 0.3.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/ApprovalServer")<Service, Interface>() {}

/**
 * The server could not start: the address is in use or cannot be bound, or the options are unusable.
 *
 * @since 0.3.0
 * @category errors
 */
export class StartError extends Schema.TaggedError<StartError>()("ApprovalServer.StartError", {
  host: Schema.String,
  port: Schema.Number,
  detail: Schema.String,
}) {
  override get message(): string {
    return `The approval server cannot listen on ${this.host}:${this.port}: ${this.detail}`
  }
}

/**
 * The default bind address.
 *
 * @since 0.3.0
 * @category constants
 */
export const DEFAULT_HOST = "127.0.0.1"
/**
 * The shortest configured token accepted.
 *
 * @since 0.3.0
 * @category constants
 */
export const MIN_TOKEN_LENGTH = 16

/**
 * The largest request body the server reads, in bytes (64 KiB): a larger `Content-Length` is refused before any of
 * it is read and a chunked body is cut at the limit (the rest is discarded unread), with 413
 * `ApprovalServer.BodyTooLarge`.
 *
 * @since 0.4.0
 * @category constants
 */
export const MAX_BODY_BYTES: number = Guard.MAX_BODY_BYTES

/**
 * The deepest nesting of arrays and objects a request body may have (32): a deeper one is 400
 * `ApprovalServer.BodyTooDeep`, before it is parsed. A body is JSON: another content type is 415 and malformed JSON
 * 400 (`ApprovalServer.BodyNotJson`).
 *
 * @since 0.4.0
 * @category constants
 */
export const MAX_BODY_DEPTH: number = Guard.MAX_BODY_DEPTH

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"])

const redacted = (value: Redacted.Redacted<string> | string): Redacted.Redacted<string> =>
  typeof value === "string" ? Redacted.make(value) : value

/** Host names accepted in `Host` besides the loopback names: the bound host, when it is not loopback. */
const hostNames = (host: string): ReadonlySet<string> =>
  LOOPBACK.has(host) ? new Set() : new Set([host.includes(":") ? `[${host.toLowerCase()}]` : host.toLowerCase()])

const urlHost = (host: string) => (host.includes(":") ? `[${host}]` : host)

const make = <R>(
  options: Options,
  scope: Layer.Layer<Handlers.Scope, never, R>,
): Layer.Layer<
  Service,
  StartError,
  Approvals.Service | PermissionSaved.Service | DecisionJournal.Service | HttpClient.HttpClient | R
> => {
  const host = options.host ?? DEFAULT_HOST
  const port = options.port ?? 0
  const token = redacted(options.token ?? Guard.generateToken())
  if (Redacted.value(token).length < MIN_TOKEN_LENGTH)
    return Layer.fail(
      new StartError({ host, port, detail: `the configured token is shorter than ${MIN_TOKEN_LENGTH} characters` }),
    )
  const server = NodeHttpServer.layer(createServer, { host, port }).pipe(
    Layer.mapError((error) => new StartError({ host, port, detail: String(error.cause ?? error) })),
  )
  const api = HttpApiBuilder.api(ApprovalApi.api).pipe(
    Layer.provide(Handlers.groups),
    Layer.provide(scope),
    Layer.provide(Handlers.authorization(token)),
  )
  const serve = HttpApiBuilder.serve(Guard.middleware(hostNames(host))).pipe(
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/api/openapi.json" })),
    Layer.provide(api),
  )
  const info = Layer.scoped(
    Service,
    Effect.gen(function* () {
      const address = (yield* HttpServer.HttpServer).address
      const bound = address._tag === "TcpAddress" ? address.port : port
      const url = `http://${urlHost(host)}:${bound}`
      const service = Service.of({
        url,
        port: bound,
        token,
        pageURL: Redacted.make(`${url}/#token=${encodeURIComponent(Redacted.value(token))}`),
      })
      if (options.webhook !== undefined) {
        const approvals = yield* Approvals.Service
        const webhook = { url: options.webhook.url, secret: redacted(options.webhook.secret) }
        yield* Effect.forkScoped(Webhook.run(webhook, approvals.prompts(), `${url}/`))
      }
      return service
    }),
  )
  return Layer.merge(serve, info).pipe(Layer.provide(server))
}

/**
 * Serves the approval API and page for the Location in context, until the layer's scope closes.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (
  options: Options = {},
): Layer.Layer<
  Service,
  StartError,
  Approvals.Service | PermissionSaved.Service | DecisionJournal.Service | Location.Service | HttpClient.HttpClient
> => make(options, Handlers.scopeOfLocation)

/**
 * Serves the approval API and page with no Location, until the layer's scope closes: the asks are whatever the
 * `Approvals` in context serves (over `ApprovalsDatabase.layer`: every process's on the database), and the saved
 * approvals and the journal are every project's (`?projectID=` narrows; a revoke may name any saved approval).
 *
 * @since 0.3.0
 * @category layers
 */
export const layerRemote = (
  options: Options = {},
): Layer.Layer<
  Service,
  StartError,
  Approvals.Service | PermissionSaved.Service | DecisionJournal.Service | HttpClient.HttpClient
> => make(options, Handlers.scopeEveryProject)

/**
 * `layerRemote` with what it needs on the database in context: `ApprovalsDatabase.layer` (listening through
 * `Notifications.layer`), `PermissionSaved.layer` and `DecisionJournal.layer`. Give it a Postgres client from
 * `Database.layerUrl` and an `HttpClient`; this is what `toolgate serve` runs without `--dir`.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerDatabase = (
  options: Options = {},
): Layer.Layer<Service, StartError, SqlClient.SqlClient | HttpClient.HttpClient> =>
  layerRemote(options).pipe(
    Layer.provide(
      Layer.mergeAll(ApprovalsDatabase.layer(), PermissionSaved.layer, DecisionJournal.layer).pipe(
        Layer.provide(Notifications.layer),
      ),
    ),
  )
