/**
 * `AiSdkTools`' `execute`: one call settled and translated for the SDK.
 *
 * @since 0.3.0
 * @internal
 */
import { Runner, Tool } from "@toolgate/core"
import { type ModelMessage } from "ai"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import { type Bridge, applyDenials, flushDenials, messageOf } from "./tools-bridge.js"
import { decisionFor } from "./tools-approval.js"
import { NoAnswererError, ToolError, UserStopError } from "./tools-options.js"
import { type Output, PRELIMINARY_OUTPUT_LIMIT } from "./tools-output.js"

/** The last `PRELIMINARY_OUTPUT_LIMIT` characters of `text`. */
const tail = (text: string): string =>
  text.length > PRELIMINARY_OUTPUT_LIMIT ? text.slice(text.length - PRELIMINARY_OUTPUT_LIMIT) : text

/**
 * Settles one call and translates the outcome for the SDK: progress reports are yielded as preliminary results, a
 * success yields our result value (with `outputPaths`), a model-visible error throws a `ToolError` carrying its
 * message (the SDK turns it into a tool error the model sees), a user stop throws `UserStopError`, an interruption
 * (the SDK's abort signal) throws with the Runner's interruption text, an ask nothing could answer throws
 * `NoAnswererError`'s message (an ask that timed out is a model-visible error result: "Approval timed out: …").
 */
/**
 * @internal
 *
 * @category utilities
 */
export const execute = (bridge: Bridge, name: string) =>
  async function* (
    input: unknown,
    options: {
      readonly toolCallId: string
      readonly messages?: ReadonlyArray<ModelMessage>
      readonly abortSignal?: AbortSignal | undefined
    },
  ): AsyncGenerator<Output, void, void> {
    const messages = options.messages ?? []
    await applyDenials(bridge, messages)
    let running = bridge.calls.get(options.toolCallId)
    if (running === undefined) {
      running = bridge.start(name, input, options.toolCallId)
      bridge.calls.set(options.toolCallId, running)
    }
    const current = running
    const abort = () => current.controller.abort()
    if (options.abortSignal?.aborted) abort()
    options.abortSignal?.addEventListener("abort", abort, { once: true })
    try {
      // The SDK calls `execute` only for an approved call: answer the ask it approved (once, or always).
      if (current.approval !== undefined && !current.answered) {
        const decision = decisionFor(messages, options.toolCallId)
        await bridge.reply(current, decision?.reply === "always" ? decision : { reply: "once" })
        await flushDenials(bridge)
      }
      let seen = 0
      let output = ""
      for (;;) {
        const changed = current.changed
        while (seen < current.reports.length) {
          const report = current.reports[seen++]!
          if (report.output !== undefined) output = tail(output + report.output)
          yield {
            type: "progress",
            message: report.message,
            ...(report.progress === undefined ? {} : { progress: report.progress }),
            ...(report.total === undefined ? {} : { total: report.total }),
            output,
          }
        }
        if (current.done) break
        await changed
      }
      const exit = await current.exit
      if (Exit.isSuccess(exit)) {
        const { result, outputPaths } = exit.value
        if (result.type === "error") throw new ToolError(messageOf(result.value))
        yield outputPaths === undefined ? result : { ...result, outputPaths }
        return
      }
      if (Tool.isUserStop(exit.cause)) throw new UserStopError()
      if (Cause.isInterruptedOnly(exit.cause)) throw new ToolError(Runner.INTERRUPTED)
      const failure = Cause.squash(exit.cause)
      if (failure instanceof NoAnswererError) throw new ToolError(failure.message)
      throw new ToolError(`Tool execution failed: ${failure instanceof Error ? failure.message : messageOf(failure)}`)
    } finally {
      options.abortSignal?.removeEventListener("abort", abort)
      if (bridge.calls.get(options.toolCallId) === current) bridge.calls.delete(options.toolCallId)
    }
  }
