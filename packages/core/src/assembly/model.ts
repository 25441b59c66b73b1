/**
 * The model interface the runner drives: one request (history plus tool definitions) streams text, tool calls and
 * provider-executed tool results. Adapters (Effect AI, scripted replays) implement it.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type * as LLM from "../values/llm.js"

/**
 * A tool call as the assistant made it.
 *
 * @since 0.1.0
 * @category models
 */
export interface AssistantToolCall {
  readonly id: string
  readonly name: string
  readonly input: unknown
  readonly providerExecuted?: boolean
}

/**
 * One history entry.
 *
 * @since 0.1.0
 * @category models
 */
export type Message =
  | { readonly role: "user"; readonly content: string }
  | {
      readonly role: "assistant"
      readonly id: string
      readonly text: string
      readonly toolCalls: ReadonlyArray<AssistantToolCall>
    }
  | {
      readonly role: "tool"
      readonly assistantMessageID: string
      readonly callID: string
      readonly name: string
      readonly result: LLM.ToolResultValue
    }

/**
 * One provider request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly sessionID: string
  readonly agent: string
  readonly system?: string
  readonly messages: ReadonlyArray<Message>
  readonly tools: ReadonlyArray<LLM.ToolDefinition>
}

/**
 * What a model streams.
 *
 * @since 0.1.0
 * @category models
 */
export type Event =
  | { readonly type: "text"; readonly text: string }
  | {
      readonly type: "tool-call"
      readonly id: string
      readonly name: string
      readonly input: unknown
      readonly providerExecuted?: boolean
      readonly metadata?: Record<string, unknown>
    }
  | { readonly type: "tool-result"; readonly id: string; readonly name: string; readonly result: LLM.ToolResultValue }
  | { readonly type: "finish"; readonly reason: string }

/**
 * The provider failed.
 *
 * @since 0.1.0
 * @category errors
 */
export class ModelError extends Schema.TaggedError<ModelError>()("Model.ModelError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Unknown),
}) {}

/**
 * A model.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  readonly stream: (request: Request) => Stream.Stream<Event, ModelError>
}

/**
 * The Model service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Model")<Service, Interface>() {}
