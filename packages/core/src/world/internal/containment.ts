/**
 * The port the bash leaf spawns its commands through (`Sandbox.Service`), and its one implementation that contains
 * nothing: mode `none`, where the command is the shell itself with the child environment `bash.env` sets. The
 * bubblewrap implementation is `Sandbox` (world/sandbox/, entry `@toolgate/core/sandbox`); `Core.layerLocation`
 * loads it only when a Location's configuration turns the sandbox on, so an embedder of the main entry whose
 * Locations run unsandboxed never loads the sandbox or the egress proxy. See docs/sandbox.md.
 *
 * @since 0.4.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as PermissionV2 from "../../permission/permission.js"
import * as Config from "../../place/config.js"
import type * as AppProcess from "../app-process.js"
import * as ChildEnvironment from "../child-environment.js"
import type * as EgressProxy from "../egress/egress-proxy.js"

/**
 * One bash command to prepare: the command, its cwd and shell, extra writable directories (an approved external
 * working directory) and who asks for its egress destinations under `network: "rules"`.
 *
 * @since 0.4.0
 * @category models
 */
export interface Request {
  readonly command: string
  readonly cwd: string
  readonly shell: string
  /** Extra writable directories for this call (an approved external working directory). */
  readonly writable?: ReadonlyArray<string>
  /**
   * Who asks for the call's egress destinations (`network: "rules"`): the Location's permission service and the
   * call's identity (`PermissionV2.fromToolCall`). Without it a `"rules"` sandbox does not run the command.
   */
  readonly egress?: {
    readonly permission: Pick<PermissionV2.Interface, "assert">
    readonly caller: EgressProxy.Caller
  }
}

/**
 * A prepared command: what to spawn, and what belongs to the call while it runs.
 *
 * @since 0.4.0
 * @category models
 */
export interface Prepared extends AppProcess.Command {
  /**
   * Never completes, unless the user rejected an egress ask without a message: then it dies with
   * `PermissionV2.DeclinedError`. Race the command against it.
   */
  readonly declined: Effect.Effect<never>
  /** The note for the model about what the sandbox blocked, from the command's output and the call's egress. */
  readonly note: (output: string) => Effect.Effect<string | undefined>
}

/**
 * A call could not be sandboxed as configured, so it does not run.
 *
 * @since 0.4.0
 * @category errors
 */
export class PrepareError extends Schema.TaggedError<PrepareError>()("Sandbox.PrepareError", {
  reason: Schema.String,
}) {
  override get message(): string {
    return `The command was not run because the sandbox could not be prepared: ${this.reason}`
  }
}

/**
 * The Sandbox service shape.
 *
 * @since 0.4.0
 * @category models
 */
export interface Interface {
  /** The mode in force for this Location (`none` after a fallback). */
  readonly mode: "none" | "bubblewrap"
  /** Network access of sandboxed commands: none, the host's, or through the egress proxy (`"rules"`). */
  readonly network: boolean | "rules"
  /**
   * `bash.sandbox.auto_allow` while the sandbox is active (never in mode `none`): a segment that would only ask `bash`
   * runs without asking; denies, `external_directory`, `protected_path` and unresolved segments still ask. Withheld
   * (false) in a repository whose history holds secret files (`Sandbox.AutoAllowWithheld`).
   */
  readonly autoAllow: boolean
  /**
   * The process to spawn for `request`: the shell itself, or `bwrap` around it; with the child's environment. What
   * the call holds (placeholders of missing protected paths, the egress proxy) is released with the scope.
   */
  readonly prepare: (request: Request) => Effect.Effect<Prepared, PrepareError, Scope.Scope>
  /**
   * A note for the model when a sandboxed command's output shows that the sandbox blocked it (a read-only file
   * system, a refused connection); `undefined` otherwise or in mode `none`. `Prepared.note` adds the call's egress.
   */
  readonly diagnose: (output: string) => string | undefined
}

/**
 * The Location-scoped Sandbox service.
 *
 * @since 0.4.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Sandbox")<Service, Interface>() {}

/**
 * The last document that sets `bash.<key>`, so a later document's other `bash` settings do not drop it.
 *
 * @since 0.4.0
 * @category utilities
 */
export const lastSetting = <K extends "sandbox" | "env">(entries: ReadonlyArray<Config.Entry>, key: K) => {
  let found: { readonly value: NonNullable<Config.Info["bash"]>[K]; readonly path: string | undefined } | undefined
  for (const document of Config.documents(entries)) {
    const value = document.info.bash?.[key]
    if (value !== undefined) found = { value, path: document.path }
  }
  return found
}

/**
 * The sandbox mode the configuration asks for (`none` when it asks for none).
 *
 * @since 0.4.0
 * @category utilities
 */
export const configuredMode = (entries: ReadonlyArray<Config.Entry>): Interface["mode"] =>
  lastSetting(entries, "sandbox")?.value?.mode ?? "none"

/**
 * The command of mode `none`: the shell itself, with `env` when the child environment changes.
 *
 * @since 0.4.0
 * @category utilities
 */
export const unsandboxed = (
  request: Request,
  env: Readonly<Record<string, string | undefined>> | undefined,
): Prepared => ({
  command: request.command,
  cwd: request.cwd,
  shell: request.shell,
  ...(env === undefined ? {} : { env }),
  declined: Effect.never,
  note: () => Effect.succeed(undefined),
})

/**
 * Mode `none` for the configuration `entries`: commands run as the shell itself, with the host's environment
 * changed only as `bash.env` says.
 *
 * @since 0.4.0
 * @category constructors
 */
export const unconfined = (entries: ReadonlyArray<Config.Entry>): Interface => {
  const environment = ChildEnvironment.settings(lastSetting(entries, "env")?.value, "inherit")
  return Service.of({
    mode: "none",
    network: lastSetting(entries, "sandbox")?.value?.network ?? false,
    autoAllow: false,
    prepare: (request) => Effect.sync(() => unsandboxed(request, ChildEnvironment.overrides(environment))),
    diagnose: () => undefined,
  })
}
