/**
 * Embedding in one call. `layerProcess` builds what exists once per process (Global, the database, saved
 * approvals, ApplicationTools, the tool-output cleanup job, processes, search, HTTP, and on Postgres the sharing of
 * pending asks with other hosts); `layerLocation` builds every service one Location needs on top of it, including
 * the twelve built-in tools. `layer` is both for the common single-Location case. The test harness
 * (`Core.layerTest`) lives in `@toolgate/core/testing`.
 *
 * The big optional parts load only when they are used: the sharing of pending asks (`hosts/`) when the database is
 * Postgres, the bubblewrap sandbox (world/sandbox/, with the egress proxy) when a Location's configuration turns it
 * on. Each is a dynamic `import()` made while the layer is built.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as AgentV2 from "../agent/agent.js"
import * as DecisionJournal from "../journal/decision-journal.js"
import * as Approvals from "../approvals/approvals.js"
import * as EventV2 from "../place/event.js"
import * as Config from "../place/config.js"
import * as Database from "../system/database.js"
import * as FileMutation from "../world/file-mutation.js"
import * as Global from "../system/global.js"
import * as Hooks from "../permission/hooks.js"
import * as HookGate from "./hook-gate.js"
import * as Plugin from "./plugin.js"
import * as Notifications from "../system/notifications.js"
import * as Image from "../world/image.js"
import * as Location from "../place/location.js"
import * as LocationMutation from "../world/location-mutation.js"
import * as PermissionSaved from "../permission/permission-saved.js"
import * as PermissionLint from "../permission/permission-lint.js"
import * as PermissionV2 from "../permission/permission.js"
import * as ProtectedPath from "../place/protected-path.js"
import * as AppProcess from "../world/app-process.js"
import * as QuestionV2 from "../agent/question.js"
import * as Search from "../world/search/search.js"
import * as Containment from "../world/internal/containment.js"
import type * as Sandbox from "../world/sandbox/sandbox.js"
import * as SessionV2 from "../place/session.js"
import * as SkillV2 from "../world/skill.js"
import * as SessionTodo from "../world/session-todo.js"
import * as ApplicationTools from "../tool/application-tools.js"
import * as BuiltInTools from "../builtin/built-in-tools.js"
import * as ReadToolFileSystem from "../builtin/read-tool-file-system.js"
import * as ToolRegistry from "../tool/tool-registry.js"
import * as WebSearchTool from "../builtin/web-search-tool.js"
import * as ToolOutputStore from "../tool/tool-output-store.js"

/**
 * Options of the process-wide part.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProcessOptions {
  /** The data directory (default `$XDG_DATA_HOME/toolgate`); the database lives at `<data>/toolgate.db`. */
  readonly data?: string
  /** Use a private in-memory database instead of `<data>/toolgate.db`. */
  readonly memoryDatabase?: boolean
  /**
   * A Postgres database (`postgres://…`) instead of the one `TOOLGATE_DATABASE_URL` names or SQLite.
   *
   * @since 0.3.0
   */
  readonly databaseUrl?: string
}

/**
 * Options of one Location.
 *
 * @since 0.1.0
 * @category models
 */
export interface LocationOptions {
  /** The Location directory. */
  readonly directory: string
  /** A configuration document applied on top of the discovered files (highest priority). */
  readonly config?: Config.Info
  /** Skip file discovery and use only `config` (deterministic tests). */
  readonly discover?: boolean
}

/**
 * What `layerProcess` provides.
 *
 * @since 0.1.0
 * @category models
 */
export type ProcessServices = Layer.Layer.Success<ReturnType<typeof layerProcess>>

/** Pending asks as they are kept without sharing: in the Location's queue only. */
const unshared = Layer.succeed(
  PermissionV2.SharedAsks,
  PermissionV2.SharedAsks.of({ ownerID: undefined, mirror: () => undefined }),
)

/**
 * On Postgres, every Location's pending asks are rows other hosts can answer (docs/approvals.md): `hosts/` is loaded
 * then, and only then.
 */
const sharedAsks = Layer.unwrapEffect(
  Effect.gen(function* () {
    const pg = (yield* SqlClient.SqlClient).onDialectOrElse({ pg: () => true, orElse: () => false })
    if (!pg) return unshared
    return (yield* Effect.promise(() => import("../hosts/shared-asks.js"))).layer
  }),
)

/**
 * The process-wide services; build once per process and share between Locations.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerProcess = (options: ProcessOptions = {}) => {
  const global = options.data === undefined ? Global.layer : Global.layerWith({ data: options.data })
  const database =
    options.databaseUrl !== undefined
      ? Database.layerUrl(options.databaseUrl)
      : options.memoryDatabase === true
        ? Database.layerMemory
        : Database.layer
  const base = Layer.mergeAll(global, NodeContext.layer)
  return Layer.mergeAll(
    PermissionSaved.layer,
    DecisionJournal.layer,
    ApplicationTools.layer,
    ToolOutputStore.cleanupLayer,
    AppProcess.layer,
    Search.layer,
    NodeHttpClient.layer,
    WebSearchTool.defaultConfigLayer,
    sharedAsks.pipe(Layer.provideMerge(Notifications.layer)),
  ).pipe(Layer.provideMerge(database), Layer.provideMerge(base))
}

const configLayer = (options: LocationOptions) => {
  const extra: ReadonlyArray<Config.Entry> =
    options.config === undefined ? [] : [{ type: "document", info: options.config }]
  if (options.discover === false) return Config.layerFromEntries(extra)
  return Layer.effect(
    Config.Service,
    Effect.map(Config.Service, (discovered) =>
      Config.Service.of({ entries: () => Effect.map(discovered.entries(), (entries) => [...entries, ...extra]) }),
    ),
  ).pipe(Layer.provide(Config.layer))
}

/**
 * The Location's sandbox: mode `none` unless its configuration asks for one, and then `Sandbox.layer`, loaded here.
 */
const sandbox: Layer.Layer<
  Containment.Service,
  Sandbox.UnavailableError | Config.InvalidError,
  Config.Service | Location.Service | Global.Service | EventV2.Service | AppProcess.Service
> = Layer.unwrapEffect(
  Effect.gen(function* () {
    const entries = yield* (yield* Config.Service).entries()
    if (Containment.configuredMode(entries) === "none")
      return Layer.succeed(Containment.Service, Containment.unconfined(entries))
    return (yield* Effect.promise(() => import("../world/sandbox/sandbox.js"))).layer
  }),
)

/**
 * Every Location service on top of the process services, with the built-in tools registered and the configured
 * plugins loaded (`Plugin.layerConfig`: a module from the user's configuration that cannot be loaded fails it).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLocation = (options: LocationOptions) => {
  const place = Layer.mergeAll(Location.layer({ directory: options.directory }))
  const configured = configLayer(options).pipe(Layer.provideMerge(place))
  // ProtectedPath is below the services so the sandbox reads the same protected set as the tools.
  const policy = Layer.mergeAll(
    EventV2.layer,
    SessionV2.layer,
    AgentV2.layer,
    ToolOutputStore.layer,
    Image.layer,
    Hooks.layer,
    ProtectedPath.layer,
  )
  // The registry reads the hook port (HookGate, over the permission gate) when it is built.
  const registry = ToolRegistry.layer.pipe(
    Layer.provideMerge(HookGate.layer),
    Layer.provideMerge(Approvals.layer.pipe(Layer.provideMerge(PermissionV2.layer))),
  )
  const services = Layer.mergeAll(
    registry,
    LocationMutation.layer,
    FileMutation.layer,
    QuestionV2.layer,
    SessionTodo.layer,
    SkillV2.layer,
    ReadToolFileSystem.layer,
    sandbox,
    PermissionLint.layerWarnings,
    DecisionJournal.layerRetention,
  ).pipe(Layer.provideMerge(policy))
  // The configured plugins load after the built-ins, so a plugin's tool of the same name is the effective one.
  return Plugin.layerConfig.pipe(
    Layer.provideMerge(BuiltInTools.layer),
    Layer.provideMerge(services),
    Layer.provideMerge(configured),
  )
}

/**
 * One Location with its own process services: the simplest embedding.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: LocationOptions & ProcessOptions) =>
  layerLocation(options).pipe(Layer.provideMerge(layerProcess(options)))
