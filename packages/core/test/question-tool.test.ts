import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Ref } from "effect"
import {
  ApplicationTools,
  PermissionV2,
  QuestionTool,
  QuestionV2,
  SessionV2,
  Tool,
  ToolOutputStore,
  ToolRegistry,
} from "../src/index.js"
import * as Permission from "./support/permission.js"
import { ToolTest } from "../src/entry/testing.js"

/** Records every ask input; answers `[["Build"], []]` unless told to dismiss. */
interface FakeQuestion {
  readonly asks: Ref.Ref<ReadonlyArray<QuestionV2.AskInput>>
  readonly dismiss: Ref.Ref<boolean>
}

const makeFakeQuestion = Effect.gen(function* () {
  const fake: FakeQuestion = {
    asks: yield* Ref.make<ReadonlyArray<QuestionV2.AskInput>>([]),
    dismiss: yield* Ref.make(false),
  }
  const service = QuestionV2.Service.of({
    ask: (input) =>
      Effect.gen(function* () {
        yield* Ref.update(fake.asks, (all) => [...all, input])
        if (yield* Ref.get(fake.dismiss)) return yield* new QuestionV2.RejectedError()
        return [["Build"], []]
      }),
    reply: () => Effect.void,
    reject: () => Effect.void,
    list: () => Effect.succeed([]),
  })
  return { fake, service }
})

const fakeQuestion = Effect.runSync(makeFakeQuestion)

const registry = ToolRegistry.layer.pipe(
  Layer.provide(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
)
const environment = () =>
  QuestionTool.layer.pipe(
    Layer.provideMerge(registry),
    Layer.provideMerge(Permission.layer),
    Layer.provideMerge(Layer.succeed(QuestionV2.Service, fakeQuestion.service)),
  )

const identity = { sessionID: "ses_tool_test", agent: "build", assistantMessageID: "msg_tool_test" } as const

const settle = (input: unknown, id = "call-question") =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize()).pipe(
    Effect.flatMap((turn) => turn.settle({ ...identity, call: { id, name: "question", input } })),
  )

const names = (rules?: ReadonlyArray<ToolRegistry.VisibilityRule>) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize(rules)).pipe(
    Effect.map((turn) => turn.definitions.map((definition) => definition.name)),
  )

const questions = [
  { question: "What should happen?", header: "Action", options: [{ label: "Build", description: "Run the build" }] },
  { question: "Which environment?", header: "Env", options: [{ label: "Staging", description: "Pre-production" }] },
]

const reset = Effect.all([Ref.set(fakeQuestion.fake.asks, []), Ref.set(fakeQuestion.fake.dismiss, false)])

describe("question tool", () => {
  it.scoped("omits a denied built-in question and terminally settles a denied call", () =>
    Effect.gen(function* () {
      yield* reset
      expect(yield* names()).toEqual(["question"])
      expect(yield* names([{ action: "question", resource: "*", effect: "deny" }])).toEqual([])
      yield* Permission.deny("question")
      const settlement = yield* settle({ questions })
      expect(settlement).toEqual({
        result: { type: "error", value: "Permission denied by configured rules for question: *" },
      })
      expect(yield* Ref.get(fakeQuestion.fake.asks)).toEqual([])
    }).pipe(Effect.provide(environment())),
  )

  it.scoped("registers question and projects user answers after the permission assertion", () =>
    Effect.gen(function* () {
      yield* reset
      const settlement = yield* settle({ questions })
      expect(settlement.result).toEqual({
        type: "text",
        value:
          'User has answered your questions: "What should happen?"="Build", "Which environment?"="Unanswered". You can now continue with the user\'s answers in mind.',
      })
      expect(settlement.output?.structured).toEqual({ answers: [["Build"], []] })
      const asserts = yield* Permission.asserts
      expect(asserts.map(({ action, resources, save }) => ({ action, resources, save }))).toEqual([
        { action: "question", resources: ["*"], save: undefined },
      ])
      expect(asserts[0]).toMatchObject({
        sessionID: identity.sessionID,
        agent: "build",
        source: { type: "tool", messageID: identity.assistantMessageID, callID: "call-question" },
      })
      expect("save" in asserts[0]!).toBe(false)
      expect(yield* Ref.get(fakeQuestion.fake.asks)).toEqual([
        {
          sessionID: identity.sessionID,
          questions,
          tool: { messageID: identity.assistantMessageID, callID: "call-question" },
        },
      ])
    }).pipe(Effect.provide(environment())),
  )

  it.scoped("does not invent tool ownership metadata: an empty question list still carries the call identity", () =>
    Effect.gen(function* () {
      yield* reset
      yield* settle({ questions: [] }, "call-empty")
      expect(yield* Ref.get(fakeQuestion.fake.asks)).toEqual([
        {
          sessionID: identity.sessionID,
          questions: [],
          tool: { messageID: identity.assistantMessageID, callID: "call-empty" },
        },
      ])
    }).pipe(Effect.provide(environment())),
  )

  it.scoped("keeps dismissed questions out of model-facing output", () =>
    Effect.gen(function* () {
      yield* reset
      yield* Ref.set(fakeQuestion.fake.dismiss, true)
      const exit = yield* Effect.exit(settle({ questions }))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(QuestionV2.isDismissed(exit.cause)).toBe(true)
        expect(Cause.failureOption(exit.cause)._tag).toBe("None")
      }
    }).pipe(Effect.provide(environment())),
  )

  it.scoped("a corrected permission shows the user's feedback verbatim", () =>
    Effect.gen(function* () {
      yield* reset
      const state = yield* Permission.FakePermissionState
      yield* Ref.set(state.corrected, new Map([["question", "just pick Build"]]))
      const settlement = yield* settle({ questions })
      expect(settlement.result).toEqual({
        type: "error",
        value:
          "The user rejected permission to use this specific tool call with the following feedback: just pick Build",
      })
      expect(yield* Ref.get(fakeQuestion.fake.asks)).toEqual([])
    }).pipe(Effect.provide(environment())),
  )

  it.scoped("the definition has no custom field and advertises { answers } as output", () =>
    Effect.gen(function* () {
      const turn = yield* Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize())
      const definition = turn.definitions[0]!
      expect(definition.description).toBe(QuestionTool.description)
      expect(QuestionTool.description.split("\n")).toHaveLength(10)
      expect(JSON.stringify(definition.inputSchema)).not.toContain("custom")
      expect(JSON.stringify(definition.inputSchema)).toContain("multiple")
      expect(Object.keys((definition.outputSchema as { properties: object }).properties)).toEqual(["answers"])
      expect(QuestionTool.modelText([{ question: "A" }, { question: "B" }], [["x", "y"]])).toBe(
        'User has answered your questions: "A"="x, y", "B"="Unanswered". You can now continue with the user\'s answers in mind.',
      )
    }).pipe(Effect.provide(environment())),
  )

  it.effect("maps another typed permission-call error (a missing session) to `Permission denied: question`", () =>
    Effect.gen(function* () {
      yield* reset
      const permission = PermissionV2.Service.of({
        ...(yield* Permission.makeFake).service,
        assert: () => Effect.fail(new SessionV2.NotFoundError({ sessionID: "ses_missing" })),
      })
      const tool = QuestionTool.make({ permission, question: fakeQuestion.service })
      const failure = yield* Effect.flip(
        ToolTest.settle(
          tool,
          { questions },
          {
            name: "question",
            context: { sessionID: "ses_missing", assistantMessageID: "msg_tool_test", toolCallID: "call-missing" },
          },
        ),
      )
      expect(failure.message).toBe("Permission denied: question")
      expect(yield* Ref.get(fakeQuestion.fake.asks)).toEqual([])
    }),
  )
})
