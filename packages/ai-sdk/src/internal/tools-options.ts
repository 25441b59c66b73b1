/**
 * `AiSdkTools`' identity, runtime and options, and the errors `execute` throws.
 *
 * @since 0.3.0
 * @internal
 */
import type { SettleInput } from "@toolgate/core"
import { type StopCondition, type ToolSet } from "ai"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"

/**
 * Who settles: the session, agent and assistant message the calls belong to (`SettleInput.Identity`).
 *
 * @since 0.1.0
 * @category models
 */
export type Identity = SettleInput.Identity

/**
 * Where `execute` runs the settlement: a `Runtime` or a `ManagedRuntime` (default: `Runtime.defaultRuntime`).
 *
 * @since 0.1.0
 * @category models
 */
export type EffectRuntime = Runtime.Runtime<never> | ManagedRuntime.ManagedRuntime<never, unknown>

/**
 * Thrown by `execute` for a model-visible error result. The SDK sends the model `String(error)`, so `toString` is
 * the bare message: the model reads exactly the text our tool produced.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolError extends Error {
  /**
   * The error name the AI SDK records.
   *
   * @since 0.1.0
   */
  override readonly name: string = "ToolgateToolError"
  /**
   * The bare message, which is what the model reads.
   *
   * @since 0.1.0
   */
  override toString(): string {
    return this.message
  }
}

/**
 * Thrown by `execute` when the user declined a permission or dismissed a question. The SDK records it as a tool
 * error; pass `stoppedByUser` in `stopWhen` so no further step runs.
 *
 * @since 0.1.0
 * @category errors
 */
export class UserStopError extends ToolError {
  /**
   * The error name the AI SDK records.
   *
   * @since 0.1.0
   */
  override readonly name: string = "ToolgateUserStopError"
  constructor() {
    super("The user declined this tool call and stopped the run")
  }
}

/**
 * A stop condition that ends the loop after a step in which any tool call was stopped by the user.
 *
 * @since 0.1.0
 * @category utilities
 */
export const stoppedByUser: StopCondition<ToolSet> = ({ steps }) =>
  steps.at(-1)?.content.some((part) => part.type === "tool-error" && part.error instanceof UserStopError) ?? false

/**
 * How asks reach a person. `in-process`: `execute` stays pending until someone replies through
 * `PermissionV2.Service.reply` (a CLI, a server endpoint). `ai-sdk`: an ask raised before the call reports progress
 * becomes an AI SDK tool-approval request, and the approval response answers it.
 *
 * @since 0.2.0
 * @category models
 */
export type ApprovalMode = "in-process" | "ai-sdk"

/**
 * Options of `toAiSdkTools`. How long an ask may stay unanswered is the Location's `permission.ask_timeout` (no
 * limit by default), as for every approval channel: an ask nobody answered in time ends the call with the
 * model-visible "Approval timed out: …".
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly approval?: ApprovalMode
}

/**
 * An ask of the call that nothing in the process could answer: no subscription to `permission.v2.asked` besides the
 * adapter's own (no CLI prompt, no `Approvals.prompts` reader such as the approval server, no `Core.layerTest`
 * responder). Instead of waiting for an answer that cannot come, the call is cancelled at once and the ask withdrawn.
 * Answer asks by reading `Approvals.Service.prompts` and calling `Approvals.Service.answer`, or use
 * `{ approval: "ai-sdk" }`.
 *
 * @since 0.3.0
 * @category errors
 */
export class NoAnswererError extends Schema.TaggedError<NoAnswererError>()("AiSdkTools.NoAnswererError", {
  requestID: Schema.String,
  action: Schema.String,
  resources: Schema.Array(Schema.String),
}) {
  override get message(): string {
    return `Permission request ${this.requestID} (${this.action}: ${this.resources.join(", ")}) was not put to anyone: nothing in this process answers permission asks, so the tool call was cancelled`
  }
}
