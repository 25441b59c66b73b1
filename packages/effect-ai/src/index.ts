/**
 * `@toolgate/effect-ai` — toolgate for `@effect/ai`: a Runner `Model` on any Effect AI provider, and a
 * materialization as an `@effect/ai` Toolkit. Every module is a namespace.
 *
 * @since 0.1.0
 * @category modules
 */
export * as EffectAiModel from "./model.js"
/**
 * A materialization as an `@effect/ai` Toolkit.
 *
 * @since 0.1.0
 * @category modules
 */
export * as EffectAiToolkit from "./toolkit.js"
