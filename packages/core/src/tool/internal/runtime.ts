/**
 * The private table behind tool values: what `Tool.make` builds for a tool (its definition, its catalogue action and
 * its settlement), keyed by the opaque value. Only `tool/` reads it: the registry's materializations settle through
 * it, and `@toolgate/core/testing` offers a test entry over it. Nothing public executes a tool.
 *
 * @since 0.3.0
 */
import type * as Effect from "effect/Effect"
import type * as LLM from "../../values/llm.js"

/**
 * One tool's runtime. `C` is the call context (`Tool.Context`); this module does not name it, so the contract's
 * public module can depend on this one and not the other way round.
 *
 * @since 0.3.0
 * @category models
 */
export interface Runtime<C> {
  readonly permission?: string
  readonly definition: (name: string) => LLM.ToolDefinition
  /**
   * Settles one call in continuation style: decode → execute → encode → project, then `next` with the output and
   * the context it ran with, or `fail` with the model-visible failure. It runs synchronously up to the executor, and
   * on through encoding and projection when the executor returns a settled success, so call it inside a suspended
   * effect or a continuation (where a throw becomes a defect). Defects and interruption of the tool propagate.
   */
  readonly settle: <B, E>(
    call: LLM.ToolCall,
    context: C,
    next: (output: LLM.ToolOutput, context: C) => Effect.Effect<B, E>,
    fail: (failure: LLM.ToolFailure) => Effect.Effect<B, E>,
  ) => Effect.Effect<B, E>
}

const runtimes = new WeakMap<object, Runtime<any>>()

/**
 * Records `runtime` as the runtime of the (fresh, frozen) tool value `tool`.
 *
 * @since 0.3.0
 * @category table
 */
export const set = <C>(tool: object, runtime: Runtime<C>): void => {
  runtimes.set(tool, runtime)
}

/**
 * The runtime of `tool`; a `TypeError` for anything `Tool.make` did not return.
 *
 * @since 0.3.0
 * @category table
 */
export const of = <C>(tool: unknown): Runtime<C> => {
  const runtime = typeof tool === "object" && tool !== null ? runtimes.get(tool) : undefined
  if (runtime === undefined) throw new TypeError("Invalid Core Tool value")
  return runtime
}
