/**
 * Sandbox: opt-in containment of the bash tool's child processes. Mode `none` (the default) runs commands with the
 * host user's full authority, as opencode does. Mode `bubblewrap` runs each command under `bwrap` in a user
 * namespace without capabilities or new privileges, under a seccomp filter (no Unix sockets, no namespaces or
 * mounts): the root filesystem read-only; the Location, the project's own tmp directory and configured paths
 * writable; every protected path of the Location read-only, missing ones included; credential stores, system
 * secrets, the `.env` family and `deny_read` paths hidden; and no network, the host's, or egress by rule through a
 * per-call proxy. The service also decides the child's environment (`ChildEnvironment`). See docs/sandbox.md.
 *
 * The port the bash leaf reads (`Service`, `Interface`, `Request`, `Prepared`, `PrepareError`) and mode `none` live in
 * world/internal/containment.ts, so the main entry runs bash without loading this module; `Core.layerLocation`
 * imports it only when a Location's configuration turns the sandbox on. The body lives in `internal/`: the mount plan
 * (`mounts.ts`), the seccomp program (`seccomp.ts`), what is hidden (`secrets.ts`), the protected paths and their
 * placeholders (`protect.ts`), allowed Unix sockets (`sockets.ts`), the availability probe (`probe.ts`) and a call's
 * preparation (`prepare.ts`). This module is the `@toolgate/core/sandbox` entry.
 *
 * @since 0.2.0
 */
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Config from "../../place/config.js"
import * as EventV2 from "../../place/event.js"
import * as Location from "../../place/location.js"
import * as Project from "../../place/project.js"
import * as ProtectedPath from "../../place/protected-path.js"
import * as Global from "../../system/global.js"
import * as AppProcess from "../app-process.js"
import * as ChildEnvironment from "../child-environment.js"
import * as Containment from "../internal/containment.js"
import * as Mounts from "./internal/mounts.js"
import * as Prepare from "./internal/prepare.js"
import * as Probe from "./internal/probe.js"
import * as Protect from "./internal/protect.js"
import * as Secrets from "./internal/secrets.js"

/**
 * The names protected in every directory from the project root down to the Location: read-only in the sandbox, and
 * when missing, impossible to create there.
 *
 * @since 0.2.0
 * @category constants
 */
export const READ_ONLY_IN_LOCATION: ReadonlyArray<string> = Protect.CHAIN_ENTRIES

/**
 * The credential stores below the home directory that the sandbox hides.
 *
 * @since 0.3.0
 * @category constants
 */
export const CREDENTIAL_STORES: ReadonlyArray<string> = Secrets.CREDENTIAL_STORES

/**
 * The system secret files the sandbox hides (and `/etc/ssh/ssh_host_*_key`).
 *
 * @since 0.3.0
 * @category constants
 */
export const SYSTEM_SECRETS: ReadonlyArray<string> = Secrets.SYSTEM_SECRETS

/**
 * The directories the call-time search for `.env` files does not enter.
 *
 * @since 0.3.0
 * @category constants
 */
export const SEARCH_SKIPS: ReadonlyArray<string> = Secrets.SEARCH_SKIPS

/**
 * The uid and gid a root runner's sandbox runs as (`nobody`); other runners keep their own.
 *
 * @since 0.3.0
 * @category constants
 */
export const UNPRIVILEGED_ID = 65534

/**
 * What a bubblewrap sandbox may touch.
 *
 * @since 0.2.0
 * @category models
 */
export type Plan = Mounts.Plan

/**
 * The `bwrap` arguments for `plan`, followed by `argv` (the command to run); see docs/sandbox.md for the order.
 *
 * @since 0.2.0
 * @category utilities
 */
export const bubblewrapArgs: (plan: Plan, argv: ReadonlyArray<string>) => ReadonlyArray<string> = Mounts.bubblewrapArgs

/**
 * The configured mode could not be used: `bwrap` is missing or cannot create namespaces here.
 *
 * @since 0.2.0
 * @category errors
 */
export class UnavailableError extends Schema.TaggedError<UnavailableError>()("Sandbox.UnavailableError", {
  mode: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `The ${this.mode} sandbox is not available: ${this.reason}`
  }
}

export {
  /**
   * A call could not be sandboxed as configured, so it does not run.
   *
   * @since 0.3.0
   * @category errors
   */
  PrepareError,
} from "../internal/containment.js"

/**
 * Published once when the configured sandbox is unavailable and the Location falls back to mode `none`.
 *
 * @since 0.2.0
 * @category models
 */
export const Unavailable = EventV2.define(
  "sandbox.unavailable",
  Schema.Struct({ mode: Schema.String, reason: Schema.String }),
)

/**
 * Published once when `bash.sandbox.auto_allow` is configured but withheld for the Location: its git history or index
 * holds secret-family files (`files`), which git reads through its object store inside the sandbox, or that could not
 * be checked (`files` empty). Segments then ask `bash` as they would without auto_allow. See docs/sandbox.md.
 *
 * @since 0.4.0
 * @category models
 */
export const AutoAllowWithheld = EventV2.define(
  "sandbox.auto_allow_withheld",
  Schema.Struct({ reason: Schema.String, files: Schema.Array(Schema.String) }),
)

/**
 * One bash command to prepare: the command, its cwd and shell, extra writable directories (an approved external
 * working directory) and who asks for its egress destinations under `network: "rules"`.
 *
 * @since 0.2.0
 * @category models
 */
export type Request = Containment.Request

/**
 * A prepared command: what to spawn, and what belongs to the call while it runs.
 *
 * @since 0.3.0
 * @category models
 */
export type Prepared = Containment.Prepared

/**
 * The Sandbox service shape.
 *
 * @since 0.2.0
 * @category models
 */
export type Interface = Containment.Interface

export {
  /**
   * The Location-scoped Sandbox service: the port the bash leaf spawns through.
   *
   * @since 0.2.0
   * @category tags
   */
  Service,
} from "../internal/containment.js"

/**
 * The model-facing note for `output` under a sandbox with the given network setting.
 *
 * @since 0.2.0
 * @category utilities
 */
export const diagnose: (output: string, network: boolean | "rules") => string | undefined = Prepare.diagnose

/**
 * Options of `layerWith`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** The bubblewrap executable (default `bwrap` on `PATH`). */
  readonly executable?: string
}

const resolveIn = (base: string, entry: string, home: string): string => {
  const expanded = entry === "~" ? home : entry.startsWith("~/") ? path.join(home, entry.slice(2)) : entry
  return path.resolve(base, expanded)
}

/**
 * The sandbox of a Location, configured by `bash.sandbox` and `bash.env`. Building it probes bubblewrap once when
 * that mode is configured; an unavailable sandbox fails the build with `UnavailableError` when
 * `fail_if_unavailable` is set (the default), and otherwise publishes `sandbox.unavailable` and falls back to `none`.
 * A configuration the sandbox cannot hold (`allow_unix_sockets` with `network: true`) fails with
 * `Config.InvalidError`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerWith = (
  options: Options = {},
): Layer.Layer<
  Containment.Service,
  UnavailableError | Config.InvalidError,
  Config.Service | Location.Service | Global.Service | EventV2.Service | AppProcess.Service
> =>
  Layer.effect(
    Containment.Service,
    Effect.gen(function* () {
      const entries = yield* (yield* Config.Service).entries()
      const location = yield* Location.Service
      const global = yield* Global.Service
      const setting = Containment.lastSetting(entries, "sandbox")
      const configured = setting?.value
      const executable = options.executable ?? "bwrap"
      const network = configured?.network ?? false
      const sockets = configured?.allow_unix_sockets ?? []
      const user = process.getuid?.() === 0 ? { uid: UNPRIVILEGED_ID, gid: UNPRIVILEGED_ID } : undefined
      const policy = { blockUnixSockets: sockets.length === 0 }

      let mode: Interface["mode"] = configured?.mode ?? "none"
      if (mode === "bubblewrap" && network === true && sockets.length > 0) {
        const file = setting?.path ?? "the configuration"
        return yield* new Config.InvalidError({
          path: file,
          message: `Invalid config in ${file} at bash.sandbox.allow_unix_sockets: allowed Unix sockets need the sandbox's own network namespace (network false or "rules"), or every abstract socket of the host would be reachable`,
        })
      }
      if (mode === "bubblewrap") {
        const reason = yield* Probe.probe(executable, user, policy)
        if (reason !== undefined) {
          const error = new UnavailableError({ mode, reason })
          if (configured?.fail_if_unavailable ?? true) return yield* error
          yield* Effect.logWarning(error.message)
          yield* (yield* EventV2.Service).publish(Unavailable, { mode, reason }).pipe(Effect.ignore)
          mode = "none"
        }
      }

      if (mode === "none") return Containment.unconfined(entries)
      const environment = ChildEnvironment.settings(Containment.lastSetting(entries, "env")?.value, "scrub")

      const base = location.directory
      const home = global.home
      const project = location.project
      const tmp = path.join(
        global.tmp,
        Project.storageKey(project.id, project.id === Project.GLOBAL_ID ? base : project.directory),
      )
      const protectedPaths = yield* Effect.serviceOption(ProtectedPath.Service)
      const roots = (
        Option.isSome(protectedPaths)
          ? protectedPaths.value.roots
          : yield* ProtectedPath.locationRoots(location, global)
      ).map((root) => root.directory)
      const seccomp = Probe.seccompProgram(policy)
      if ("reason" in seccomp) return yield* new UnavailableError({ mode, reason: seccomp.reason })
      const program = seccomp.program
      // Placeholders of missing protected paths that a toolgate process killed during a call left behind.
      yield* Effect.sync(() => Protect.sweep([...Config.projectChain(location), base]))
      const registry = Protect.registry()
      const searchCache: Secrets.SearchCache = new Map()
      const gitDirectories = Protect.gitDirectories()
      const prepare = Effect.fn("Sandbox.prepare")(function* (request: Request) {
        return yield* Prepare.sandboxed(request, {
          executable,
          environment,
          network,
          policy,
          program,
          user,
          base,
          tmp,
          home,
          chain: Config.projectChain(location),
          roots,
          writable: (configured?.writable ?? []).map((entry) => resolveIn(base, entry, home)),
          readOnly: (configured?.read_only ?? []).map((entry) => resolveIn(base, entry, home)),
          denyRead: (configured?.deny_read ?? []).map((entry) => resolveIn(base, entry, home)),
          allowUnixSockets: sockets.map((entry) => resolveIn(base, entry, home)),
          registry,
          searchCache,
          gitDirectories,
        }).pipe(Effect.mapError((reason) => new Containment.PrepareError({ reason })))
      })

      let autoAllow = configured?.auto_allow === true
      if (autoAllow && location.vcs !== undefined) {
        const worktree = location.project.directory
        const committed = yield* Secrets.committedSecrets(worktree)
        if (committed === undefined || committed.length > 0) {
          autoAllow = false
          const shown = (committed ?? []).slice(0, 5).join(", ")
          const reason =
            committed === undefined
              ? `bash.sandbox.auto_allow is withheld: git could not tell in time whether the history of ${worktree} holds secret files (.env…), which git commands inside the sandbox could print`
              : `bash.sandbox.auto_allow is withheld: the git history or index of ${worktree} holds secret files (${shown}${committed.length > 5 ? ", …" : ""}), which git commands inside the sandbox could print; bash commands ask as without auto_allow`
          yield* Effect.logWarning(reason)
          yield* (yield* EventV2.Service)
            .publish(AutoAllowWithheld, { reason, files: committed ?? [] })
            .pipe(Effect.ignore)
        }
      }

      return Containment.Service.of({
        mode,
        network,
        autoAllow,
        prepare,
        diagnose: (output) => diagnose(output, network),
      })
    }),
  )

/**
 * The sandbox with `bwrap` from `PATH`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = layerWith()

/**
 * A sandbox that never contains anything and passes the environment through (tests of other tools).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerNone: Layer.Layer<Containment.Service> = Layer.succeed(
  Containment.Service,
  Containment.Service.of({
    mode: "none",
    network: true,
    autoAllow: false,
    prepare: (request) => Effect.succeed(Containment.unsandboxed(request, undefined)),
    diagnose: () => undefined,
  }),
)
