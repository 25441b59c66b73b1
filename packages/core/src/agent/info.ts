/**
 * The values of an agent — its id, mode, model settings and configured rules — and the `Draft` editing API that
 * built-ins and configuration transforms receive. `AgentV2` names everything exported here.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import type * as Types from "effect/Types"
import * as Config from "../place/config.js"
/**
 * An agent id.
 *
 * @since 0.2.0
 * @category constants
 */
export const ID = Schema.String.pipe(Schema.brand("AgentV2.ID"))
/**
 * @see ID
 *
 * @since 0.2.0
 * @category models
 */
export type ID = typeof ID.Type

/**
 * The agent a Session without an explicit agent prefers.
 *
 * @since 0.2.0
 * @category utilities
 */
export const defaultID: ID = ID.make("build")

/**
 * Where an agent may be selected: as a subagent, as a primary agent, or both.
 *
 * @since 0.2.0
 * @category models
 */
export const Mode = Schema.Literal("subagent", "primary", "all")
/**
 * @see Mode
 *
 * @since 0.2.0
 * @category models
 */
export type Mode = typeof Mode.Type

/**
 * A `#rrggbb` colour or one of the theme colour names.
 *
 * @since 0.2.0
 * @category models
 */
export const Color = Schema.Union(
  Schema.String.pipe(Schema.pattern(/^#[0-9a-fA-F]{6}$/)),
  Schema.Literal("primary", "secondary", "accent", "success", "warning", "error", "info"),
)
/**
 * @see Color
 *
 * @since 0.2.0
 * @category models
 */
export type Color = typeof Color.Type

/**
 * The model an agent runs on.
 *
 * @since 0.2.0
 * @category models
 */
export const Model = Schema.Struct({
  id: Schema.String,
  providerID: Schema.String,
  variant: Schema.optional(Schema.String),
})
/**
 * @see Model
 *
 * @since 0.2.0
 * @category models
 */
export type Model = typeof Model.Type

/**
 * One agent. `permissions` is its configured ruleset (last match wins).
 *
 * @since 0.2.0
 * @category models
 */
export const Info = Schema.Struct({
  id: ID,
  model: Schema.optional(Model),
  request: Schema.Struct({
    headers: Schema.Record({ key: Schema.String, value: Schema.String }),
    body: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  }),
  system: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mode: Mode,
  hidden: Schema.Boolean,
  color: Schema.optional(Color),
  steps: Schema.optional(Schema.Int.pipe(Schema.positive())),
  permissions: Schema.Array(Config.PermissionRule),
})
/**
 * @see Info
 *
 * @since 0.2.0
 * @category models
 */
export type Info = typeof Info.Type

/**
 * A mutable agent, as `Draft.update` callbacks see it.
 *
 * @since 0.2.0
 * @category models
 */
export type MutableInfo = Types.DeepMutable<Info>

/**
 * A fresh agent with the runtime defaults: mode `all`, not hidden, no rules, empty request overrides.
 *
 * @since 0.2.0
 * @category constructors
 */
export const empty = (id: string): MutableInfo => ({
  id: ID.make(id),
  request: { headers: {}, body: {} },
  mode: "all",
  hidden: false,
  permissions: [],
})

/**
 * The editing API a transform receives.
 *
 * @since 0.2.0
 * @category models
 */
export interface Draft {
  /** Every agent, in insertion order. */
  readonly list: () => ReadonlyArray<Info>
  readonly get: (id: string) => Info | undefined
  /** Sets (or clears) the configured default agent. */
  readonly default: (id: string | undefined) => void
  /** Creates `empty(id)` when missing, lets `fn` edit it in place, then forces its id back to `id`. */
  readonly update: (id: string, fn: (agent: MutableInfo) => void) => void
  readonly remove: (id: string) => void
}

/**
 * The state behind the service.
 *
 * @since 0.2.0
 * @category models
 */
export interface Data {
  readonly agents: Map<ID, MutableInfo>
  default?: ID
}
