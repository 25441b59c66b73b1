/**
 * The `bash` built-in: runs one command string through the configured shell in the Location (or an approved
 * workdir) and reports its interleaved output, exit code and any capture loss.
 *
 * Bash is not sandboxed unless the Location's sandbox is on: the spawned shell runs with the host user's filesystem,
 * process, and network authority, and the permission gate is the control. The command runs with bash when it is
 * installed (the grammar the gate reads), else `/bin/sh`, or the configured `shell`. `ShellPlan` decides what to ask
 * from `ShellCommand`'s segments: any denied segment blocks the call, the asking segments make one ask (an
 * unresolved one as `unresolved:<text>`), and an `always` reply saves one command prefix per segment (`BashArity`).
 * Files the command writes, changes or removes — through redirections and the file-changing commands — are `edit`
 * resources (protected paths ask `protected_path`, outside ones `external_directory`), files reading commands read
 * are `read` resources, and an external `workdir` is asserted first. The scan of absolute command arguments only
 * produces advisory warnings — it never asks and never blocks. See docs/shell.md.
 *
 * Output bounding for the model happens at the registry boundary; this tool only keeps `AppProcess`'s 1 MiB capture
 * limit and says when it was hit (`truncated`). Output past the capture is streamed into the store's capture file,
 * which then holds the complete output: the text names it first, `outputPath` names it, and the store's bounding
 * names the same file instead of writing a second copy.
 *
 * @since 0.1.0
 */
import * as nodeFs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as BashArity from "../policy/bash-arity.js"
import * as Config from "../place/config.js"
import * as ProtectedPath from "../place/protected-path.js"
import * as ShellCommand from "../policy/shell-command.js"
import * as ShellPlan from "../policy/shell-plan.js"
import * as LLM from "../values/llm.js"
import * as LocationPath from "../world/location-path.js"
import * as PermissionV2 from "../policy/permission.js"
import * as AppProcess from "../world/app-process.js"
import * as Sandbox from "../world/sandbox.js"
import * as ToolOutputStore from "../tool/tool-output-store.js"
import * as FileFailure from "./internal/file-failure.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"

// TODO: Port PowerShell parser-based approval reduction (bash is parsed with tree-sitter; see docs/shell.md).
// TODO: Replace token-based command-argument external-directory advisories with parser-based detection.
// TODO: Restore PowerShell and cmd-specific invocation/path handling on Windows.
// TODO: Add plugin shell.env environment augmentation once V2 plugin hooks exist.
// TODO: Persist background job status and define restart recovery before exposing remote observation.
// TODO: Re-add model-facing background launch only with owner-bound get/wait/cancel tools and completion delivery.
// TODO: Add HTTP background-job observation only after durable status, restart recovery, and authorization are defined.
// TODO: Revisit process-group cleanup and platform coverage with shell-specific tests if current AppProcess semantics do not fully cover it.
// TODO: Revisit binary output handling if stdout/stderr decoding is text-only.

/**
 * The registered name and permission action.
 *
 * @since 0.1.0
 * @category utilities
 */
export const name = "bash"

/**
 * The timeout when the input gives none.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TIMEOUT_MS = 120_000
/**
 * The largest timeout the input accepts.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_TIMEOUT_MS = 600_000
/**
 * The in-memory capture limit of the combined output (1 MiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_CAPTURE_BYTES = 1_048_576

/**
 * The notice appended when the capture limit was hit.
 *
 * @since 0.1.0
 * @category constants
 */
export const CAPTURE_NOTICE = "[output capture truncated at the in-memory safety limit]"

/**
 * The model-facing description.
 *
 * @since 0.1.0
 * @category utilities
 */
export const description =
  "Runs a single shell command string with the filesystem, process, and network authority of the host user. " +
  "Commands run in the active Location unless a workdir is given, and a relative workdir is resolved from that Location. " +
  "A workdir outside the Location needs external_directory approval; warnings about paths found in command arguments are best-effort and advisory only. " +
  `The timeout is in milliseconds (default: ${DEFAULT_TIMEOUT_MS}; maximum: ${MAX_TIMEOUT_MS}). ` +
  "The configured shell is used when one is set; otherwise bash when it is installed (else /bin/sh) on POSIX, and COMSPEC or cmd.exe on Windows."

/**
 * The input. There is no background mode. `description` (a few words on what the command does, as models trained on
 * opencode and Claude Code send it) is shown beside the command in the ask and in progress reports, never instead
 * of it.
 *
 * @since 0.1.0
 * @category models
 */
export const Input = Schema.Struct({
  command: Schema.String.annotations({ description: "The shell command string to run" }),
  description: Schema.optional(
    Schema.String.annotations({
      description: "A few words on what the command does, shown to the user beside the command",
    }),
  ),
  workdir: Schema.optional(
    Schema.String.annotations({
      description:
        "Directory to run in. The active Location when omitted; a relative path is resolved from the Location.",
    }),
  ),
  timeout: Schema.optional(
    Schema.Int.pipe(Schema.positive(), Schema.lessThanOrEqualTo(MAX_TIMEOUT_MS)).annotations({
      description: `Timeout in milliseconds; ${DEFAULT_TIMEOUT_MS} when omitted, at most ${MAX_TIMEOUT_MS}.`,
    }),
  ),
})

/**
 * The structured output (the advertised output schema): no output text, command, cwd or warnings.
 *
 * @since 0.1.0
 * @category models
 */
export const Structured = Schema.Struct({
  exit: Schema.optional(Schema.Number),
  truncated: Schema.Boolean,
  timeout: Schema.optional(Schema.Boolean),
  /** The managed file holding the complete output, when it was larger than the in-memory capture. */
  outputPath: Schema.optional(Schema.String),
})

/**
 * The domain output.
 *
 * @since 0.1.0
 * @category models
 */
export const Output = Schema.Struct({
  ...Structured.fields,
  output: Schema.String,
  warnings: Schema.optional(Schema.Array(Schema.String)),
})
/**
 * @see Output
 *
 * @since 0.1.0
 * @category models
 */
export type Output = typeof Output.Type

/**
 * The workdir exists but is not a directory (checked after approval).
 *
 * @since 0.1.0
 * @category errors
 */
export class NotDirectoryError extends Schema.TaggedError<NotDirectoryError>()("BashTool.NotDirectoryError", {
  path: Schema.String,
}) {
  override get message(): string {
    return `Working directory is not a directory: ${this.path}`
  }
}

/**
 * The second text part: optional warnings, then the status sentence.
 *
 * @since 0.1.0
 * @category utilities
 */
export const statusText = (output: Output): string => {
  const status =
    output.timeout === true ? "Command timed out before completion." : `Command exited with code ${output.exit}.`
  const warnings = output.warnings ?? []
  if (warnings.length === 0) return status
  return `Warnings:\n${warnings.map((warning) => `- ${warning}`).join("\n")}\n\n${status}`
}

/**
 * The advisory warning for an external directory referenced by a command argument.
 *
 * @since 0.1.0
 * @category utilities
 */
export const externalWarning = (directory: string): string =>
  `Command argument references external directory ${path.join(directory, "*").replaceAll("\\", "/")}. Bash runs with host-user filesystem, process, and network authority; this scan is advisory only.`

const TOKEN = /(?:[^\s"']+|"[^"]*"|'[^']*')+/g

/**
 * The command's absolute arguments, unquoted and without trailing `;`, `,`, `|` or `&`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const absoluteArguments = (command: string): ReadonlyArray<string> =>
  (command.match(TOKEN) ?? [])
    .map((token) => token.replace(/^(['"])(.*)\1$/, "$2").replace(/[;,|&]+$/, ""))
    .filter((value) => value !== "" && path.isAbsolute(value))

/**
 * The insertion-ordered external directories that absolute arguments point into (realpaths where they exist).
 * Advisory only: this never asks and never blocks.
 *
 * @since 0.1.0
 * @category utilities
 */
export const externalDirectories = (
  command: string,
  workdir: string,
): Effect.Effect<ReadonlyArray<string>, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const real = (target: string) => fs.realPath(target).pipe(Effect.orElseSucceed(() => path.resolve(target)))
    const directories = new Set<string>()
    for (const argument of absoluteArguments(command)) {
      const resolved = yield* real(argument)
      if (LocationPath.isWithin(workdir, resolved)) continue
      directories.add(yield* real(path.dirname(resolved)))
    }
    return Array.from(directories)
  })

/**
 * The note that opens the output text when the output outgrew the in-memory capture but was kept complete in a
 * managed file (the capture-loss notice is used when it could not be kept).
 *
 * @since 0.1.0
 * @category utilities
 */
export const completeNotice = (bytes: number, file: string): string =>
  `[the command printed ${bytes} bytes; the complete output is saved to ${file}; below are the first ${MAX_CAPTURE_BYTES} bytes, as far as the in-memory capture goes]`

/** Progress reports are at most this frequent; output in between is sent with the next one. */
const PROGRESS_INTERVAL_MS = 250

/**
 * Watches the command's output: reports it (and the elapsed time) as progress, and once it outgrows the in-memory
 * capture streams all of it — the part already seen included — into a managed file, so nothing is lost and memory
 * stays bounded (the file is written synchronously, chunk by chunk).
 */
const streamOutput = (store: ToolOutputStore.Interface, context: Tool.Context) =>
  Effect.gen(function* () {
    const capture = yield* store.capture({ sessionID: context.sessionID, toolCallID: context.toolCallID })
    const started = Date.now()
    const decoder = new TextDecoder()
    let head: Array<Uint8Array> = []
    let total = 0
    let spilled = false
    let failed = false
    let pending = ""
    let reported = 0
    const report = (force: boolean) => {
      const progress = context.progress
      if (progress === undefined || (pending === "" && !force)) return
      const now = Date.now()
      if (!force && now - reported < PROGRESS_INTERVAL_MS) return
      reported = now
      const output = pending
      pending = ""
      progress({
        message: `running (${Math.round((now - started) / 1000)}s, ${total} bytes of output)`,
        progress: total,
        ...(output === "" ? {} : { output }),
      })
    }
    const keep = (chunk: Uint8Array) => {
      if (failed || capture.path === undefined) return
      try {
        if (!spilled && total > MAX_CAPTURE_BYTES) {
          spilled = true
          for (const part of head) capture.write(part)
          head = []
        }
        if (spilled) capture.write(chunk)
        else head.push(chunk)
      } catch {
        // The capture notice then reports the loss honestly.
        failed = true
        head = []
      }
    }
    return {
      onOutput: (chunk: Uint8Array) => {
        total += chunk.byteLength
        keep(chunk)
        if (context.progress !== undefined) {
          pending += decoder.decode(chunk, { stream: true })
          report(false)
        }
      },
      flush: () => report(false),
      total: () => total,
      /**
       * The complete-output file, when all of the output is in it; it is then marked complete, so the store's
       * bounding names it instead of writing a second copy.
       */
      keep: (): string | undefined => {
        if (!spilled || failed || !capture.written()) return undefined
        capture.complete()
        return capture.path
      },
    }
  })

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
 * Why the command could not run, in one line: what the file leaves say for path and file-system errors and a
 * missing session, a spawn failure's own cause, else the typed error's message.
 */
const failureReason = (error: unknown): string => {
  const known = FileFailure.cause(error)
  if (known !== undefined) return known
  if (error instanceof AppProcess.AppProcessError) {
    const cause = error.cause
    if (cause instanceof Error && cause.message !== "") return cause.message
  }
  if (error instanceof Error && error.message !== "") return error.message
  if (typeof error === "object" && error !== null && "_tag" in error) return String(error._tag)
  return String(error)
}

/** The call's context with the description in front of every progress message. */
const described = (context: Tool.Context, description: string | undefined): Tool.Context => {
  const progress = context.progress
  if (description === undefined || progress === undefined) return context
  return { ...context, progress: (update) => progress({ ...update, message: `${description}: ${update.message}` }) }
}

/**
 * The services the tool captures when its layer is built.
 *
 * @since 0.1.0
 * @category models
 */
export interface Services {
  readonly permission: PermissionV2.Interface
  readonly mutation: LocationPath.Interface
  readonly process: AppProcess.Interface
  readonly config: Config.Interface
  readonly fs: FileSystem.FileSystem
  readonly shell: ShellCommand.Interface
  readonly protectedPaths: ProtectedPath.Interface
  readonly sandbox: Sandbox.Interface
  readonly store: ToolOutputStore.Interface
  /** The planner's setting: the places it resolves paths against, the sandbox, the shell. */
  readonly plan: ShellPlan.Setting
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
 * with `LocationPath`, protected paths classified with `ProtectedPath`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const places = (
  mutation: LocationPath.Interface,
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
          error._tag === "LocationPath.PathError" && error.reason === "non_directory_ancestor"
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
})

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
  mutation: LocationPath.Interface,
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
  LocationPath.Service | FileSystem.FileSystem | Config.Service
> = Layer.effect(
  ShellPlan.Service,
  Effect.gen(function* () {
    const protectedPaths = yield* Effect.serviceOption(ProtectedPath.Service)
    const sandbox = yield* Effect.serviceOption(Sandbox.Service)
    const entries = yield* (yield* Config.Service).entries()
    const configured = Config.latest(entries, "bash")?.sandbox
    const assumed = {
      mode: configured?.mode ?? "none",
      autoAllow: configured?.mode === "bubblewrap" && configured.autoAllow === true,
    }
    return setting(
      yield* LocationPath.Service,
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
  services: Pick<Services, "permission" | "config" | "shell" | "plan">,
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
 * Builds the tool over the given services.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (services: Services) => {
  /** Plans the call and makes its asserts in order, denies first (see `ShellPlan`). */
  const review = (
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

  return Tool.make({
    description,
    annotations: {
      title: "Run shell command",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
    input: Input,
    output: Output,
    structured: Structured,
    toStructuredOutput: ({ output }) => ({
      truncated: output.truncated,
      ...(output.exit === undefined ? {} : { exit: output.exit }),
      ...(output.timeout === undefined ? {} : { timeout: output.timeout }),
      ...(output.outputPath === undefined ? {} : { outputPath: output.outputPath }),
    }),
    toModelOutput: ({ output }) => [
      { type: "text", text: output.output },
      { type: "text", text: statusText(output) },
    ],
    execute: (input, context) =>
      Effect.gen(function* () {
        const base = PermissionV2.fromToolCall(context)
        const target = yield* services.mutation.resolve({ path: input.workdir ?? ".", kind: "directory" })
        if (target.externalDirectory !== undefined) {
          yield* services.permission.assert({
            ...base,
            ...LocationPath.externalDirectoryPermission(target.externalDirectory),
          })
        }
        const warnings = (yield* externalDirectories(input.command, target.canonical).pipe(
          Effect.provideService(FileSystem.FileSystem, services.fs),
        )).map(externalWarning)
        yield* review(input, target.canonical, base, target.externalDirectory?.resource)

        // The directory may have changed while the user was deciding.
        const info = yield* services.fs.stat(target.canonical)
        if (info.type !== "Directory") return yield* new NotDirectoryError({ path: target.canonical })

        const shell = services.plan.shell
        const timeout = input.timeout ?? DEFAULT_TIMEOUT_MS
        const extra = warnings.length > 0 ? { warnings } : {}
        const prepared = yield* services.sandbox.prepare({
          command: input.command,
          cwd: target.canonical,
          shell,
          ...(target.externalDirectory === undefined ? {} : { writable: [target.canonical] }),
          egress: { permission: services.permission, caller: base },
        })
        const stream = yield* streamOutput(services.store, described(context, input.description))
        const result = yield* (
          services.process
            // Git's optional locks off: `git status` does not rewrite `.git/index` as a side effect (a configured
            // `bash.env` value wins). `git diff` refreshes it regardless (docs/shell.md, limits).
            .run(
              { ...prepared, env: { GIT_OPTIONAL_LOCKS: "0", ...prepared.env } },
              {
                combineOutput: true,
                timeout: Duration.millis(timeout),
                maxOutputBytes: MAX_CAPTURE_BYTES,
                onOutput: stream.onOutput,
              },
            )
            .pipe(
              Effect.catchTag("AppProcess.TimeoutError", () => Effect.succeed(undefined)),
              // A rejected egress ask stops the command, as every declined permission does.
              Effect.raceFirst(prepared.declined),
              Effect.ensuring(Effect.sync(stream.flush)),
            )
        )
        if (result === undefined) {
          return {
            output: `Command exceeded timeout of ${timeout} ms. Retry with a larger timeout if the command is expected to take longer.`,
            truncated: false,
            timeout: true,
            ...extra,
          } satisfies Output
        }
        const text = result.output === undefined ? "" : Buffer.from(result.output).toString("utf8")
        const output = text === "" ? "(no output)" : text
        const blocked = yield* prepared.note(text)
        const noted = blocked === undefined ? output : `${output}\n\n${blocked}`
        // `truncated` says the in-memory capture was cut; when the complete output was kept, the text names its file
        // first, and only an output that could not be kept gets the loss notice.
        const cut = result.outputTruncated === true
        const kept = cut ? stream.keep() : undefined
        return {
          exit: result.exitCode,
          output: !cut
            ? noted
            : kept === undefined
              ? `${noted}\n\n${CAPTURE_NOTICE}`
              : `${completeNotice(stream.total(), kept)}\n\n${noted}`,
          truncated: cut,
          ...(kept === undefined ? {} : { outputPath: kept }),
          ...extra,
        } satisfies Output
      }).pipe(
        Effect.scoped,
        Effect.mapError(
          PermissionV2.leafFailure(
            (error) =>
              new LLM.ToolFailure({
                message: `Unable to execute command: ${input.command}: ${failureReason(error)}`,
                error,
              }),
          ),
        ),
      ),
  })
}

/**
 * Registers `bash` in the Location for the lifetime of the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  never,
  never,
  | Tools.Service
  | PermissionV2.Service
  | LocationPath.Service
  | AppProcess.Service
  | Config.Service
  | FileSystem.FileSystem
  | Sandbox.Service
  | ToolOutputStore.Service
> = Tools.layer(
  name,
  Effect.gen(function* () {
    const found = yield* Effect.serviceOption(ProtectedPath.Service)
    // Without the Location's service, the name-based protected paths still apply.
    const protectedPaths = Option.getOrElse(found, () => ProtectedPath.make([]))
    const mutation = yield* LocationPath.Service
    const fs = yield* FileSystem.FileSystem
    const config = yield* Config.Service
    const sandbox = yield* Sandbox.Service
    const tool = make({
      permission: yield* PermissionV2.Service,
      mutation,
      process: yield* AppProcess.Service,
      config,
      fs,
      shell: yield* ShellCommand.Service,
      protectedPaths,
      sandbox,
      store: yield* ToolOutputStore.Service,
      plan: setting(mutation, fs, protectedPaths, sandbox, yield* config.entries()),
    })
    return tool
  }),
).pipe(Layer.provide(ShellCommand.layer))
