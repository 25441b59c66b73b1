/**
 * The `bash` built-in: runs one command string through the configured shell in the Location (or an approved
 * workdir) and reports its interleaved output, exit code and any capture loss.
 *
 * Bash is not sandboxed: the spawned shell runs with the host user's filesystem, process, and network authority.
 * The permission gate is the only control: the whole command string is the single `bash` resource (and the saved
 * pattern of an `always` reply), an external `workdir` is an enforced `external_directory` check asserted first, and
 * the scan of absolute command arguments only produces advisory warnings — it never asks and never blocks.
 *
 * Output bounding for the model happens at the registry boundary; this tool only keeps `AppProcess`'s 1 MiB capture
 * limit and says when it was hit. It never returns a managed output path.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { FileSystem } from "@effect/platform"
import { Duration, Effect, Layer, Schema } from "effect"
import * as Config from "../place/config.js"
import * as LLM from "../values/llm.js"
import * as LocationMutation from "../world/location-mutation.js"
import * as PermissionV2 from "../policy/permission.js"
import * as AppProcess from "../world/app-process.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"

// TODO: Port tree-sitter bash / PowerShell parser-based approval reduction.
// TODO: Port BashArity reusable command-prefix approvals.
// TODO: Replace token-based command-argument external-directory advisories with parser-based detection.
// TODO: Restore PowerShell and cmd-specific invocation/path handling on Windows.
// TODO: Add plugin shell.env environment augmentation once V2 plugin hooks exist.
// TODO: Add durable/live progress metadata streaming for long-running commands once V2 tool invocation progress context is wired.
// TODO: Persist background job status and define restart recovery before exposing remote observation.
// TODO: Re-add model-facing background launch only with owner-bound get/wait/cancel tools and completion delivery.
// TODO: Add HTTP background-job observation only after durable status, restart recovery, and authorization are defined.
// TODO: Revisit process-group cleanup and platform coverage with shell-specific tests if current AppProcess semantics do not fully cover it.
// TODO: Revisit binary output handling if stdout/stderr decoding is text-only.
// TODO: Stream full shell output into managed storage while retaining only a bounded in-memory preview.

/** The registered name and permission action. */
export const name = "bash"

/** The timeout when the input gives none. */
export const DEFAULT_TIMEOUT_MS = 120_000
/** The largest timeout the input accepts. */
export const MAX_TIMEOUT_MS = 600_000
/** The in-memory capture limit of the combined output (1 MiB). */
export const MAX_CAPTURE_BYTES = 1_048_576

/** The notice appended when the capture limit was hit. */
export const CAPTURE_NOTICE = "[output capture truncated at the in-memory safety limit]"

/** The model-facing description. */
export const description =
  "Runs a single shell command string with the filesystem, process, and network authority of the host user. " +
  "Commands run in the active Location unless a workdir is given, and a relative workdir is resolved from that Location. " +
  "A workdir outside the Location needs external_directory approval; warnings about paths found in command arguments are best-effort and advisory only. " +
  `The timeout is in milliseconds (default: ${DEFAULT_TIMEOUT_MS}; maximum: ${MAX_TIMEOUT_MS}). ` +
  "The configured shell is used when one is set; otherwise /bin/sh on POSIX, and COMSPEC or cmd.exe on Windows."

/** The input. There is no background mode and no `description` field. */
export const Input = Schema.Struct({
  command: Schema.String.annotations({ description: "The shell command string to run" }),
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

/** The structured output (the advertised output schema): no output text, command, cwd or warnings. */
export const Structured = Schema.Struct({
  exit: Schema.optional(Schema.Number),
  truncated: Schema.Boolean,
  timeout: Schema.optional(Schema.Boolean),
})

/** The domain output. */
export const Output = Schema.Struct({
  ...Structured.fields,
  output: Schema.String,
  warnings: Schema.optional(Schema.Array(Schema.String)),
})
/** @see Output */
export type Output = typeof Output.Type

/** The workdir exists but is not a directory (checked after approval). */
export class NotDirectoryError extends Schema.TaggedError<NotDirectoryError>()("BashTool.NotDirectoryError", {
  path: Schema.String,
}) {
  override get message(): string {
    return `Working directory is not a directory: ${this.path}`
  }
}

/** The second text part: optional warnings, then the status sentence. */
export const statusText = (output: Output): string => {
  const status =
    output.timeout === true ? "Command timed out before completion." : `Command exited with code ${output.exit}.`
  const warnings = output.warnings ?? []
  if (warnings.length === 0) return status
  return `Warnings:\n${warnings.map((warning) => `- ${warning}`).join("\n")}\n\n${status}`
}

/** The advisory warning for an external directory referenced by a command argument. */
export const externalWarning = (directory: string): string =>
  `Command argument references external directory ${path.join(directory, "*").replaceAll("\\", "/")}. Bash runs with host-user filesystem, process, and network authority; this scan is advisory only.`

const TOKEN = /(?:[^\s"']+|"[^"]*"|'[^']*')+/g

/** The command's absolute arguments, unquoted and without trailing `;`, `,`, `|` or `&`. */
export const absoluteArguments = (command: string): ReadonlyArray<string> =>
  (command.match(TOKEN) ?? [])
    .map((token) => token.replace(/^(['"])(.*)\1$/, "$2").replace(/[;,|&]+$/, ""))
    .filter((value) => value !== "" && path.isAbsolute(value))

/**
 * The insertion-ordered external directories that absolute arguments point into (realpaths where they exist).
 * Advisory only: this never asks and never blocks.
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
      if (LocationMutation.isWithin(workdir, resolved)) continue
      directories.add(yield* real(path.dirname(resolved)))
    }
    return Array.from(directories)
  })

const defaultShell = (): string => (process.platform === "win32" ? (process.env.COMSPEC ?? "cmd.exe") : "/bin/sh")

const isTimeout = (error: AppProcess.AppProcessError): boolean =>
  error.cause instanceof Error && error.cause.message === "Timed out"

/** The services the tool captures when its layer is built. */
export interface Services {
  readonly permission: PermissionV2.Interface
  readonly mutation: LocationMutation.Interface
  readonly process: AppProcess.Interface
  readonly config: Config.Interface
  readonly fs: FileSystem.FileSystem
}

/** Builds the tool over the given services. */
export const make = (services: Services) =>
  Tool.make({
    description,
    input: Input,
    output: Output,
    structured: Structured,
    toStructuredOutput: ({ output }) => ({
      truncated: output.truncated,
      ...(output.exit === undefined ? {} : { exit: output.exit }),
      ...(output.timeout === undefined ? {} : { timeout: output.timeout }),
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
            ...LocationMutation.externalDirectoryPermission(target.externalDirectory),
          })
        }
        const warnings = (yield* externalDirectories(input.command, target.canonical).pipe(
          Effect.provideService(FileSystem.FileSystem, services.fs),
        )).map(externalWarning)
        yield* services.permission.assert({ ...base, action: name, resources: [input.command], save: [input.command] })

        // The directory may have changed while the user was deciding.
        const info = yield* services.fs.stat(target.canonical)
        if (info.type !== "Directory") return yield* new NotDirectoryError({ path: target.canonical })

        const shell = Config.latest(yield* services.config.entries(), "shell") ?? defaultShell()
        const timeout = input.timeout ?? DEFAULT_TIMEOUT_MS
        const extra = warnings.length > 0 ? { warnings } : {}
        const result = yield* services.process
          .run(
            { command: input.command, cwd: target.canonical, shell },
            { combineOutput: true, timeout: Duration.millis(timeout), maxOutputBytes: MAX_CAPTURE_BYTES },
          )
          .pipe(
            Effect.catchTag("AppProcessError", (error) =>
              isTimeout(error) ? Effect.succeed(undefined) : Effect.fail(error),
            ),
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
        return {
          exit: result.exitCode,
          output: result.outputTruncated === true ? `${output}\n\n${CAPTURE_NOTICE}` : output,
          truncated: result.outputTruncated === true,
          ...extra,
        } satisfies Output
      }).pipe(
        Effect.mapError(
          PermissionV2.leafFailure(
            (error) => new LLM.ToolFailure({ message: `Unable to execute command: ${input.command}`, error }),
          ),
        ),
      ),
  })

/** Registers `bash` in the Location for the lifetime of the layer. */
export const layer: Layer.Layer<
  never,
  never,
  | Tools.Service
  | PermissionV2.Service
  | LocationMutation.Service
  | AppProcess.Service
  | Config.Service
  | FileSystem.FileSystem
> = Tools.layer(
  name,
  Effect.gen(function* () {
    const tool = make({
      permission: yield* PermissionV2.Service,
      mutation: yield* LocationMutation.Service,
      process: yield* AppProcess.Service,
      config: yield* Config.Service,
      fs: yield* FileSystem.FileSystem,
    })
    return tool
  }),
)
