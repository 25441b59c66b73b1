/**
 * An MCP server exposing one Location's tools. `tools/list` comes from a fresh materialization under the configured
 * agent's rules, `tools/call` settles through the registry (our validation, permissions and bounding), and a
 * registration change is announced with `notifications/tools/list_changed` (polled, debounced). Permission asks go
 * to the client through elicitation when it supports it; otherwise they are refused with a message saying why —
 * an ask is never silently allowed.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  type ElicitRequestFormParams,
  ListToolsRequestSchema,
  type Tool as McpTool,
} from "@modelcontextprotocol/sdk/types.js"
import {
  AgentV2,
  Core,
  EventV2,
  Identifier,
  type LLM,
  PermissionV2,
  QuestionV2,
  Runner,
  SessionV2,
  Tool,
  ToolRegistry,
} from "@toolgate/core"
import { Cause, Deferred, Duration, Effect, Exit, Layer, Logger, Queue, Runtime, Schedule, type Scope } from "effect"

/** The server's name in the MCP handshake. */
export const NAME = "toolgate"
/** The server's version in the MCP handshake. */
export const VERSION = "0.1.0"

/** Feedback given to the tool when an ask arrives and the client cannot answer permission prompts. */
export const NO_PROMPT =
  "this MCP client cannot answer permission prompts (it does not support elicitation); allow the action in the configured permission rules to use it"
/** Feedback given to the tool when the user declines or cancels the elicitation. */
export const DECLINED_IN_CLIENT = "declined in the MCP client"

/** Options of `serve`. */
export interface ServeOptions {
  /** The transport (default: stdio). */
  readonly transport?: Transport
  /** The agent whose rules filter the catalogue and answer asks (default: the Location's default agent). */
  readonly agent?: string
  /** How often registrations are compared for `list_changed` (default 250 ms). */
  readonly pollInterval?: Duration.DurationInput
  /** How long a change must settle before one `list_changed` is sent (default 100 ms). */
  readonly debounce?: Duration.DurationInput
}

/** The services `serve` needs: one Location as `Core.layerLocation` provides it. */
export type Requirements =
  | ToolRegistry.Service
  | AgentV2.Service
  | SessionV2.Service
  | PermissionV2.Service
  | QuestionV2.Service
  | EventV2.Service

/** A definition as an MCP tool (input schema only: our structured output travels as `structuredContent`). */
export const toMcpTool = (definition: LLM.ToolDefinition): McpTool => ({
  name: definition.name,
  description: definition.description,
  inputSchema: { type: "object", ...definition.inputSchema } as McpTool["inputSchema"],
})

type McpContent = CallToolResult["content"][number]

const base64Of = (uri: string): string => uri.slice(uri.indexOf(",") + 1)

/** Tool content as MCP content: text stays text, images and audio keep their kind, other files become resources. */
export const toMcpContent = (part: LLM.ToolContent): McpContent => {
  if (part.type === "text") return { type: "text", text: part.text }
  const data = base64Of(part.uri)
  if (part.mime.startsWith("image/")) return { type: "image", data, mimeType: part.mime }
  if (part.mime.startsWith("audio/")) return { type: "audio", data, mimeType: part.mime }
  return {
    type: "resource",
    resource: {
      uri: `toolgate:file/${encodeURIComponent(part.name ?? "attachment")}`,
      mimeType: part.mime,
      blob: data,
    },
  }
}

const textOf = (value: unknown): string =>
  typeof value === "string" ? value : (JSON.stringify(value) ?? String(value))

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A settlement as an MCP result. Errors are `isError` text; an object structured output is `structuredContent`
 * (and, when the tool produced no content, also its JSON text, as MCP asks for compatibility).
 */
export const toCallToolResult = (settlement: ToolRegistry.Settlement): CallToolResult => {
  const { result, output } = settlement
  if (result.type === "error") return { content: [{ type: "text", text: textOf(result.value) }], isError: true }
  const structured = output?.structured
  const content: Array<McpContent> =
    output !== undefined && output.content.length > 0
      ? output.content.map(toMcpContent)
      : [{ type: "text", text: result.type === "json" ? textOf(result.value) : textOf(structured) }]
  return isRecord(structured) ? { content, structuredContent: structured } : { content }
}

const failureText = (cause: Cause.Cause<unknown>): string => {
  if (Tool.isUserStop(cause) || Cause.isInterruptedOnly(cause)) return Runner.INTERRUPTED
  const failure = Cause.squash(cause)
  return `Tool execution failed: ${failure instanceof Error ? failure.message : textOf(failure)}`
}

const requestedSchema: ElicitRequestFormParams["requestedSchema"] = {
  type: "object",
  properties: {
    decision: {
      type: "string",
      title: "Decision",
      enum: ["once", "always", "reject"],
      enumNames: ["Allow once", "Always allow", "Reject"],
    },
    feedback: { type: "string", title: "Feedback for the model (when rejecting)" },
  },
  required: ["decision"],
}

/**
 * The prompt shown to the user for one permission request: the action and every resource in full, then what
 * "Always allow" will save and where (so the user sees its breadth before choosing).
 */
export const askMessage = (request: PermissionV2.Request): string =>
  [`Allow ${request.action} on ${request.resources.join(", ")}?`, ...PermissionV2.describeAlways(request.always)].join(
    "\n",
  )

/**
 * Serves the current Location on `options.transport` until the client disconnects. All calls settle in one session
 * created for the configured agent.
 */
export const serve = (options: ServeOptions = {}): Effect.Effect<void, never, Requirements | Scope.Scope> =>
  Effect.gen(function* () {
    const registry = yield* ToolRegistry.Service
    const agents = yield* AgentV2.Service
    const permission = yield* PermissionV2.Service
    const questions = yield* QuestionV2.Service
    const events = yield* EventV2.Service
    const selection = yield* agents.select(options.agent)
    const rules: ReadonlyArray<ToolRegistry.VisibilityRule> = selection.info?.permissions ?? PermissionV2.denyAll
    const session = yield* (yield* SessionV2.Service).create({ agent: selection.id })
    const runtime = yield* Effect.runtime<never>()
    const run = <A>(effect: Effect.Effect<A>, signal?: AbortSignal) =>
      Runtime.runPromise(runtime)(effect, signal === undefined ? undefined : { signal })

    const server = new Server({ name: NAME, version: VERSION }, { capabilities: { tools: { listChanged: true } } })
    const closed = yield* Deferred.make<void>()
    server.onclose = () => Runtime.runSync(runtime)(Deferred.succeed(closed, undefined))

    const materialize = registry.materialize(rules)

    server.setRequestHandler(ListToolsRequestSchema, () =>
      run(Effect.map(materialize, (turn) => ({ tools: turn.definitions.map(toMcpTool) }))),
    )

    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      run(
        Effect.flatMap(materialize, (turn) =>
          turn.settle({
            sessionID: session.id,
            agent: selection.id,
            assistantMessageID: Identifier.create("msg"),
            call: { id: Identifier.create("call"), name: request.params.name, input: request.params.arguments ?? {} },
          }),
        ).pipe(
          Effect.exit,
          Effect.map((exit): CallToolResult =>
            Exit.isSuccess(exit)
              ? toCallToolResult(exit.value)
              : { content: [{ type: "text", text: failureText(exit.cause) }], isError: true },
          ),
        ),
        extra.signal,
      ),
    )

    const reply = (requestID: PermissionV2.ID, decision: PermissionV2.Reply, message?: string) =>
      Effect.ignore(permission.reply({ requestID, reply: decision, ...(message === undefined ? {} : { message }) }))

    /** Answers one ask through elicitation, or refuses it with a reason. */
    const answer = (request: PermissionV2.Request) =>
      Effect.gen(function* () {
        if (server.getClientCapabilities()?.elicitation === undefined)
          return yield* reply(request.id, "reject", NO_PROMPT)
        const elicited = yield* Effect.tryPromise(() =>
          server.elicitInput({ message: askMessage(request), requestedSchema }),
        ).pipe(Effect.either)
        if (elicited._tag === "Left")
          return yield* reply(request.id, "reject", `the permission prompt failed: ${elicited.left.error}`)
        const result = elicited.right
        if (result.action !== "accept") return yield* reply(request.id, "reject", DECLINED_IN_CLIENT)
        const decision = result.content?.["decision"]
        const feedback = result.content?.["feedback"]
        if (decision === "once" || decision === "always") return yield* reply(request.id, decision)
        return yield* reply(
          request.id,
          "reject",
          typeof feedback === "string" && feedback !== "" ? feedback : DECLINED_IN_CLIENT,
        )
      })

    // Asks of our session go to the client; questions cannot be answered over MCP and are dismissed.
    const asked = yield* events.queue()
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(asked), (envelope) => {
          if (envelope.type === PermissionV2.Event.Asked.type) {
            const request = envelope.data as PermissionV2.Request
            return request.sessionID === session.id ? Effect.forkScoped(answer(request)) : Effect.void
          }
          if (envelope.type === QuestionV2.Event.Asked.type) {
            const request = envelope.data as QuestionV2.Request
            return request.sessionID === session.id ? Effect.ignore(questions.reject(request.id)) : Effect.void
          }
          return Effect.void
        }),
      ),
    )

    // Registration changes: compare the advertised catalogue, and announce a burst of changes once.
    const fingerprint = Effect.map(materialize, (turn) =>
      JSON.stringify(
        turn.definitions.map((definition) => [definition.name, definition.description, definition.inputSchema]),
      ),
    )
    let announced = yield* fingerprint
    const poll = Effect.gen(function* () {
      if ((yield* fingerprint) === announced) return
      yield* Effect.sleep(options.debounce ?? Duration.millis(100))
      announced = yield* fingerprint
      yield* Effect.promise(() => server.sendToolListChanged().catch(() => undefined))
    })
    yield* Effect.forkScoped(Effect.repeat(poll, Schedule.spaced(options.pollInterval ?? Duration.millis(250))))

    let transport = options.transport
    if (transport === undefined) {
      transport = new StdioServerTransport()
      // The stdio transport does not notice the client closing stdin: treat end of input as disconnection.
      process.stdin.once("end", () => void server.close().catch(() => undefined))
    }
    const connected = transport
    yield* Effect.promise(() => server.connect(connected))
    yield* Effect.addFinalizer(() => Effect.promise(() => server.close().catch(() => undefined)))
    yield* Deferred.await(closed)
  })

/** Options of `run`. */
export interface RunOptions extends Omit<ServeOptions, "transport"> {
  /** The Location directory. */
  readonly directory: string
  /** The data directory (default `$XDG_DATA_HOME/toolgate`). */
  readonly data?: string
}

/** Logs go to stderr: stdout is the protocol channel. */
const stderrLogger = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))

/**
 * Serves `directory` over stdio with its own process services until the client disconnects. stdout belongs to the
 * protocol from here on: `console.log` is redirected to stderr and logs go to stderr.
 */
export const run = (options: RunOptions): Effect.Effect<void> =>
  Effect.zipRight(
    Effect.sync(() => {
      console.log = console.error
    }),
    serve(options),
  ).pipe(
    Effect.scoped,
    Effect.provide(
      Core.layer({
        directory: path.resolve(options.directory),
        ...(options.data === undefined ? {} : { data: options.data }),
      }).pipe(Layer.provide(stderrLogger)),
    ),
    Effect.provide(stderrLogger),
    Effect.orDie,
  )

/** Usage text of `main`. */
export const USAGE = "usage: toolgate-mcp [--dir DIR] [--agent NAME] [--data DIR]"

/** Parses `--dir`, `--agent` and `--data` (the directory defaults to the working directory). */
export const parseArgs = (argv: ReadonlyArray<string>): RunOptions | { readonly error: string } => {
  const values: Record<string, string> = {}
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    const key = { "--dir": "directory", "--agent": "agent", "--data": "data" }[flag]
    const value = argv[i + 1]
    if (key === undefined || value === undefined) return { error: `unexpected argument: ${flag}\n${USAGE}` }
    values[key] = value
    i++
  }
  return {
    directory: values["directory"] ?? process.cwd(),
    ...(values["agent"] === undefined ? {} : { agent: values["agent"] }),
    ...(values["data"] === undefined ? {} : { data: values["data"] }),
  }
}

/** The command-line entry: parses `argv` and serves over stdio until the client disconnects. */
export const main = async (argv: ReadonlyArray<string>): Promise<void> => {
  const options = parseArgs(argv)
  if ("error" in options) {
    process.stderr.write(`${options.error}\n`)
    process.exitCode = 2
    return
  }
  await Effect.runPromise(run(options))
}
