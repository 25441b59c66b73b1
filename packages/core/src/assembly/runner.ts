/**
 * The reference turn loop. Each provider turn materializes the catalogue once, streams one model request, records
 * and publishes every tool call before any side effect, settles local calls eagerly in their own fibers, publishes
 * each result uninterruptibly, and waits for all settlements after the stream. A declined permission or dismissed
 * question stops the loop; every unsettled call is then failed durably. An executor that crashes (a defect) settles
 * its own call with `Tool crashed: <message>` and logs the cause; its siblings settle and the run goes on.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as AgentV2 from "../agent/agent.js"
import * as EventV2 from "../place/event.js"
import * as SettleInput from "../tool/settle-input.js"
import * as LLM from "../values/llm.js"
import * as Model from "./model.js"
import * as PermissionV2 from "../permission/permission.js"
import * as QuestionV2 from "../agent/question.js"
import * as SessionV2 from "../place/session.js"
import * as Tool from "../tool/tool.js"
import type * as ToolOutputStore from "../tool/tool-output-store.js"
import * as ToolRegistry from "../tool/tool-registry.js"
import * as ToolCallJournal from "./tool-call-journal.js"
import { StepLimitExceeded } from "./internal/runner-schema.js"
import * as internal from "./internal/runner-schema.js"

/**
 * Provider turns allowed per run.
 *
 * @since 0.1.0
 * @category constants
 */
export const STEP_LIMIT = internal.STEP_LIMIT
/**
 * Failure text for calls cut off by interruption or a user stop.
 *
 * @since 0.1.0
 * @category constants
 */
export const INTERRUPTED = internal.INTERRUPTED
/**
 * Failure text for a call whose permission ask the user rejected without a message (or that a rejection in the same
 * session cascaded to). A rejection with a message reaches the model as that message instead.
 *
 * @since 0.3.0
 * @category constants
 */
export const USER_REJECTED = internal.USER_REJECTED
/**
 * Failure text for a call whose question the user dismissed.
 *
 * @since 0.3.0
 * @category constants
 */
export const USER_DISMISSED = internal.USER_DISMISSED
/**
 * The result a runner reports for a call that recovery failed while the runner was unresponsive past its lease:
 * the journal keeps recovery's `Tool execution interrupted`, and the call's own result (the tool may have run) is
 * discarded.
 *
 * @since 0.3.0
 * @category constants
 */
export const RECOVERED = internal.RECOVERED
/**
 * Failure text for local calls on the turn where tools are disabled.
 *
 * @since 0.1.0
 * @category constants
 */
export const TOOLS_DISABLED = internal.TOOLS_DISABLED
/**
 * Prefix of the model-visible error of a call whose executor crashed (a defect); the defect's message follows.
 *
 * @since 0.4.0
 * @category constants
 */
export const TOOL_CRASHED = internal.TOOL_CRASHED
export {
  /**
   * The run needed more provider turns than allowed.
   *
   * @since 0.1.0
   * @category errors
   */
  StepLimitExceeded,
} from "./internal/runner-schema.js"
/**
 * Events published by the runner.
 *
 * @since 0.1.0
 * @category models
 */
export const Event = internal.Event
/**
 * What `run` takes.
 *
 * @since 0.1.0
 * @category models
 */
export type RunInput = internal.RunInput
/**
 * What `run` returns. `stopped: "user"` means a declined permission or dismissed question ended the loop.
 *
 * @since 0.1.0
 * @category models
 */
export type RunResult = internal.RunResult

/**
 * The runner.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  readonly run: (
    input: RunInput,
  ) => Effect.Effect<
    RunResult,
    StepLimitExceeded | Model.ModelError | SessionV2.NotFoundError | ToolOutputStore.Error | ToolCallJournal.RecordError
  >
  /**
   * Marks failed the calls left pending or running by runners that are gone (their lease expired, or they recorded
   * no owner); returns how many. Runs at layer start and then every `ToolCallJournal.recoveryInterval` of the lease
   * while the runner lives. Calls of live runners — other Locations, other processes — are left alone; a call is
   * failed once, by whichever runner gets there first.
   */
  readonly recover: () => Effect.Effect<number>
}

/**
 * The Runner service (Location-scoped).
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Runner")<Service, Interface>() {}

interface CallState {
  readonly id: string
  readonly name: string
  readonly input: unknown
  readonly providerExecuted: boolean
  settled: boolean
  result?: LLM.ToolResultValue
  /** Why the user stopped this call, when its own settlement was the one they rejected or dismissed. */
  stopped?: string | undefined
}

const errorMessage = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause).pipe(Option.orElse(() => Cause.dieOption(cause)))
  if (Option.isNone(failure)) return Cause.pretty(cause)
  const value = failure.value
  return value instanceof Error
    ? value.message
    : typeof value === "object" && value !== null && "message" in value
      ? String(value.message)
      : String(value)
}

/**
 * A crashed executor (a defect that is not a user's stop) becomes the call's model-visible error: the defect's
 * message, never its stack. The full cause is logged. Failures, interruption and user stops pass through.
 */
const contain = (
  call: { readonly id: string; readonly name: string },
  cause: Cause.Cause<ToolOutputStore.Error>,
): Effect.Effect<ToolRegistry.Settlement, ToolOutputStore.Error> =>
  Option.isNone(Cause.dieOption(cause)) || Tool.isUserStop(cause)
    ? Effect.failCause(cause)
    : Effect.as(
        Effect.logError(`Runner: tool ${call.name} (call ${call.id}) crashed`, cause),
        { result: { type: "error", value: `${TOOL_CRASHED}${errorMessage(cause)}` } } satisfies ToolRegistry.Settlement,
      )

/**
 * Builds the runner for the current Location.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function* () {
  const journal = yield* ToolCallJournal.Service
  const events = yield* EventV2.Service
  const registry = yield* ToolRegistry.Service
  const agents = yield* AgentV2.Service
  const sessions = yield* SessionV2.Service
  const model = yield* Model.Service

  const recover = Effect.fn("Runner.recover")(function* () {
    return yield* journal.recover(INTERRUPTED)
  })

  const turn = (input: {
    readonly sessionID: string
    readonly agent: string
    readonly permissions: ReadonlyArray<ToolRegistry.VisibilityRule>
    readonly system?: string
    readonly toolsEnabled: boolean
    readonly messages: ReadonlyArray<Model.Message>
    /** Final writes the database refused at first, still being retried (`settleDurably`) in `runScope`. */
    readonly writes: Array<Fiber.RuntimeFiber<ToolCallJournal.Settled, ToolCallJournal.RecordError>>
    readonly runScope: Scope.Scope
  }) =>
    Effect.gen(function* () {
      const settler = SettleInput.identity({ sessionID: input.sessionID, agent: input.agent })
      const assistantMessageID = settler.assistantMessageID
      const materialization = input.toolsEnabled ? yield* registry.materialize(input.permissions) : undefined
      const calls: Array<CallState> = []
      const fibers: Array<Fiber.RuntimeFiber<void, ToolOutputStore.Error>> = []
      const stop = yield* Deferred.make<void>()
      const scope = yield* Effect.scope
      let text = ""
      let ranLocalTool = false
      const identity = (call: CallState) => ({
        sessionID: input.sessionID,
        assistantMessageID,
        callID: call.id,
        tool: call.name,
      })

      const finish = (
        call: CallState,
        result: LLM.ToolResultValue,
        extra: { output?: LLM.ToolOutput; outputPaths?: ReadonlyArray<string> } = {},
      ) =>
        Effect.uninterruptible(
          Effect.suspend(() => {
            if (call.settled) return Effect.void
            call.settled = true
            call.result = result
            const failed = result.type === "error"
            const key = { sessionID: input.sessionID, assistantMessageID, callID: call.id }
            const outcome: ToolCallJournal.Outcome = {
              status: failed ? "failed" : "completed",
              result,
              error: failed ? String(result.value) : null,
            }
            // A database that fails the write (an outage, a restart) does not hold the run up: the result goes to
            // the model and the listeners now, and the write is retried in the run's scope (`settleDurably`).
            return journal.settleOnce(key, outcome).pipe(
              Effect.catchAll(() =>
                Effect.forkIn(journal.settleDurably(key, outcome), input.runScope).pipe(
                  Effect.map((fiber): ToolCallJournal.Settled => {
                    input.writes.push(fiber)
                    return "settled"
                  }),
                ),
              ),
              Effect.flatMap((settled) => {
                if (settled === "recovered") {
                  // Recovery's failure stands; the model and the listeners learn that, not a result it contradicts.
                  const lost: LLM.ToolResultValue = { type: "error", value: RECOVERED }
                  call.result = lost
                  return events.publish(Event.Failed, { ...identity(call), result: lost })
                }
                return failed
                  ? events.publish(Event.Failed, { ...identity(call), result })
                  : events.publish(Event.Success, { ...identity(call), result, ...extra })
              }),
              Effect.orDie,
            )
          }),
        )

      const failUnsettled = (message: string) =>
        Effect.forEach(calls, (call) => finish(call, { type: "error", value: call.stopped ?? message }), {
          discard: true,
        })

      const onToolCall = (event: Extract<Model.Event, { type: "tool-call" }>) =>
        Effect.gen(function* () {
          const executed = event.providerExecuted === true
          const call: CallState = {
            id: event.id,
            name: event.name,
            input: event.input,
            providerExecuted: executed,
            settled: false,
          }
          // The durable record and the called event come before any side effect of the call.
          yield* journal.record({
            sessionID: input.sessionID,
            assistantMessageID,
            callID: event.id,
            name: event.name,
            input: event.input,
            providerExecuted: executed,
          })
          yield* events
            .publish(Event.Called, {
              ...identity(call),
              input: event.input,
              provider: event.metadata === undefined ? { executed } : { executed, metadata: event.metadata },
            })
            .pipe(Effect.orDie)
          calls.push(call)
          if (executed) return
          if (materialization === undefined) return yield* finish(call, { type: "error", value: TOOLS_DISABLED })
          ranLocalTool = true
          // Settling is interruptible; once a settlement exists, publishing it is not.
          const settle = Effect.uninterruptibleMask((restore) =>
            restore(
              materialization
                .settle(
                  SettleInput.make(settler, event, (update) =>
                    Effect.runSync(Effect.ignore(events.publish(Event.Progress, { ...identity(call), ...update }))),
                  ),
                )
                .pipe(Effect.catchAllCause((cause) => contain(call, cause))),
            ).pipe(
              Effect.flatMap((settlement) =>
                finish(call, settlement.result, {
                  ...(settlement.output === undefined ? {} : { output: settlement.output }),
                  ...(settlement.outputPaths === undefined ? {} : { outputPaths: settlement.outputPaths }),
                }),
              ),
            ),
          ).pipe(
            Effect.onExit((exit) => {
              if (!Exit.isFailure(exit) || !Tool.isUserStop(exit.cause)) return Effect.void
              call.stopped = PermissionV2.isDeclined(exit.cause)
                ? USER_REJECTED
                : QuestionV2.isDismissed(exit.cause)
                  ? USER_DISMISSED
                  : undefined
              return Deferred.succeed(stop, undefined)
            }),
          )
          fibers.push(yield* Effect.forkIn(settle, scope))
        })

      const drive = Effect.gen(function* () {
        const streamed = yield* model
          .stream({
            sessionID: input.sessionID,
            agent: input.agent,
            ...(input.system === undefined ? {} : { system: input.system }),
            messages: input.messages,
            tools: materialization?.definitions ?? [],
          })
          .pipe(
            Stream.runForEach((event) => {
              switch (event.type) {
                case "text":
                  return Effect.suspend(() => {
                    text += event.text
                    return events
                      .publish(Event.TextDelta, { sessionID: input.sessionID, assistantMessageID, text: event.text })
                      .pipe(Effect.orDie)
                  })
                case "tool-call":
                  return onToolCall(event)
                case "tool-result": {
                  const call = calls.find((candidate) => candidate.id === event.id)
                  if (call === undefined) return Effect.dieMessage(`Tool result before call: ${event.id}`)
                  if (call.name !== event.name)
                    return Effect.dieMessage(`Tool result name changed for ${event.id}: ${call.name} -> ${event.name}`)
                  // A late error for a settled call is ignored; a second success is a provider protocol violation.
                  if (call.settled && event.result.type !== "error")
                    return Effect.dieMessage(`Duplicate tool result: ${event.id}`)
                  return finish(call, event.result)
                }
                case "finish":
                  return Effect.void
              }
            }),
            Effect.exit,
          )
        // A provider error (or a protocol violation) ends the turn: calls still in flight are interrupted, not awaited.
        if (Exit.isFailure(streamed)) {
          yield* Fiber.interruptAll(fibers)
          yield* failUnsettled(INTERRUPTED)
          return yield* Effect.failCause(streamed.cause)
        }

        const exits = yield* Effect.raceFirst(
          Effect.forEach(fibers, Fiber.await),
          Effect.as(Deferred.await(stop), undefined),
        )
        const userStop =
          exits === undefined || exits.some((exit) => Exit.isFailure(exit) && Tool.isUserStop(exit.cause))
        const assistant: Model.Message = {
          role: "assistant",
          id: assistantMessageID,
          text,
          toolCalls: calls.map((call) => ({ id: call.id, name: call.name, input: call.input })),
        }
        const results = () =>
          calls.map((call): Model.Message => ({
            role: "tool",
            assistantMessageID,
            callID: call.id,
            name: call.name,
            result: call.result ?? { type: "error", value: INTERRUPTED },
          }))

        if (userStop) {
          yield* Fiber.interruptAll(fibers)
          yield* failUnsettled(INTERRUPTED)
          return { stopped: true, needsContinuation: false, messages: [assistant, ...results()] } as const
        }
        const failure = exits.find((exit) => Exit.isFailure(exit) && !Exit.isInterrupted(exit))
        if (failure !== undefined && Exit.isFailure(failure)) {
          yield* failUnsettled(`Tool execution failed: ${errorMessage(failure.cause)}`)
          return yield* Effect.failCause(failure.cause)
        }
        yield* Effect.forEach(
          calls,
          (call) =>
            finish(call, {
              type: "error",
              value: call.providerExecuted ? "Provider did not return a tool result" : INTERRUPTED,
            }),
          { discard: true },
        )
        return { stopped: false, needsContinuation: ranLocalTool, messages: [assistant, ...results()] } as const
      })
      // Settlements already produced are published before the remaining calls are marked interrupted.
      return yield* drive.pipe(
        Effect.onInterrupt(() => Effect.zipRight(Fiber.interruptAll(fibers), failUnsettled(INTERRUPTED))),
      )
    }).pipe(Effect.scoped)

  const run = Effect.fn("Runner.run")(function* (input: RunInput) {
    const writes: Array<Fiber.RuntimeFiber<ToolCallJournal.Settled, ToolCallJournal.RecordError>> = []
    const runScope = yield* Effect.scope
    /** Fails the run once a retried write has given up; at the end, waits for every retried write. */
    const writeFailure = Effect.suspend(() => {
      for (const fiber of writes) {
        const exit = fiber.unsafePoll()
        if (exit !== null && Exit.isFailure(exit)) return Effect.failCause(exit.cause)
      }
      return Effect.void
    })
    const allWritten = Effect.suspend(() => Effect.forEach(writes, Fiber.join, { discard: true }))
    const session = yield* sessions.get(input.sessionID)
    if (session === undefined) return yield* new SessionV2.NotFoundError({ sessionID: input.sessionID })
    const selection = yield* agents.select(session.agent)
    const permissions: ReadonlyArray<ToolRegistry.VisibilityRule> = selection.info?.permissions ?? [
      { action: "*", resource: "*", effect: "deny" },
    ]
    // The agent's own last step disables tools; the runner limit is separate and fails the run.
    const lastStep = selection.info?.steps
    let messages: ReadonlyArray<Model.Message> = [...(input.messages ?? []), { role: "user", content: input.prompt }]
    for (let step = 1; ; step++) {
      if (step > STEP_LIMIT) return yield* new StepLimitExceeded({ steps: step - 1 })
      yield* writeFailure
      const outcome = yield* turn({
        sessionID: input.sessionID,
        agent: selection.id,
        permissions,
        ...(selection.info?.system === undefined ? {} : { system: selection.info.system }),
        toolsEnabled: lastStep === undefined || step < lastStep,
        messages,
        writes,
        runScope,
      })
      messages = [...messages, ...outcome.messages]
      if (outcome.stopped) {
        yield* allWritten
        return { steps: step, stopped: "user", messages } satisfies RunResult
      }
      if (!outcome.needsContinuation) {
        yield* allWritten
        return { steps: step, messages } satisfies RunResult
      }
    }
  }, Effect.scoped)

  yield* recover()
  // Live runners also take over the calls of owners that died while they run: a failed round (the database busy
  // or restarting) is logged and retried on the next one.
  yield* Effect.forkScoped(
    Effect.forever(
      Effect.delay(
        journal
          .recover(INTERRUPTED)
          .pipe(Effect.catchAllCause((cause) => Effect.logWarning("Runner: recovery of expired calls failed", cause))),
        ToolCallJournal.recoveryInterval(journal.leaseMillis),
      ),
    ),
  )
  return Service.of({ run, recover })
})

/**
 * A Location-scoped runner with its own journal owner (`options`: its lease and instance name); when built, and
 * then every half lease while it lives, it marks as interrupted the leftovers of runners that are gone.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerWith = (options: ToolCallJournal.Options = {}) =>
  Layer.scoped(Service, make).pipe(Layer.provide(ToolCallJournal.layer(options)))

/**
 * The Location-scoped runner with the default lease; marks leftovers of runners that are gone as interrupted.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = layerWith()
