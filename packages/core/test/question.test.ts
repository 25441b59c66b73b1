import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Fiber, FiberId, Layer, Queue, Scope } from "effect"
import { EventV2, Location, QuestionV2 } from "../src/index.js"

const location = Location.layerWith({ directory: "/tmp/question", project: { id: "global", directory: "/" } })
const events = EventV2.layer.pipe(Layer.provide(location))

/** A fresh question service plus the bus it publishes on, built in a scope the test controls. */
const build = Effect.gen(function* () {
  const scope = yield* Scope.make()
  const context = yield* Layer.buildWithScope(QuestionV2.layer.pipe(Layer.provideMerge(events)), scope)
  const question = Context.get(context, QuestionV2.Service)
  const bus = Context.get(context, EventV2.Service)
  const queue = yield* bus.queue().pipe(Scope.extend(scope))
  return { scope, question, queue }
})

/** Takes the next event, which must be of `definition`, and returns its typed data. */
const next = <Type extends string, Data>(
  queue: Queue.Dequeue<EventV2.Envelope>,
  definition: EventV2.Definition<Type, Data>,
) =>
  Effect.flatMap(Queue.take(queue), (envelope) =>
    EventV2.is(definition)(envelope)
      ? Effect.succeed(envelope.data)
      : Effect.dieMessage(`expected ${definition.type}, got ${envelope.type}`),
  )

const prompt: QuestionV2.Info = {
  question: "Which database?",
  header: "Database",
  options: [
    { label: "SQLite", description: "Embedded" },
    { label: "Postgres", description: "Server" },
  ],
}

describe("QuestionV2", () => {
  it.effect("ask publishes the request and resolves with the reply", () =>
    Effect.gen(function* () {
      const { question, queue } = yield* build
      const fiber = yield* Effect.fork(
        question.ask({ sessionID: "ses_1", questions: [prompt], tool: { messageID: "msg_1", callID: "call_1" } }),
      )
      const request = yield* next(queue, QuestionV2.Event.Asked)
      expect(request.id.startsWith("que_")).toBe(true)
      expect(request).toEqual({
        id: request.id,
        sessionID: "ses_1",
        questions: [prompt],
        tool: { messageID: "msg_1", callID: "call_1" },
      })
      expect(yield* question.list()).toEqual([request])

      yield* question.reply({ requestID: request.id, answers: [["SQLite"]] })
      expect(yield* Fiber.join(fiber)).toEqual([["SQLite"]])
      const replied = yield* Queue.take(queue)
      expect(replied.type).toBe("question.v2.replied")
      expect(replied.data).toEqual({ sessionID: "ses_1", requestID: request.id, answers: [["SQLite"]] })
      expect(yield* question.list()).toEqual([])
    }),
  )

  it.effect("reject fails the asker with RejectedError and publishes question.v2.rejected", () =>
    Effect.gen(function* () {
      const { question, queue } = yield* build
      const fiber = yield* Effect.fork(question.ask({ sessionID: "ses_1", questions: [prompt] }))
      const request = yield* next(queue, QuestionV2.Event.Asked)
      expect(request.tool).toBeUndefined()
      yield* question.reject(request.id)
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        const error = Cause.failureOption(exit.cause)
        expect(error._tag).toBe("Some")
        if (error._tag === "Some") {
          expect(error.value._tag).toBe("QuestionV2.RejectedError")
          expect(error.value.message).toBe("The user dismissed this question")
        }
      }
      const rejected = yield* Queue.take(queue)
      expect(rejected.type).toBe("question.v2.rejected")
      expect(rejected.data).toEqual({ sessionID: "ses_1", requestID: request.id })
      expect(yield* question.list()).toEqual([])
    }),
  )

  it.effect("reply and reject of an unknown id fail with NotFoundError", () =>
    Effect.gen(function* () {
      const { question } = yield* build
      const replied = yield* Effect.flip(question.reply({ requestID: "que_missing", answers: [] }))
      expect(replied).toEqual(new QuestionV2.NotFoundError({ requestID: "que_missing" }))
      const rejected = yield* Effect.flip(question.reject("que_missing"))
      expect(rejected._tag).toBe("QuestionV2.NotFoundError")
      expect(rejected.requestID).toBe("que_missing")
    }),
  )

  it.effect("a second reply to the same request is NotFoundError", () =>
    Effect.gen(function* () {
      const { question, queue } = yield* build
      const fiber = yield* Effect.fork(question.ask({ sessionID: "ses_1", questions: [prompt] }))
      const request = yield* next(queue, QuestionV2.Event.Asked)
      yield* question.reply({ requestID: request.id, answers: [["Postgres"]] })
      expect(yield* Fiber.join(fiber)).toEqual([["Postgres"]])
      const again = yield* Effect.flip(question.reply({ requestID: request.id, answers: [["SQLite"]] }))
      expect(again._tag).toBe("QuestionV2.NotFoundError")
    }),
  )

  it.effect("closing the Location scope rejects every pending request", () =>
    Effect.gen(function* () {
      const { scope, question, queue } = yield* build
      const first = yield* Effect.fork(question.ask({ sessionID: "ses_1", questions: [prompt] }))
      const second = yield* Effect.fork(question.ask({ sessionID: "ses_2", questions: [] }))
      yield* Queue.take(queue)
      yield* Queue.take(queue)
      expect((yield* question.list()).length).toBe(2)
      yield* Scope.close(scope, Exit.void)
      for (const fiber of [first, second]) {
        const exit = yield* Fiber.await(fiber)
        expect(
          Exit.isFailure(exit) && Cause.failureOption(exit.cause).pipe((o) => o._tag === "Some" && o.value._tag),
        ).toBe("QuestionV2.RejectedError")
      }
      expect(yield* question.list()).toEqual([])
    }),
  )

  it.effect("scope close still releases askers when the bus is already gone", () =>
    Effect.gen(function* () {
      const busScope = yield* Scope.make()
      const bus = yield* Layer.buildWithScope(events, busScope)
      const queue = yield* Context.get(bus, EventV2.Service).queue().pipe(Scope.extend(busScope))
      const questionScope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(QuestionV2.layer, questionScope).pipe(Effect.provide(bus))
      const question = Context.get(context, QuestionV2.Service)
      const fiber = yield* Effect.fork(question.ask({ sessionID: "ses_1", questions: [prompt] }))
      yield* Queue.take(queue)
      yield* Scope.close(busScope, Exit.void)
      yield* Scope.close(questionScope, Exit.void)
      const exit = yield* Fiber.await(fiber)
      expect(
        Exit.isFailure(exit) && Cause.failureOption(exit.cause).pipe((o) => o._tag === "Some" && o.value._tag),
      ).toBe("QuestionV2.RejectedError")
    }),
  )

  it.effect("interrupting the asker removes the pending entry and reports it rejected", () =>
    Effect.gen(function* () {
      const { question, queue } = yield* build
      const fiber = yield* Effect.fork(question.ask({ sessionID: "ses_1", questions: [prompt] }))
      const request = yield* next(queue, QuestionV2.Event.Asked)
      yield* Fiber.interrupt(fiber)
      expect(yield* question.list()).toEqual([])
      const rejected = yield* Queue.take(queue)
      expect(rejected.type).toBe("question.v2.rejected")
      expect(rejected.data).toEqual({ sessionID: "ses_1", requestID: request.id })
      expect((yield* Effect.flip(question.reply({ requestID: request.id, answers: [] })))._tag).toBe(
        "QuestionV2.NotFoundError",
      )
    }),
  )

  it("isDismissed recognises a RejectedError defect only", () => {
    expect(QuestionV2.isDismissed(Cause.die(new QuestionV2.RejectedError()))).toBe(true)
    expect(QuestionV2.isDismissed(Cause.fail(new QuestionV2.RejectedError()))).toBe(false)
    expect(QuestionV2.isDismissed(Cause.die(new Error("boom")))).toBe(false)
    expect(
      QuestionV2.isDismissed(
        Cause.sequential(Cause.interrupt(FiberId.none), Cause.die(new QuestionV2.RejectedError())),
      ),
    ).toBe(true)
  })
})
