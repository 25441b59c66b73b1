/**
 * A `Model` for the toolgate Runner on top of `@effect/ai`'s `LanguageModel`: any Effect AI provider (OpenAI,
 * Anthropic, …) drives the Runner. Requests become an `@effect/ai` Prompt plus one dynamic Tool per definition (its
 * JSON Schema passed through verbatim); streamed parts become Runner events. Tool-call resolution stays disabled:
 * the Runner settles every call through its own materialization.
 *
 * @since 0.1.0
 */
import { type AiError, LanguageModel, type Prompt, type Response, Tool, type Toolkit } from "@effect/ai"
import type { LLM } from "@toolgate/core"
import { Model } from "@toolgate/core"
import { Effect, Layer, Schema, Stream } from "effect"

/** Parameters that accept any value and advertise `schema` as their JSON Schema (validation is ours, at settle). */
export const jsonSchemaParameters = (schema: LLM.JsonSchema): Tool.AnyStructSchema =>
  Schema.Unknown.annotations({ jsonSchema: schema }) as unknown as Tool.AnyStructSchema

/**
 * An `@effect/ai` Tool advertising one toolgate definition. Success and failure are both `Unknown` and failures are
 * returned to the model (`failureMode: "return"`).
 */
export const toTool = (definition: LLM.ToolDefinition): Tool.Any =>
  Tool.make(definition.name, {
    description: definition.description,
    success: Schema.Unknown,
    failure: Schema.Unknown,
    failureMode: "return",
  }).setParameters(jsonSchemaParameters(definition.inputSchema))

/**
 * The toolkit the provider is shown. Its `handle` is never called: resolution is disabled and the Runner settles
 * calls itself.
 */
const advertised = (definitions: ReadonlyArray<LLM.ToolDefinition>): Toolkit.WithHandler<Record<string, Tool.Any>> => ({
  tools: Object.fromEntries(definitions.map((definition) => [definition.name, toTool(definition)])),
  handle: (name) => Effect.dieMessage(`EffectAiModel: tool ${String(name)} must be settled by the Runner`),
})

/** The value a provider sees for one toolgate result, and whether it is a failure. */
export const toResultPart = (
  result: LLM.ToolResultValue,
): { readonly result: unknown; readonly isFailure: boolean } => ({
  result: result.value,
  isFailure: result.type === "error",
})

/**
 * Converts a Runner request into `@effect/ai` messages: the system prompt first, assistant text and tool calls in
 * one assistant message, and consecutive tool results grouped into one tool message.
 */
export const toPromptMessages = (request: Model.Request): Array<Prompt.MessageEncoded> => {
  const messages: Array<Prompt.MessageEncoded> = []
  if (request.system !== undefined && request.system !== "") messages.push({ role: "system", content: request.system })
  let results: Array<Prompt.ToolMessagePartEncoded> | undefined
  for (const message of request.messages) {
    if (message.role !== "tool") results = undefined
    switch (message.role) {
      case "user":
        messages.push({ role: "user", content: [{ type: "text", text: message.content }] })
        break
      case "assistant": {
        const content: Array<Prompt.AssistantMessagePartEncoded> = []
        if (message.text !== "") content.push({ type: "text", text: message.text })
        for (const call of message.toolCalls) {
          content.push({
            type: "tool-call",
            id: call.id,
            name: call.name,
            params: call.input,
            providerExecuted: call.providerExecuted === true,
          })
        }
        messages.push({ role: "assistant", content })
        break
      }
      case "tool": {
        const part: Prompt.ToolMessagePartEncoded = {
          type: "tool-result",
          id: message.callID,
          name: message.name,
          providerExecuted: false,
          ...toResultPart(message.result),
        }
        if (results === undefined) {
          results = [part]
          messages.push({ role: "tool", content: results })
        } else results.push(part)
        break
      }
    }
  }
  return messages
}

/** A provider-executed result as the Runner records it. */
const fromProviderResult = (part: { readonly result: unknown; readonly isFailure: boolean }): LLM.ToolResultValue => {
  if (part.isFailure) return { type: "error", value: part.result }
  return typeof part.result === "string" ? { type: "text", value: part.result } : { type: "json", value: part.result }
}

const hasEntries = (value: object | undefined): value is Record<string, unknown> =>
  value !== undefined && Object.keys(value).length > 0

/**
 * Maps one streamed part to Runner events. Text deltas, tool calls, provider-executed tool results and the finish
 * reason are kept; reasoning, tool-parameter deltas, sources and metadata are dropped. An `error` part fails.
 */
export const fromStreamPart = (
  part: Response.StreamPart<Record<string, Tool.Any>>,
): Effect.Effect<ReadonlyArray<Model.Event>, Model.ModelError> => {
  switch (part.type) {
    case "text-delta":
      return Effect.succeed(part.delta === "" ? [] : [{ type: "text", text: part.delta }])
    case "tool-call":
      return Effect.succeed([
        {
          type: "tool-call",
          id: part.id,
          name: part.name,
          input: part.params,
          ...(part.providerExecuted ? { providerExecuted: true } : {}),
          ...(hasEntries(part.metadata) ? { metadata: part.metadata } : {}),
        },
      ])
    case "tool-result":
      return Effect.succeed(
        part.providerExecuted
          ? [{ type: "tool-result", id: part.id, name: part.name, result: fromProviderResult(part) }]
          : [],
      )
    case "finish":
      return Effect.succeed([{ type: "finish", reason: part.reason }])
    case "error":
      return Effect.fail(new Model.ModelError({ message: messageOf(part.error), cause: part.error }))
    default:
      return Effect.succeed([])
  }
}

const messageOf = (error: unknown): string =>
  error instanceof Error
    ? error.message
    : typeof error === "object" && error !== null && "message" in error
      ? String(error.message)
      : String(error)

const toModelError = (error: AiError.AiError): Model.ModelError =>
  new Model.ModelError({ message: error.message, cause: error })

/** Builds the Model from the `LanguageModel` in context. */
export const make: Effect.Effect<Model.Interface, never, LanguageModel.LanguageModel> = Effect.map(
  LanguageModel.LanguageModel,
  (language) =>
    Model.Service.of({
      stream: (request) => {
        const options = {
          prompt: toPromptMessages(request),
          ...(request.tools.length === 0
            ? {}
            : { toolkit: advertised(request.tools), disableToolCallResolution: true as const }),
        }
        return language.streamText(options).pipe(Stream.mapError(toModelError), Stream.mapConcatEffect(fromStreamPart))
      },
    }),
)

/** Provides `Model.Service` from an `@effect/ai` `LanguageModel` (any provider layer). */
export const layer: Layer.Layer<Model.Service, never, LanguageModel.LanguageModel> = Layer.effect(Model.Service, make)
