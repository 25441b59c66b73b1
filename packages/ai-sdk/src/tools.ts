/**
 * A toolgate materialization as a Vercel AI SDK `ToolSet`. Every tool advertises our JSON Schema through
 * `jsonSchema()` (the SDK does not validate it: our codec does, at settle) and its `execute` settles through
 * `materialization.settle` on the caller's Effect runtime, so validation, permissions and output bounding stay ours.
 * `execute` is an async generator: the tool's progress reports arrive as preliminary results, the result last.
 * A permission ask either keeps `execute` pending until a client replies (`approval: "in-process"`, the default) or
 * becomes an AI SDK tool-approval request (`approval: "ai-sdk"`); see the package README for the bridge.
 *
 * @since 0.1.0
 */
import {
  EventV2,
  PermissionV2,
  Printable,
  Runner,
  SettleInput,
  Tool,
  type LLM,
  type ToolRegistry,
} from "@toolgate/core"
import {
  type GenericToolApprovalFunction,
  jsonSchema,
  type JSONSchema7,
  type ModelMessage,
  type StopCondition,
  tool,
  type ToolApprovalStatus,
  type ToolSet,
} from "ai"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"

/**
 * Who settles: the session, agent and assistant message the calls belong to (`SettleInput.Identity`).
 *
 * @since 0.1.0
 */
export type Identity = SettleInput.Identity

/**
 * Where `execute` runs the settlement: a `Runtime` or a `ManagedRuntime` (default: `Runtime.defaultRuntime`).
 *
 * @since 0.1.0
 */
export type EffectRuntime = Runtime.Runtime<never> | ManagedRuntime.ManagedRuntime<never, unknown>

/**
 * Thrown by `execute` for a model-visible error result. The SDK sends the model `String(error)`, so `toString` is
 * the bare message: the model reads exactly the text our tool produced.
 *
 * @since 0.1.0
 */
export class ToolError extends Error {
  /**
   * The error name the AI SDK records.
   *
   * @since 0.1.0
   */
  override readonly name: string = "ToolgateToolError"
  /**
   * The bare message, which is what the model reads.
   *
   * @since 0.1.0
   */
  override toString(): string {
    return this.message
  }
}

/**
 * Thrown by `execute` when the user declined a permission or dismissed a question. The SDK records it as a tool
 * error; pass `stoppedByUser` in `stopWhen` so no further step runs.
 *
 * @since 0.1.0
 */
export class UserStopError extends ToolError {
  /**
   * The error name the AI SDK records.
   *
   * @since 0.1.0
   */
  override readonly name: string = "ToolgateUserStopError"
  constructor() {
    super("The user declined this tool call and stopped the run")
  }
}

/**
 * A stop condition that ends the loop after a step in which any tool call was stopped by the user.
 *
 * @since 0.1.0
 */
export const stoppedByUser: StopCondition<ToolSet> = ({ steps }) =>
  steps.at(-1)?.content.some((part) => part.type === "tool-error" && part.error instanceof UserStopError) ?? false

type ModelOutput =
  | { readonly type: "text"; readonly value: string }
  | { readonly type: "json"; readonly value: unknown }
  | {
      readonly type: "content"
      readonly value: ReadonlyArray<
        | { readonly type: "text"; readonly text: string }
        | {
            readonly type: "file"
            readonly data: { readonly type: "data"; readonly data: string }
            readonly mediaType: string
            readonly filename?: string
          }
      >
    }

const base64Of = (uri: string): string => uri.slice(uri.indexOf(",") + 1)

/**
 * What the model reads for a successful result: text stays text, JSON stays JSON, and content becomes AI SDK
 * content with file parts carried as base64 data.
 *
 * @since 0.1.0
 */
export const toModelOutput = (result: Exclude<LLM.ToolResultValue, { readonly type: "error" }>): ModelOutput => {
  switch (result.type) {
    case "text":
      return { type: "text", value: typeof result.value === "string" ? result.value : JSON.stringify(result.value) }
    case "json":
      return { type: "json", value: result.value ?? null }
    case "content":
      return {
        type: "content",
        value: result.value.map((part) =>
          part.type === "text"
            ? { type: "text", text: part.text }
            : {
                type: "file",
                data: { type: "data", data: base64Of(part.uri) },
                mediaType: part.mime,
                ...(part.name === undefined ? {} : { filename: part.name }),
              },
        ),
      }
  }
}

/**
 * A successful result as `execute` yields it last: our result value, plus the managed output files when bounding
 * kept one (`outputPaths`, absolute paths the caller may read in full).
 *
 * @since 0.2.0
 */
export type Result = Exclude<LLM.ToolResultValue, { readonly type: "error" }> & {
  readonly outputPaths?: ReadonlyArray<string>
}

/**
 * A preliminary result: one progress report of the running call. `output` holds the output reported so far (its
 * last `PRELIMINARY_OUTPUT_LIMIT` characters), so a UI that replaces the previous preliminary value loses nothing
 * recent. The model never sees preliminary results.
 *
 * @since 0.2.0
 */
export interface Preliminary {
  readonly type: "progress"
  readonly message: string
  readonly progress?: number
  readonly total?: number
  readonly output: string
}

/**
 * What `execute` yields: preliminary values while the call runs, then one `Result`.
 *
 * @since 0.2.0
 */
export type Output = Result | Preliminary

/**
 * How many trailing characters of reported output a preliminary result carries.
 *
 * @since 0.2.0
 */
export const PRELIMINARY_OUTPUT_LIMIT = 65_536

/**
 * How asks reach a person. `in-process`: `execute` stays pending until someone replies through
 * `PermissionV2.Service.reply` (a CLI, a server endpoint). `ai-sdk`: an ask raised before the call reports progress
 * becomes an AI SDK tool-approval request, and the approval response answers it.
 *
 * @since 0.2.0
 */
export type ApprovalMode = "in-process" | "ai-sdk"

/**
 * Options of `toAiSdkTools`. `askTimeout` bounds how long one ask may stay unanswered (default 10 minutes;
 * `"infinity"` waits forever); when it passes, the call is cancelled with a model-visible error.
 *
 * @since 0.2.0
 */
export interface Options {
  readonly approval?: ApprovalMode
  readonly askTimeout?: Duration.DurationInput
}

/**
 * The default `askTimeout`.
 *
 * @since 0.2.0
 */
export const DEFAULT_ASK_TIMEOUT: Duration.Duration = Duration.minutes(10)

/**
 * An ask of the call stayed unanswered for `timeout`; the call was cancelled and the ask withdrawn.
 *
 * @since 0.2.0
 */
export class AskTimeoutError extends Schema.TaggedError<AskTimeoutError>()("AiSdkTools.AskTimeoutError", {
  requestID: Schema.String,
  action: Schema.String,
  resources: Schema.Array(Schema.String),
  timeout: Schema.String,
}) {
  override get message(): string {
    return `Permission request ${this.requestID} (${this.action}: ${this.resources.join(", ")}) was not answered within ${this.timeout}; the tool call was cancelled`
  }
}

/**
 * An ask of the call that nothing in the process could answer: no subscription to `permission.v2.asked` besides the
 * adapter's own (no CLI prompt, no server endpoint, no `Core.layerTest` responder). Instead of waiting `askTimeout`
 * for a reply that cannot come, the call is cancelled at once and the ask withdrawn. Answer asks by listening to
 * `PermissionV2.Event.Asked` and calling `PermissionV2.Service.reply`, or use `{ approval: "ai-sdk" }`.
 *
 * @since 0.3.0
 * @category errors
 */
export class NoAnswererError extends Schema.TaggedError<NoAnswererError>()("AiSdkTools.NoAnswererError", {
  requestID: Schema.String,
  action: Schema.String,
  resources: Schema.Array(Schema.String),
}) {
  override get message(): string {
    return `Permission request ${this.requestID} (${this.action}: ${this.resources.join(", ")}) was not put to anyone: nothing in this process answers permission asks, so the tool call was cancelled`
  }
}

/** The adapter's own subscriptions to asks, per event bus: they watch asks, they do not answer them. */
const ownWatchers = new WeakMap<EventV2.Interface, number>()

const watching = (events: EventV2.Interface, delta: number) =>
  Effect.sync(() => ownWatchers.set(events, (ownWatchers.get(events) ?? 0) + delta))

const runExit = <A, E>(runtime: EffectRuntime, effect: Effect.Effect<A, E>, signal: AbortSignal | undefined) => {
  const options = signal === undefined ? undefined : { signal }
  return ManagedRuntime.isManagedRuntime(runtime)
    ? runtime.runPromiseExit(effect, options)
    : Runtime.runPromiseExit(runtime as Runtime.Runtime<never>)(effect, options)
}

const messageOf = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value))

/**
 * The text an AI SDK approval request carries as its `reason`: our request id, what is asked, the full command of a
 * shell ask, what `always` would save, and how to answer. Every value goes through `Printable.show`, so a control character, escape sequence, bidi
 * override or invisible character in a command or path is shown as a visible escape (`\x1b`, `\u202e`); several
 * resources are listed one per line. UIs that want the structured request call `pendingAsk(tools, toolCallId)`.
 *
 * @since 0.2.0
 */
export const describeAsk = (request: PermissionV2.Request): string =>
  [
    ...(request.resources.length === 1
      ? [
          `toolgate permission ${request.id}: ${Printable.show(request.action)} ${Printable.show(request.resources[0]!)}`,
        ]
      : [
          `toolgate permission ${request.id}: ${Printable.show(request.action)} on ${request.resources.length} resources:`,
          ...request.resources.map((resource) => `  - ${Printable.show(resource)}`),
        ]),
    ...PermissionV2.describeCommand(request),
    ...PermissionV2.describeAlways(request.always),
    `Approve to allow once; approve with the reason "always" to save it; deny with a reason to tell the model why.`,
  ].join("\n")

/**
 * What an AI SDK approval response for one tool call says, as our reply.
 *
 * @since 0.2.0
 */
export interface Decision {
  readonly reply: PermissionV2.Reply
  readonly message?: string
}

/**
 * The first AI SDK approval response for `toolCallId` in `messages`, as our reply: approved → `once` (or `always`
 * when its reason is "always"), denied → `reject` carrying the reason as the model-visible message (none when the
 * reason is empty). `undefined` when the messages hold no response for the call.
 *
 * @since 0.2.0
 */
export const decisionFor = (messages: ReadonlyArray<ModelMessage>, toolCallId: string): Decision | undefined => {
  const requested = new Set<string>()
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue
    for (const part of message.content) {
      if (part.type === "tool-approval-request" && part.toolCallId === toolCallId) requested.add(part.approvalId)
    }
  }
  if (requested.size === 0) return undefined
  for (const message of messages) {
    if (message.role !== "tool") continue
    for (const part of message.content) {
      if (part.type !== "tool-approval-response" || !requested.has(part.approvalId)) continue
      const reason = part.reason?.trim() ?? ""
      if (part.approved) return { reply: reason.toLowerCase() === "always" ? "always" : "once" }
      return reason === "" ? { reply: "reject" } : { reply: "reject", message: reason }
    }
  }
  return undefined
}

/** One call in flight: its settlement, the progress reported so far and its first ask. */
interface Running {
  readonly toolCallId: string
  readonly controller: AbortController
  readonly reports: Array<Tool.Progress>
  /** How `needsApproval` learns what happened first: the call settled, asked, or reported progress. */
  readonly phase: Promise<"settled" | "asked" | "progress">
  exit: Promise<Exit.Exit<ToolRegistry.Settlement, unknown>>
  done: boolean
  /** The first ask, when it came before any progress (the one an AI SDK approval answers). */
  approval: PermissionV2.Request | undefined
  answered: boolean
  /** Set when the approval responses seen so far approve this call; `execute` answers it. */
  approved: boolean
  /** A denial waiting until every approved call has its answer (a reject also rejects the session's other asks). */
  denial: Decision | undefined
  changed: Promise<void>
  signal: () => void
}

/** The per-ToolSet state of the approval bridge. */
interface Bridge {
  readonly mode: ApprovalMode
  readonly calls: Map<string, Running>
  readonly start: (name: string, input: unknown, toolCallId: string) => Running
  readonly reply: (running: Running, decision: Decision) => Promise<void>
}

const bridges = new WeakMap<ToolSet, Bridge>()

const MISSING_SERVICES =
  'AiSdkTools: approval "ai-sdk" needs a runtime that provides toolgate\'s EventV2 and PermissionV2 services (one built from Core.layer)'

const makeBridge = (
  materialization: ToolRegistry.Materialization,
  identity: Identity,
  runtime: EffectRuntime,
  options: Options,
): Bridge => {
  const mode = options.approval ?? "in-process"
  const timeout = Duration.decode(options.askTimeout ?? DEFAULT_ASK_TIMEOUT)
  const calls = new Map<string, Running>()

  /** The settlement plus the ask watcher: asks of this call are reported and each is bounded by `timeout`. */
  const settlement = (call: LLM.ToolCall, running: Running, onAsk: (request: PermissionV2.Request) => void) =>
    Effect.scoped(
      Effect.gen(function* () {
        const settle = materialization.settle(
          SettleInput.make(identity, call, (update) => {
            running.reports.push(update)
            running.signal()
          }),
        )
        const events = yield* Effect.serviceOption(EventV2.Service)
        if (Option.isNone(events)) {
          return mode === "ai-sdk" ? yield* Effect.dieMessage(MISSING_SERVICES) : yield* settle
        }
        const bus = events.value
        const abandoned = yield* Deferred.make<never, AskTimeoutError | NoAnswererError>()
        const open = new Set<string>()
        const queue = yield* bus.queue(PermissionV2.Event.Asked, PermissionV2.Event.Replied)
        yield* Effect.acquireRelease(watching(bus, 1), () => watching(bus, -1))
        const watch = (
          envelope:
            EventV2.EnvelopeOf<typeof PermissionV2.Event.Asked> | EventV2.EnvelopeOf<typeof PermissionV2.Event.Replied>,
        ) => {
          if (envelope.type === "permission.v2.replied") {
            open.delete(envelope.data.requestID)
            return Effect.void
          }
          const request = envelope.data
          const source = request.source
          if (
            request.sessionID !== identity.sessionID ||
            source?.callID !== call.id ||
            source.messageID !== identity.assistantMessageID
          ) {
            return Effect.void
          }
          open.add(request.id)
          onAsk(request)
          // The ask an AI SDK approval answers is put to a person by the SDK; any other ask needs someone here.
          const unanswerable =
            mode === "ai-sdk" && running.approval === request
              ? Effect.void
              : Effect.flatMap(bus.subscribers(PermissionV2.Event.Asked), (count) =>
                  count > (ownWatchers.get(bus) ?? 0)
                    ? Effect.void
                    : Effect.zipRight(
                        Effect.logWarning(
                          `AiSdkTools: permission request ${request.id} (${request.action}) was cancelled at once: nothing in this process answers permission asks. Listen to PermissionV2.Event.Asked and call PermissionV2.Service.reply, or pass { approval: "ai-sdk" }.`,
                        ),
                        Deferred.fail(
                          abandoned,
                          new NoAnswererError({
                            requestID: request.id,
                            action: request.action,
                            resources: request.resources,
                          }),
                        ),
                      ),
                )
          const expire = Effect.suspend(() =>
            open.has(request.id)
              ? Deferred.fail(
                  abandoned,
                  new AskTimeoutError({
                    requestID: request.id,
                    action: request.action,
                    resources: request.resources,
                    timeout: Duration.format(timeout),
                  }),
                )
              : Effect.void,
          )
          return Effect.zipRight(
            unanswerable,
            Effect.asVoid(Effect.forkScoped(Effect.zipRight(Effect.sleep(timeout), expire))),
          )
        }
        yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(queue), watch)))
        return yield* Effect.raceFirst(settle, Deferred.await(abandoned))
      }),
    )

  const start = (name: string, input: unknown, toolCallId: string): Running => {
    let decide!: (phase: "settled" | "asked" | "progress") => void
    let wake!: () => void
    const running: Running = {
      toolCallId,
      controller: new AbortController(),
      reports: [],
      phase: new Promise((resolve) => (decide = resolve)),
      exit: undefined as never,
      done: false,
      approval: undefined,
      answered: false,
      approved: false,
      denial: undefined,
      changed: new Promise((resolve) => (wake = resolve)),
      signal: () => {
        if (running.reports.length > 0) decide("progress")
        const current = wake
        running.changed = new Promise((resolve) => (wake = resolve))
        current()
      },
    }
    const onAsk = (request: PermissionV2.Request) => {
      if (running.approval === undefined && running.reports.length === 0) {
        running.approval = request
        decide("asked")
      }
    }
    running.exit = runExit(
      runtime,
      settlement({ id: toolCallId, name, input }, running, onAsk),
      running.controller.signal,
    ).then((exit) => {
      running.done = true
      decide("settled")
      running.signal()
      return exit
    })
    return running
  }

  const reply = async (running: Running, decision: Decision) => {
    const request = running.approval
    if (request === undefined || running.answered) return
    running.answered = true
    const permission = Effect.flatMap(Effect.serviceOption(PermissionV2.Service), (service) =>
      Option.isNone(service)
        ? Effect.void
        : service.value
            .reply({
              requestID: request.id,
              reply: decision.reply,
              ...(decision.message === undefined ? {} : { message: decision.message }),
            })
            .pipe(
              // An approval that could not be saved still approves this call: it is answered once, and the call
              // reports why as a preliminary result (and the log says so).
              Effect.catchTag("PermissionV2.SaveError", (error) =>
                Effect.zipRight(
                  Effect.zipRight(
                    Effect.logWarning(error.message),
                    Effect.sync(() => {
                      running.reports.push({
                        message: `The approval was not saved to ${error.filename ?? "the database"} (${error.detail}); this call is allowed once.`,
                      })
                      running.signal()
                    }),
                  ),
                  service.value.reply({ requestID: request.id, reply: "once" }),
                ),
              ),
              // The ask may already be gone (timed out, or cancelled with its call): its exit says what happened.
              Effect.catchTag("PermissionV2.NotFoundError", () => Effect.void),
            ),
    )
    await runExit(runtime, permission, undefined)
  }

  return { mode, calls, start, reply }
}

/**
 * Reads the AI SDK approval responses in `messages` for every pending ask: an approved call is marked (its
 * `execute` answers it), a denied call is rejected (denied calls never reach `execute`). A reject also rejects the
 * session's other pending asks, so denials wait until every approved call of the same responses has been answered.
 */
const applyDenials = async (bridge: Bridge, messages: ReadonlyArray<ModelMessage>) => {
  for (const running of bridge.calls.values()) {
    if (running.approval === undefined || running.answered) continue
    const decision = decisionFor(messages, running.toolCallId)
    if (decision === undefined) continue
    if (decision.reply === "reject") running.denial = decision
    else running.approved = true
  }
  await flushDenials(bridge)
}

/** Sends the waiting denials once no approved call is left unanswered. */
const flushDenials = async (bridge: Bridge) => {
  const calls = Array.from(bridge.calls.values())
  if (calls.some((running) => running.approved && !running.answered)) return
  for (const running of calls) {
    if (running.denial === undefined || running.answered) continue
    await bridge.reply(running, running.denial)
    bridge.calls.delete(running.toolCallId)
  }
}

const bridgeOf = (tools: ToolSet): Bridge => {
  const bridge = bridges.get(tools)
  if (bridge === undefined) throw new Error("AiSdkTools: this ToolSet was not made by toAiSdkTools")
  return bridge
}

/**
 * Answers the pending asks of `tools` from the AI SDK approval responses in `messages` where the SDK will not run
 * the call: a denied approval rejects our ask (with its reason as the model-visible message). Call it with the
 * messages a `useChat` client sent before passing them to `generateText`/`streamText`; `needsApproval`, the
 * `toolApproval` function and `execute` also apply it whenever the SDK hands them messages.
 *
 * @since 0.2.0
 */
export const applyApprovals = (tools: ToolSet, messages: ReadonlyArray<ModelMessage>): Promise<void> =>
  applyDenials(bridgeOf(tools), messages)

/**
 * The pending ask an AI SDK approval request of `tools` stands for, by tool call id (the structured form of the
 * request's `reason`), or `undefined`.
 *
 * @since 0.2.0
 */
export const pendingAsk = (tools: ToolSet, toolCallId: string): PermissionV2.Request | undefined => {
  const running = bridgeOf(tools).calls.get(toolCallId)
  return running === undefined || running.answered ? undefined : running.approval
}

/**
 * Starts the call (once) and waits until it settles, reports progress, or asks. An ask before any progress means
 * the call needs approval; the settlement stays suspended on that ask until `execute` or a denial answers it.
 */
const resolveApproval = async (
  bridge: Bridge,
  name: string,
  input: unknown,
  toolCallId: string,
  messages: ReadonlyArray<ModelMessage>,
): Promise<PermissionV2.Request | undefined> => {
  await applyDenials(bridge, messages)
  let running = bridge.calls.get(toolCallId)
  if (running === undefined) {
    running = bridge.start(name, input, toolCallId)
    bridge.calls.set(toolCallId, running)
  }
  const phase = await running.phase
  return phase === "asked" ? running.approval : undefined
}

/**
 * The `toolApproval` setting of `generateText`/`streamText` for `tools` made with `approval: "ai-sdk"`: a call whose
 * first ask comes before any progress needs user approval, and the approval request's `reason` describes the ask
 * (see `describeAsk`). Without it the tools' own `needsApproval` still raises the request, with no reason.
 *
 * @since 0.2.0
 */
export const toolApproval =
  (tools: ToolSet): GenericToolApprovalFunction<ToolSet, any, any> =>
  async ({ toolCall, messages }): Promise<ToolApprovalStatus> => {
    const bridge = bridgeOf(tools)
    if (bridge.mode !== "ai-sdk" || !Object.hasOwn(tools, toolCall.toolName)) return "not-applicable"
    const request = await resolveApproval(bridge, toolCall.toolName, toolCall.input, toolCall.toolCallId, messages)
    return request === undefined ? "not-applicable" : { type: "user-approval", reason: describeAsk(request) }
  }

/** The last `PRELIMINARY_OUTPUT_LIMIT` characters of `text`. */
const tail = (text: string): string =>
  text.length > PRELIMINARY_OUTPUT_LIMIT ? text.slice(text.length - PRELIMINARY_OUTPUT_LIMIT) : text

/**
 * Settles one call and translates the outcome for the SDK: progress reports are yielded as preliminary results, a
 * success yields our result value (with `outputPaths`), a model-visible error throws a `ToolError` carrying its
 * message (the SDK turns it into a tool error the model sees), a user stop throws `UserStopError`, an interruption
 * (the SDK's abort signal) throws with the Runner's interruption text, an unanswered ask throws its timeout.
 */
const execute = (bridge: Bridge, name: string) =>
  async function* (
    input: unknown,
    options: {
      readonly toolCallId: string
      readonly messages?: ReadonlyArray<ModelMessage>
      readonly abortSignal?: AbortSignal | undefined
    },
  ): AsyncGenerator<Output, void, void> {
    const messages = options.messages ?? []
    await applyDenials(bridge, messages)
    let running = bridge.calls.get(options.toolCallId)
    if (running === undefined) {
      running = bridge.start(name, input, options.toolCallId)
      bridge.calls.set(options.toolCallId, running)
    }
    const current = running
    const abort = () => current.controller.abort()
    if (options.abortSignal?.aborted) abort()
    options.abortSignal?.addEventListener("abort", abort, { once: true })
    try {
      // The SDK calls `execute` only for an approved call: answer the ask it approved (once, or always).
      if (current.approval !== undefined && !current.answered) {
        const decision = decisionFor(messages, options.toolCallId)
        await bridge.reply(current, decision?.reply === "always" ? decision : { reply: "once" })
        await flushDenials(bridge)
      }
      let seen = 0
      let output = ""
      for (;;) {
        const changed = current.changed
        while (seen < current.reports.length) {
          const report = current.reports[seen++]!
          if (report.output !== undefined) output = tail(output + report.output)
          yield {
            type: "progress",
            message: report.message,
            ...(report.progress === undefined ? {} : { progress: report.progress }),
            ...(report.total === undefined ? {} : { total: report.total }),
            output,
          }
        }
        if (current.done) break
        await changed
      }
      const exit = await current.exit
      if (Exit.isSuccess(exit)) {
        const { result, outputPaths } = exit.value
        if (result.type === "error") throw new ToolError(messageOf(result.value))
        yield outputPaths === undefined ? result : { ...result, outputPaths }
        return
      }
      if (Tool.isUserStop(exit.cause)) throw new UserStopError()
      if (Cause.isInterruptedOnly(exit.cause)) throw new ToolError(Runner.INTERRUPTED)
      const failure = Cause.squash(exit.cause)
      if (failure instanceof AskTimeoutError || failure instanceof NoAnswererError) throw new ToolError(failure.message)
      throw new ToolError(`Tool execution failed: ${failure instanceof Error ? failure.message : messageOf(failure)}`)
    } finally {
      options.abortSignal?.removeEventListener("abort", abort)
      if (bridge.calls.get(options.toolCallId) === current) bridge.calls.delete(options.toolCallId)
    }
  }

/**
 * Converts `materialization` into an AI SDK `ToolSet` whose calls settle under `identity` on `runtime`. With
 * `approval: "ai-sdk"` the runtime must provide toolgate's services (a runtime built from `Core.layer`), and the
 * tools declare `needsApproval`; pass `toolApproval(tools)` to `generateText`/`streamText` so the approval requests
 * describe the ask.
 *
 * @since 0.1.0
 */
export const toAiSdkTools = (
  materialization: ToolRegistry.Materialization,
  identity: Identity,
  runtime: EffectRuntime = Runtime.defaultRuntime,
  options: Options = {},
): ToolSet => {
  if (
    options.approval === "ai-sdk" &&
    !ManagedRuntime.isManagedRuntime(runtime) &&
    (Option.isNone(Context.getOption((runtime as Runtime.Runtime<never>).context, EventV2.Service)) ||
      Option.isNone(Context.getOption((runtime as Runtime.Runtime<never>).context, PermissionV2.Service)))
  ) {
    throw new Error(MISSING_SERVICES)
  }
  const bridge = makeBridge(materialization, identity, runtime, options)
  const tools: ToolSet = Object.fromEntries(
    materialization.definitions.map((definition) => [
      definition.name,
      tool({
        description: definition.description,
        inputSchema: jsonSchema<unknown>(definition.inputSchema as JSONSchema7),
        execute: execute(bridge, definition.name) as never,
        ...(bridge.mode === "ai-sdk"
          ? {
              needsApproval: async (input: unknown, { toolCallId, messages }) =>
                (await resolveApproval(bridge, definition.name, input, toolCallId, messages)) !== undefined,
            }
          : {}),
        toModelOutput: ({ output }: { readonly output: Output }) =>
          (output.type === "progress" ? { type: "text", value: output.message } : toModelOutput(output)) as never,
      }),
    ]),
  )
  bridges.set(tools, bridge)
  return tools
}
