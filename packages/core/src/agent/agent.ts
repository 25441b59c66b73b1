/**
 * AgentV2: the agents of a Location (their mode, model settings and configured permission rules) and the rule that
 * picks the default agent. Agents live in a replayable `State` container: built-ins and configuration install
 * transforms, and every rebuild replays them onto an empty map.
 *
 * `resolve` is untraced: it runs on every permission request. The other methods are traced.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Config from "../place/config.js"
import * as Global from "../system/global.js"
import * as Location from "../place/location.js"
import * as ProjectV2 from "../place/project.js"
import * as State from "../values/state.js"
import * as Builtins from "./builtins.js"
import * as internal from "./info.js"

/**
 * An agent id.
 *
 * @since 0.2.0
 * @category constants
 */
export const ID = internal.ID
/**
 * @see ID
 *
 * @since 0.2.0
 * @category models
 */
export type ID = internal.ID
/**
 * The agent a Session without an explicit agent prefers.
 *
 * @since 0.2.0
 * @category utilities
 */
export const defaultID = internal.defaultID
/**
 * Where an agent may be selected: as a subagent, as a primary agent, or both.
 *
 * @since 0.2.0
 * @category models
 */
export const Mode = internal.Mode
/**
 * @see Mode
 *
 * @since 0.2.0
 * @category models
 */
export type Mode = internal.Mode
/**
 * A `#rrggbb` colour or one of the theme colour names.
 *
 * @since 0.2.0
 * @category models
 */
export const Color = internal.Color
/**
 * @see Color
 *
 * @since 0.2.0
 * @category models
 */
export type Color = internal.Color
/**
 * The model an agent runs on.
 *
 * @since 0.2.0
 * @category models
 */
export const Model = internal.Model
/**
 * @see Model
 *
 * @since 0.2.0
 * @category models
 */
export type Model = internal.Model
/**
 * One agent. `permissions` is its configured ruleset (last match wins).
 *
 * @since 0.2.0
 * @category models
 */
export const Info = internal.Info
/**
 * @see Info
 *
 * @since 0.2.0
 * @category models
 */
export type Info = internal.Info
/**
 * A mutable agent, as `Draft.update` callbacks see it.
 *
 * @since 0.2.0
 * @category models
 */
export type MutableInfo = internal.MutableInfo
/**
 * A fresh agent with the runtime defaults: mode `all`, not hidden, no rules, empty request overrides.
 *
 * @since 0.2.0
 * @category constructors
 */
export const empty = internal.empty
/**
 * The editing API a transform receives.
 *
 * @since 0.2.0
 * @category models
 */
export type Draft = internal.Draft
/**
 * The state behind the service.
 *
 * @since 0.2.0
 * @category models
 */
export type Data = internal.Data
export {
  /**
   * Commands plan mode runs without asking, each judged per simple command of a bash call (see docs/shell.md).
   *
   * @since 0.2.0
   */
  PLAN_READ_ONLY_COMMANDS,
  /**
   * The secret-file family.
   *
   * @since 0.2.0
   */
  SECRET_FILES,
  /**
   * Templates of the secret family that stay readable without an ask.
   *
   * @since 0.2.0
   */
  SECRET_TEMPLATES,
  /**
   * The default `read` rules for the secret family, in order.
   *
   * @since 0.2.0
   */
  secretRules,
  /**
   * The read-only commands the `guarded` preset runs without asking.
   *
   * @since 0.3.0
   */
  GUARDED_READ_ONLY_COMMANDS,
  /**
   * The rules of the `guarded` preset.
   *
   * @since 0.3.0
   */
  guardedRules,
} from "./builtins.js"

/**
 * An agent id with the agent it names, if any.
 *
 * @since 0.1.0
 * @category models
 */
export interface Selection {
  readonly id: ID
  readonly info: Info | undefined
}

/**
 * The AgentV2 operations.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /** Installs a transform until the caller's Scope closes. */
  readonly transform: (fn: State.Transform<Draft>) => Effect.Effect<State.Registration, never, Scope.Scope>
  /** Rebuilds the agents by replaying every active transform. */
  readonly reload: () => Effect.Effect<void>
  /** Exact lookup. */
  readonly get: (id: string) => Effect.Effect<Info | undefined>
  /** The selected default agent (configured default, else `build`, else the first selectable one). */
  readonly default: () => Effect.Effect<Info | undefined>
  /**
   * With an id: exact lookup; without: the default. `undefined` means the caller must deny everything. Untraced:
   * PermissionV2 resolves the agent of every request with it.
   */
  readonly resolve: (id?: string) => Effect.Effect<Info | undefined>
  /** Like `resolve`, but always names an id (the default's, else `build`). */
  readonly select: (id?: string) => Effect.Effect<Selection>
  /** Every agent, in insertion order. */
  readonly all: () => Effect.Effect<ReadonlyArray<Info>>
}

/**
 * The AgentV2 service (Location-scoped).
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Agent")<Service, Interface>() {}

const makeDraft = (data: Data): Draft => ({
  list: () => Array.from(data.agents.values()),
  get: (id) => data.agents.get(ID.make(id)),
  default: (id) => {
    if (id === undefined) delete data.default
    else data.default = ID.make(id)
  },
  update: (id, fn) => {
    const key = ID.make(id)
    let agent = data.agents.get(key)
    if (agent === undefined) {
      agent = empty(key)
      data.agents.set(key, agent)
    }
    fn(agent)
    agent.id = key
  },
  remove: (id) => {
    data.agents.delete(ID.make(id))
  },
})

/** Selectable as a default: not a subagent and not hidden. */
const selectable = (agent: Info | undefined): Info | undefined =>
  agent !== undefined && agent.mode !== "subagent" && !agent.hidden ? agent : undefined

const selectDefault = (data: Data): Info | undefined => {
  const configured = data.default === undefined ? undefined : selectable(data.agents.get(data.default))
  if (configured !== undefined) return configured
  const build = selectable(data.agents.get(defaultID))
  if (build !== undefined) return build
  for (const agent of data.agents.values()) if (selectable(agent) !== undefined) return agent
  return undefined
}

/**
 * Builds a service with no agents.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Interface> = Effect.gen(function* () {
  const state = yield* State.create<Data, Draft>({ initial: () => ({ agents: new Map() }), draft: makeDraft })
  const current = () => state.get()
  const resolveNow = (id: string | undefined): Info | undefined =>
    id !== undefined ? current().agents.get(ID.make(id)) : selectDefault(current())

  return Service.of({
    transform: (fn) => state.transform(fn),
    reload: Effect.fn("AgentV2.reload")(function* () {
      yield* state.reload
    }),
    get: Effect.fn("AgentV2.get")(function* (id: string) {
      return current().agents.get(ID.make(id))
    }),
    default: Effect.fn("AgentV2.default")(function* () {
      return selectDefault(current())
    }),
    resolve: (id) => Effect.sync(() => resolveNow(id)),
    select: Effect.fn("AgentV2.select")(function* (id?: string) {
      if (id !== undefined) return { id: ID.make(id), info: current().agents.get(ID.make(id)) } satisfies Selection
      const info = selectDefault(current())
      return { id: info?.id ?? defaultID, info } satisfies Selection
    }),
    all: Effect.fn("AgentV2.all")(function* () {
      return Array.from(current().agents.values())
    }),
  })
})

/**
 * No agents at all (every omitted-agent evaluation then denies); for tests and embedders that bring their own.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmpty: Layer.Layer<Service> = Layer.effect(Service, make)

/**
 * The seven built-in agents (starting from the configured `preset`'s rules, the latest document's), then the
 * configuration's agents and rules on top (both as transforms that live as long as the Location).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, Global.Service | Config.Service | Location.Service> = Layer.scoped(
  Service,
  Effect.gen(function* () {
    const service = yield* make
    const global = yield* Global.Service
    const location = yield* Location.Service
    const config = yield* Config.Service
    const output = Global.toolOutputFor(global, ProjectV2.storageKey(location.project.id, location.directory))
    const entries = yield* config.entries()
    const preset = Config.latest(entries, "preset") ?? "reference"
    yield* service.transform(Builtins.builtins(global, location.directory, output, preset))
    const documents = yield* Builtins.loadDocuments(entries)
    yield* service.transform(Builtins.configure(documents, global.home))
    return service
  }),
)
