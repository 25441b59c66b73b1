/**
 * The settlement port of hooks: what a materialization runs around a call when the Location has tool hooks. The
 * registry calls `before` after the stale check and before the tool decodes its input, settles the call it
 * returns (the input a hook rewrote is decoded and evaluated again as a new input), then calls `after` with the
 * tool's output before the output is bounded, so added context is bounded with the rest. The registry knows nothing
 * of what the hooks decide or how a hook's ask is asked: `Hooks` and the permission gate implement this port in
 * `HookGate` (docs/plugins.md). Without the service, or while `active()` is false, settlement is unchanged.
 *
 * @since 0.4.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as LLM from "../values/llm.js"
import type * as Tool from "./tool.js"

/**
 * What `before` decided: the call to settle (the same object when nothing rewrote it) and the context to add to
 * its output.
 *
 * @since 0.4.0
 * @category models
 */
export interface Prepared {
  readonly call: LLM.ToolCall
  readonly context: ReadonlyArray<string>
}

/**
 * The port. A `ToolFailure` from `before` refuses the call (the tool does not run); from `after` it replaces the
 * result. Both are model-visible; defects and interruption pass through.
 *
 * @since 0.4.0
 * @category models
 */
export interface Interface {
  /** True while some tool hook is registered; a materialization skips the port otherwise. */
  readonly active: () => boolean
  readonly before: (call: LLM.ToolCall, context: Tool.Context) => Effect.Effect<Prepared, LLM.ToolFailure>
  readonly after: (
    prepared: Prepared,
    context: Tool.Context,
    output: LLM.ToolOutput,
  ) => Effect.Effect<LLM.ToolOutput, LLM.ToolFailure>
}

/**
 * The ToolHooks service (Location-scoped, optional: the registry reads it when it is built).
 *
 * @since 0.4.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/ToolHooks")<Service, Interface>() {}
