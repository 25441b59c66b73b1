/**
 * The per-ToolSet approval bridge: the calls in flight, their settlement, the prompts they raise (read from
 * `Approvals.prompts`) and the answers (`Approvals.answer` with the digest of the prompt the approval request
 * described, channel `ai-sdk`). An ask nobody answers waits for `permission.ask_timeout` like every channel's.
 *
 * @since 0.3.0
 * @internal
 */
import { Approvals, EventV2, PermissionV2, SettleInput, Tool, type LLM, type ToolRegistry } from "@toolgate/core"
import { type ModelMessage, type ToolSet } from "ai"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import { type ApprovalMode, type EffectRuntime, type Identity, NoAnswererError, type Options } from "./tools-options.js"
import { choiceFor, type Decision, decisionFor } from "./tools-approval.js"

/** The adapter's own prompt subscriptions, per event bus: they watch asks, they do not answer them. */
const ownWatchers = new WeakMap<EventV2.Interface, number>()

/**
 * @internal
 *
 * @category utilities
 */
export const watching = (events: EventV2.Interface, delta: number) =>
  Effect.sync(() => ownWatchers.set(events, (ownWatchers.get(events) ?? 0) + delta))

/**
 * @internal
 *
 * @category utilities
 */
export const runExit = <A, E>(runtime: EffectRuntime, effect: Effect.Effect<A, E>, signal: AbortSignal | undefined) => {
  const options = signal === undefined ? undefined : { signal }
  return ManagedRuntime.isManagedRuntime(runtime)
    ? runtime.runPromiseExit(effect, options)
    : Runtime.runPromiseExit(runtime as Runtime.Runtime<never>)(effect, options)
}

/**
 * @internal
 *
 * @category utilities
 */
export const messageOf = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value))

/** One call in flight: its settlement, the progress reported so far and its first ask. */
/**
 * @internal
 *
 * @category models
 */
export interface Running {
  readonly toolCallId: string
  readonly controller: AbortController
  readonly reports: Array<Tool.Progress>
  /** How `needsApproval` learns what happened first: the call settled, asked, or reported progress. */
  readonly phase: Promise<"settled" | "asked" | "progress">
  exit: Promise<Exit.Exit<ToolRegistry.Settlement, unknown>>
  done: boolean
  /** The first ask's prompt, when it came before any progress (the one an AI SDK approval answers). */
  approval: Approvals.Prompt | undefined
  answered: boolean
  /** Set when the approval responses seen so far approve this call; `execute` answers it. */
  approved: boolean
  /** A denial waiting until every approved call has its answer (a reject also rejects the session's other asks). */
  denial: Decision | undefined
  changed: Promise<void>
  signal: () => void
}

/** The per-ToolSet state of the approval bridge. */
/**
 * @internal
 *
 * @category models
 */
export interface Bridge {
  readonly mode: ApprovalMode
  readonly calls: Map<string, Running>
  readonly start: (name: string, input: unknown, toolCallId: string) => Running
  readonly reply: (running: Running, decision: Decision) => Promise<void>
}

/**
 * @internal
 *
 * @category utilities
 */
export const bridges = new WeakMap<ToolSet, Bridge>()

/**
 * @internal
 *
 * @category constants
 */
export const MISSING_SERVICES =
  'AiSdkTools: approval "ai-sdk" needs a runtime that provides toolgate\'s EventV2 and Approvals services (one built from Core.layer)'

/**
 * @internal
 *
 * @category constructors
 */
export const makeBridge = (
  materialization: ToolRegistry.Materialization,
  identity: Identity,
  runtime: EffectRuntime,
  options: Options,
): Bridge => {
  const mode = options.approval ?? "in-process"
  const calls = new Map<string, Running>()

  /** The settlement plus the prompt watcher: the prompts of this call are reported to `onAsk`. */
  const settlement = (call: LLM.ToolCall, running: Running, onAsk: (prompt: Approvals.Prompt) => void) =>
    Effect.scoped(
      Effect.gen(function* () {
        const settle = materialization.settle(
          SettleInput.make(identity, call, (update) => {
            running.reports.push(update)
            running.signal()
          }),
        )
        const events = yield* Effect.serviceOption(EventV2.Service)
        const approvals = yield* Effect.serviceOption(Approvals.Service)
        if (Option.isNone(events) || Option.isNone(approvals)) {
          return mode === "ai-sdk" ? yield* Effect.dieMessage(MISSING_SERVICES) : yield* settle
        }
        const bus = events.value
        const abandoned = yield* Deferred.make<never, NoAnswererError>()
        yield* Effect.acquireRelease(watching(bus, 1), () => watching(bus, -1))
        const watch = (event: Approvals.PromptEvent) => {
          if (event._tag !== "Asked") return Effect.void
          const prompt = event.prompt
          const request = prompt.request
          const source = request.source
          if (source?.callID !== call.id || source.messageID !== identity.assistantMessageID) return Effect.void
          onAsk(prompt)
          // The ask an AI SDK approval answers is put to a person by the SDK; any other ask needs someone here: a
          // prompt subscription (or `permission.v2.asked` listener) besides the adapter's own.
          if (mode === "ai-sdk" && running.approval === prompt) return Effect.void
          return Effect.flatMap(bus.subscribers(PermissionV2.Event.Asked), (count) =>
            count > (ownWatchers.get(bus) ?? 0)
              ? Effect.void
              : Effect.zipRight(
                  Effect.logWarning(
                    `AiSdkTools: permission request ${request.id} (${request.action}) was cancelled at once: nothing in this process answers permission asks. Read Approvals.Service.prompts and answer with Approvals.Service.answer, or pass { approval: "ai-sdk" }.`,
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
        }
        yield* Effect.forkScoped(Stream.runForEach(approvals.value.prompts({ sessionID: identity.sessionID }), watch))
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
    const onAsk = (prompt: Approvals.Prompt) => {
      if (running.approval === undefined && running.reports.length === 0) {
        running.approval = prompt
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
    const prompt = running.approval
    if (prompt === undefined || running.answered) return
    running.answered = true
    const request = prompt.request
    const answer = (choice: string, message: string | undefined) => ({
      requestID: request.id,
      digest: prompt.digest,
      choice,
      ...(message === undefined ? {} : { message }),
      channel: "ai-sdk",
    })
    const chosen = choiceFor(prompt, decision)?.id ?? decision.reply
    const permission = Effect.flatMap(Effect.serviceOption(Approvals.Service), (service) =>
      Option.isNone(service)
        ? Effect.void
        : service.value.answer(answer(chosen, decision.message)).pipe(
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
                service.value.answer(answer("once", undefined)),
              ),
            ),
            // The ask may already be gone (answered elsewhere, expired, or cancelled with its call): its exit says
            // what happened.
            Effect.catchTags({
              "PermissionV2.NotFoundError": () => Effect.void,
              "Approvals.AlreadyAnsweredError": () => Effect.void,
            }),
            Effect.catchAll((error) => Effect.logError(`AiSdkTools: answering ${request.id} failed: ${error.message}`)),
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
/**
 * @internal
 *
 * @category utilities
 */
export const applyDenials = async (bridge: Bridge, messages: ReadonlyArray<ModelMessage>) => {
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
/**
 * @internal
 *
 * @category utilities
 */
export const flushDenials = async (bridge: Bridge) => {
  const calls = Array.from(bridge.calls.values())
  if (calls.some((running) => running.approved && !running.answered)) return
  for (const running of calls) {
    if (running.denial === undefined || running.answered) continue
    await bridge.reply(running, running.denial)
    bridge.calls.delete(running.toolCallId)
  }
}

/**
 * @internal
 *
 * @category utilities
 */
export const bridgeOf = (tools: ToolSet): Bridge => {
  const bridge = bridges.get(tools)
  if (bridge === undefined) throw new Error("AiSdkTools: this ToolSet was not made by toAiSdkTools")
  return bridge
}

/**
 * Starts the call (once) and waits until it settles, reports progress, or asks. An ask before any progress means
 * the call needs approval; the settlement stays suspended on that ask until `execute` or a denial answers it.
 */
/**
 * @internal
 *
 * @category utilities
 */
export const resolveApproval = async (
  bridge: Bridge,
  name: string,
  input: unknown,
  toolCallId: string,
  messages: ReadonlyArray<ModelMessage>,
): Promise<Approvals.Prompt | undefined> => {
  await applyDenials(bridge, messages)
  let running = bridge.calls.get(toolCallId)
  if (running === undefined) {
    running = bridge.start(name, input, toolCallId)
    bridge.calls.set(toolCallId, running)
  }
  const phase = await running.phase
  return phase === "asked" ? running.approval : undefined
}
