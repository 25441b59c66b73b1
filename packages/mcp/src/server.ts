/**
 * An MCP server exposing one Location's tools. `tools/list` comes from a fresh materialization under the configured
 * agent's rules, `tools/call` settles through the registry (our validation, permissions and bounding), and a change
 * of the catalogue — a registration, or (with `run`) an edited configuration file — is announced with
 * `notifications/tools/list_changed`, driven by the registry's change stream (no polling). Permission asks and the
 * model's questions go to the user through elicitation when the client supports it (asks as `Approvals` prompts,
 * answered with their digest through channel `mcp`; a form is withdrawn when the ask is answered elsewhere or
 * expires); otherwise asks are refused with
 * a message saying why — an ask is never silently allowed — and questions are dismissed. A call with a progress
 * token reports the tool's progress and, while it waits (for a person or a long command), a heartbeat every
 * `heartbeat` (1 s by default). Every received message goes through `McpTransport.guard` (malformed messages with an
 * id are answered with a JSON-RPC error); the stdio transport limits one message to `McpTransport.MAX_MESSAGE_BYTES`.
 * A client that did not declare elicitation does not see the `question` tool. Configuration watching lives in
 * `internal/watch.ts`, the answering of asks and questions in `internal/asks.ts`.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import {
  AgentV2,
  Approvals,
  Core,
  Database,
  EventV2,
  PermissionV2,
  QuestionV2,
  SessionV2,
  SettleInput,
  ToolRegistry,
} from "@toolgate/core"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Asks from "./internal/asks.js"
import * as Call from "./internal/call.js"
import { type Generation, materialize, release } from "./internal/call.js"
import * as Package from "./internal/package.js"
import { watchConfiguration } from "./internal/watch.js"
import * as Tools from "./tools.js"
import * as McpTransport from "./transport.js"

export {
  /**
   * Feedback given to the tool when the user declines or cancels the elicitation.
   *
   * @since 0.1.0
   */
  DECLINED_IN_CLIENT,
  /**
   * Feedback given to the tool when the client cannot answer permission prompts.
   *
   * @since 0.1.0
   */
  NO_PROMPT,
} from "./prompts.js"
export {
  /**
   * A settlement as an MCP `tools/call` result.
   *
   * @since 0.1.0
   */
  toCallToolResult,
  /**
   * Tool content as MCP content.
   *
   * @since 0.1.0
   */
  toMcpContent,
  /**
   * A tool definition as an MCP tool.
   *
   * @since 0.1.0
   */
  toMcpTool,
} from "./tools.js"

/**
 * The server's name in the MCP handshake.
 *
 * @since 0.1.0
 * @category constants
 */
export const NAME = "toolgate"
/**
 * The server's version in the MCP handshake and `toolgate-mcp --version`: the version in `@toolgate/mcp`'s own
 * package.json, found by the package's name (from the sources, `dist/` and the bundled bin alike).
 *
 * @since 0.1.0
 * @category constants
 */
export const VERSION: string = Package.VERSION

/**
 * How often a running call with a progress token hears from the server when the tool itself says nothing
 * (`notifications/progress` with a `running (Ns)` or `waiting for permission: <action>` message), unless
 * `heartbeat` says otherwise: often enough for a client whose request timeout resets on progress, down to a 2 s
 * timeout.
 *
 * @since 0.3.0
 * @category constants
 */
export const DEFAULT_HEARTBEAT: Duration.Duration = Package.DEFAULT_HEARTBEAT

/**
 * Options of `serve`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServeOptions {
  /** The transport (default: stdio). */
  readonly transport?: Transport
  /** The agent whose rules filter the catalogue and answer asks (default: the Location's default agent). */
  readonly agent?: string
  /** How long a burst of catalogue changes must settle before one `list_changed` is sent (default 50 ms). */
  readonly debounce?: Duration.DurationInput
  /** How often a running call with a progress token hears from us when the tool says nothing (default 1 s). */
  readonly heartbeat?: Duration.DurationInput
  /**
   * The limit on one received message in bytes (default `McpTransport.MAX_MESSAGE_BYTES`, 64 MiB); only for the
   * default stdio transport (a transport you pass frames its own messages).
   */
  readonly maxMessageBytes?: number
}

/**
 * The services `serve` needs: one Location as `Core.layerLocation` provides it.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = Call.Requirements

/**
 * The agent named with `--agent` / `options.agent` does not exist in the Location.
 *
 * @since 0.2.0
 * @category errors
 */
export class UnknownAgentError extends Schema.TaggedError<UnknownAgentError>()("McpServer.UnknownAgentError", {
  agent: Schema.String,
  available: Schema.Array(Schema.String),
}) {
  override get message(): string {
    return `unknown agent "${this.agent}"; the agents of this directory are: ${this.available.join(", ")}`
  }
}

/** The protocol side of one connection: the MCP server and what every generation shares. */
interface Connection {
  readonly server: Server
  current: Generation
  readonly changed: Queue.Queue<void>
  /** What the client last saw of the catalogue (or was last told changed), for `list_changed`. */
  announced: string
}

/**
 * Prepares a generation in the current Location: checks the agent, creates the session every call settles in,
 * routes its asks and questions to the client and feeds registry changes to `changed`.
 */
const prepare = (
  server: Server,
  changed: Queue.Queue<void>,
  agent: string | undefined,
): Effect.Effect<Generation, UnknownAgentError, Requirements | Scope.Scope> =>
  Effect.gen(function* () {
    const agents = yield* AgentV2.Service
    const events = yield* EventV2.Service
    if (agent !== undefined && (yield* agents.get(agent)) === undefined) {
      const available = (yield* agents.all()).filter((info) => !info.hidden).map((info) => info.id)
      return yield* new UnknownAgentError({ agent, available })
    }
    const selection = yield* agents.select(agent)
    const session = yield* (yield* SessionV2.Service).create({ agent: selection.id })
    const waiting = new Map<string, string>()
    const notes: Asks.Notes = new Map()
    const calls = new Map<string, string>()
    /** Per pending prompt: done once it is answered (through any channel) or expires; its form is then withdrawn. */
    const settled = new Map<string, Deferred.Deferred<void>>()

    const onPrompt = (event: Approvals.PromptEvent): Effect.Effect<void, never, Scope.Scope | Approvals.Service> => {
      if (event._tag === "Asked") {
        const request = event.prompt.request
        const callID = request.source?.callID
        if (callID !== undefined) {
          waiting.set(callID, request.action)
          calls.set(request.id, callID)
        }
        const done = Deferred.unsafeMake<void>(FiberId.none)
        settled.set(request.id, done)
        return Effect.asVoid(
          Effect.forkScoped(Asks.answerPermission(server, event.prompt, notes, Deferred.await(done))),
        )
      }
      const callID = calls.get(event.requestID)
      if (callID !== undefined) waiting.delete(callID)
      calls.delete(event.requestID)
      const done = settled.get(event.requestID)
      settled.delete(event.requestID)
      return done === undefined ? Effect.void : Deferred.succeed(done, undefined)
    }
    const approvals = yield* Approvals.Service
    yield* Effect.forkScoped(Stream.runForEach(approvals.prompts({ sessionID: session.id }), onPrompt))

    const asked = yield* events.queue(QuestionV2.Event.Asked)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(asked), (envelope) =>
          envelope.data.sessionID === session.id
            ? Effect.asVoid(Effect.forkScoped(Asks.answerQuestion(server, envelope.data)))
            : Effect.void,
        ),
      ),
    )
    const registry = yield* ToolRegistry.Service
    yield* Effect.forkScoped(Stream.runForEach(registry.changes, () => Queue.offer(changed, undefined)))

    const context = yield* Effect.context<Requirements>()
    return {
      context,
      identity: SettleInput.identity({ sessionID: session.id, agent: selection.id }),
      rules: selection.info?.permissions ?? PermissionV2.denyAll,
      waiting,
      notes,
      inflight: 0,
      retired: false,
    } satisfies Generation as Generation
  })

const listing = (turn: ToolRegistry.Materialization) =>
  turn.definitions.map((definition) => Tools.toMcpTool(definition))

const fingerprint = (generation: Generation, server: Server) =>
  Effect.map(materialize(generation, server), (turn) => JSON.stringify(listing(turn)))

/** A failure the SDK reports (a refused message, a response to an unknown request, a transport error) in one line. */
const reported = (error: Error): string => `McpServer: ${error.message.replace(/\s+/g, " ").trim()}`

/** Creates the MCP server and its handlers; they always answer from `connection.current`. */
const open = <E, R>(
  first: (server: Server, changed: Queue.Queue<void>) => Effect.Effect<Generation, E, R>,
  options: ServeOptions,
) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const run = <A>(effect: Effect.Effect<A>, signal?: AbortSignal) =>
      Runtime.runPromise(runtime)(effect, signal === undefined ? undefined : { signal })
    const server = new Server({ name: NAME, version: VERSION }, { capabilities: { tools: { listChanged: true } } })
    server.onerror = (error) => Runtime.runFork(runtime)(Effect.logWarning(reported(error)))
    const changed = yield* Queue.unbounded<void>()
    const current = yield* first(server, changed)
    const connection: Connection = { server, changed, current, announced: yield* fingerprint(current, server) }
    const heartbeat = Duration.decode(options.heartbeat ?? DEFAULT_HEARTBEAT)

    server.setRequestHandler(ListToolsRequestSchema, () =>
      run(
        Effect.map(materialize(connection.current, server), (turn) => {
          const tools = listing(turn)
          connection.announced = JSON.stringify(tools)
          return { tools }
        }),
      ),
    )

    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      Call.call(connection.current, server, request.params, extra, heartbeat, run),
    )

    // One list_changed per burst of changes, and only when what `tools/list` returns did change.
    const debounce = options.debounce ?? Duration.millis(50)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          yield* Queue.take(changed)
          yield* Effect.sleep(debounce)
          yield* Queue.takeAll(changed)
          const now = yield* fingerprint(connection.current, server)
          if (now === connection.announced) return
          connection.announced = now
          yield* Effect.promise(() => server.sendToolListChanged().catch(() => undefined))
        }),
      ),
    )
    return connection
  })

/**
 * Connects `connection.server` to `transport` (stdio by default), every message checked by `McpTransport.guard`,
 * and waits until the client disconnects.
 */
const connect = (connection: Connection, options: ServeOptions) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const closed = yield* Deferred.make<void>()
    connection.server.onclose = () => Runtime.runSync(runtime)(Deferred.succeed(closed, undefined))
    const transport = McpTransport.guard(
      options.transport ??
        McpTransport.stdio(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
    )
    yield* Effect.promise(() => connection.server.connect(transport))
    yield* Effect.addFinalizer(() => Effect.promise(() => connection.server.close().catch(() => undefined)))
    yield* Deferred.await(closed)
  })

/**
 * Serves the current Location on `options.transport` until the client disconnects. All calls settle in one session
 * created for the configured agent; an unknown agent fails with `UnknownAgentError` before anything is served.
 *
 * @since 0.1.0
 * @category utilities
 */
export const serve = (options: ServeOptions = {}): Effect.Effect<void, UnknownAgentError, Requirements | Scope.Scope> =>
  Effect.gen(function* () {
    const connection = yield* open((server, changed) => prepare(server, changed, options.agent), options)
    yield* connect(connection, options)
  })

/**
 * A start-up failure in one line, with its causes and SQLite codes (for the command-line entries).
 *
 * @since 0.2.0
 * @category utilities
 */
export const describeFailure = (error: unknown): string => Database.describe(error)

/**
 * Options of `run`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions extends Omit<ServeOptions, "transport"> {
  /** The Location directory. */
  readonly directory: string
  /** The data directory (default `$XDG_DATA_HOME/toolgate`). */
  readonly data?: string
  /** Rebuild the Location when one of its configuration files changes (default true). */
  readonly watch?: boolean
}

/** Logs go to stderr: stdout is the protocol channel. */
const stderrLogger = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))

/**
 * Why `run` could not start: the Location could not be built, or the agent does not exist.
 *
 * @since 0.1.0
 * @category errors
 */
export type RunError =
  | Layer.Layer.Error<ReturnType<typeof Core.layerLocation>>
  | Layer.Layer.Error<ReturnType<typeof Core.layerProcess>>
  | UnknownAgentError

/**
 * Serves `directory` over stdio with its own process services until the client disconnects. stdout belongs to the
 * protocol from here on: `console.log` is redirected to stderr and logs go to stderr. With `watch` (the default) an
 * edited `toolgate.json`, `toolgate.jsonc` or `.toolgate/` rebuilds the Location: new calls use the new rules,
 * calls in flight finish on the old ones, and `list_changed` is sent when the catalogue changed. A configuration
 * that no longer loads keeps the previous one (with a warning on stderr). `McpCommand.check` validates the
 * command-line form of these options.
 *
 * @since 0.1.0
 * @category utilities
 */
export const run = (options: RunOptions): Effect.Effect<void, RunError> =>
  Effect.gen(function* () {
    yield* Effect.sync(() => {
      console.log = console.error
    })
    const processContext = yield* Layer.build(
      Core.layerProcess(options.data === undefined ? {} : { data: options.data }),
    )
    const location = Core.layerLocation({ directory: path.resolve(options.directory) })
    const reloads = yield* Queue.sliding<void>(1)

    const build = (server: Server, changed: Queue.Queue<void>) =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const built = yield* Effect.exit(
          Effect.gen(function* () {
            const context = yield* Layer.buildWithScope(location, scope)
            const generation = yield* Effect.provide(
              Effect.gen(function* () {
                const prepared = yield* prepare(server, changed, options.agent)
                if (options.watch !== false) yield* watchConfiguration(() => Queue.unsafeOffer(reloads, undefined))
                return prepared
              }),
              Context.merge(context, Context.add(processContext, Scope.Scope, scope)),
            )
            return { ...generation, close: Scope.close(scope, Exit.void) } satisfies Generation as Generation
          }).pipe(Effect.provide(processContext)),
        )
        if (Exit.isFailure(built)) yield* Scope.close(scope, Exit.void)
        return yield* built
      })

    const connection = yield* open(build, options)
    // The serving generation's Location closes with the server (its finalizers flush the journal and stop its
    // fibers); earlier generations were closed when a reload retired them.
    yield* Effect.addFinalizer(() => Effect.suspend(() => connection.current.close ?? Effect.void))
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          yield* Queue.take(reloads)
          yield* Effect.sleep(options.debounce ?? Duration.millis(50))
          const next = yield* Effect.either(build(connection.server, connection.changed))
          if (next._tag === "Left") {
            yield* Effect.logWarning(`configuration not reloaded: ${next.left.message}`)
            return
          }
          const previous = connection.current
          connection.current = next.right
          previous.retired = true
          yield* release(previous)
          yield* Queue.offer(connection.changed, undefined)
        }),
      ),
    )
    yield* connect(connection, options)
  }).pipe(Effect.scoped, Effect.provide(stderrLogger))
