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
import * as FileSystem from "@effect/platform/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Config from "../place/config.js"
import * as ProtectedPath from "../place/protected-path.js"
import * as ShellCommand from "../shell/shell-command.js"
import * as ShellPlan from "../shell/shell-plan.js"
import * as LLM from "../values/llm.js"
import * as LocationMutation from "../world/location-mutation.js"
import * as PermissionV2 from "../permission/permission.js"
import * as AppProcess from "../world/app-process.js"
import * as Sandbox from "../world/internal/containment.js"
import * as ToolOutputStore from "../tool/tool-output-store.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"
import { completeNotice, described, failureReason, MAX_CAPTURE_BYTES, streamOutput } from "./internal/bash-output.js"
import { review, setting } from "./internal/bash-plan.js"
import { externalDirectories, externalWarning } from "./internal/bash-scan.js"

export {
  /**
   * The in-memory capture limit of the combined output (1 MiB).
   *
   * @since 0.1.0
   */
  MAX_CAPTURE_BYTES,
  /**
   * The note that opens the output text when the output outgrew the in-memory capture but was kept complete in a
   * managed file.
   *
   * @since 0.1.0
   */
  completeNotice,
} from "./internal/bash-output.js"
export {
  /**
   * The command's absolute arguments, unquoted and without trailing `;`, `,`, `|` or `&`.
   *
   * @since 0.1.0
   */
  absoluteArguments,
  /**
   * The insertion-ordered external directories that absolute arguments point into (advisory only).
   *
   * @since 0.1.0
   */
  externalDirectories,
  /**
   * The advisory warning for an external directory referenced by a command argument.
   *
   * @since 0.1.0
   */
  externalWarning,
} from "./internal/bash-scan.js"
export {
  /**
   * The arity table: the built-in one extended by every configuration document's `bash.arity`.
   *
   * @since 0.1.0
   */
  arityTable,
  /**
   * The `ShellPlan.Service` of a Location, for `permissions explain`.
   *
   * @since 0.3.0
   */
  layerPlan,
  /**
   * The disk and the Location as `ShellPlan` sees them.
   *
   * @since 0.3.0
   */
  places,
  /**
   * The plan of one call: the command parsed with the grammar of the shell that will run it, then `ShellPlan.plan`.
   *
   * @since 0.3.0
   */
  planCall,
  /**
   * The commands whose file arguments go through the `read` rules when bash is not allowed wholesale.
   *
   * @since 0.1.0
   */
  READERS,
  /**
   * The shell commands run with: the configured `shell`, else bash when installed, else `/bin/sh`.
   *
   * @since 0.3.0
   */
  selectShell,
  /**
   * The planner's setting for a Location: its places, the sandbox's state and the shell.
   *
   * @since 0.3.0
   */
  setting,
} from "./internal/bash-plan.js"

// The reference's deferred-parity markers, kept verbatim; docs/known-gaps.md is the one list of gaps.
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
 * The services the tool captures when its layer is built.
 *
 * @since 0.1.0
 * @category models
 */
export interface Services {
  readonly permission: PermissionV2.Interface
  readonly mutation: LocationMutation.Interface
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
 * Builds the tool over the given services.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (services: Services) => {
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
            ...LocationMutation.externalDirectoryPermission(target.externalDirectory),
          })
        }
        const warnings = (yield* externalDirectories(input.command, target.canonical).pipe(
          Effect.provideService(FileSystem.FileSystem, services.fs),
        )).map(externalWarning)
        yield* review(services, input, target.canonical, base, target.externalDirectory?.resource)

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
  | LocationMutation.Service
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
    const mutation = yield* LocationMutation.Service
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
