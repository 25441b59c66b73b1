/**
 * How the server answers an approval prompt (from `Approvals.prompts`, answered with `Approvals.answer`) and a
 * question of one of its calls: through MCP elicitation when the client supports it. Every way a reply can fail is visible: an "Always allow" whose approval cannot be saved is
 * answered once instead, with a warning in the log and a note to the model in the call's result; a reply that fails
 * any other way is logged, and a permission reply that could not be delivered rejects the request so the call never
 * hangs.
 *
 * @since 0.3.0
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { Approvals, QuestionV2 } from "@toolgate/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Predicate from "effect/Predicate"
import * as Prompts from "../prompts.js"

/**
 * Notes for the model, by call id, appended to the call's result.
 *
 * @since 0.3.0
 * @category models
 */
export type Notes = Map<string, Array<string>>

/**
 * The model-visible note when "Always allow" could not be saved and the call was allowed once.
 *
 * @since 0.3.0
 * @category utilities
 */
export const unsavedNote = (action: string, cause: string): string =>
  `Note: the user chose "Always allow" for ${action}, but the approval could not be saved (${cause}); this call was allowed once only, and the next one will ask again.`

/** The fields of `PermissionV2.SaveError` this module reads. */
interface Unsaved {
  readonly message: string
  readonly filename?: string | undefined
  readonly code?: string | undefined
  readonly detail?: string | undefined
}

/** The cause of a failed save, in one line, without the advice meant for programs. */
const saveCause = (error: Unsaved): string =>
  [error.filename, error.code, error.detail].filter((part) => part !== undefined && part !== "").join(": ") ||
  error.message

const oneLine = (cause: Cause.Cause<unknown>): string => Cause.pretty(cause).split("\n")[0] ?? "unknown failure"

type Answer = { readonly choice: string; readonly message?: string }

/** The longest timeout a timer takes (about 24.8 days): the SDK's own request timeout (60 s) must not apply. */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * Answers `prompt` through `Approvals` (its digest, channel `mcp`); a failure is logged, and an answer that never
 * reached the request rejects it.
 */
const deliver = (
  prompt: Approvals.Prompt,
  answer: Answer,
  notes: Notes,
): Effect.Effect<void, never, Approvals.Service> =>
  Effect.gen(function* () {
    const approvals = yield* Approvals.Service
    const request = prompt.request
    const exit = yield* Effect.exit(
      approvals.answer({
        requestID: request.id,
        digest: prompt.digest,
        choice: answer.choice,
        ...(answer.message === undefined ? {} : { message: answer.message }),
        channel: "mcp",
      }),
    )
    if (Exit.isSuccess(exit)) return
    const failure = Cause.failureOption(exit.cause)
    if (
      failure._tag === "Some" &&
      (failure.value._tag === "PermissionV2.NotFoundError" || failure.value._tag === "Approvals.AlreadyAnsweredError")
    ) {
      // Already answered (another channel, a cascade, a saved approval), expired, or its call was cancelled.
      return yield* Effect.logDebug(`McpServer: permission request ${request.id} was no longer pending`)
    }
    const chosen = prompt.choices.find((choice) => choice.id === answer.choice)
    if (
      chosen?.lifetime === "always" &&
      failure._tag === "Some" &&
      Predicate.isTagged(failure.value, "PermissionV2.SaveError")
    ) {
      const error = failure.value as unknown as Unsaved
      yield* Effect.logWarning(
        `McpServer: the "always" approval of permission request ${request.id} (${request.action}) could not be saved; answered once instead: ${error.message}`,
      )
      const callID = request.source?.callID
      if (callID !== undefined)
        notes.set(callID, [...(notes.get(callID) ?? []), unsavedNote(request.action, saveCause(error))])
      return yield* deliver(prompt, { choice: "once" }, notes)
    }
    yield* Effect.logError(`McpServer: replying to permission request ${request.id} failed: ${oneLine(exit.cause)}`)
    if (answer.choice !== "reject") {
      yield* deliver(
        prompt,
        { choice: "reject", message: `the permission reply failed: ${oneLine(exit.cause)}` },
        notes,
      )
    }
  })

/**
 * Answers one approval prompt: refused with `NO_PROMPT` when the client cannot elicit, otherwise as the user answers
 * the elicitation form. The form waits as long as the ask does (until its deadline, `permission.ask_timeout`; the
 * SDK's own 60 s request timeout does not apply) and is withdrawn (the request cancelled) once `gone` — the ask was
 * answered through another channel or expired.
 *
 * @since 0.3.0
 * @category utilities
 */
export const answerPermission = (
  server: Server,
  prompt: Approvals.Prompt,
  notes: Notes,
  gone: Effect.Effect<void>,
): Effect.Effect<void, never, Approvals.Service> =>
  Effect.gen(function* () {
    if (server.getClientCapabilities()?.elicitation === undefined)
      return yield* deliver(prompt, { choice: "reject", message: Prompts.NO_PROMPT }, notes)
    const timeout =
      prompt.deadline === undefined ? MAX_TIMER_MS : Math.min(MAX_TIMER_MS, Math.max(1, prompt.deadline - Date.now()))
    const elicited = yield* Effect.tryPromise((signal) =>
      server.elicitInput(
        { message: Prompts.promptMessage(prompt), requestedSchema: Prompts.promptSchema(prompt) },
        { signal, timeout },
      ),
    ).pipe(Effect.either, Effect.raceFirst(Effect.as(gone, undefined)))
    if (elicited === undefined) return
    if (elicited._tag === "Left")
      return yield* deliver(
        prompt,
        { choice: "reject", message: `the permission prompt failed: ${elicited.left.error}` },
        notes,
      )
    return yield* deliver(prompt, Prompts.promptAnswer(prompt, elicited.right), notes)
  })

/**
 * Answers one question through elicitation; a declined form (or a failed prompt) dismisses it.
 *
 * @since 0.3.0
 * @category utilities
 */
export const answerQuestion = (server: Server, request: QuestionV2.Request) =>
  Effect.gen(function* () {
    const questions = yield* QuestionV2.Service
    const elicited =
      server.getClientCapabilities()?.elicitation === undefined
        ? undefined
        : yield* Effect.tryPromise(() =>
            server.elicitInput({
              message: Prompts.questionMessage(request),
              requestedSchema: Prompts.questionSchema(request),
            }),
          ).pipe(Effect.either)
    const answers =
      elicited !== undefined && elicited._tag === "Right" ? Prompts.questionAnswers(request, elicited.right) : undefined
    if (elicited?._tag === "Left")
      yield* Effect.logWarning(`McpServer: the question prompt failed: ${elicited.left.error}`)
    const exit = yield* Effect.exit(
      answers === undefined ? questions.reject(request.id) : questions.reply({ requestID: request.id, answers }),
    )
    if (Exit.isFailure(exit) && !Cause.isFailType(exit.cause))
      yield* Effect.logError(`McpServer: answering question ${request.id} failed: ${oneLine(exit.cause)}`)
  })
