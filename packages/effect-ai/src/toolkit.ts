/**
 * A toolgate materialization as an `@effect/ai` Toolkit: one Tool per definition whose handler settles through
 * `materialization.settle`, so our validation, permissions and output bounding apply to calls that `@effect/ai`
 * resolves itself (`LanguageModel.generateText({ toolkit })`). Schemas are advertised strict by default, exactly
 * as `EffectAiModel` does, and a strict provider's `null`s for omitted optional fields are removed before settling.
 *
 * @since 0.1.0
 */
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { type LLM, SettleInput, type ToolRegistry } from "@toolgate/core"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as EffectAiModel from "./model.js"

/**
 * Who settles: the session, agent and assistant message the toolkit's calls belong to (`SettleInput.Identity`).
 *
 * @since 0.1.0
 * @category models
 */
export type Identity = SettleInput.Identity

/**
 * Options of `toToolkit`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** How input schemas are advertised; `"strict"` (the default) or `"standard"`, as in `EffectAiModel`. */
  readonly schemas?: EffectAiModel.SchemaMode
}

/**
 * A Toolkit and the layer of its handlers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Converted {
  readonly toolkit: Toolkit.Toolkit<Record<string, Tool.Any>>
  readonly handlers: Layer.Layer<Tool.Handler<string>>
}

/**
 * What a successful call gives the program (`part.result` of `@effect/ai`'s tool-result parts): `value` is what
 * the model receives, `output` the bounded tool output, `outputPaths` the managed files bounding kept (absent when
 * nothing was cut).
 *
 * @since 0.2.0
 * @category models
 */
export interface Settled {
  readonly value: unknown
  readonly output?: LLM.ToolOutput
  readonly outputPaths?: ReadonlyArray<string>
}

/**
 * The success schema of every toolkit Tool: its type is `Settled`, its encoded form (what `@effect/ai` puts in
 * the next prompt, `part.encodedResult`) is only the model-facing `value`.
 *
 * @since 0.2.0
 * @category models
 */
export const SettledResult: Schema.Schema<Settled, unknown> = Schema.transform(
  Schema.Unknown,
  Schema.declare((input): input is Settled => typeof input === "object" && input !== null && "value" in input),
  {
    strict: true,
    decode: (value) => ({ value }),
    encode: (settled) => settled.value,
  },
)

/**
 * What a handler returns to the model: the text of a single text part as a string, the structured value when
 * there is no content, and for content its text parts joined (media described by name and type).
 *
 * @since 0.1.0
 * @category utilities
 */
export const toHandlerValue = (result: Exclude<LLM.ToolResultValue, { readonly type: "error" }>): unknown =>
  EffectAiModel.toResultPart(result).result

const toTool = (definition: LLM.ToolDefinition, mode: EffectAiModel.SchemaMode): Tool.Any =>
  Tool.make(definition.name, {
    description: definition.description,
    success: SettledResult,
    failure: Schema.Unknown,
    failureMode: "return",
  }).setParameters(EffectAiModel.jsonSchemaParameters(EffectAiModel.advertisedSchema(definition, mode)))

/**
 * Converts `materialization` into an `@effect/ai` Toolkit with its handlers layer. `@effect/ai` hands a handler only
 * the call's parameters (`toolkit.handle(name, params)`), never the provider's call id, so every call settles under
 * a fresh `call_…` id (`SettleInput.make` without an id); the `EffectAiModel` path keeps the provider's id. A success is a `Settled` (the model
 * gets its `value`; programs also read `output` and `outputPaths`); error results are returned to the model as
 * tool failures (`isFailure: true`, the message as result); a `ToolOutputStore` failure is a defect, and so is a
 * declined permission (a user stop), exactly as `settle` delivers it. A call to a name outside the toolkit never
 * reaches toolgate: `@effect/ai`'s loop looks it up itself and fails the whole request with `MalformedOutput`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toToolkit = (
  materialization: ToolRegistry.Materialization,
  identity: Identity,
  options: Options = {},
): Converted => {
  const mode = options.schemas ?? "strict"
  const toolkit = Toolkit.make(
    ...materialization.definitions.map((definition) => toTool(definition, mode)),
  ) as unknown as Toolkit.Toolkit<Record<string, Tool.Any>>
  const handler = (definition: LLM.ToolDefinition) => (params: unknown) =>
    materialization
      .settle(
        SettleInput.make(identity, {
          name: definition.name,
          input: EffectAiModel.fromProviderInput(definition, params, mode),
        }),
      )
      .pipe(
        Effect.orDie,
        Effect.flatMap(({ result, output, outputPaths }) =>
          result.type === "error"
            ? Effect.fail(result.value)
            : Effect.succeed<Settled>({
                value: toHandlerValue(result),
                ...(output === undefined ? {} : { output }),
                ...(outputPaths === undefined ? {} : { outputPaths }),
              }),
        ),
      )
  const handlers = Object.fromEntries(
    materialization.definitions.map((definition) => [definition.name, handler(definition)]),
  )
  return { toolkit, handlers: toolkit.toLayer(handlers as never) as Layer.Layer<Tool.Handler<string>> }
}
