/**
 * MCP servers as a tool source, one service per Location: it reads the `mcp` entries of the Location's
 * configuration, starts each server (a project document's only after a `project_program` approval), registers its
 * tools as one Location registration named `<server>_<tool>`, replaces that registration when the server says its
 * tools changed, and restarts a server that stopped, with backoff. See docs/mcp-tools.md.
 *
 * @since 0.4.0
 * @internal
 */
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  type CallToolResult,
  CallToolResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js"
import {
  ChildEnvironment,
  Config,
  Global,
  LLM,
  Location,
  PermissionSaved,
  PermissionV2,
  ProjectProgram,
  SessionV2,
  Tool,
  Tools,
  WebAddress,
  Wildcard,
} from "@toolgate/core"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { VERSION } from "./package.js"
import * as SourceTool from "./source-tool.js"

/**
 * A server's configuration (the `mcp.<name>` entry of `toolgate.json`).
 *
 * @internal
 */
export type ServerConfig = Config.McpServer

/**
 * Where a server was configured: the user's configuration directory, a project's own document, or an embedder's
 * code (`add`).
 *
 * @internal
 */
export type Origin = "user" | "project" | "code"

/**
 * A server's state: `starting`, `running`, `failed` (with the cause; a stopped server is restarted with backoff),
 * `waiting` (a project document's server waiting for its `project_program` approval) or `disabled`.
 *
 * @internal
 */
export type State =
  | { readonly _tag: "starting" }
  | { readonly _tag: "running" }
  | { readonly _tag: "failed"; readonly cause: string }
  | { readonly _tag: "waiting"; readonly program: string }
  | { readonly _tag: "disabled" }

/**
 * One server as `servers` lists it: its name, origin, the document that configured it, its program (command line
 * or URL), its state and the names of the tools it registered.
 *
 * @internal
 */
export interface Status {
  readonly name: string
  readonly origin: Origin
  readonly document?: string
  readonly program: string
  readonly state: State
  readonly tools: ReadonlyArray<string>
}

/**
 * A server that cannot be added, started or approved: an unknown name, a name used twice, a tool name two servers
 * (or two tools) both map to.
 *
 * @internal
 */
export class ServerError extends Schema.TaggedError<ServerError>()("McpTools.ServerError", {
  server: Schema.String,
  message: Schema.String,
}) {}

/**
 * The caller of `approve`: the session (and agent) whose channels see the `project_program` ask.
 *
 * @internal
 */
export interface Caller {
  readonly sessionID: string
  readonly agent?: string | undefined
}

/**
 * The McpTools service of one Location.
 *
 * @internal
 */
export interface Interface {
  /** Every configured server with its state and tools. */
  readonly servers: () => Effect.Effect<ReadonlyArray<Status>>
  /** One element each time a server's state or tools changed. */
  readonly changes: Stream.Stream<void>
  /** Adds a server from code (it starts at once) until the caller's scope closes. */
  readonly add: (name: string, config: ServerConfig) => Effect.Effect<void, ServerError, Scope.Scope>
  /**
   * Asks to start a project document's server (`project_program`, resource: its exact program) and starts it once
   * allowed. A server that is not waiting succeeds at once.
   */
  readonly approve: (
    name: string,
    caller: Caller,
  ) => Effect.Effect<void, ServerError | PermissionV2.Error | SessionV2.NotFoundError>
}

/**
 * The McpTools service tag.
 *
 * @internal
 */
export class Service extends Context.Tag("@toolgate/v2/McpTools")<Service, Interface>() {}

/** The default per-call timeout. */
const DEFAULT_TIMEOUT_MS = 60_000
/** Restart backoff: the first wait, doubled per failed start, capped. */
const BACKOFF_BASE_MS = 500
const BACKOFF_MAX_MS = 30_000
/** How much of a local server's standard error a failure keeps (its tail). */
const STDERR_TAIL_BYTES = 4096
/** The largest SDK request timeout (Node's timer limit); toolgate's own timeout ends a call first. */
const SDK_TIMEOUT_MS = 2 ** 31 - 1
/** The largest message a local server may send (one JSON-RPC line), as the toolgate MCP server accepts. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024
/** At most this many pages of `tools/list`. */
const MAX_LIST_PAGES = 100

const ENV_REFERENCE = /\{env:([^}]*)\}/g

/**
 * `value` with every `{env:NAME}` replaced by the runner's variable `NAME`; a variable that is not set is an error
 * naming `field`.
 *
 * @internal
 */
export const expand = (
  value: string,
  field: string,
  environment: NodeJS.ProcessEnv = process.env,
): Either.Either<string, string> => {
  let missing: string | undefined
  const out = value.replace(ENV_REFERENCE, (_, name: string) => {
    const found = environment[name]
    if (found === undefined) missing ??= name
    return found ?? ""
  })
  return missing === undefined ? Either.right(out) : Either.left(`${field} names {env:${missing}}, which is not set`)
}

const expandAll = (
  values: Readonly<Record<string, string>> | undefined,
  field: string,
): Either.Either<Record<string, string>, string> => {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(values ?? {})) {
    const expanded = expand(value, `${field}.${key}`)
    if (Either.isLeft(expanded)) return Either.left(expanded.left)
    out[key] = expanded.right
  }
  return Either.right(out)
}

/**
 * The `project_program` resource of a server: its command line, or its URL (`private:`-prefixed when the URL's
 * host is a loopback, private or link-local address, as webfetch asks it).
 *
 * @internal
 */
export const programOf = (config: ServerConfig): string => {
  if (config.command !== undefined) return ProjectProgram.resource({ command: config.command })
  const url = config.url!
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "")
  const literal = /^[0-9.]+$/.test(host) || host.includes(":")
  const isPrivate = host === "localhost" || (literal && WebAddress.isPrivate(host))
  return isPrivate ? `${PermissionV2.PRIVATE_PREFIX}${url}` : url
}

/** A user's configured rules (top level and the agent's) from the documents of the Location. */
const userRules = (documents: ReadonlyArray<Config.Document>, agent: string): ReadonlyArray<typeof Config.PermissionRule.Type> =>
  documents.flatMap((document) => [
    ...(document.info.permissions ?? []),
    ...(document.info.agents?.[agent]?.permissions ?? []),
  ])

interface Spec {
  readonly name: string
  readonly config: ServerConfig
  readonly origin: Origin
  readonly document?: string
}

interface Server {
  readonly spec: Spec
  state: State
  tools: ReadonlyArray<string>
  client: Client | undefined
  registration: Scope.CloseableScope | undefined
  fiber: Fiber.RuntimeFiber<void> | undefined
  /** The call contexts in flight (an elicitation is asked in the session of the latest). */
  readonly inflight: Set<Tool.Context>
  /** Runs a `tools/list` refresh (set while running). */
  refresh: (() => void) | undefined
}

/**
 * The servers of the configuration `entries`: later documents win per name; `trusted` is kept only from the user's
 * own configuration directory (`userDirectory`).
 *
 * @internal
 */
export const specsOf = (entries: ReadonlyArray<Config.Entry>, userDirectory: string): ReadonlyArray<Spec> => {
  const byName = new Map<string, Spec>()
  for (const document of Config.documents(entries)) {
    const user =
      document.path !== undefined && path.resolve(path.dirname(document.path)) === path.resolve(userDirectory)
    for (const [name, config] of Object.entries(document.info.mcp ?? {})) {
      byName.set(name, {
        name,
        config: user || config.trusted === undefined ? config : { ...config, trusted: false },
        origin: user ? "user" : "project",
        ...(document.path === undefined ? {} : { document: document.path }),
      })
    }
  }
  return [...byName.values()]
}

/**
 * Builds the service of one Location.
 *
 * @internal
 */
export const make = Effect.gen(function* () {
  const tools = yield* Tools.Service
  const permission = yield* PermissionV2.Service
  const config = yield* Config.Service
  const global = yield* Global.Service
  const location = yield* Location.Service
  const saved = yield* Effect.serviceOption(PermissionSaved.Service)
  const runtime = yield* Effect.runtime<never>()
  const layerScope = yield* Effect.scope
  const hub = yield* PubSub.unbounded<void>()
  const notify = () => Runtime.runSync(runtime)(PubSub.publish(hub, undefined))

  const entries = yield* config.entries()
  const documents = Config.documents(entries)
  const servers = new Map<string, Server>()
  /** Every registered tool name and the server/tool it came from, across servers. */
  const owners = new Map<string, { readonly server: string; readonly tool: string }>()

  const namedByUser = (agent: string, resource: string) =>
    userRules(documents, agent).some(
      (rule) => rule.action !== "*" && Wildcard.match("mcp", rule.action) && Wildcard.match(resource, rule.resource),
    )

  const approvedElsewhere = (resource: string, bound: string): Effect.Effect<boolean> => {
    if (Option.isNone(saved)) return Effect.succeed(false)
    const head = Wildcard.literal(`${PermissionV2.DEFINITION_PREFIX}${resource}@`)
    const mine = Wildcard.literal(bound)
    return saved.value
      .list()
      .pipe(
        Effect.map((rows) => rows.some((row) => row.action === "mcp" && row.resource.startsWith(head) && row.resource !== mine)),
        Effect.orElseSucceed(() => false),
      )
  }

  const setState = (server: Server, state: State) => {
    server.state = state
    notify()
  }

  const failure = (server: Server, message: string) =>
    new LLM.ToolFailure({ message: `MCP server ${server.spec.name}: ${message}` })

  const callOf =
    (server: Server, timeoutMs: number) =>
    (tool: string, input: Record<string, unknown>, context: Tool.Context) =>
      Effect.suspend(() => {
        const client = server.client
        if (client === undefined) return Effect.fail(failure(server, "not running"))
        return Effect.acquireUseRelease(
          Effect.sync(() => server.inflight.add(context)),
          () =>
            Effect.tryPromise({
              try: (signal) =>
                client.callTool({ name: tool, arguments: input }, CallToolResultSchema, {
                  signal,
                  timeout: SDK_TIMEOUT_MS,
                  ...(context.progress === undefined
                    ? {}
                    : {
                        onprogress: (update) =>
                          context.progress?.({
                            message:
                              update.message ??
                              (update.total === undefined
                                ? `${update.progress}`
                                : `${update.progress}/${update.total}`),
                            progress: update.progress,
                            ...(update.total === undefined ? {} : { total: update.total }),
                          }),
                      }),
                }) as Promise<CallToolResult>,
              catch: (error) =>
                failure(server, `the call of ${tool} failed: ${error instanceof Error ? error.message : String(error)}`),
            }).pipe(
              Effect.timeoutFail({
                duration: Duration.millis(timeoutMs),
                onTimeout: () =>
                  failure(server, `${tool} did not answer within ${timeoutMs} ms (the call was cancelled)`),
              }),
            ),
          () => Effect.sync(() => server.inflight.delete(context)),
        )
      })

  const hostOf = (server: Server): SourceTool.Host => {
    const timeoutMs = server.spec.config.timeout ?? DEFAULT_TIMEOUT_MS
    return {
      server: server.spec.name,
      trusted: server.spec.config.trusted === true,
      timeout: Duration.millis(timeoutMs),
      permission,
      namedByUser,
      approvedElsewhere,
      call: callOf(server, timeoutMs),
    }
  }

  const selected = (config: ServerConfig, tool: string) =>
    (config.include === undefined || config.include.some((pattern) => Wildcard.match(tool, pattern))) &&
    !(config.exclude ?? []).some((pattern) => Wildcard.match(tool, pattern))

  /** Replaces the server's registration with `listed`; a name clash fails before anything changes. */
  const register = (server: Server, listed: ReadonlyArray<McpTool>) =>
    Effect.gen(function* () {
      const name = server.spec.name
      const record: Record<string, Tool.AnyTool> = {}
      const mine = new Map<string, string>()
      const host = hostOf(server)
      for (const tool of listed) {
        if (!selected(server.spec.config, tool.name)) continue
        const registered = Tool.sanitizeName(`${name}_${tool.name}`)
        const other = mine.get(registered) ?? undefined
        if (other !== undefined)
          return yield* new ServerError({
            server: name,
            message: `The tools ${other} and ${tool.name} of MCP server ${name} both become the tool name ${registered}`,
          })
        const owner = owners.get(registered)
        if (owner !== undefined && owner.server !== name)
          return yield* new ServerError({
            server: name,
            message: `The tool ${tool.name} of MCP server ${name} and the tool ${owner.tool} of MCP server ${owner.server} both become the tool name ${registered}`,
          })
        yield* Tool.validateName(registered).pipe(
          Effect.mapError(
            () =>
              new ServerError({
                server: name,
                message: `The tool ${tool.name} of MCP server ${name} becomes ${registered}, which is not a valid tool name (a letter, then up to 63 letters, digits, _ or -)`,
              }),
          ),
        )
        mine.set(registered, tool.name)
        record[registered] = SourceTool.make(host, tool, registered)
      }
      const scope = yield* Scope.make()
      yield* tools.register(record).pipe(
        Scope.extend(scope),
        Effect.catchAll((error) => Effect.fail(new ServerError({ server: name, message: error.message }))),
        Effect.tapError(() => Scope.close(scope, Exit.void)),
      )
      // The new registration is in place before the old one goes: a call advertised before is stale, never unknown.
      yield* withdraw(server)
      server.registration = scope
      server.tools = [...mine.keys()]
      for (const [registered, tool] of mine) owners.set(registered, { server: name, tool })
      notify()
    })

  const withdraw = (server: Server) =>
    Effect.suspend(() => {
      const previous = server.registration
      server.registration = undefined
      for (const registered of server.tools) if (owners.get(registered)?.server === server.spec.name) owners.delete(registered)
      server.tools = []
      return previous === undefined ? Effect.void : Scope.close(previous, Exit.void)
    })

  const listTools = (client: Client) =>
    Effect.tryPromise(async () => {
      const out: Array<McpTool> = []
      let cursor: string | undefined
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const result = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: SDK_TIMEOUT_MS })
        out.push(...result.tools)
        cursor = result.nextCursor
        if (cursor === undefined) break
      }
      return out
    })

  /** The transport of a server, or why it cannot be built. */
  const transportOf = (spec: Spec, stderr: Array<Buffer>): Either.Either<() => Array<Transport>, string> => {
    const { config } = spec
    const where = `${spec.document ?? "code"}: mcp.${spec.name}`
    if (config.command !== undefined) {
      const env = expandAll(config.env, `${where}.env`)
      if (Either.isLeft(env)) return Either.left(env.left)
      const scrubbed: Record<string, string> = {}
      const overrides = ChildEnvironment.overrides(ChildEnvironment.settings(undefined, "scrub"))
      for (const [key, value] of Object.entries(process.env)) if (value !== undefined) scrubbed[key] = value
      for (const [key, value] of Object.entries(overrides)) {
        if (value === undefined) delete scrubbed[key]
        else scrubbed[key] = value
      }
      const [command, ...args] = config.command
      return Either.right(() => {
        const transport = new StdioClientTransport({
          command: command!,
          args,
          env: { ...scrubbed, ...env.right },
          cwd: path.resolve(location.directory, config.cwd ?? "."),
          stderr: "pipe",
          maxBufferSize: MAX_MESSAGE_BYTES,
        })
        transport.stderr?.on("data", (chunk: Buffer) => {
          stderr.push(chunk)
          let size = stderr.reduce((total, part) => total + part.length, 0)
          while (size > STDERR_TAIL_BYTES && stderr.length > 1) size -= stderr.shift()!.length
        })
        return [transport]
      })
    }
    const headers = expandAll(config.headers, `${where}.headers`)
    if (Either.isLeft(headers)) return Either.left(headers.left)
    const url = new URL(config.url!)
    const requestInit = { headers: headers.right }
    return Either.right(() => {
      if (config.transport === "sse") return [new SSEClientTransport(url, { requestInit })]
      if (config.transport === "streamable_http") return [new StreamableHTTPClientTransport(url, { requestInit })]
      return [new StreamableHTTPClientTransport(url, { requestInit }), new SSEClientTransport(url, { requestInit })]
    })
  }

  /** Answers a server's elicitation through the approval protocol, in the session of its latest call in flight. */
  const elicit = (server: Server, message: string, schema: unknown): Promise<ElicitResult> => {
    const context = [...server.inflight].at(-1)
    if (context === undefined) return Promise.resolve({ action: "decline" })
    const defaults: Record<string, unknown> = {}
    const properties = (schema as { properties?: Record<string, { default?: unknown }> } | undefined)?.properties
    for (const [key, property] of Object.entries(properties ?? {}))
      if (property.default !== undefined) defaults[key] = property.default
    return Runtime.runPromise(runtime)(
      permission
        .assert({
          ...PermissionV2.fromToolCall(context),
          action: PermissionV2.MCP_ELICITATION_ACTION,
          resources: [server.spec.name],
          metadata: { server: server.spec.name, description: message, requestedSchema: schema, content: defaults },
        })
        .pipe(
          Effect.as<ElicitResult>({ action: "accept", content: defaults as ElicitResult["content"] }),
          Effect.catchAllCause(() => Effect.succeed<ElicitResult>({ action: "decline" })),
        ),
    )
  }

  /** Connects, lists and registers; resolves `closed` when the connection ends. */
  const start = (server: Server, closed: Deferred.Deferred<string>) =>
    Effect.gen(function* () {
      const stderr: Array<Buffer> = []
      const transports = transportOf(server.spec, stderr)
      if (Either.isLeft(transports)) return yield* Effect.fail(transports.left)
      let client: Client | undefined
      let lastError: unknown
      for (const transport of transports.right()) {
        const candidate = new Client(
          { name: "toolgate", version: VERSION },
          { capabilities: { elicitation: {} } },
        )
        candidate.setRequestHandler(ElicitRequestSchema, (request) =>
          elicit(server, request.params.message, "requestedSchema" in request.params ? request.params.requestedSchema : undefined),
        )
        const connected = yield* Effect.either(
          Effect.tryPromise(() => candidate.connect(transport, { timeout: SDK_TIMEOUT_MS })),
        )
        if (Either.isRight(connected)) {
          client = candidate
          break
        }
        lastError = connected.left.error
        yield* Effect.promise(() => candidate.close().catch(() => undefined))
      }
      if (client === undefined) {
        const tail = Buffer.concat(stderr).toString("utf8").trim()
        return yield* Effect.fail(
          `could not connect: ${lastError instanceof Error ? lastError.message : String(lastError)}${tail === "" ? "" : ` (stderr: ${tail})`}`,
        )
      }
      const connectedClient = client
      connectedClient.onclose = () => {
        const tail = Buffer.concat(stderr).toString("utf8").trim()
        Runtime.runFork(runtime)(Deferred.succeed(closed, `the server stopped${tail === "" ? "" : ` (stderr: ${tail})`}`))
      }
      server.client = connectedClient
      const refresh = Effect.gen(function* () {
        const listed = yield* listTools(connectedClient)
        yield* register(server, listed)
      })
      const semaphore = yield* Effect.makeSemaphore(1)
      server.refresh = () =>
        Runtime.runFork(runtime)(
          semaphore.withPermits(1)(refresh).pipe(
            Effect.catchAll((error) =>
              Effect.sync(() => {
                const message = error instanceof ServerError ? error.message : `tools/list failed: ${String(error)}`
                Runtime.runFork(runtime)(Deferred.succeed(closed, message))
              }),
            ),
          ),
        )
      connectedClient.setNotificationHandler(ToolListChangedNotificationSchema, () => server.refresh?.())
      yield* semaphore.withPermits(1)(refresh).pipe(
        Effect.mapError((error) => (error instanceof ServerError ? error.message : `tools/list failed: ${String(error)}`)),
      )
      setState(server, { _tag: "running" })
    })

  const stop = (server: Server) =>
    Effect.gen(function* () {
      server.refresh = undefined
      yield* withdraw(server)
      const client = server.client
      server.client = undefined
      if (client !== undefined) {
        client.onclose = () => {}
        yield* Effect.promise(() => client.close().catch(() => undefined))
      }
    })

  /** Runs a server until its scope closes: start, wait for the end, withdraw, back off, start again. */
  const supervise = (server: Server) =>
    Effect.gen(function* () {
      let attempt = 0
      for (;;) {
        setState(server, { _tag: "starting" })
        const closed = yield* Deferred.make<string>()
        const started = yield* Effect.either(start(server, closed))
        let cause: string
        if (Either.isRight(started)) {
          attempt = 0
          cause = yield* Deferred.await(closed)
        } else cause = started.left
        yield* stop(server)
        setState(server, { _tag: "failed", cause })
        const wait = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt)
        attempt++
        yield* Effect.sleep(Duration.millis(wait))
      }
    }).pipe(Effect.ensuring(Effect.suspend(() => stop(server))))

  const launch = (server: Server) =>
    Effect.gen(function* () {
      server.fiber = yield* Effect.forkIn(supervise(server), layerScope)
    })

  const statusOf = (server: Server): Status => ({
    name: server.spec.name,
    origin: server.spec.origin,
    ...(server.spec.document === undefined ? {} : { document: server.spec.document }),
    program: programOf(server.spec.config),
    state: server.state,
    tools: server.tools,
  })

  const create = (spec: Spec): Server => ({
    spec,
    state:
      spec.config.enabled === false
        ? { _tag: "disabled" }
        : spec.origin === "project"
          ? { _tag: "waiting", program: programOf(spec.config) }
          : { _tag: "starting" },
    tools: [],
    client: undefined,
    registration: undefined,
    fiber: undefined,
    inflight: new Set(),
    refresh: undefined,
  })

  for (const spec of specsOf(entries, global.config)) {
    const server = create(spec)
    servers.set(spec.name, server)
    if (server.state._tag === "starting") yield* launch(server)
  }

  yield* Effect.addFinalizer(() =>
    Effect.forEach([...servers.values()], (server) =>
      server.fiber === undefined ? Effect.void : Fiber.interrupt(server.fiber),
    ),
  )

  const add = Effect.fn("McpTools.add")(function* (name: string, serverConfig: ServerConfig) {
    if (servers.has(name))
      return yield* new ServerError({ server: name, message: `An MCP server named ${name} is already configured` })
    const decoded = yield* Schema.decodeUnknown(Config.McpServer)(serverConfig).pipe(
      Effect.mapError((error) => new ServerError({ server: name, message: `Invalid MCP server ${name}: ${error.message}` })),
    )
    const server = create({ name, config: decoded, origin: "code" })
    servers.set(name, server)
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        servers.delete(name)
        if (server.fiber !== undefined) yield* Fiber.interrupt(server.fiber)
        notify()
      }),
    )
    if (server.state._tag === "starting") yield* launch(server)
    else notify()
  })

  const approve = Effect.fn("McpTools.approve")(function* (name: string, caller: Caller) {
    const server = servers.get(name)
    if (server === undefined)
      return yield* new ServerError({ server: name, message: `No MCP server named ${name} is configured` })
    if (server.state._tag !== "waiting") return
    const { config: serverConfig } = server.spec
    yield* ProjectProgram.approve(permission, {
      sessionID: caller.sessionID,
      agent: caller.agent,
      kind: "MCP server",
      name,
      document: server.spec.document ?? "code",
      program:
        serverConfig.command !== undefined
          ? { command: serverConfig.command }
          : { url: programOf(serverConfig) },
    })
    if (server.state._tag !== "waiting") return
    server.state = { _tag: "starting" }
    yield* launch(server)
  })

  return Service.of({
    servers: () => Effect.sync(() => [...servers.values()].map(statusOf)),
    changes: Stream.fromPubSub(hub),
    add,
    approve,
  })
})

/**
 * The service as a Location layer.
 *
 * @internal
 */
export const layer = Layer.scoped(Service, make)
