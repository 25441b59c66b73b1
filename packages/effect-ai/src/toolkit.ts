/**
 * A toolgate materialization as an `@effect/ai` Toolkit: one Tool per definition (the JSON Schema passed through)
 * whose handler settles through `materialization.settle`, so our validation, permissions and output bounding apply
 * to calls that `@effect/ai` resolves itself (`LanguageModel.generateText({ toolkit })`).
 *
 * @since 0.1.0
 */
import { type Tool, Toolkit } from "@effect/ai"
import { Identifier, type LLM, type ToolRegistry } from "@toolgate/core"
import { Effect, type Layer } from "effect"
import * as EffectAiModel from "./model.js"

/** Who settles: the session, agent and assistant message the toolkit's calls belong to. */
export interface Identity {
  readonly sessionID: string
  readonly agent: string
  readonly assistantMessageID: string
}

/** A Toolkit and the layer of its handlers. */
export interface Converted {
  readonly toolkit: Toolkit.Toolkit<Record<string, Tool.Any>>
  readonly handlers: Layer.Layer<Tool.Handler<string>>
}

/**
 * What a handler returns to the model: the text of a single text part, the structured value when there is no
 * content, the content parts otherwise.
 */
export const toHandlerValue = (result: Exclude<LLM.ToolResultValue, { readonly type: "error" }>): unknown =>
  result.value

/**
 * Converts `materialization` into an `@effect/ai` Toolkit with its handlers layer. `@effect/ai` handlers do not see
 * the provider's call id, so every call settles under a fresh `call_…` id. Error results are returned to the model
 * as tool failures (`isFailure: true`, the message as result); a `ToolOutputStore` failure is a defect, and so is a
 * declined permission (a user stop), exactly as `settle` delivers it.
 */
export const toToolkit = (materialization: ToolRegistry.Materialization, identity: Identity): Converted => {
  const toolkit = Toolkit.make(...materialization.definitions.map(EffectAiModel.toTool)) as unknown as Toolkit.Toolkit<
    Record<string, Tool.Any>
  >
  const handler = (name: string) => (params: unknown) =>
    materialization.settle({ ...identity, call: { id: Identifier.create("call"), name, input: params } }).pipe(
      Effect.orDie,
      Effect.flatMap(({ result }) =>
        result.type === "error" ? Effect.fail(result.value) : Effect.succeed(toHandlerValue(result)),
      ),
    )
  const handlers = Object.fromEntries(
    materialization.definitions.map((definition) => [definition.name, handler(definition.name)]),
  )
  return { toolkit, handlers: toolkit.toLayer(handlers as never) as Layer.Layer<Tool.Handler<string>> }
}
