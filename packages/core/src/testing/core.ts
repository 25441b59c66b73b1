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
import * as Config from "../place/config.js"
import * as EventV2 from "../place/event.js"
import * as PermissionV2 from "../policy/permission.js"
import * as QuestionV2 from "../policy/question.js"
import { layerLocation, layerProcess } from "../assembly/core.js"

/**
 * Everything `Core` exports, so `Core.layerTest` sits beside `Core.layerProcess` and `Core.layer`.
 *
 * @since 0.2.0
 */
export * from "../assembly/core.js"

/**
 * How `layerTest` answers permission asks: a fixed reply, or a function of the request.
 *
 * @since 0.2.0
 */
export type PermissionScript =
  | PermissionV2.Reply
  | ((request: PermissionV2.Request) => { readonly reply: PermissionV2.Reply; readonly message?: string })

/**
 * Options of `layerTest`.
 *
 * @since 0.2.0
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

/**
 * Answers asks as they are published. Subscribes before returning, so no ask published after the layer is built is
 * missed.
 */
const responders = (options: TestOptions) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const events = yield* EventV2.Service
      const permission = yield* PermissionV2.Service
      const questions = yield* QuestionV2.Service
      const queue = yield* events.queue(PermissionV2.Event.Asked, QuestionV2.Event.Asked)
      const answer = (
        envelope: EventV2.EnvelopeOf<typeof PermissionV2.Event.Asked | typeof QuestionV2.Event.Asked>,
      ) => {
        if (envelope.type === "permission.v2.asked" && options.permission !== undefined) {
          const request = envelope.data
          const decision =
            typeof options.permission === "function" ? options.permission(request) : { reply: options.permission }
          return permission.reply({ requestID: request.id, ...decision }).pipe(
            Effect.catchTag("PermissionV2.SaveError", (error) =>
              Effect.zipRight(
                Effect.logError(error.message),
                permission.reply({ requestID: request.id, reply: "reject", message: error.message }),
              ),
            ),
            // Already answered (by the test, or released by a saved approval): nothing to do.
            Effect.catchTag("PermissionV2.NotFoundError", () => Effect.void),
          )
        }
        if (envelope.type === "question.v2.asked" && options.question !== undefined) {
          const request = envelope.data
          return Effect.ignore(
            questions.reply({ requestID: request.id, answers: options.question(request).map((labels) => [...labels]) }),
          )
        }
        return Effect.void
      }
      yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(queue), answer)))
    }),
  )

/**
 * A complete Location for tests: a temp data directory (removed afterwards), an in-memory database, configuration
 * only from `options.config`, and optional scripted permission and question replies.
 *
 * @since 0.2.0
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
