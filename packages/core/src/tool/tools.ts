/**
 * The narrow registration-only Location capability. Location producers (built-ins, plugins) receive only this
 * view; it delegates to `ToolRegistry.register` of the same Location instance.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Tool from "./tool.js"

/**
 * Narrow registration-only Location capability.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /** Registers tools in the Location until the caller's Scope closes. */
  readonly register: (
    tools: Readonly<Record<string, Tool.AnyTool>>,
  ) => Effect.Effect<void, Tool.RegistrationError, Scope.Scope>
}

/**
 * The Tools service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Tools")<Service, Interface>() {}

/**
 * A layer that builds one tool (capturing its services) and registers it as `name` for the layer's lifetime.
 * Registration errors are programming errors and become defects.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <R>(
  name: string,
  build: Effect.Effect<Tool.AnyTool, never, R>,
): Layer.Layer<never, never, R | Service> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const tools = yield* Service
      yield* Effect.orDie(tools.register({ [name]: yield* build }))
    }),
  )
