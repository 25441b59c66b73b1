/**
 * How the bash tool plans a call: the shell it runs (`selectShell`), the arity table, the disk and the Location as
 * `ShellPlan` sees them (`places`, `setting`), and the plan of one call (`planCall`), also served as
 * `ShellPlan.Service` for `permissions explain` (`layerPlan`).
 *
 * @since 0.3.0
 */
import * as nodeFs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ProcessGroup from "../../system/process-group.js"
import * as BashArity from "../../shell/bash-arity.js"
import * as Config from "../../place/config.js"
import * as ProtectedPath from "../../place/protected-path.js"
import * as PermissionV2 from "../../permission/permission.js"
import * as ShellCommand from "../../shell/shell-command.js"
import * as ShellPlan from "../../shell/shell-plan.js"
import * as LocationMutation from "../../world/location-mutation.js"
import * as Sandbox from "../../world/internal/containment.js"

/** Where bash is looked for before `PATH`. */
const BASH_PATHS = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash", "/opt/homebrew/bin/bash"]

/**
 * The shell commands run with: the configured `shell` when set; otherwise bash when it is installed — the grammar
 * the gate reads — else `/bin/sh` (read as a POSIX shell, see docs/shell.md); `COMSPEC` or `cmd.exe` on Windows.
 *
 * @since 0.3.0
 * @category utilities
 */
export const selectShell = (entries: ReadonlyArray<Config.Entry>): string => {
  const configured = Config.latest(entries, "shell")
  if (configured !== undefined) return configured
  if (process.platform === "win32") return process.env.COMSPEC ?? "cmd.exe"
  const onPath = (process.env.PATH ?? "").split(path.delimiter).map((directory) => path.join(directory, "bash"))
  return (
    [...BASH_PATHS, ...onPath].find((candidate) => path.isAbsolute(candidate) && executable(candidate)) ?? "/bin/sh"
  )
}

const executable = (file: string): boolean => {
  try {
    nodeFs.accessSync(file, nodeFs.constants.X_OK)
    return nodeFs.statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * The arity table: the built-in one extended by every configuration document's `bash.arity`, in priority order.
 *
 * @since 0.1.0
 * @category utilities
 */
export const arityTable = (entries: ReadonlyArray<Config.Entry>): BashArity.Table =>
  BashArity.extend(BashArity.DEFAULT, ...Config.documents(entries).map((document) => document.info.bash?.arity))

/**
 * The commands whose file arguments go through the `read` rules when bash is not allowed wholesale (see
 * `ShellCommand.READING_COMMAND_NAMES`).
 *
 * @since 0.1.0
 * @category constants
 */
export const READERS: ReadonlySet<string> = new Set(ShellCommand.READING_COMMAND_NAMES)

/**
 * The disk and the Location as `ShellPlan` sees them: links read without following them, canonical paths located
 * with `LocationMutation`, protected paths classified with `ProtectedPath`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const places = (
  mutation: LocationMutation.Interface,
  fs: FileSystem.FileSystem,
  protectedPaths: ProtectedPath.Interface,
  cdpath: string | undefined,
): ShellPlan.Places => ({
  home: os.homedir(),
  cdpath: cdpath === undefined || cdpath === "" ? [] : cdpath.split(":"),
  inspect: (absolute) =>
    fs.readLink(absolute).pipe(
      Effect.map((target): ShellPlan.Entry => ({ type: "symlink", target })),
      Effect.catchAll(() =>
        fs.stat(absolute).pipe(
          Effect.map((info): ShellPlan.Entry => ({
            type: info.type === "Directory" ? "directory" : info.type === "File" ? "file" : "other",
          })),
          Effect.catchAll((error) =>
            Effect.succeed<ShellPlan.Entry>({
              type: error._tag === "SystemError" && error.reason === "NotFound" ? "missing" : missingOrOther(error),
            }),
          ),
        ),
      ),
    ),
  locate: (canonical, kind) =>
    mutation.resolve({ path: canonical, kind }).pipe(
      Effect.map((target): ShellPlan.Located => ({
        _tag: "located",
        canonical: target.canonical,
        resource: target.resource,
        ...(target.externalDirectory === undefined
          ? {}
          : { external: { resource: target.externalDirectory.resource, save: target.externalDirectory.save } }),
      })),
      Effect.catchAll((error) =>
        Effect.succeed<ShellPlan.Located>(
          error._tag === "LocationMutation.PathError" && error.reason === "non_directory_ancestor"
            ? { _tag: "impossible" }
            : { _tag: "invalid", reason: error.message },
        ),
      ),
    ),
  isProtected: (canonical) => protectedPaths.classify(canonical) !== undefined,
  list: (canonical) =>
    fs.readDirectory(canonical).pipe(
      Effect.map((names): ReadonlyArray<string> | undefined => names),
      Effect.orElseSucceed(() => undefined),
    ),
  git: (cwd, args) =>
    ProcessGroup.run(
      { command: "git", args: [...PLANNER_GIT, ...args], cwd, env: PLANNER_GIT_ENVIRONMENT },
      { maxOutputBytes: PLANNER_GIT_BYTES, maxErrorBytes: 0, timeout: "10 seconds" },
    ).pipe(
      Effect.map((result) =>
        result.exitCode === 0 && !result.stdoutTruncated ? Buffer.from(result.stdout).toString("utf8") : undefined,
      ),
      Effect.orElseSucceed(() => undefined),
    ),
})

/** Options of every git run the planner makes: no locks taken, no file-system monitor or external diff started. */
const PLANNER_GIT = ["--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "diff.external=", "--no-pager"]

/** The planner's git runs see the directory's own repository, never one named by the environment. */
const PLANNER_GIT_ENVIRONMENT: Readonly<Record<string, string | undefined>> = {
  GIT_DIR: undefined,
  GIT_WORK_TREE: undefined,
  GIT_COMMON_DIR: undefined,
  GIT_INDEX_FILE: undefined,
  GIT_EXTERNAL_DIFF: undefined,
  GIT_CONFIG_PARAMETERS: undefined,
  GIT_CONFIG_COUNT: undefined,
}

/** The most a planner's git run may print (names of changed or tracked files); more asks. */
const PLANNER_GIT_BYTES = 4 * 1024 * 1024

const missingOrOther = (error: { readonly cause?: unknown }): ShellPlan.Entry["type"] => {
  const code = (error.cause as { readonly code?: unknown } | undefined)?.code
  return code === "ENOENT" || code === "ENOTDIR" ? "missing" : "other"
}

/**
 * The planner's setting for a Location: its places, the sandbox's state and the shell (see `selectShell`).
 *
 * @since 0.3.0
 * @category utilities
 */
export const setting = (
  mutation: LocationMutation.Interface,
  fs: FileSystem.FileSystem,
  protectedPaths: ProtectedPath.Interface,
  sandbox: Pick<Sandbox.Interface, "mode" | "autoAllow">,
  entries: ReadonlyArray<Config.Entry>,
): ShellPlan.Setting => {
  const env = Config.latest(entries, "bash")?.env
  const set = typeof env === "object" ? env.set?.CDPATH : undefined
  return {
    root: mutation.root,
    places: places(mutation, fs, protectedPaths, set ?? process.env.CDPATH),
    sandboxed: sandbox.mode !== "none",
    autoAllow: sandbox.autoAllow,
    shell: selectShell(entries),
  }
}

/**
 * The `ShellPlan.Service` of a Location, for `permissions explain` (the bash tool builds the same setting itself).
 * Without a `Sandbox` service, the configured `bash.sandbox` is taken as it would be in force when bubblewrap is
 * available.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerPlan: Layer.Layer<
  ShellPlan.Service,
  never,
  LocationMutation.Service | FileSystem.FileSystem | Config.Service
> = Layer.effect(
  ShellPlan.Service,
  Effect.gen(function* () {
    const protectedPaths = yield* Effect.serviceOption(ProtectedPath.Service)
    const sandbox = yield* Effect.serviceOption(Sandbox.Service)
    const entries = yield* (yield* Config.Service).entries()
    const configured = Config.latest(entries, "bash")?.sandbox
    const assumed = {
      mode: configured?.mode ?? "none",
      autoAllow: configured?.mode === "bubblewrap" && configured.auto_allow === true,
    }
    return setting(
      yield* LocationMutation.Service,
      yield* FileSystem.FileSystem,
      Option.getOrElse(protectedPaths, () => ProtectedPath.make([])),
      Option.getOrElse(sandbox, () => assumed),
      entries,
    )
  }),
)

/**
 * The plan of one call: the command parsed with the grammar of the shell that will run it (a shell the gate does
 * not model makes the whole command unresolved), then `ShellPlan.plan` over the caller's rules.
 *
 * @since 0.3.0
 * @category utilities
 */
export const planCall = (
  services: {
    readonly permission: PermissionV2.Interface
    readonly config: Config.Interface
    readonly shell: ShellCommand.Interface
    readonly plan: ShellPlan.Setting
  },
  call: {
    readonly command: string
    readonly description?: string
    readonly workdir: string
    readonly approved?: string
    readonly sessionID: string
    readonly agent?: string
  },
) =>
  Effect.gen(function* () {
    const grammar = ShellCommand.grammarOf(services.plan.shell)
    const parsed =
      grammar === undefined
        ? ShellCommand.unresolvedCommand(
            call.command,
            `commands run with ${services.plan.shell}, a shell the gate does not read`,
          )
        : yield* services.shell.parse(call.command, grammar)
    const table = arityTable(yield* services.config.entries())
    return yield* ShellPlan.plan(
      {
        command: call.command,
        workdir: call.workdir,
        parsed,
        ...(call.approved === undefined ? {} : { approved: call.approved }),
        ...(call.description === undefined ? {} : { description: call.description }),
      },
      {
        places: services.plan.places,
        table,
        sandboxed: services.plan.sandboxed,
        autoAllow: services.plan.autoAllow,
        check: (action, resources) =>
          Effect.map(
            services.permission.check({
              sessionID: call.sessionID,
              ...(call.agent === undefined ? {} : { agent: call.agent }),
              action,
              resources,
            }),
            (effects) => new Map(resources.map((resource, i) => [resource, effects[i] ?? "ask"] as const)),
          ),
      },
    )
  })

/**
 * Plans the call and makes its asserts in order, denies first (see `ShellPlan`).
 *
 * @since 0.3.0
 * @internal
 */
export const review = (
  services: Parameters<typeof planCall>[0],
  input: { readonly command: string; readonly description?: string | undefined },
  workdir: string,
  base: ReturnType<typeof PermissionV2.fromToolCall>,
  approved: string | undefined,
) =>
  Effect.gen(function* () {
    const plan = yield* planCall(services, {
      command: input.command,
      workdir,
      sessionID: base.sessionID,
      ...(base.agent === undefined ? {} : { agent: base.agent }),
      ...(approved === undefined ? {} : { approved }),
      ...(input.description === undefined ? {} : { description: input.description }),
    })
    for (const assert of plan.asserts) yield* services.permission.assert({ ...base, ...assert })
    return plan
  })
