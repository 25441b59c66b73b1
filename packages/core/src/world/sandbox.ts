/**
 * Sandbox: opt-in containment of the bash tool's child processes. Mode `none` (the default) runs commands with the
 * host user's full authority, as opencode does. Mode `bubblewrap` runs each command under `bwrap`: the root
 * filesystem read-only, the Location, toolgate's tmp directory and configured paths writable, `.git` and the
 * configuration files read-only, a private `/tmp`, minimal `/dev` and `/proc`, its own PID namespace, and no network
 * unless enabled. The service also decides the child's environment (`ChildEnvironment`). See docs/sandbox.md.
 *
 * @since 0.2.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Config from "../place/config.js"
import * as EventV2 from "../place/event.js"
import * as Location from "../place/location.js"
import * as Global from "../system/global.js"
import * as AppProcess from "./app-process.js"
import * as ChildEnvironment from "./child-environment.js"

/**
 * Paths inside the Location that stay read-only in the sandbox when they exist: the repository metadata and the
 * files that hold toolgate's own rules.
 *
 * @since 0.2.0
 */
export const READ_ONLY_IN_LOCATION: ReadonlyArray<string> = [".git", "toolgate.json", "toolgate.jsonc", ".toolgate"]

/**
 * What a bubblewrap sandbox may touch.
 *
 * @since 0.2.0
 */
export interface Plan {
  /** Absolute directories bound read-write (the Location first). */
  readonly writable: ReadonlyArray<string>
  /** Absolute paths bound read-only on top of the writable ones. */
  readonly readOnly: ReadonlyArray<string>
  /** Share the host's network namespace. */
  readonly network: boolean
  /** The working directory inside the sandbox. */
  readonly cwd: string
}

/**
 * The `bwrap` arguments for `plan`, followed by `argv` (the command to run). Order matters: later mounts cover
 * earlier ones, so the read-only root comes first, then the private `/tmp`, then the writable binds, then the
 * read-only paths inside them.
 *
 * @since 0.2.0
 */
export const bubblewrapArgs = (plan: Plan, argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const args: Array<string> = ["--die-with-parent", "--unshare-all"]
  if (plan.network) args.push("--share-net")
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
  for (const directory of plan.writable) args.push("--bind", directory, directory)
  for (const entry of plan.readOnly) args.push("--ro-bind", entry, entry)
  args.push("--chdir", plan.cwd, "--", ...argv)
  return args
}

/**
 * The configured mode could not be used: `bwrap` is missing or cannot create namespaces here.
 *
 * @since 0.2.0
 */
export class UnavailableError extends Schema.TaggedError<UnavailableError>()("Sandbox.UnavailableError", {
  mode: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `The ${this.mode} sandbox is not available: ${this.reason}`
  }
}

/**
 * Published once when the configured sandbox is unavailable and the Location falls back to mode `none`.
 *
 * @since 0.2.0
 */
export const Unavailable = EventV2.define(
  "sandbox.unavailable",
  Schema.Struct({ mode: Schema.String, reason: Schema.String }),
)

/**
 * One bash command to prepare.
 *
 * @since 0.2.0
 */
export interface Request {
  readonly command: string
  readonly cwd: string
  readonly shell: string
  /** Extra writable directories for this call (an approved external working directory). */
  readonly writable?: ReadonlyArray<string>
}

/**
 * The Sandbox service shape.
 *
 * @since 0.2.0
 */
export interface Interface {
  /** The mode in force for this Location (`none` after a fallback). */
  readonly mode: "none" | "bubblewrap"
  /** Network access of sandboxed commands: none, the host's, or through the egress proxy (`"rules"`). */
  readonly network: boolean | "rules"
  /**
   * `bash.sandbox.autoAllow` while the sandbox is active (never in mode `none`): a segment that would only ask `bash`
   * runs without asking; denies, `external_directory`, `protected_path` and unresolved segments still ask.
   */
  readonly autoAllow: boolean
  /** The process to spawn for `request`: the shell itself, or `bwrap` around it; with the child's environment. */
  readonly prepare: (request: Request) => Effect.Effect<AppProcess.Command>
  /**
   * A note for the model when a sandboxed command's output shows that the sandbox blocked it (a read-only file
   * system, a refused connection); `undefined` otherwise or in mode `none`.
   */
  readonly diagnose: (output: string) => string | undefined
}

/**
 * The Location-scoped Sandbox service.
 *
 * @since 0.2.0
 */
export class Service extends Context.Tag("@toolgate/v2/Sandbox")<Service, Interface>() {}

const WRITE_BLOCKED = /Read-only file system|EROFS/
const NETWORK_BLOCKED =
  /Network is unreachable|ENETUNREACH|Failed to connect|Couldn't connect|Could not resolve host|Temporary failure in name resolution|EAI_AGAIN|ENOTFOUND|Connection refused|ECONNREFUSED|getaddrinfo/

/**
 * The model-facing note for `output` under a sandbox with the given network setting.
 *
 * @since 0.2.0
 */
export const diagnose = (output: string, network: boolean): string | undefined => {
  const notes: Array<string> = []
  if (WRITE_BLOCKED.test(output)) {
    notes.push(
      "The sandbox blocked a write: only the project directory, the toolgate tmp directory and configured writable paths can be changed, and .git and the toolgate configuration are read-only. Work inside the project, or ask the user to add the directory to bash.sandbox.writable.",
    )
  }
  if (!network && NETWORK_BLOCKED.test(output)) {
    notes.push(
      "The sandbox has no network access, so connections fail. Ask the user to enable bash.sandbox.network if the command needs the network.",
    )
  }
  return notes.length === 0 ? undefined : notes.join("\n")
}

/**
 * Options of `layerWith`.
 *
 * @since 0.2.0
 */
export interface Options {
  /** The bubblewrap executable (default `bwrap` on `PATH`). */
  readonly executable?: string
}

const resolveIn = (base: string, entry: string, home: string): string => {
  const expanded = entry === "~" ? home : entry.startsWith("~/") ? path.join(home, entry.slice(2)) : entry
  return path.resolve(base, expanded)
}

const realOrSelf = (entry: string): string => {
  try {
    return fs.realpathSync(entry)
  } catch {
    return entry
  }
}

/**
 * The sandbox of a Location, configured by `bash.sandbox` and `bash.env`. Building it probes bubblewrap once when
 * that mode is configured; an unavailable sandbox fails the build with `UnavailableError` when
 * `failIfUnavailable` is set (the default), and otherwise publishes `sandbox.unavailable` and falls back to `none`.
 *
 * @since 0.2.0
 */
export const layerWith = (
  options: Options = {},
): Layer.Layer<
  Service,
  UnavailableError,
  Config.Service | Location.Service | Global.Service | EventV2.Service | AppProcess.Service
> =>
  Layer.effect(
    Service,
    Effect.gen(function* () {
      const entries = yield* (yield* Config.Service).entries()
      const location = yield* Location.Service
      const global = yield* Global.Service
      const bash = Config.latest(entries, "bash")
      const configured = bash?.sandbox
      const executable = options.executable ?? "bwrap"

      let mode: Interface["mode"] = configured?.mode ?? "none"
      if (mode === "bubblewrap") {
        const reason = yield* probe(executable)
        if (reason !== undefined) {
          const error = new UnavailableError({ mode, reason })
          if (configured?.failIfUnavailable ?? true) return yield* error
          yield* Effect.logWarning(error.message)
          yield* (yield* EventV2.Service).publish(Unavailable, { mode, reason }).pipe(Effect.ignore)
          mode = "none"
        }
      }

      const environment = ChildEnvironment.settings(bash?.env, mode === "bubblewrap" ? "scrub" : "inherit")
      const network = configured?.network ?? false
      const base = location.directory
      const writable = [
        base,
        global.tmp,
        ...(configured?.writable ?? []).map((entry) => resolveIn(base, entry, global.home)),
      ]
      const readOnly = [
        ...READ_ONLY_IN_LOCATION.map((entry) => path.join(base, entry)),
        ...(configured?.readOnly ?? []).map((entry) => resolveIn(base, entry, global.home)),
      ]

      const prepare = Effect.fn("Sandbox.prepare")(function* (request: Request) {
        const env = ChildEnvironment.overrides(environment)
        if (mode === "none") return { command: request.command, cwd: request.cwd, shell: request.shell, env }
        // Bind targets must exist; the tmp directory is created on demand, other missing paths are skipped.
        yield* Effect.sync(() => fs.mkdirSync(global.tmp, { recursive: true }))
        const plan: Plan = {
          writable: unique([...writable, ...(request.writable ?? [])].filter(fs.existsSync).map(realOrSelf)),
          readOnly: unique(readOnly.filter(fs.existsSync).map(realOrSelf)),
          network: network === true,
          cwd: request.cwd,
        }
        return {
          command: executable,
          args: bubblewrapArgs(plan, [request.shell, "-c", request.command]),
          cwd: request.cwd,
          env,
        }
      })

      return Service.of({
        mode,
        network,
        autoAllow: mode === "bubblewrap" && configured?.autoAllow === true,
        prepare,
        diagnose: (output) => (mode === "none" ? undefined : diagnose(output, network === true)),
      })
    }),
  )

/**
 * The sandbox with `bwrap` from `PATH`.
 *
 * @since 0.2.0
 */
export const layer = layerWith()

/**
 * A sandbox that never contains anything and passes the environment through (tests of other tools).
 *
 * @since 0.2.0
 */
export const layerNone: Layer.Layer<Service> = Layer.succeed(
  Service,
  Service.of({
    mode: "none",
    network: true,
    autoAllow: false,
    prepare: (request) => Effect.succeed({ command: request.command, cwd: request.cwd, shell: request.shell }),
    diagnose: () => undefined,
  }),
)

const unique = (entries: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(entries)]

/** Runs `bwrap … true`; `undefined` when it works, else why not. */
const probe = (executable: string): Effect.Effect<string | undefined, never, AppProcess.Service> =>
  Effect.gen(function* () {
    const process = yield* AppProcess.Service
    const argv = bubblewrapArgs({ writable: [], readOnly: [], network: false, cwd: "/" }, ["true"])
    return yield* process.run({ command: executable, args: argv }, { timeout: "10 seconds", maxErrorBytes: 4096 }).pipe(
      Effect.map((result) =>
        result.exitCode === 0
          ? undefined
          : `${executable} exited ${result.exitCode}: ${Buffer.from(result.stderr).toString("utf8").trim()}`,
      ),
      Effect.catchAll((error) => Effect.succeed(error.message)),
    )
  })
