/**
 * QuestionV2: prompts a tool puts to the user. `ask` parks the caller on a Deferred until a client replies or
 * rejects; a dismissal fails with `RejectedError`, which the question tool turns into a defect so the runner stops
 * the loop. Pending prompts belong to one Location and are rejected when its scope closes.
 *
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as EventV2 from "../place/event.js"
import * as Identifier from "../values/identifier.js"
import * as LLM from "../values/llm.js"

/**
 * A question request id (`que…`).
 *
 * @since 0.1.0
 * @category constants
 */
export const ID = Schema.String.pipe(Schema.startsWith("que"))
/**
 * @see ID
 *
 * @since 0.1.0
 * @category models
 */
export type ID = typeof ID.Type

/**
 * Returns a fresh `que_…` id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createID = (): ID => Identifier.create("que")

/**
 * One choice the user can pick.
 *
 * @since 0.1.0
 * @category models
 */
export const Option = Schema.Struct({
  label: Schema.String.annotations({ description: "Text shown for this choice, kept to a few words (1-5)" }),
  description: Schema.String.annotations({ description: "What picking this choice means" }),
})
/**
 * @see Option
 *
 * @since 0.1.0
 * @category models
 */
export type Option = typeof Option.Type

/**
 * A question as the model writes it.
 *
 * @since 0.1.0
 * @category models
 */
export const Prompt = Schema.Struct({
  question: Schema.String.annotations({ description: "The full question to put to the user" }),
  header: Schema.String.annotations({ description: "A very short label for the question (30 characters at most)" }),
  options: Schema.Array(Option).annotations({ description: "The choices offered to the user" }),
  multiple: Schema.optional(
    Schema.Boolean.annotations({ description: "Whether the user may pick more than one choice" }),
  ),
})
/**
 * @see Prompt
 *
 * @since 0.1.0
 * @category models
 */
export type Prompt = typeof Prompt.Type

/**
 * A question as the service stores it: a prompt plus whether a typed answer is allowed.
 *
 * @since 0.1.0
 * @category models
 */
export const Info = Schema.Struct({
  ...Prompt.fields,
  custom: Schema.optional(
    Schema.Boolean.annotations({ description: "Whether the user may type an answer of their own (true unless set)" }),
  ),
})
/**
 * @see Info
 *
 * @since 0.1.0
 * @category models
 */
export type Info = typeof Info.Type

/**
 * The tool call a request came from.
 *
 * @since 0.1.0
 * @category models
 */
export const Tool = Schema.Struct({ messageID: Schema.String, callID: Schema.String })
/**
 * @see Tool
 *
 * @since 0.1.0
 * @category models
 */
export type Tool = typeof Tool.Type

/**
 * A pending request as clients see it.
 *
 * @since 0.1.0
 * @category models
 */
export const Request = Schema.Struct({
  id: ID,
  sessionID: Schema.String,
  questions: Schema.Array(Info),
  tool: Schema.optional(Tool),
})
/**
 * @see Request
 *
 * @since 0.1.0
 * @category models
 */
export type Request = typeof Request.Type

/**
 * The labels chosen (or typed) for one question.
 *
 * @since 0.1.0
 * @category models
 */
export const Answer = Schema.Array(Schema.String)
/**
 * @see Answer
 *
 * @since 0.1.0
 * @category models
 */
export type Answer = typeof Answer.Type

/**
 * The user dismissed the question. The question tool delivers it as a defect.
 *
 * @since 0.1.0
 * @category errors
 */
export class RejectedError extends Schema.TaggedError<RejectedError>()("QuestionV2.RejectedError", {}) {
  override get message(): string {
    return "The user dismissed this question"
  }
}

/**
 * No pending request has this id.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFoundError extends Schema.TaggedError<NotFoundError>()("QuestionV2.NotFoundError", {
  requestID: Schema.String,
}) {}

/**
 * Events (live only).
 *
 * @since 0.1.0
 * @category models
 */
export const Event = {
  Asked: EventV2.define("question.v2.asked", Request),
  Replied: EventV2.define(
    "question.v2.replied",
    Schema.Struct({ sessionID: Schema.String, requestID: Schema.String, answers: Schema.Array(Answer) }),
  ),
  Rejected: EventV2.define(
    "question.v2.rejected",
    Schema.Struct({ sessionID: Schema.String, requestID: Schema.String }),
  ),
} as const

/**
 * Every event this module publishes.
 *
 * @since 0.1.0
 * @category models
 */
export const Definitions = [Event.Asked, Event.Replied, Event.Rejected] as const

/**
 * The input of `ask`.
 *
 * @since 0.1.0
 * @category models
 */
export interface AskInput {
  readonly sessionID: string
  readonly questions: ReadonlyArray<Info>
  readonly tool?: Tool
}

/**
 * The input of `reply`: one answer per question, in order.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplyInput {
  readonly requestID: string
  readonly answers: ReadonlyArray<Answer>
}

/**
 * The question service, one per Location.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /** Publishes the request and waits for the user; a dismissal fails with `RejectedError`. */
  readonly ask: (input: AskInput) => Effect.Effect<ReadonlyArray<Answer>, RejectedError>
  readonly reply: (input: ReplyInput) => Effect.Effect<void, NotFoundError>
  readonly reject: (requestID: string) => Effect.Effect<void, NotFoundError>
  /** The pending requests, oldest first. */
  readonly list: () => Effect.Effect<ReadonlyArray<Request>>
}

/**
 * The QuestionV2 service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Question")<Service, Interface>() {}

/**
 * True iff the cause carries a `RejectedError` defect.
 *
 * @since 0.1.0
 * @category guards
 */
export const isDismissed = (cause: Cause.Cause<unknown>): boolean => LLM.hasDefectTag(cause, "QuestionV2.RejectedError")

interface Pending {
  readonly request: Request
  readonly deferred: Deferred.Deferred<ReadonlyArray<Answer>, RejectedError>
}

/**
 * Builds one Location's question service; closing the scope rejects every pending request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Interface, never, EventV2.Service | Scope.Scope> = Effect.gen(function* () {
  const events = yield* EventV2.Service
  const pending = new Map<string, Pending>()

  // A listener that throws fails the publish; for our own bookkeeping events that is a defect.
  const publish = <Data>(definition: EventV2.Definition<string, Data>, data: Data) =>
    Effect.orDie(events.publish(definition, data))

  const dismiss = (item: Pending) =>
    Effect.exit(events.publish(Event.Rejected, { sessionID: item.request.sessionID, requestID: item.request.id })).pipe(
      Effect.zipRight(Deferred.fail(item.deferred, new RejectedError())),
    )

  // Release every waiter before announcing anything, so a bus that is already gone cannot keep an asker parked.
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      const all = Array.from(pending.values())
      pending.clear()
      return Effect.forEach(all, (item) => Deferred.fail(item.deferred, new RejectedError()), { discard: true }).pipe(
        Effect.zipRight(
          Effect.forEach(
            all,
            (item) =>
              Effect.exit(
                events.publish(Event.Rejected, { sessionID: item.request.sessionID, requestID: item.request.id }),
              ),
            { discard: true },
          ),
        ),
      )
    }),
  )

  const ask = Effect.fn("QuestionV2.ask")((input: AskInput) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        const id = createID()
        const deferred = yield* Deferred.make<ReadonlyArray<Answer>, RejectedError>()
        const request: Request = {
          id,
          sessionID: input.sessionID,
          questions: input.questions,
          ...(input.tool === undefined ? {} : { tool: input.tool }),
        }
        const item: Pending = { request, deferred }
        pending.set(id, item)
        // Only the wait is interruptible; whatever happens, the entry does not outlive this call.
        return yield* publish(Event.Asked, request).pipe(
          Effect.zipRight(
            restore(Deferred.await(deferred)).pipe(
              Effect.onInterrupt(() => (pending.get(id) === item ? dismiss(item) : Effect.void)),
            ),
          ),
          Effect.ensuring(Effect.sync(() => pending.delete(id))),
        )
      }),
    ),
  )

  const reply = Effect.fn("QuestionV2.reply")((input: ReplyInput) =>
    Effect.uninterruptible(
      Effect.gen(function* () {
        const item = pending.get(input.requestID)
        if (item === undefined) return yield* new NotFoundError({ requestID: input.requestID })
        yield* publish(Event.Replied, {
          sessionID: item.request.sessionID,
          requestID: item.request.id,
          answers: input.answers,
        })
        pending.delete(input.requestID)
        yield* Deferred.succeed(item.deferred, input.answers)
      }),
    ),
  )

  const reject = Effect.fn("QuestionV2.reject")((requestID: string) =>
    Effect.uninterruptible(
      Effect.gen(function* () {
        const item = pending.get(requestID)
        if (item === undefined) return yield* new NotFoundError({ requestID })
        yield* publish(Event.Rejected, { sessionID: item.request.sessionID, requestID })
        pending.delete(requestID)
        yield* Deferred.fail(item.deferred, new RejectedError())
      }),
    ),
  )

  const list = Effect.fn("QuestionV2.list")(function* () {
    return Array.from(pending.values(), (item) => item.request)
  })

  return Service.of({ ask, reply, reject, list })
})

/**
 * The Location-scoped layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, EventV2.Service> = Layer.scoped(Service, make)
