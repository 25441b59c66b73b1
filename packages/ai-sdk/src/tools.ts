/**
 * A toolgate materialization as a Vercel AI SDK `ToolSet`. Every tool advertises our JSON Schema through
 * `jsonSchema()` (the SDK does not validate it: our codec does, at settle) and its `execute` settles through
 * `materialization.settle` on the caller's Effect runtime, so validation, permissions and output bounding stay ours.
 * `execute` is an async generator: the tool's progress reports arrive as preliminary results, the result last.
 * A permission ask either keeps `execute` pending until a client replies (`approval: "in-process"`, the default) or
 * becomes an AI SDK tool-approval request (`approval: "ai-sdk"`); see the package README for the bridge.
 *
 * @since 0.1.0
 */
import { Approvals, EventV2, type PermissionV2, type ToolRegistry } from "@toolgate/core"
import {
  type GenericToolApprovalFunction,
  jsonSchema,
  type JSONSchema7,
  type ModelMessage,
  tool,
  type ToolApprovalStatus,
  type ToolSet,
} from "ai"
import * as Context from "effect/Context"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import {
  applyDenials,
  bridgeOf,
  bridges,
  makeBridge,
  MISSING_SERVICES,
  resolveApproval,
} from "./internal/tools-bridge.js"
import { describeAsk } from "./internal/tools-approval.js"
import { execute } from "./internal/tools-execute.js"
import { type EffectRuntime, type Identity, type Options } from "./internal/tools-options.js"
import { type Output, toModelOutput } from "./internal/tools-output.js"

/**
 * The identity, runtime and options of `toAiSdkTools`, and the errors `execute` throws.
 *
 * @since 0.3.0
 */
export * from "./internal/tools-options.js"
/**
 * What `execute` yields, and what the model reads of a result.
 *
 * @since 0.3.0
 */
export * from "./internal/tools-output.js"
/**
 * AI SDK approval requests and responses as toolgate asks and replies.
 *
 * @since 0.3.0
 */
export * from "./internal/tools-approval.js"

/**
 * Answers the pending asks of `tools` from the AI SDK approval responses in `messages` where the SDK will not run
 * the call: a denied approval rejects our ask (with its reason as the model-visible message). Call it with the
 * messages a `useChat` client sent before passing them to `generateText`/`streamText`; `needsApproval`, the
 * `toolApproval` function and `execute` also apply it whenever the SDK hands them messages.
 *
 * @since 0.2.0
 * @category utilities
 */
export const applyApprovals = (tools: ToolSet, messages: ReadonlyArray<ModelMessage>): Promise<void> =>
  applyDenials(bridgeOf(tools), messages)

/**
 * The pending ask an AI SDK approval request of `tools` stands for, by tool call id (the structured form of the
 * request's `reason`), or `undefined`.
 *
 * @since 0.2.0
 * @category utilities
 */
export const pendingAsk = (tools: ToolSet, toolCallId: string): PermissionV2.Request | undefined =>
  pendingPrompt(tools, toolCallId)?.request

/**
 * The prompt an AI SDK approval request of `tools` stands for, by tool call id — everything the request's `reason`
 * describes (the command, the diff, the choices with what each saves, the deadline) as the one approval protocol's
 * `Approvals.Prompt` — or `undefined`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const pendingPrompt = (tools: ToolSet, toolCallId: string): Approvals.Prompt | undefined => {
  const running = bridgeOf(tools).calls.get(toolCallId)
  return running === undefined || running.answered ? undefined : running.approval
}

/**
 * The `toolApproval` setting of `generateText`/`streamText` for `tools` made with `approval: "ai-sdk"`: a call whose
 * first ask comes before any progress needs user approval, and the approval request's `reason` describes the ask
 * (see `describeAsk`). Without it the tools' own `needsApproval` still raises the request, with no reason.
 *
 * @since 0.2.0
 * @category utilities
 */
export const toolApproval =
  (tools: ToolSet): GenericToolApprovalFunction<ToolSet, any, any> =>
  async ({ toolCall, messages }): Promise<ToolApprovalStatus> => {
    const bridge = bridgeOf(tools)
    if (bridge.mode !== "ai-sdk" || !Object.hasOwn(tools, toolCall.toolName)) return "not-applicable"
    const request = await resolveApproval(bridge, toolCall.toolName, toolCall.input, toolCall.toolCallId, messages)
    return request === undefined ? "not-applicable" : { type: "user-approval", reason: describeAsk(request) }
  }

/**
 * Converts `materialization` into an AI SDK `ToolSet` whose calls settle under `identity` on `runtime`. With
 * `approval: "ai-sdk"` the runtime must provide toolgate's services (a runtime built from `Core.layer`), and the
 * tools declare `needsApproval`; pass `toolApproval(tools)` to `generateText`/`streamText` so the approval requests
 * describe the ask.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toAiSdkTools = (
  materialization: ToolRegistry.Materialization,
  identity: Identity,
  runtime: EffectRuntime = Runtime.defaultRuntime,
  options: Options = {},
): ToolSet => {
  if (
    options.approval === "ai-sdk" &&
    !ManagedRuntime.isManagedRuntime(runtime) &&
    (Option.isNone(Context.getOption((runtime as Runtime.Runtime<never>).context, EventV2.Service)) ||
      Option.isNone(Context.getOption((runtime as Runtime.Runtime<never>).context, Approvals.Service)))
  ) {
    throw new Error(MISSING_SERVICES)
  }
  const bridge = makeBridge(materialization, identity, runtime, options)
  const tools: ToolSet = Object.fromEntries(
    materialization.definitions.map((definition) => [
      definition.name,
      tool({
        description: definition.description,
        inputSchema: jsonSchema<unknown>(definition.inputSchema as JSONSchema7),
        execute: execute(bridge, definition.name) as never,
        ...(bridge.mode === "ai-sdk"
          ? {
              needsApproval: async (input: unknown, { toolCallId, messages }) =>
                (await resolveApproval(bridge, definition.name, input, toolCallId, messages)) !== undefined,
            }
          : {}),
        toModelOutput: ({ output }: { readonly output: Output }) =>
          (output.type === "progress" ? { type: "text", value: output.message } : toModelOutput(output)) as never,
      }),
    ]),
  )
  bridges.set(tools, bridge)
  return tools
}
