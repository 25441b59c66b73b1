/**
 * Plugin: one canonical way to add tools and hooks to a Location. `make({ name, tools, hooks })` gives a layer that
 * registers the tools through the one registration path (`Tools.Service`, Location-scoped: the stale check, the
 * output bound, the gate and the journal apply) and the hooks under the plugin's name (`Hooks`, which can only
 * tighten), both until the layer's scope closes.
 *
 * `layerConfig` loads the modules the configuration's `plugins` key names (paths relative to the document). A module
 * named in the user's configuration directory, or by a document given from code, loads when the Location opens; one
 * named by a project's document waits for a `project_program` approval of its exact path (`approve`, answerable in
 * every approval channel, or an approval saved before) — a repository cannot run code by being opened. A module that
 * cannot be loaded fails closed, naming the document and the field. See docs/plugins.md.
 *
 * @since 0.4.0
 */
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Config from "../place/config.js"
import * as Location from "../place/location.js"
import * as ProjectV2 from "../place/project.js"
import type * as SessionV2 from "../place/session.js"
import * as Hooks from "../permission/hooks.js"
import * as PermissionSaved from "../permission/permission-saved.js"
import * as PermissionV2 from "../permission/permission.js"
import * as ProjectProgram from "../permission/project-program.js"
import * as Global from "../system/global.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"
import * as Wildcard from "../values/wildcard.js"

/**
 * What a plugin is made of: its name (the `<plugin>` of its hooks' origin `hook:<plugin>/<hook>`), the tools it
 * registers by name, and its hooks. `tools` and `hooks` may be Effects, to acquire the services the tools capture
 * (`PermissionV2`, to assert their own permissions) when the layer is built.
 *
 * @since 0.4.0
 * @category models
 */
export interface Definition<R = never> {
  readonly name: string
  readonly tools?:
    Readonly<Record<string, Tool.AnyTool>> | Effect.Effect<Readonly<Record<string, Tool.AnyTool>>, never, R> | undefined
  readonly hooks?: Hooks.Definitions | Effect.Effect<Hooks.Definitions, never, R> | undefined
  /** How long each hook may take (default `Hooks.DEFAULT_TIMEOUT_MS`). */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * A plugin: a layer that registers its tools and hooks in the Location until its scope closes.
 *
 * @since 0.4.0
 * @category models
 */
export type Plugin<R = never> = Layer.Layer<never, never, Tools.Service | Hooks.Service | R>

const NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/
const made = new WeakSet<object>()

/**
 * The plugin of `definition`. A name that is not a letter followed by up to 63 letters, digits, `_`, `.` or `-`,
 * and a tool name the registries refuse, are defects (programming errors) when the layer is built.
 *
 * @since 0.4.0
 * @category constructors
 */
export const make = <R = never>(definition: Definition<R>): Plugin<R> => {
  const layer: Plugin<R> = Layer.scopedDiscard(
    Effect.gen(function* () {
      if (!NAME.test(definition.name)) return yield* Effect.die(new Error(`Invalid plugin name: ${definition.name}`))
      const tools = Effect.isEffect(definition.tools) ? yield* definition.tools : definition.tools
      const hooks = Effect.isEffect(definition.hooks) ? yield* definition.hooks : definition.hooks
      if (hooks !== undefined)
        yield* (yield* Hooks.Service).register(
          definition.name,
          hooks,
          definition.timeout === undefined ? undefined : { timeout: definition.timeout },
        )
      if (tools !== undefined) yield* Effect.orDie((yield* Tools.Service).register(tools))
    }),
  )
  made.add(layer)
  return layer
}

/**
 * True for a value `make` returned.
 *
 * @since 0.4.0
 * @category guards
 */
export const isPlugin = (value: unknown): value is Plugin<unknown> =>
  typeof value === "object" && value !== null && made.has(value)

/**
 * What a module's default export may be instead of a plugin: a function given this API (the loader's own `Plugin`,
 * `Tool`, `Hooks`, `Effect` and `Schema`) that returns one. A module that cannot import `@toolgate/core`, or would
 * import another copy of it, makes its tools with the runner's own.
 *
 * @since 0.4.0
 * @category models
 */
export interface Api {
  readonly Plugin: { readonly make: typeof make }
  readonly Tool: typeof Tool
  readonly Hooks: typeof Hooks
  readonly Effect: typeof Effect
  readonly Schema: typeof Schema
}

const api: Api = { Plugin: { make }, Tool, Hooks, Effect, Schema }

// ---------------------------------------------------------------------------------------------------------------
// Loading from the configuration

/**
 * A plugin module could not be loaded: `document` and `field` (`plugins[<i>]`) say where it was named.
 *
 * @since 0.4.0
 * @category errors
 */
export class LoadError extends Schema.TaggedError<LoadError>()("Plugin.LoadError", {
  document: Schema.String,
  field: Schema.String,
  module: Schema.String,
  detail: Schema.String,
}) {
  override get message(): string {
    return `${this.document}: ${this.field}: cannot load the plugin ${this.module}: ${this.detail}`
  }
}

/**
 * No configured plugin module has that path.
 *
 * @since 0.4.0
 * @category errors
 */
export class NotFoundError extends Schema.TaggedError<NotFoundError>()("Plugin.NotFoundError", {
  module: Schema.String,
}) {
  override get message(): string {
    return `No configured plugin module ${this.module}`
  }
}

/**
 * Where a module was named: the user's configuration directory or code (`user`: loads at once), or a project's
 * document (`project`: waits for approval).
 *
 * @since 0.4.0
 * @category models
 */
export type Origin = "user" | "project"

/**
 * A configured module's state: `loaded`, `waiting` for approval, or `failed` with the cause.
 *
 * @since 0.4.0
 * @category models
 */
export type State =
  { readonly _tag: "loaded" } | { readonly _tag: "waiting" } | { readonly _tag: "failed"; readonly message: string }

/**
 * One configured plugin module.
 *
 * @since 0.4.0
 * @category models
 */
export interface Status {
  /** The module's absolute path. */
  readonly module: string
  readonly document: string
  readonly field: string
  readonly origin: Origin
  readonly state: State
}

/**
 * The configured plugins of one Location.
 *
 * @since 0.4.0
 * @category models
 */
export interface Interface {
  readonly plugins: () => Effect.Effect<ReadonlyArray<Status>>
  /**
   * Asks to load a waiting module (a `project_program` ask whose resource is its exact path), as `caller`, and
   * loads it once allowed. A module already loaded is left as it is.
   */
  readonly approve: (
    module: string,
    caller: { readonly sessionID: string; readonly agent?: string | undefined },
  ) => Effect.Effect<void, NotFoundError | LoadError | PermissionV2.Error | SessionV2.NotFoundError>
}

/**
 * The Plugin service (Location-scoped).
 *
 * @since 0.4.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Plugin")<Service, Interface>() {}

interface Entry {
  readonly module: string
  readonly document: string
  readonly field: string
  readonly origin: Origin
  state: State
}

/** The configured modules, in document order; a module named twice is loaded once (its last naming counts). */
const entriesOf = (
  documents: ReadonlyArray<Config.Document>,
  userDirectory: string,
  locationDirectory: string,
): ReadonlyArray<Entry> => {
  const byModule = new Map<string, Entry>()
  for (const document of documents) {
    const user =
      document.path === undefined || path.resolve(path.dirname(document.path)) === path.resolve(userDirectory)
    const base = document.path === undefined ? locationDirectory : path.dirname(document.path)
    ;(document.info.plugins ?? []).forEach((named, index) => {
      const module = path.resolve(base, named)
      byModule.delete(module)
      byModule.set(module, {
        module,
        document: document.path ?? "(configuration from code)",
        field: `plugins[${index}]`,
        origin: user ? "user" : "project",
        state: { _tag: "waiting" },
      })
    })
  }
  return [...byModule.values()]
}

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/**
 * Builds the configured plugins of the current Location: user and code modules are loaded now (a failure fails the
 * Location), project modules wait unless an approval of their exact path was saved before.
 *
 * @since 0.4.0
 * @category constructors
 */
export const makeConfigured = Effect.gen(function* () {
  const config = yield* Config.Service
  const global = yield* Global.Service
  const location = yield* Location.Service
  const permission = yield* PermissionV2.Service
  const saved = Option.getOrUndefined(yield* Effect.serviceOption(PermissionSaved.Service))
  const context = yield* Effect.context<Tools.Service | Hooks.Service | PermissionV2.Service>()
  const scope = yield* Effect.scope
  const loading = yield* Effect.makeSemaphore(1)
  const entries = entriesOf(Config.documents(yield* config.entries()), global.config, location.directory)

  const loadError = (entry: Entry, detail: string) =>
    new LoadError({ document: entry.document, field: entry.field, module: entry.module, detail })

  const load = (entry: Entry): Effect.Effect<void, LoadError> =>
    Effect.gen(function* () {
      const imported = yield* Effect.tryPromise({
        try: () => import(pathToFileURL(entry.module).href) as Promise<{ readonly default?: unknown }>,
        catch: (cause) => loadError(entry, describe(cause)),
      })
      const exported = imported.default
      const plugin =
        typeof exported === "function"
          ? yield* Effect.try({
              try: () => (exported as (api: Api) => unknown)(api),
              catch: (cause) => loadError(entry, `its default export threw: ${describe(cause)}`),
            })
          : exported
      if (!isPlugin(plugin))
        return yield* loadError(entry, "its default export is not a plugin (Plugin.make, or a function returning one)")
      yield* Layer.buildWithScope(plugin as Layer.Layer<never, never, never>, scope).pipe(
        Effect.provide(context),
        Effect.catchAllDefect((defect) => Effect.fail(loadError(entry, describe(defect)))),
      )
      entry.state = { _tag: "loaded" }
    }).pipe(Effect.tapError((error) => Effect.sync(() => (entry.state = { _tag: "failed", message: error.detail }))))

  const approvedBefore = (entry: Entry): Effect.Effect<boolean> => {
    if (saved === undefined) return Effect.succeed(false)
    const resource = ProjectProgram.resource({ module: entry.module })
    const scope = ProjectV2.approvalScope(location.project.id, location.directory)
    return Effect.map(saved.list({ projectID: scope.projectID }), (rows) =>
      rows.some(
        (row) =>
          row.action === ProjectProgram.ACTION &&
          (row.directory === "" || row.directory === scope.directory) &&
          Wildcard.match(resource, row.resource),
      ),
    )
  }

  for (const entry of entries) {
    if (entry.origin === "user" || (yield* approvedBefore(entry))) yield* load(entry)
  }

  const plugins = Effect.fn("Plugin.plugins")(function* () {
    return entries.map(({ module, document, field, origin, state }): Status => ({
      module,
      document,
      field,
      origin,
      state,
    }))
  })

  const approve = Effect.fn("Plugin.approve")(function* (
    module: string,
    caller: { readonly sessionID: string; readonly agent?: string | undefined },
  ) {
    const entry = entries.find((candidate) => candidate.module === path.resolve(module))
    if (entry === undefined) return yield* new NotFoundError({ module })
    if (entry.state._tag === "loaded") return
    yield* ProjectProgram.approve(permission, {
      sessionID: caller.sessionID,
      agent: caller.agent,
      kind: "plugin",
      name: path.basename(entry.module),
      document: entry.document,
      program: { module: entry.module },
    })
    // Another approval may have loaded it while this one waited.
    yield* loading.withPermits(1)(Effect.suspend(() => (entry.state._tag === "loaded" ? Effect.void : load(entry))))
  })

  return Service.of({ plugins, approve })
})

/**
 * The configured plugins as a Location layer. It needs the Location's `Tools`, `Hooks` and `PermissionV2` (the
 * plugins' tools may capture `PermissionV2`), its `Config`, `Location` and `Global`; it fails with `LoadError` when a
 * module from the user's configuration directory cannot be loaded.
 *
 * @since 0.4.0
 * @category layers
 */
export const layerConfig: Layer.Layer<
  Service,
  LoadError,
  Tools.Service | Hooks.Service | PermissionV2.Service | Config.Service | Global.Service | Location.Service
> = Layer.scoped(Service, makeConfigured)

/**
 * A scope-bound load of one plugin layer into the current Location, for code that holds a plugin value (a test, an
 * embedder choosing at run time): the same as providing the layer.
 *
 * @since 0.4.0
 * @category utilities
 */
export const register = <R>(
  plugin: Plugin<R>,
): Effect.Effect<void, never, Tools.Service | Hooks.Service | R | Scope.Scope> =>
  Effect.flatMap(Effect.scope, (scope) => Effect.asVoid(Layer.buildWithScope(plugin, scope)))
