/**
 * AI SDK approval requests and responses as toolgate asks and replies.
 *
 * @since 0.3.0
 * @internal
 */
import { PermissionV2, Printable } from "@toolgate/core"
import { type ModelMessage } from "ai"

/**
 * The text an AI SDK approval request carries as its `reason`: our request id, what is asked, the full command of a
 * shell ask, what `always` would save, and how to answer. Every value goes through `Printable.show`, so a control character, escape sequence, bidi
 * override or invisible character in a command or path is shown as a visible escape (`\x1b`, `\u202e`); several
 * resources are listed one per line. UIs that want the structured request call `pendingAsk(tools, toolCallId)`.
 *
 * @since 0.2.0
 */
export const describeAsk = (request: PermissionV2.Request): string =>
  [
    ...(request.resources.length === 1
      ? [
          `toolgate permission ${request.id}: ${Printable.show(request.action)} ${Printable.show(request.resources[0]!)}`,
        ]
      : [
          `toolgate permission ${request.id}: ${Printable.show(request.action)} on ${request.resources.length} resources:`,
          ...request.resources.map((resource) => `  - ${Printable.show(resource)}`),
        ]),
    ...PermissionV2.describeCommand(request),
    ...PermissionV2.describeAlways(request.always),
    `Approve to allow once; approve with the reason "always" to save it; deny with a reason to tell the model why.`,
  ].join("\n")

/**
 * What an AI SDK approval response for one tool call says, as our reply.
 *
 * @since 0.2.0
 */
export interface Decision {
  readonly reply: PermissionV2.Reply
  readonly message?: string
}

/**
 * The first AI SDK approval response for `toolCallId` in `messages`, as our reply: approved → `once` (or `always`
 * when its reason is "always"), denied → `reject` carrying the reason as the model-visible message (none when the
 * reason is empty). `undefined` when the messages hold no response for the call.
 *
 * @since 0.2.0
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
      if (part.approved) return { reply: reason.toLowerCase() === "always" ? "always" : "once" }
      return reason === "" ? { reply: "reject" } : { reply: "reject", message: reason }
    }
  }
  return undefined
}
