/**
 * The demo's permission prompts, on the one approval protocol: every prompt of `Approvals.prompts` is queued for the
 * screen, shown with what it carries (the command, the diff, each choice with what it saves and where) and answered
 * with `Approvals.answer` (the digest of the prompt shown, channel `cli`, and who answered); an answer or expiry
 * from elsewhere (the HTTP server, `permission.ask_timeout`) withdraws the prompt on screen and is recorded.
 *
 * @since 0.3.0
 */
import * as os from "node:os"
import type * as Prompt from "@effect/cli/Prompt"
import { Approvals, type PermissionV2 } from "@toolgate/core"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Answers from "./answers.js"
import * as Describe from "./describe.js"
import type * as Screen from "./screen.js"

/**
 * One tool call of the transcript.
 *
 * @since 0.3.0
 * @category models
 */
export interface Call {
  readonly callID: string
  readonly tool: string
  readonly input: unknown
  /** `rejected`: the user rejected one of its permission asks; `dismissed`: the user dismissed its question. */
  status: "running" | "completed" | "failed" | "rejected" | "dismissed"
  /** Set when the user rejected an ask of the call or dismissed its question, before the call ends. */
  stoppedBy?: "rejected" | "dismissed"
  outcome: string
  /** When the call started running (reset when a prompt for it is answered). */
  started: number
}

/**
 * One permission decision of the summary.
 *
 * @since 0.3.0
 * @category models
 */
export interface Decision {
  readonly action: string
  readonly resources: ReadonlyArray<string>
  /** The choice (`always` for the widest, `always:pattern`), or `timed out`. */
  readonly reply: string
  readonly message?: string
  readonly by: string
}

/** How the summary names a choice: `always` alone is the widest one, as the prompt's `always` answer means it. */
const replyName = (choice: string): string => (choice === "always:pattern" ? "always" : choice)

/** Who resolved an ask nobody here answered: a reject's cascade, a saved approval, or another channel. */
const resolvedBy = (event: { readonly choice: string; readonly channel: string; readonly by?: string | undefined }) =>
  event.choice === "cascade"
    ? "cascade"
    : event.channel === "watcher"
      ? "saved approval"
      : event.by === undefined
        ? event.channel
        : `${event.by} (${event.channel})`

/** Who answers for the saved rows and the journal: the --yes flag, or the user running the demo. */
const answeredBy = (answerer: Answers.Answerer): string => {
  if (answerer.name === "--yes") return "toolgate demo --yes"
  try {
    return os.userInfo().username
  } catch {
    return answerer.name
  }
}

/**
 * What the demo's prompts share with its transcript.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options {
  readonly screen: Screen.Screen
  readonly answerer: Answers.Answerer
  readonly calls: ReadonlyArray<Call>
  readonly decisions: Array<Decision>
  /** Puts a prompt in the queue of things to ask (one at a time, with the questions). */
  readonly enqueue: (prompt: Approvals.Prompt) => void
}

/**
 * Watches the prompts until the scope closes; `ask` shows one and answers it.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  options: Options,
): Effect.Effect<
  { readonly ask: (prompt: Approvals.Prompt) => Effect.Effect<void, never, Prompt.Prompt.Environment> },
  never,
  Approvals.Service | Scope.Scope
> =>
  Effect.gen(function* () {
    const { screen, answerer, calls, decisions } = options
    const approvals = yield* Approvals.Service
    const requests = new Map<string, PermissionV2.Request>()
    const ours = new Map<string, Answers.PermissionAnswer>()
    /** Per pending prompt: done once it is answered (here or through another channel) or expires. */
    const settled = new Map<string, Deferred.Deferred<void>>()
    const callOf = (request: PermissionV2.Request) => {
      const callID = request.source?.callID
      return callID === undefined ? undefined : calls.find((candidate) => candidate.callID === callID)
    }
    /** The approval prompts, from the one protocol: each is queued for the screen; answers and expiries recorded. */
    const onPrompt = (event: Approvals.PromptEvent): Effect.Effect<void> => {
      switch (event._tag) {
        case "Asked": {
          const request = event.prompt.request
          requests.set(request.id, request)
          return Effect.map(Deferred.make<void>(), (done) => {
            settled.set(request.id, done)
            options.enqueue(event.prompt)
          })
        }
        case "Answered":
        case "Expired": {
          const request = requests.get(event.requestID)
          const done = settled.get(event.requestID)
          settled.delete(event.requestID)
          if (request === undefined) return Effect.void
          const mine = ours.get(event.requestID)
          const reply =
            event._tag === "Expired" ? "timed out" : event.choice === "cascade" ? "reject" : replyName(event.choice)
          const by =
            event._tag === "Expired" ? "permission.ask_timeout" : mine !== undefined ? answerer.name : resolvedBy(event)
          decisions.push({
            action: request.action,
            resources: request.resources,
            reply,
            ...(mine?.message === undefined ? {} : { message: mine.message }),
            by,
          })
          if (mine === undefined)
            screen.line(`  permission ${request.action} ${request.resources.join(", ")}: ${reply} (${by})`)
          const call = callOf(request)
          if (call !== undefined) call.started = Date.now()
          // A rejection that reached us after its call ended still labels the call.
          if (call !== undefined && reply === "reject") {
            call.stoppedBy = "rejected"
            if (call.status === "failed") call.status = "rejected"
          }
          return done === undefined ? Effect.void : Deferred.succeed(done, undefined)
        }
      }
    }
    yield* Effect.forkScoped(Stream.runForEach(approvals.prompts(), onPrompt))

    /** Shows a prompt and answers it through `Approvals`; withdrawn when another channel answers it or it expires. */
    const ask = (prompt: Approvals.Prompt): Effect.Effect<void, never, Prompt.Prompt.Environment> =>
      Effect.gen(function* () {
        const request = prompt.request
        const done = settled.get(request.id)
        if (done === undefined || (yield* Deferred.isDone(done))) return
        screen.status(undefined)
        for (const line of Describe.promptLines(prompt)) screen.line(line)
        if (answerer.name === "stdin") screen.line(`    (${Answers.permissionHint(prompt)})`)
        // An `always` whose approval cannot be saved leaves the ask pending: say why and ask again.
        for (;;) {
          const answer = yield* answerer.permission(prompt)
          const choice = Answers.choiceOf(prompt, answer)
          if (choice === undefined) {
            screen.line(`    ! not offered: ${Answers.spoken(answer)}`)
            continue
          }
          if (answerer.name === "--yes") screen.line(`    > ${choice.id} (--yes)`)
          ours.set(request.id, answer)
          // The call's failure event can arrive before the answer's: label it before answering.
          const call = callOf(request)
          if (call !== undefined && choice.lifetime === "reject") call.stoppedBy = "rejected"
          const failed = yield* approvals
            .answer({
              requestID: request.id,
              digest: prompt.digest,
              choice: choice.id,
              ...(answer.message === undefined ? {} : { message: answer.message }),
              by: answeredBy(answerer),
              channel: "cli",
            })
            .pipe(
              Effect.as(undefined),
              Effect.catchTags({
                "PermissionV2.NotFoundError": () => Effect.succeed(undefined),
                "Approvals.AlreadyAnsweredError": () => Effect.succeed(undefined),
              }),
              Effect.catchAll((error) => Effect.succeed(error)),
            )
          if (failed === undefined) return
          ours.delete(request.id)
          if (call !== undefined) delete call.stoppedBy
          screen.line(`    ! ${failed.message}`)
          if (failed._tag === "Approvals.DigestMismatchError") return
        }
      }).pipe(
        Effect.raceFirst(
          Effect.flatMap(
            Effect.sync(() => settled.get(prompt.request.id)),
            (done) => (done === undefined ? Effect.void : Deferred.await(done)),
          ),
        ),
      )
    return { ask }
  })
