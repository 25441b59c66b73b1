/**
 * The test entry of the tool contract, for an embedder's unit tests of their own tools: `settle` runs one tool's
 * settlement (decode input → execute → encode output → project model content) exactly as a materialization does,
 * without a registry, a stale check or output bounding. Production code settles only through
 * `ToolRegistry.Materialization.settle`; this module is exported from `@toolgate/core/testing` and never from the
 * production entries.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import type * as LLM from "../values/llm.js"
import * as Runtime from "../tool/internal/runtime.js"
import type * as Tool from "../tool/tool.js"

/**
 * The context a test call runs with unless `settle` is given one.
 *
 * @since 0.3.0
 * @category constants
 */
export const context: Tool.Context = {
  sessionID: "ses_test",
  agent: "build",
  assistantMessageID: "msg_test",
  toolCallID: "call_test",
}

const succeed = (output: LLM.ToolOutput) => Effect.succeed(output)

/**
 * Settles `input` with `tool`: the tool's output, or its model-visible failure (`Invalid tool input: …`, the
 * executor's own `Tool.Failure`, or an invalid output). As in a materialization, the executor's context carries the
 * call as sent (`call`, with the raw `input`) and the definition the tool advertises under `name` (`definition`),
 * unless `options.context` sets them. Defects and interruption propagate untouched. Lazy: nothing
 * runs until the Effect does. A `TypeError` (as a defect) for a value `Tool.make` did not return.
 *
 * See docs/tool-contract.md ("Testing a tool") for an example.
 *
 * @since 0.3.0
 * @category settlement
 */
export const settle = (
  tool: Tool.AnyTool,
  input: unknown,
  options: { readonly context?: Partial<Tool.Context>; readonly name?: string } = {},
): Effect.Effect<LLM.ToolOutput, LLM.ToolFailure> =>
  Effect.suspend(() => {
    const runtime = Runtime.of<Tool.Context>(tool)
    const name = options.name ?? "tool"
    const toolCallID = options.context?.toolCallID ?? context.toolCallID
    const sent: LLM.ToolCall = { id: toolCallID, name, input }
    const call: Tool.Context = { ...context, call: sent, definition: runtime.definition(name), ...options.context }
    return runtime.settle<LLM.ToolOutput, LLM.ToolFailure>(
      sent,
      call,
      succeed,
      Effect.fail,
    )
  })
