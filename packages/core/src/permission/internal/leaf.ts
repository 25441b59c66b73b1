/**
 * What leaves and prompts share: the caller fields of a tool call, the model-visible failure of a blocked or
 * corrected permission, the defect test of a decline, and the lines a prompt shows for the command and for what
 * `always` saves.
 * `PermissionV2` names everything exported here.
 *
 * @since 0.3.0
 */
import type * as Cause from "effect/Cause"
import * as LLM from "../../values/llm.js"
import * as Printable from "../../values/printable.js"
import * as Wildcard from "../../values/wildcard.js"
import { HookError } from "../hooks.js"
import { TimedOutError } from "./protocol.js"
import { CallSource } from "./call.js"
import { BlockedError, CorrectedError } from "./error.js"
import type { Always, SaveEntry, Source } from "./schema.js"

/**
 * The save entry of a Wildcard pattern (see `SaveEntry`).
 *
 * @since 0.2.0
 * @category utilities
 */
export const saveEntry = (pattern: string): SaveEntry => ({
  pattern,
  text: Wildcard.display(pattern),
  literal: Wildcard.isLiteral(pattern),
})

/**
 * The lines a prompt shows for what `always` will save (the same text in the CLI and the MCP elicitation), every
 * value through `Printable` so no control or invisible character in it reaches the screen raw.
 *
 * @since 0.2.0
 * @category utilities
 */
export const describeAlways = (always: Always | undefined): ReadonlyArray<string> => {
  if (always === undefined || always.entries.length === 0) return ["always: saves nothing (same as once)"]
  const where =
    always.scope.kind === "directory"
      ? `for the directory ${Printable.show(always.scope.directory)} only (no git repository)`
      : `for project ${Printable.show(always.scope.projectID)} (${Printable.show(always.scope.directory)}, all its directories)`
  return [
    `always: saves ${Printable.show(always.action)} ${where}:`,
    ...always.entries.map((entry) =>
      entry.literal ? `  exactly: ${Printable.quote(entry.text)}` : `  pattern: ${Printable.show(entry.text)}`,
    ),
  ]
}

/**
 * The lines a prompt shows for what will run, before the resources: the full command of a shell ask (`bash`, and the
 * edit, read, external_directory and protected_path asks a command raises carry it too) and the model's description
 * of it, each through `Printable.show`, so the user approves the command the shell will run, not only its parts.
 * Empty for asks without a command.
 *
 * @since 0.3.0
 * @category utilities
 */
export const describeCommand = (request: {
  readonly metadata?: { readonly [key: string]: unknown } | undefined
}): ReadonlyArray<string> => {
  const command = request.metadata?.["command"]
  if (typeof command !== "string") return []
  const description = request.metadata?.["description"]
  return [
    `command: ${Printable.show(command)}`,
    ...(typeof description === "string" && description !== "" ? [`description: ${Printable.show(description)}`] : []),
  ]
}

/**
 * The caller fields every leaf passes to `assert`, taken from its call context: session, agent and the tool call as
 * `source`. When the context carries the call and the tool's definition (a registry materialization gives both),
 * the ask's prompt shows the call (`Approvals.Prompt.tool`: name, call id, full input) and its digest covers the
 * input and the definition; `source` itself stays the ids only.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromToolCall = (context: {
  readonly sessionID: string
  readonly agent: string
  readonly assistantMessageID: string
  readonly toolCallID: string
  readonly call?: LLM.ToolCall | undefined
  readonly definition?: LLM.ToolDefinition | undefined
}): { readonly sessionID: string; readonly agent: string; readonly source: Source } => ({
  sessionID: context.sessionID,
  agent: context.agent,
  source:
    context.call === undefined || context.definition === undefined
      ? { type: "tool", messageID: context.assistantMessageID, callID: context.toolCallID }
      : new CallSource(context.assistantMessageID, context.toolCallID, context.call, context.definition),
})

/**
 * The model-visible failure for a blocked or corrected permission, an ask nobody answered in time ("Approval timed
 * out: …", not a user's decline), or a hook that failed (the call fails closed, naming the hook).
 *
 * @since 0.1.0
 * @category utilities
 */
export const toToolFailure = (error: BlockedError | CorrectedError | TimedOutError | HookError): LLM.ToolFailure => {
  switch (error._tag) {
    case "PermissionV2.CorrectedError":
      return new LLM.ToolFailure({
        message: `The user rejected permission to use this specific tool call with the following feedback: ${error.feedback}`,
      })
    case "PermissionV2.BlockedError":
      return new LLM.ToolFailure({
        message:
          error.hook === undefined
            ? `Permission denied by configured rules for ${error.action}: ${error.resources.join(", ")}`
            : `Permission denied by ${error.hook.origin} for ${error.action}: ${error.resources.join(", ")}${error.hook.reason === undefined ? "" : ` (${error.hook.reason})`}`,
      })
    case "Approvals.TimedOutError":
      return new LLM.ToolFailure({ message: error.message })
    case "Hooks.HookError":
      return new LLM.ToolFailure({ message: error.message, error })
  }
}

/**
 * The leaf error mapping (permission errors first): a blocked, corrected or timed-out permission becomes its model-visible failure, a
 * `ToolFailure` passes through, and every other typed error becomes `otherwise(error)`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const leafFailure =
  (otherwise: (error: unknown) => LLM.ToolFailure) =>
  (error: unknown): LLM.ToolFailure => {
    if (
      error instanceof BlockedError ||
      error instanceof CorrectedError ||
      error instanceof TimedOutError ||
      error instanceof HookError
    )
      return toToolFailure(error)
    if (error instanceof LLM.ToolFailure) return error
    return otherwise(error)
  }

/**
 * True iff the cause carries a `DeclinedError` defect.
 *
 * @since 0.1.0
 * @category guards
 */
export const isDeclined = (cause: Cause.Cause<unknown>): boolean =>
  LLM.hasDefectTag(cause, "PermissionV2.DeclinedError")
