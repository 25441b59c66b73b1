/**
 * The narrow registration-only Location capability. Location producers (built-ins, plugins) receive only this
 * view; it delegates to `ToolRegistry.register` of the same Location instance.
 *
 * @since 0.1.0
 */
import { Context, type Effect, type Scope } from "effect"
import type * as Tool from "./tool.js"

/** Narrow registration-only Location capability. */
export interface Interface {
  /** Registers tools in the Location until the caller's Scope closes. */
  readonly register: (
    tools: Readonly<Record<string, Tool.AnyTool>>,
  ) => Effect.Effect<void, Tool.RegistrationError, Scope.Scope>
}

/** The Tools service. */
export class Service extends Context.Tag("@toolgate/v2/Tools")<Service, Interface>() {}
