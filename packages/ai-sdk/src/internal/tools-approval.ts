/**
 * AI SDK approval requests and responses as toolgate asks and replies.
 *
 * @since 0.3.0
 * @internal
 */
import { Approvals, PermissionV2, Printable } from "@toolgate/core"
import { type ModelMessage } from "ai"

/** The choice ids an approval's reason may name (besides `always`, the widest `always` offered). */
const NAMED = ["session", "always:exact", "always:directory", "always:pattern"] as const

/**
 * The text an AI SDK approval request carries as its `reason`: our request id, what is asked, the tool call and its
 * full input, the full command of a shell ask, the diff of a write, edit or apply_patch, every choice with what it saves and where, the deadline, and
 * how to answer. Every value goes through `Printable`, so a control character, escape sequence, bidi override or
 * invisible character in a command, path or diff is shown as a visible escape (`\x1b`, `\u202e`); several
 * resources are listed one per line. UIs that want the structured prompt call `pendingPrompt(tools, toolCallId)`.
 *
 * @since 0.2.0
 * @category utilities
 */
export const describeAsk = (prompt: Approvals.Prompt): string => {
  const request = prompt.request
  const named = prompt.choices.filter((choice) => (NAMED as ReadonlyArray<string>).includes(choice.id))
  return [
    ...(request.resources.length === 1
      ? [
          `toolgate permission ${request.id}: ${Printable.show(request.action)} ${Printable.show(request.resources[0]!)}`,
        ]
      : [
          `toolgate permission ${request.id}: ${Printable.show(request.action)} on ${request.resources.length} resources:`,
          ...request.resources.map((resource) => `  - ${Printable.show(resource)}`),
        ]),
    ...Approvals.describeTool(prompt),
    ...PermissionV2.describeCommand(request),
    ...Approvals.describeDiff(prompt),
    "choices:",
    ...Approvals.describeChoices(prompt).map((line) => `  ${line}`),
    ...Approvals.describeDeadline(prompt),
    `Approve to allow once; approve with the reason "always" to save it${named.length === 0 ? "" : ` (or with a choice's id as the reason: ${named.map((choice) => choice.id).join(", ")})`}; deny with a reason to tell the model why.`,
  ].join("\n")
}

/**
 * What an AI SDK approval response for one tool call says, as our reply.
 *
 * @since 0.2.0
 * @category models
 */
export interface Decision {
  readonly reply: PermissionV2.Reply
  /** The prompt's choice the reason named (`session`, `always:exact`, `always:directory`, `always:pattern`). */
  readonly choice?: string
  readonly message?: string
}

/**
 * The choice of `prompt` a decision stands for: the one it names, else the one its reply stands for
 * (`Approvals.choiceOf`); an `always` on a prompt that offers none (it would save nothing) is `once`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const choiceFor = (prompt: Approvals.Prompt, decision: Decision): Approvals.Choice | undefined =>
  (decision.choice === undefined ? undefined : prompt.choices.find((choice) => choice.id === decision.choice)) ??
  Approvals.choiceOf(prompt, decision.reply) ??
  (decision.reply === "always" ? Approvals.choiceOf(prompt, "once") : undefined)

/**
 * The first AI SDK approval response for `toolCallId` in `messages`, as our reply: approved → `once` (or `always`
 * when its reason is "always"; a reason naming a choice id — `session`, `always:exact`, `always:directory`,
 * `always:pattern` — picks that choice), denied → `reject` carrying the reason as the model-visible message (none when the
 * reason is empty). `undefined` when the messages hold no response for the call.
 *
 * @since 0.2.0
 * @category utilities
 */
export const decisionFor = (messages: ReadonlyArray<ModelMessage>, toolCallId: string): Decision | undefined => {
  const requested = new Set<string>()
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue
    for (const part of message.content) {
      if (part.type === "tool-approval-request" && part.toolCallId === toolCallId) requested.add(part.approvalId)
    }
  }
  if (requested.size === 0) return undefined
  for (const message of messages) {
    if (message.role !== "tool") continue
    for (const part of message.content) {
      if (part.type !== "tool-approval-response" || !requested.has(part.approvalId)) continue
      const reason = part.reason?.trim() ?? ""
      const word = reason.toLowerCase()
      if (part.approved && (NAMED as ReadonlyArray<string>).includes(word))
        return { reply: word.startsWith("always") ? "always" : "once", choice: word }
      if (part.approved) return { reply: word === "always" ? "always" : "once" }
      return reason === "" ? { reply: "reject" } : { reply: "reject", message: reason }
    }
  }
  return undefined
}
