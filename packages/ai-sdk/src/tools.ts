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
import { execute } from "./internal/tools-execute.js"
import * as internalToolsOptions from "./internal/tools-options.js"
import * as internalToolsOutput from "./internal/tools-output.js"
import * as internalToolsApproval from "./internal/tools-approval.js"

/**
 * Who settles: the session, agent and assistant message the calls belong to (`SettleInput.Identity`).
 *
 * @since 0.1.0
 * @category models
 */
export type Identity = internalToolsOptions.Identity
/**
 * Where `execute` runs the settlement: a `Runtime` or a `ManagedRuntime` (default: `Runtime.defaultRuntime`).
 *
 * @since 0.1.0
 * @category models
 */
export type EffectRuntime = internalToolsOptions.EffectRuntime
export {
  /**
   * Thrown by `execute` for a model-visible error result. The SDK sends the model `String(error)`, so `toString` is
   * the bare message: the model reads exactly the text our tool produced.
   *
   * @since 0.1.0
   * @category errors
   */
  ToolError,
} from "./internal/tools-options.js"
export {
  /**
   * Thrown by `execute` when the user declined a permission or dismissed a question. The SDK records it as a tool
   * error; pass `stoppedByUser` in `stopWhen` so no further step runs.
   *
   * @since 0.1.0
   * @category errors
   */
  UserStopError,
} from "./internal/tools-options.js"
/**
 * A stop condition that ends the loop after a step in which any tool call was stopped by the user.
 *
 * @since 0.1.0
 * @category utilities
 */
export const stoppedByUser = internalToolsOptions.stoppedByUser
/**
 * How asks reach a person. `in-process`: `execute` stays pending until someone replies through
 * `PermissionV2.Service.reply` (a CLI, a server endpoint). `ai-sdk`: an ask raised before the call reports progress
 * becomes an AI SDK tool-approval request, and the approval response answers it.
 *
 * @since 0.2.0
 * @category models
 */
export type ApprovalMode = internalToolsOptions.ApprovalMode
/**
 * Options of `toAiSdkTools`. How long an ask may stay unanswered is the Location's `permission.askTimeout` (no
 * limit by default), as for every approval channel: an ask nobody answered in time ends the call with the
 * model-visible "Approval timed out: …".
 *
 * @since 0.2.0
 * @category models
 */
export type Options = internalToolsOptions.Options
export {
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
  NoAnswererError,
} from "./internal/tools-options.js"
/**
 * What the model reads for a successful result: text stays text, JSON stays JSON, and content becomes AI SDK
 * content with file parts carried as base64 data.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toModelOutput: typeof internalToolsOutput.toModelOutput = internalToolsOutput.toModelOutput
/**
 * A successful result as `execute` yields it last: our result value, plus the managed output files when bounding
 * kept one (`outputPaths`, absolute paths the caller may read in full).
 *
 * @since 0.2.0
 * @category models
 */
export type Result = internalToolsOutput.Result
/**
 * A preliminary result: one progress report of the running call. `output` holds the output reported so far (its
 * last `PRELIMINARY_OUTPUT_LIMIT` characters), so a UI that replaces the previous preliminary value loses nothing
 * recent. The model never sees preliminary results.
 *
 * @since 0.2.0
 * @category models
 */
export type Preliminary = internalToolsOutput.Preliminary
/**
 * What `execute` yields: preliminary values while the call runs, then one `Result`.
 *
 * @since 0.2.0
 * @category models
 */
export type Output = internalToolsOutput.Output
/**
 * How many trailing characters of reported output a preliminary result carries.
 *
 * @since 0.2.0
 * @category constants
 */
export const PRELIMINARY_OUTPUT_LIMIT = internalToolsOutput.PRELIMINARY_OUTPUT_LIMIT
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
export const describeAsk = internalToolsApproval.describeAsk
/**
 * What an AI SDK approval response for one tool call says, as our reply.
 *
 * @since 0.2.0
 * @category models
 */
export type Decision = internalToolsApproval.Decision
/**
 * The choice of `prompt` a decision stands for: the one it names, else the one its reply stands for
 * (`Approvals.choiceOf`); an `always` on a prompt that offers none (it would save nothing) is `once`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const choiceFor = internalToolsApproval.choiceFor
/**
 * The first AI SDK approval response for `toolCallId` in `messages`, as our reply: approved → `once` (or `always`
 * when its reason is "always"; a reason naming a choice id — `session`, `always:exact`, `always:directory`,
 * `always:pattern` — picks that choice), denied → `reject` carrying the reason as the model-visible message (none when the
 * reason is empty). `undefined` when the messages hold no response for the call.
 *
 * @since 0.2.0
 * @category utilities
 */
export const decisionFor = internalToolsApproval.decisionFor

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
