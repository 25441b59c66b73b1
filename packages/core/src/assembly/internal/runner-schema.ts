/**
 * The Runner's values: its limits and the texts the model reads for stopped, recovered and disabled calls, the
 * step-limit error, the events it publishes, and what `run` takes and returns.
 *
 * @since 0.3.0
 * @internal
 */
import * as Schema from "effect/Schema"
import * as EventV2 from "../../place/event.js"
import * as LLM from "../../values/llm.js"
import type * as Model from "../model.js"

/**
 * Provider turns allowed per run.
 *
 * @since 0.1.0
 * @category constants
 */
export const STEP_LIMIT = 25

/**
 * Failure text for calls cut off by interruption or a user stop.
 *
 * @since 0.1.0
 * @category constants
 */
export const INTERRUPTED = "Tool execution interrupted"
/**
 * Failure text for a call whose permission ask the user rejected without a message (or that a rejection in the same
 * session cascaded to). A rejection with a message reaches the model as that message instead.
 *
 * @since 0.3.0
 * @category constants
 */
export const USER_REJECTED = "The user rejected permission to use this specific tool call."

/**
 * Failure text for a call whose question the user dismissed.
 *
 * @since 0.3.0
 * @category constants
 */
export const USER_DISMISSED = "The user dismissed this question"

/**
 * The result a runner reports for a call that recovery failed while the runner was unresponsive past its lease:
 * the journal keeps recovery's `Tool execution interrupted`, and the call's own result (the tool may have run) is
 * discarded.
 *
 * @since 0.3.0
 * @category constants
 */
export const RECOVERED =
  "Tool execution interrupted: the call was recovered while its runner was unresponsive past its lease, so its result was discarded"

/**
 * Failure text for local calls on the turn where tools are disabled.
 *
 * @since 0.1.0
 * @category constants
 */
export const TOOLS_DISABLED = "Tools are disabled after the maximum agent steps"

/**
 * Prefix of the model-visible error of a call whose executor crashed (a defect); the defect's message follows.
 *
 * @since 0.4.0
 * @category constants
 */
export const TOOL_CRASHED = "Tool crashed: "

/**
 * The run needed more provider turns than allowed.
 *
 * @since 0.1.0
 * @category errors
 */
export class StepLimitExceeded extends Schema.TaggedError<StepLimitExceeded>()("Runner.StepLimitExceeded", {
  steps: Schema.Number,
}) {}

const Identity = {
  sessionID: Schema.String,
  assistantMessageID: Schema.String,
  callID: Schema.String,
  tool: Schema.String,
}

/**
 * Events published by the runner.
 *
 * @since 0.1.0
 * @category models
 */
export const Event = {
  Called: EventV2.define(
    "session.next.tool.called",
    Schema.Struct({
      ...Identity,
      input: Schema.Unknown,
      provider: Schema.Struct({ executed: Schema.Boolean, metadata: Schema.optional(Schema.Unknown) }),
    }),
  ),
  Success: EventV2.define(
    "session.next.tool.success",
    Schema.Struct({
      ...Identity,
      result: LLM.ToolResultValue,
      output: Schema.optional(LLM.ToolOutput),
      outputPaths: Schema.optional(Schema.Array(Schema.String)),
    }),
  ),
  Failed: EventV2.define("session.next.tool.failed", Schema.Struct({ ...Identity, result: LLM.ToolResultValue })),
  /** A running call's progress report (see `Tool.Progress`). */
  Progress: EventV2.define(
    "session.next.tool.progress",
    Schema.Struct({
      ...Identity,
      message: Schema.String,
      progress: Schema.optional(Schema.Number),
      total: Schema.optional(Schema.Number),
      output: Schema.optional(Schema.String),
    }),
  ),
  /** Assistant text as the provider streams it. */
  TextDelta: EventV2.define(
    "session.next.text.delta",
    Schema.Struct({ sessionID: Schema.String, assistantMessageID: Schema.String, text: Schema.String }),
  ),
} as const

/**
 * What `run` takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunInput {
  readonly sessionID: string
  readonly prompt: string
  /** History to continue from (defaults to none). */
  readonly messages?: ReadonlyArray<Model.Message>
}

/**
 * What `run` returns. `stopped: "user"` means a declined permission or dismissed question ended the loop.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunResult {
  readonly steps: number
  readonly stopped?: "user"
  readonly messages: ReadonlyArray<Model.Message>
}
