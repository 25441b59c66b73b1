/**
 * The `question` built-in: asks the user one or more multiple-choice questions and returns the chosen labels.
 * A dismissal is not a tool result: `QuestionV2.RejectedError` escapes as a defect and the runner halts.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as LLM from "../values/llm.js"
import * as PermissionV2 from "../permission/permission.js"
import * as QuestionV2 from "../agent/question.js"
import type * as SessionV2 from "../place/session.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"

/**
 * The registered name and permission action.
 *
 * @since 0.1.0
 * @category utilities
 */
export const name = "question"

/**
 * The model-facing description.
 *
 * @since 0.1.0
 * @category utilities
 */
export const description = [
  "Call this tool whenever you need the user to answer something while you work. It lets you:",
  "1. Collect the user's preferences or requirements",
  "2. Resolve instructions that could be read more than one way",
  "3. Have the user decide between implementation options along the way",
  "4. Let the user choose which direction the work should take.",
  "",
  "Usage notes:",
  '- While `custom` is on (the default), a "Type your own answer" choice is appended for you; do not add "Other" or similar catch-all choices',
  "- Each answer comes back as an array of chosen labels; set `multiple: true` when more than one may be picked",
  '- To recommend a choice, put it first in the list and end its label with "(Recommended)"',
].join("\n")

/**
 * The input: the questions to ask (no `custom` field; the service default applies).
 *
 * @since 0.1.0
 * @category models
 */
export const Input = Schema.Struct({
  questions: Schema.Array(QuestionV2.Prompt).annotations({ description: "The questions to put to the user" }),
})

/**
 * The output, also the structured output: one answer (list of labels) per question.
 *
 * @since 0.1.0
 * @category models
 */
export const Output = Schema.Struct({ answers: Schema.Array(QuestionV2.Answer) })

/**
 * `"<question>"="<labels>"` pairs; an empty or missing answer reads `Unanswered`.
 *
 * @since 0.1.0
 * @category utilities
 * @internal
 */
export const modelText = (
  questions: ReadonlyArray<{ readonly question: string }>,
  answers: ReadonlyArray<ReadonlyArray<string>>,
): string => {
  const pairs = questions.map((item, index) => {
    const answer = answers[index]
    const text = answer === undefined || answer.length === 0 ? "Unanswered" : answer.join(", ")
    return `"${item.question}"="${text}"`
  })
  return `User has answered your questions: ${pairs.join(", ")}. You can now continue with the user's answers in mind.`
}

const toFailure = (error: PermissionV2.Error | SessionV2.NotFoundError): LLM.ToolFailure =>
  error._tag === "Session.NotFoundError"
    ? new LLM.ToolFailure({ message: `Permission denied: ${name}`, error })
    : PermissionV2.toToolFailure(error)

/**
 * Builds the tool over the given services.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (services: {
  readonly permission: PermissionV2.Interface
  readonly question: QuestionV2.Interface
}) =>
  Tool.make({
    description,
    annotations: { title: "Ask the user", readOnlyHint: true, openWorldHint: false },
    input: Input,
    output: Output,
    toModelOutput: ({ input, output }) => [{ type: "text", text: modelText(input.questions, output.answers) }],
    execute: (input, context) =>
      Effect.gen(function* () {
        const tool = { messageID: context.assistantMessageID, callID: context.toolCallID }
        yield* services.permission
          .assert({ ...PermissionV2.fromToolCall(context), action: name, resources: ["*"] })
          .pipe(Effect.mapError(toFailure))
        // A dismissal is a user stop, not something the model should see.
        const answers = yield* Effect.orDie(
          services.question.ask({ sessionID: context.sessionID, questions: input.questions, tool }),
        )
        return { answers }
      }),
  })

/**
 * Registers `question` in the Location for the lifetime of the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, never, Tools.Service | PermissionV2.Service | QuestionV2.Service> = Tools.layer(
  name,
  Effect.gen(function* () {
    const tool = make({ permission: yield* PermissionV2.Service, question: yield* QuestionV2.Service })
    return tool
  }),
)
