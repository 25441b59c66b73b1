// Type-checked by `tsc --noEmit` (strict, NodeNext) in the consumer project: every entry and adapter resolves to
// its declarations, and the main types compose as a consumer writes them.
import { AiSdkTools } from "@toolgate/ai-sdk"
import { ApplyPatchTool, BuiltInTools } from "@toolgate/core/builtins"
import { Core, type LLM, PermissionV2, ToolRegistry } from "@toolgate/core"
import { AgentV2, PermissionSaved, QuestionV2, Wildcard } from "@toolgate/core/permission"
import { Core as TestCore, ScriptedModel } from "@toolgate/core/testing"
import { ApplicationTools, Tool, ToolOutputStore, Tools } from "@toolgate/core/tool"
import { EffectAiModel, EffectAiToolkit } from "@toolgate/effect-ai"
import { McpServer } from "@toolgate/mcp"
import { Effect, Layer, Schema } from "effect"

const echo = Tool.make({
  description: "Echoes its text",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.String,
  execute: (input) => Effect.succeed(`echo: ${input.text}`),
})

export const settle: Effect.Effect<ToolRegistry.Settlement, unknown, never> = Effect.gen(function* () {
  const registry = yield* ToolRegistry.Service
  yield* registry.register({ echo })
  const turn = yield* registry.materialize([])
  return yield* turn.settle({
    sessionID: "ses_1",
    agent: "build",
    assistantMessageID: "msg_1",
    call: { id: "call_1", name: "echo", input: { text: "hi" } },
  })
}).pipe(
  Effect.scoped,
  Effect.provide(ToolRegistry.layer.pipe(Layer.provide([ApplicationTools.layer, ToolOutputStore.layerPassthrough]))),
)

export const definitions: ReadonlyArray<LLM.ToolDefinition> = []
export const reply: PermissionV2.Reply = "once"
export const location = Core.layer({ directory: "/tmp", memoryDatabase: true })
export const test = TestCore.layerTest({ permission: "once" })
export const used = [
  AiSdkTools.toAiSdkTools,
  ApplyPatchTool,
  BuiltInTools.names,
  AgentV2,
  PermissionSaved,
  QuestionV2,
  Wildcard,
  ScriptedModel.layer,
  Tools,
  EffectAiModel.layer,
  EffectAiToolkit.toToolkit,
  McpServer.serve,
] as const
