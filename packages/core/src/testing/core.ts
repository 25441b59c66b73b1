/**
 * `Core` with its test harness: everything `Core` has, plus `layerTest`, a complete throw-away Location for an
 * embedder's unit tests (temp directories, an in-memory database, scripted permission and question replies). It
 * is exported from `@toolgate/core/testing` so the production entry never carries test code.
 *
 * @since 0.2.0
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as Config from "../place/config.js"
import * as EventV2 from "../place/event.js"
import * as Approvals from "../approvals/approvals.js"
import * as PermissionV2 from "../permission/permission.js"
import * as QuestionV2 from "../agent/question.js"

import * as internal from "../assembly/core.js"

/**
 * Options of the process-wide part.
 *
 * @since 0.1.0
 * @category models
 */
export type ProcessOptions = internal.ProcessOptions
/**
 * Options of one Location.
 *
 * @since 0.1.0
 * @category models
 */
export type LocationOptions = internal.LocationOptions
/**
 * What `layerProcess` provides.
 *
 * @since 0.1.0
 * @category models
 */
export type ProcessServices = internal.ProcessServices
/**
 * The process-wide services; build once per process and share between Locations.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerProcess = internal.layerProcess
/**
 * Every Location service on top of the process services, with the built-in tools registered.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLocation = internal.layerLocation
/**
 * One Location with its own process services: the simplest embedding.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = internal.layer

/**
 * How `layerTest` answers permission asks: a fixed reply, or a function of the request (and of the whole prompt,
 * for a test that picks one of its choices: `{ choice: "always:exact" }`, `{ choice: "session" }`, with an optional
 * `ttlMillis` for an `always`). `always` is the widest `always` the prompt offers (`Approvals.choiceOf`).
 *
 * @since 0.2.0
 * @category models
 */
export type PermissionScript =
  | PermissionV2.Reply
  | ((
      request: PermissionV2.Request,
      prompt: Approvals.Prompt,
    ) =>
      | { readonly reply: PermissionV2.Reply; readonly message?: string }
      | { readonly choice: string; readonly message?: string; readonly ttlMillis?: number })

/**
 * Options of `layerTest`.
 *
 * @since 0.2.0
 * @category models
 */
export interface TestOptions {
  /** The Location directory (default: a fresh temp directory). */
  readonly directory?: string
  readonly config?: Config.Info
  /**
   * Answer every permission ask automatically; leave unset to answer in the test. A scripted `always` whose
   * approval cannot be saved (`PermissionV2.SaveError`) is logged and the request rejected with the error's message
   * as feedback, so the failure shows in the tool result instead of being turned into a quiet `once`.
   */
  readonly permission?: PermissionScript
  /** Answer every question automatically (labels per question); leave unset to answer in the test. */
  readonly question?: (request: QuestionV2.Request) => ReadonlyArray<ReadonlyArray<string>>
}

const tempDirectory = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))),
    (directory) => Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true })),
  )

/** The answer a script gives to `prompt`, through the one approval protocol (channel `test`). */
const scripted = (script: PermissionScript, prompt: Approvals.Prompt): Approvals.Answer => {
  const decision = typeof script === "function" ? script(prompt.request, prompt) : { reply: script }
  const base = { requestID: prompt.request.id, digest: prompt.digest, channel: "test", by: "Core.layerTest" }
  const message = decision.message === undefined ? {} : { message: decision.message }
  if ("choice" in decision)
    return {
      ...base,
      choice: decision.choice,
      ...message,
      ...(decision.ttlMillis === undefined ? {} : { ttlMillis: decision.ttlMillis }),
    }
  // An `always` that would save nothing is not offered: it acts like `once`, as `PermissionV2.reply` does.
  const choice = Approvals.choiceOf(prompt, decision.reply) ?? Approvals.choiceOf(prompt, "once")
  return { ...base, choice: choice?.id ?? decision.reply, ...message }
}

/**
 * Answers asks as they are put: permission prompts through `Approvals` (a prompt stream starts with every prompt
 * already pending, so none is missed), questions as they are published (subscribed before the layer is built).
 */
const responders = (options: TestOptions) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const events = yield* EventV2.Service
      const approvals = yield* Approvals.Service
      const questions = yield* QuestionV2.Service
      const script = options.permission
      if (script !== undefined) {
        const answer = (prompt: Approvals.Prompt) => {
          const given = scripted(script, prompt)
          return approvals.answer(given).pipe(
            Effect.catchTag("PermissionV2.SaveError", (error) =>
              Effect.zipRight(
                Effect.logError(error.message),
                approvals.answer({ ...given, choice: "reject", message: error.message }),
              ),
            ),
            // Already answered (by the test, a cascade, or released by a saved approval): nothing to do.
            Effect.catchTags({
              "PermissionV2.NotFoundError": () => Effect.void,
              "Approvals.AlreadyAnsweredError": () => Effect.void,
            }),
            // A script naming a choice the prompt does not offer, or a digest that moved, is the test's bug: loud.
            Effect.catchAll((error) => Effect.logError(`Core.layerTest: ${error.message}`)),
          )
        }
        yield* Effect.forkScoped(
          Stream.runForEach(approvals.prompts(), (event) =>
            event._tag === "Asked" ? answer(event.prompt) : Effect.void,
          ),
        )
      }
      if (options.question !== undefined) {
        const reply = options.question
        const queue = yield* events.queue(QuestionV2.Event.Asked)
        yield* Effect.forkScoped(
          Effect.forever(
            Effect.flatMap(Queue.take(queue), (envelope) =>
              Effect.ignore(
                questions.reply({
                  requestID: envelope.data.id,
                  answers: reply(envelope.data).map((labels) => [...labels]),
                }),
              ),
            ),
          ),
        )
      }
    }),
  )

/**
 * A complete Location for tests: a temp data directory (removed afterwards), an in-memory database, configuration
 * only from `options.config`, and optional scripted permission and question replies.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerTest = (options: TestOptions = {}) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const data = yield* tempDirectory("toolgate-data-")
      const directory = options.directory ?? (yield* tempDirectory("toolgate-location-"))
      const location = layerLocation({
        directory,
        discover: false,
        ...(options.config === undefined ? {} : { config: options.config }),
      })
      return responders(options).pipe(
        Layer.provideMerge(location),
        Layer.provideMerge(layerProcess({ data, memoryDatabase: true })),
      )
    }),
  )
