/**
 * What the MCP server asks the user through elicitation: a permission decision (once, always, reject with feedback)
 * and the model's questions (single or multiple choice, with an optional typed answer).
 *
 * @since 0.2.0
 */
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { Approvals, PermissionV2, Printable, type QuestionV2 } from "@toolgate/core"

/**
 * Feedback given to the tool when an ask arrives and the client cannot answer permission prompts.
 *
 * @since 0.1.0
 * @category constants
 */
export const NO_PROMPT =
  "this MCP client cannot answer permission prompts (it does not support elicitation); allow the action in the configured permission rules to use it"

/**
 * Feedback given to the tool when the user declines or cancels the elicitation.
 *
 * @since 0.1.0
 * @category constants
 */
export const DECLINED_IN_CLIENT = "declined in the MCP client"

/**
 * The form of an approval prompt: one decision field whose values are the prompt's choice ids, titled with each
 * choice's label (what each saves is in the message above the form), and the feedback sent with a rejection.
 *
 * @since 0.3.0
 * @category utilities
 */
export const promptSchema = (prompt: Approvals.Prompt): ElicitRequestFormParams["requestedSchema"] => ({
  type: "object",
  properties: {
    decision: {
      type: "string",
      title: "Decision",
      enum: prompt.choices.map((choice) => choice.id),
      enumNames: prompt.choices.map((choice) => Printable.show(choice.label)),
    },
    feedback: { type: "string", title: "Feedback for the model (when rejecting)" },
  },
  required: ["decision"],
})

/**
 * The message above an approval prompt's form: the action and every resource in full (several: one per line), the
 * tool call and its full input, the full command of a shell ask, the diff of a write, edit or apply_patch, every
 * choice with what it saves and where (so the user sees its breadth before choosing), and the deadline when there is
 * one. Every value goes through `Printable.show`: a control character, escape sequence, bidi override or invisible
 * character in a command or path is shown as a visible escape (`\x1b`, `\u202e`), never passed to the client raw.
 *
 * @since 0.3.0
 * @category utilities
 */
export const promptMessage = (prompt: Approvals.Prompt): string => {
  const request = prompt.request
  const action = Printable.show(request.action)
  const resources = request.resources.map(Printable.show)
  const head =
    resources.length === 1
      ? [`Allow ${action} on ${resources[0]}?`]
      : [`Allow ${action} on ${resources.length} resources?`, ...resources.map((resource) => `  - ${resource}`)]
  return [
    ...head,
    ...Approvals.describeTool(prompt),
    ...PermissionV2.describeCommand(request),
    ...Approvals.describeDiff(prompt),
    "Choices:",
    ...Approvals.describeChoices(prompt).map((line) => `  ${line}`),
    ...Approvals.describeDeadline(prompt),
  ].join("\n")
}

/**
 * The answer an elicitation result for `prompt` stands for: the chosen choice (by id), a rejection with the
 * feedback, or — declined, cancelled, or a value the prompt does not offer — a rejection saying it was declined in
 * the client.
 *
 * @since 0.3.0
 * @category utilities
 */
export const promptAnswer = (
  prompt: Approvals.Prompt,
  result: ElicitResult,
): { readonly choice: string; readonly message?: string } => {
  const declined = { choice: "reject", message: DECLINED_IN_CLIENT }
  if (result.action !== "accept") return declined
  const decision = result.content?.["decision"]
  const feedback = result.content?.["feedback"]
  const choice = prompt.choices.find((candidate) => candidate.id === decision)
  if (choice === undefined) return declined
  if (choice.lifetime !== "reject") return { choice: choice.id }
  return { choice: choice.id, message: typeof feedback === "string" && feedback !== "" ? feedback : DECLINED_IN_CLIENT }
}

const key = (index: number) => `q${index + 1}`
const customKey = (index: number) => `q${index + 1}_other`

/**
 * The form of a question request: one choice field per question (a multi-select for `multiple`), plus a free-text
 * field where a typed answer is allowed.
 *
 * @since 0.2.0
 * @category utilities
 */
export const questionSchema = (request: QuestionV2.Request): ElicitRequestFormParams["requestedSchema"] => {
  const properties: Record<string, ElicitRequestFormParams["requestedSchema"]["properties"][string]> = {}
  request.questions.forEach((question, index) => {
    // The model wrote every text here: labels through `Printable.show`, the question's prose through
    // `Printable.safe` (its line breaks kept); the `const` stays the label itself.
    const choices = question.options.map((option) => ({
      const: option.label,
      title:
        option.description === ""
          ? Printable.show(option.label)
          : `${Printable.show(option.label)} — ${Printable.show(option.description)}`,
    }))
    const title = Printable.show(question.header)
    const description = Printable.safe(question.question)
    properties[key(index)] =
      question.multiple === true
        ? { type: "array", title, description, items: { anyOf: choices } }
        : { type: "string", title, description, oneOf: choices }
    if (question.custom !== false) {
      properties[customKey(index)] = { type: "string", title: `${title}: another answer (optional)` }
    }
  })
  return { type: "object", properties }
}

/**
 * The message above a question form.
 *
 * @since 0.2.0
 * @category utilities
 */
export const questionMessage = (request: QuestionV2.Request): string =>
  request.questions.map((question) => Printable.safe(question.question)).join("\n")

/**
 * The answers an accepted question form gives, one list of labels per question; `undefined` when the user
 * declined or cancelled (the question is then dismissed).
 *
 * @since 0.2.0
 * @category utilities
 */
export const questionAnswers = (
  request: QuestionV2.Request,
  result: ElicitResult,
): ReadonlyArray<QuestionV2.Answer> | undefined => {
  if (result.action !== "accept") return undefined
  const content = result.content ?? {}
  return request.questions.map((question, index) => {
    const picked = content[key(index)]
    const labels = Array.isArray(picked) ? picked.map(String) : typeof picked === "string" ? [picked] : []
    const typed = content[customKey(index)]
    return typeof typed === "string" && typed.trim() !== "" && question.custom !== false ? [...labels, typed] : labels
  })
}
