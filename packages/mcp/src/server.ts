/**
 * An MCP server exposing one Location's tools. `tools/list` comes from a fresh materialization under the configured
 * agent's rules, `tools/call` settles through the registry (our validation, permissions and bounding), and a change
 * of the catalogue — a registration, or (with `run`) an edited configuration file — is announced with
 * `notifications/tools/list_changed`, driven by the registry's change stream (no polling). Permission asks and the
 * model's questions go to the user through elicitation when the client supports it; otherwise asks are refused with
 * a message saying why — an ask is never silently allowed — and questions are dismissed. A call with a progress
 * token reports the tool's progress and, while it waits (for a person or a long command), a heartbeat.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js"
import {
  AgentV2,
  Config,
  Core,
  Database,
  EventV2,
  Global,
  Identifier,
  Location,
  PermissionV2,
  QuestionV2,
  Runner,
  SessionV2,
  Tool,
  ToolRegistry,
} from "@toolgate/core"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Prompts from "./prompts.js"
import * as Tools from "./tools.js"

export {
  /**
   * The prompt shown to the user for one permission request.
   *
   * @since 0.1.0
   */
  askMessage,
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
 */
export const NAME = "toolgate"
/**
 * The server's version in the MCP handshake.
 *
 * @since 0.1.0
 */
export const VERSION = "0.2.0"

/**
 * Options of `serve`.
 *
 * @since 0.1.0
 */
export interface ServeOptions {
  /** The transport (default: stdio). */
  readonly transport?: Transport
  /** The agent whose rules filter the catalogue and answer asks (default: the Location's default agent). */
  readonly agent?: string
  /** How long a burst of catalogue changes must settle before one `list_changed` is sent (default 50 ms). */
  readonly debounce?: Duration.DurationInput
  /** How often a running call with a progress token hears from us when the tool says nothing (default 5 s). */
  readonly heartbeat?: Duration.DurationInput
}

/**
 * The services `serve` needs: one Location as `Core.layerLocation` provides it.
 *
 * @since 0.1.0
 */
export type Requirements =
  | ToolRegistry.Service
  | AgentV2.Service
  | SessionV2.Service
  | PermissionV2.Service
  | QuestionV2.Service
  | EventV2.Service

/**
 * The agent named with `--agent` / `options.agent` does not exist in the Location.
 *
 * @since 0.2.0
 */
export class UnknownAgentError extends Schema.TaggedError<UnknownAgentError>()("McpServer.UnknownAgentError", {
  agent: Schema.String,
  available: Schema.Array(Schema.String),
}) {
  override get message(): string {
    return `unknown agent "${this.agent}"; the agents of this directory are: ${this.available.join(", ")}`
  }
}

const failureText = (cause: Cause.Cause<unknown>): string => {
  if (Tool.isUserStop(cause) || Cause.isInterruptedOnly(cause)) return Runner.INTERRUPTED
  const failure = Cause.squash(cause)
  return `Tool execution failed: ${failure instanceof Error ? failure.message : Tools.textOf(failure)}`
}

/** One build of the Location the server answers from; `run` replaces it when configuration files change. */
interface Generation {
  readonly context: Context.Context<Requirements>
  readonly agent: string
  readonly sessionID: string
  readonly rules: ReadonlyArray<ToolRegistry.VisibilityRule>
  /** The action a call (by call id) waits for a person on, while it does. */
  readonly waiting: Map<string, string>
  inflight: number
  retired: boolean
  /** Closes the generation's own scope (generations built by `run`); `serve`'s is closed by its caller. */
  readonly close?: Effect.Effect<void>
}

/** The protocol side of one connection: the MCP server and what every generation shares. */
interface Connection {
  readonly server: Server
  current: Generation
  readonly changed: Queue.Queue<void>
}

const answerPermission = (server: Server, request: PermissionV2.Request) =>
  Effect.gen(function* () {
    const permission = yield* PermissionV2.Service
    const reply = (answer: { readonly reply: PermissionV2.Reply; readonly message?: string }) =>
      Effect.ignore(permission.reply({ requestID: request.id, ...answer }))
    if (server.getClientCapabilities()?.elicitation === undefined)
      return yield* reply({ reply: "reject", message: Prompts.NO_PROMPT })
    const elicited = yield* Effect.tryPromise(() =>
      server.elicitInput({ message: Prompts.askMessage(request), requestedSchema: Prompts.permissionSchema }),
    ).pipe(Effect.either)
    if (elicited._tag === "Left")
      return yield* reply({ reply: "reject", message: `the permission prompt failed: ${elicited.left.error}` })
    return yield* reply(Prompts.permissionReply(elicited.right))
  })

const answerQuestion = (server: Server, request: QuestionV2.Request) =>
  Effect.gen(function* () {
    const questions = yield* QuestionV2.Service
    if (server.getClientCapabilities()?.elicitation === undefined)
      return yield* Effect.ignore(questions.reject(request.id))
    const elicited = yield* Effect.tryPromise(() =>
      server.elicitInput({
        message: Prompts.questionMessage(request),
        requestedSchema: Prompts.questionSchema(request),
      }),
    ).pipe(Effect.either)
    const answers = elicited._tag === "Right" ? Prompts.questionAnswers(request, elicited.right) : undefined
    return yield* Effect.ignore(
      answers === undefined ? questions.reject(request.id) : questions.reply({ requestID: request.id, answers }),
    )
  })

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
    const calls = new Map<string, string>()

    const asked = yield* events.queue(PermissionV2.Event.Asked, PermissionV2.Event.Replied, QuestionV2.Event.Asked)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(
          Queue.take(asked),
          (envelope): Effect.Effect<void, never, Scope.Scope | PermissionV2.Service | QuestionV2.Service> => {
            switch (envelope.type) {
              case "permission.v2.asked": {
                const request = envelope.data
                if (request.sessionID !== session.id) return Effect.void
                const callID = request.source?.callID
                if (callID !== undefined) {
                  waiting.set(callID, request.action)
                  calls.set(request.id, callID)
                }
                return Effect.asVoid(Effect.forkScoped(answerPermission(server, request)))
              }
              case "permission.v2.replied": {
                const callID = calls.get(envelope.data.requestID)
                if (callID !== undefined) waiting.delete(callID)
                calls.delete(envelope.data.requestID)
                return Effect.void
              }
              case "question.v2.asked":
                return envelope.data.sessionID === session.id
                  ? Effect.asVoid(Effect.forkScoped(answerQuestion(server, envelope.data)))
                  : Effect.void
            }
          },
        ),
      ),
    )
    const registry = yield* ToolRegistry.Service
    yield* Effect.forkScoped(Stream.runForEach(registry.changes, () => Queue.offer(changed, undefined)))

    const context = yield* Effect.context<Requirements>()
    return {
      context,
      agent: selection.id,
      sessionID: session.id,
      rules: selection.info?.permissions ?? PermissionV2.denyAll,
      waiting,
      inflight: 0,
      retired: false,
    } satisfies Generation as Generation
  })

const materialize = (generation: Generation) =>
  Effect.provide(
    Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize(generation.rules)),
    generation.context,
  )

const fingerprint = (generation: Generation) =>
  Effect.map(materialize(generation), (turn) =>
    JSON.stringify(turn.definitions.map((definition) => Tools.toMcpTool(definition))),
  )

/** Ends a retired generation once its last call has settled. */
const release = (generation: Generation): Effect.Effect<void> =>
  generation.retired && generation.inflight === 0 && generation.close !== undefined ? generation.close : Effect.void

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
    const changed = yield* Queue.unbounded<void>()
    const connection: Connection = { server, changed, current: yield* first(server, changed) }
    const heartbeat = Duration.decode(options.heartbeat ?? Duration.seconds(5))

    server.setRequestHandler(ListToolsRequestSchema, () =>
      run(Effect.map(materialize(connection.current), (turn) => ({ tools: turn.definitions.map(Tools.toMcpTool) }))),
    )

    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const generation = connection.current
      const callID = Identifier.create("call")
      const token = extra._meta?.progressToken
      let sent = 0
      let last = Date.now()
      const notify = (update: Tool.Progress) => {
        if (token === undefined) return
        sent = Math.max(sent + 1, update.progress ?? 0)
        last = Date.now()
        const notification: ServerNotification = {
          method: "notifications/progress",
          params: {
            progressToken: token,
            progress: sent,
            ...(update.total === undefined ? {} : { total: update.total }),
            message: update.message,
          },
        }
        extra.sendNotification(notification).catch(() => undefined)
      }
      const started = Date.now()
      const beat = Effect.sync(() => {
        if (Date.now() - last < Duration.toMillis(heartbeat) * 0.9) return
        const action = generation.waiting.get(callID)
        const seconds = Math.round((Date.now() - started) / 1000)
        notify({ message: action === undefined ? `running (${seconds}s)` : `waiting for permission: ${action}` })
      })
      const settle = Effect.flatMap(materialize(generation), (turn) =>
        turn.settle({
          sessionID: generation.sessionID,
          agent: generation.agent,
          assistantMessageID: Identifier.create("msg"),
          call: { id: callID, name: request.params.name, input: request.params.arguments ?? {} },
          ...(token === undefined ? {} : { progress: notify }),
        }),
      )
      // The heartbeat fiber lives in the call's own scope, so it ends (is interrupted) with the call.
      const withHeartbeat =
        token === undefined
          ? settle
          : Effect.scoped(
              Effect.zipRight(
                Effect.forkScoped(
                  Effect.repeat(beat, Schedule.spaced(Duration.millis(Duration.toMillis(heartbeat) / 4))),
                ),
                settle,
              ),
            )
      return run(
        Effect.suspend(() => {
          generation.inflight++
          return withHeartbeat
        }).pipe(
          Effect.exit,
          Effect.map((exit): CallToolResult =>
            Exit.isSuccess(exit)
              ? Tools.toCallToolResult(exit.value)
              : { content: [{ type: "text", text: failureText(exit.cause) }], isError: true },
          ),
          Effect.ensuring(
            Effect.suspend(() => {
              generation.inflight--
              return release(generation)
            }),
          ),
        ),
        extra.signal,
      )
    })

    // One list_changed per burst of changes, and only when what `tools/list` returns did change.
    let announced = yield* fingerprint(connection.current)
    const debounce = options.debounce ?? Duration.millis(50)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          yield* Queue.take(changed)
          yield* Effect.sleep(debounce)
          yield* Queue.takeAll(changed)
          const now = yield* fingerprint(connection.current)
          if (now === announced) return
          announced = now
          yield* Effect.promise(() => server.sendToolListChanged().catch(() => undefined))
        }),
      ),
    )
    return connection
  })

/** Connects `connection.server` to `transport` (stdio by default) and waits until the client disconnects. */
const connect = (connection: Connection, transport: Transport | undefined) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const closed = yield* Deferred.make<void>()
    connection.server.onclose = () => Runtime.runSync(runtime)(Deferred.succeed(closed, undefined))
    let chosen = transport
    if (chosen === undefined) {
      chosen = new StdioServerTransport()
      // The stdio transport does not notice the client closing stdin: treat end of input as disconnection.
      process.stdin.once("end", () => void connection.server.close().catch(() => undefined))
    }
    const connected = chosen
    yield* Effect.promise(() => connection.server.connect(connected))
    yield* Effect.addFinalizer(() => Effect.promise(() => connection.server.close().catch(() => undefined)))
    yield* Deferred.await(closed)
  })

/**
 * Serves the current Location on `options.transport` until the client disconnects. All calls settle in one session
 * created for the configured agent; an unknown agent fails with `UnknownAgentError` before anything is served.
 *
 * @since 0.1.0
 */
export const serve = (options: ServeOptions = {}): Effect.Effect<void, UnknownAgentError, Requirements | Scope.Scope> =>
  Effect.gen(function* () {
    const connection = yield* open((server, changed) => prepare(server, changed, options.agent), options)
    yield* connect(connection, options.transport)
  })

/**
 * A start-up failure in one line, with its causes and SQLite codes (for the command-line entries).
 *
 * @since 0.2.0
 */
export const describeFailure = (error: unknown): string => Database.describe(error)

/**
 * Options of `run`.
 *
 * @since 0.1.0
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

/** The configuration files and folders a Location reads, as directories to watch (recursively for `.toolgate`). */
const watchedPaths = Effect.gen(function* () {
  const location = yield* Location.Service
  const global = yield* Global.Service
  const directories = [...Config.projectChain(location), global.config]
  return directories.flatMap((directory) => {
    const folder = path.join(directory, Config.DIRECTORY_NAME)
    return [
      { path: directory, recursive: false },
      ...(fs.existsSync(folder) ? [{ path: folder, recursive: true }] : []),
    ]
  })
})

const isConfigChange = (directory: string, file: string | null): boolean =>
  file === null ||
  path.basename(directory) === Config.DIRECTORY_NAME ||
  (Config.FILE_NAMES as ReadonlyArray<string>).includes(file) ||
  file === Config.DIRECTORY_NAME

/** Calls `onChange` for every change to a configuration file of the Location, until the scope closes. */
const watchConfiguration = (onChange: () => void) =>
  Effect.gen(function* () {
    for (const entry of yield* watchedPaths) {
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          try {
            return fs.watch(entry.path, { recursive: entry.recursive, persistent: false }, (_, file) => {
              if (isConfigChange(entry.path, file === null ? null : String(file))) onChange()
            })
          } catch {
            return undefined
          }
        }),
        (watcher) => Effect.sync(() => watcher?.close()),
      )
    }
  })

/**
 * Serves `directory` over stdio with its own process services until the client disconnects. stdout belongs to the
 * protocol from here on: `console.log` is redirected to stderr and logs go to stderr. With `watch` (the default) an
 * edited `toolgate.json`, `toolgate.jsonc` or `.toolgate/` rebuilds the Location: new calls use the new rules,
 * calls in flight finish on the old ones, and `list_changed` is sent when the catalogue changed. A configuration
 * that no longer loads keeps the previous one (with a warning on stderr).
 */
/**
 * Why `run` could not start: the Location could not be built, or the agent does not exist.
 *
 * @since 0.1.0
 */
export type RunError =
  | Layer.Layer.Error<ReturnType<typeof Core.layerLocation>>
  | Layer.Layer.Error<ReturnType<typeof Core.layerProcess>>
  | UnknownAgentError

/** @since 0.1.0 */
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
    yield* connect(connection, undefined)
  }).pipe(Effect.scoped, Effect.provide(stderrLogger))
