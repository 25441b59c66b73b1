/**
 * The `bash` built-in: runs one command string through the configured shell in the Location (or an approved
 * workdir) and reports its interleaved output, exit code and any capture loss.
 *
 * Bash is not sandboxed: the spawned shell runs with the host user's filesystem, process, and network authority.
 * The permission gate is the only control. The command is parsed with a shell grammar (`ShellCommand`) and every
 * simple command in it is its own `bash` resource: any denied segment blocks the call, the asking segments make one
 * ask, and an `always` reply saves one command prefix per segment (`BashArity`). Files the command writes through
 * redirections are `edit` targets (protected paths ask `protected_path`), a `cd` out of the Location needs
 * `external_directory` for what follows, and an external `workdir` is asserted first. The scan of absolute command
 * arguments only produces advisory warnings — it never asks and never blocks. See docs/shell.md.
 *
 * Output bounding for the model happens at the registry boundary; this tool only keeps `AppProcess`'s 1 MiB capture
 * limit and says when it was hit (`truncated`). Output past the capture is streamed into the store's capture file,
 * which then holds the complete output: the text names it first, `outputPath` names it, and the store's bounding
 * names the same file instead of writing a second copy.
 *
 * @since 0.1.0
 */
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
import * as Wildcard from "../values/wildcard.js"
import * as LLM from "../values/llm.js"
import * as LocationMutation from "../world/location-mutation.js"
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
 */
export const name = "bash"

/**
 * The timeout when the input gives none.
 *
 * @since 0.1.0
 */
export const DEFAULT_TIMEOUT_MS = 120_000
/**
 * The largest timeout the input accepts.
 *
 * @since 0.1.0
 */
export const MAX_TIMEOUT_MS = 600_000
/**
 * The in-memory capture limit of the combined output (1 MiB).
 *
 * @since 0.1.0
 */
export const MAX_CAPTURE_BYTES = 1_048_576

/**
 * The notice appended when the capture limit was hit.
 *
 * @since 0.1.0
 */
export const CAPTURE_NOTICE = "[output capture truncated at the in-memory safety limit]"

/**
 * The model-facing description.
 *
 * @since 0.1.0
 */
export const description =
  "Runs a single shell command string with the filesystem, process, and network authority of the host user. " +
  "Commands run in the active Location unless a workdir is given, and a relative workdir is resolved from that Location. " +
  "A workdir outside the Location needs external_directory approval; warnings about paths found in command arguments are best-effort and advisory only. " +
  `The timeout is in milliseconds (default: ${DEFAULT_TIMEOUT_MS}; maximum: ${MAX_TIMEOUT_MS}). ` +
  "The configured shell is used when one is set; otherwise /bin/sh on POSIX, and COMSPEC or cmd.exe on Windows."

/**
 * The input. There is no background mode and no `description` field.
 *
 * @since 0.1.0
 */
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

/**
 * The structured output (the advertised output schema): no output text, command, cwd or warnings.
 *
 * @since 0.1.0
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
 */
export type Output = typeof Output.Type

/**
 * The workdir exists but is not a directory (checked after approval).
 *
 * @since 0.1.0
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
 */
export const externalWarning = (directory: string): string =>
  `Command argument references external directory ${path.join(directory, "*").replaceAll("\\", "/")}. Bash runs with host-user filesystem, process, and network authority; this scan is advisory only.`

const TOKEN = /(?:[^\s"']+|"[^"]*"|'[^']*')+/g

/**
 * The command's absolute arguments, unquoted and without trailing `;`, `,`, `|` or `&`.
 *
 * @since 0.1.0
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

/**
 * The note that opens the output text when the output outgrew the in-memory capture but was kept complete in a
 * managed file (the capture-loss notice is used when it could not be kept).
 *
 * @since 0.1.0
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

const defaultShell = (): string => (process.platform === "win32" ? (process.env.COMSPEC ?? "cmd.exe") : "/bin/sh")

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

/**
 * The services the tool captures when its layer is built.
 *
 * @since 0.1.0
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
}

/**
 * The arity table: the built-in one extended by every configuration document's `bash.arity`, in priority order.
 *
 * @since 0.1.0
 */
export const arityTable = (entries: ReadonlyArray<Config.Entry>): BashArity.Table =>
  BashArity.extend(BashArity.DEFAULT, ...Config.documents(entries).map((document) => document.info.bash?.arity))

/**
 * Commands that read the files named by their arguments; `script` means the first non-option word is a pattern or
 * program, not a file. When bash is not allowed wholesale, these files go through the `read` rules.
 *
 * @since 0.1.0
 */
export interface Reader {
  readonly script: boolean
  readonly recursive?: boolean
}

/**
 * @see Reader
 *
 * @since 0.1.0
 */
export const READERS: ReadonlyMap<string, Reader> = new Map<string, Reader>([
  ...[
    "cat",
    "tac",
    "head",
    "tail",
    "less",
    "more",
    "nl",
    "wc",
    "sort",
    "uniq",
    "cut",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "file",
    "stat",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "base64",
    "diff",
    "cmp",
    "bat",
  ].map((name): [string, Reader] => [name, { script: false }]),
  ...["grep", "egrep", "fgrep", "sed", "awk", "jq"].map((name): [string, Reader] => [name, { script: true }]),
  ...["rg", "ag", "ack"].map((name): [string, Reader] => [name, { script: true, recursive: true }]),
])

/** A resource no real command can be: `bash` allows it only when bash is allowed wholesale. */
const WHOLESALE_PROBE = "\u0000"

const isRecursiveGrep = (argv: ReadonlyArray<ShellCommand.Word>): boolean =>
  argv.some(
    (w) =>
      w.literal &&
      (w.text === "--recursive" ||
        w.text === "--dereference-recursive" ||
        (/^-[A-Za-z]+$/.test(w.text) && /[rR]/.test(w.text))),
  )

const homeOf = (target: string): string | undefined => {
  if (target === "~") return os.homedir()
  if (target.startsWith("~/")) return path.join(os.homedir(), target.slice(2))
  if (target.startsWith("~")) return undefined
  return target
}

/** One permission group of a review: an action and its resources, evaluated together. */
interface Group {
  readonly action: string
  readonly resources: ReadonlyArray<string>
  readonly save: ReadonlyArray<string>
  readonly metadata?: Record<string, unknown>
  /** Assert even when everything is allowed (the bash group, so every call is on record). */
  readonly always?: boolean
}

/**
 * Builds the tool over the given services.
 *
 * @since 0.1.0
 */
export const make = (services: Services) => {
  /** Where an absolute path lands; through a symlink inside the Location that points out, its real place. */
  const locate = (absolute: string, kind: "file" | "directory") =>
    services.mutation.resolve({ path: absolute, kind }).pipe(
      Effect.catchTag("LocationMutation.PathError", (error) =>
        error.reason === "location_escape"
          ? services.fs.realPath(absolute).pipe(
              Effect.orElse(() =>
                Effect.map(services.fs.realPath(path.dirname(absolute)), (real) =>
                  path.join(real, path.basename(absolute)),
                ),
              ),
              Effect.flatMap((real) => services.mutation.resolve({ path: real, kind })),
            )
          : Effect.fail(error),
      ),
      Effect.option,
    )

  /**
   * Evaluates everything the command does, denies first: its bash segments, the files it writes (edit,
   * protected_path) and reads (read, when bash is not allowed wholesale), and the external directories it enters or
   * writes into. Then asks once per action for what is left.
   */
  const review = (
    command: string,
    workdir: string,
    base: ReturnType<typeof PermissionV2.fromToolCall>,
    approved: string | undefined,
  ) =>
    Effect.gen(function* () {
      const parsed = yield* services.shell.parse(command)
      const table = arityTable(yield* services.config.entries())
      const check = (action: string, resources: ReadonlyArray<string>) =>
        Effect.map(
          services.permission.check({ sessionID: base.sessionID, agent: base.agent, action, resources }),
          (effects) => new Map(resources.map((resource, i) => [resource, effects[i] ?? "ask"] as const)),
        )

      const candidates = new Set<string>([WHOLESALE_PROBE])
      for (const segment of parsed.segments) {
        for (const form of ShellCommand.forms(segment)) candidates.add(form)
        candidates.add(`${ShellCommand.UNRESOLVED_PREFIX}${segment.text}`)
      }
      const bashEffects = yield* check(name, [...candidates])
      const effectOf = (resource: string) => bashEffects.get(resource) ?? "ask"
      const wholesale = effectOf(WHOLESALE_PROBE) === "allow"
      const verdicts: Array<ShellCommand.Verdict> = [
        ...ShellCommand.evaluate(parsed, effectOf, (argv) => BashArity.pattern(argv, table)),
      ]

      // Writes, reads and directories, following `cd` in order.
      const externals = new Map<string, LocationMutation.ExternalDirectoryAuthorization>()
      const edits = new Set<string>()
      const protects = new Set<string>()
      const reads = new Set<string>()
      const opaque: Array<{ readonly segment: ShellCommand.Segment; readonly text: string; readonly reason: string }> =
        []
      let cwd = workdir
      let entered: LocationMutation.ExternalDirectoryAuthorization | undefined
      for (const segment of parsed.segments) {
        if (entered !== undefined) {
          externals.set(entered.resource, entered)
          entered = undefined
        }
        for (const write of segment.writes) {
          const target = write.target === undefined ? undefined : homeOf(write.target)
          if (target === undefined) {
            opaque.push({ segment, text: write.raw, reason: "the file it writes is only known when the shell runs" })
            continue
          }
          const place = yield* locate(path.resolve(cwd, target), "file")
          if (Option.isNone(place)) continue
          if (place.value.externalDirectory !== undefined) {
            externals.set(place.value.externalDirectory.resource, place.value.externalDirectory)
          }
          edits.add(place.value.resource)
          if (services.protectedPaths.classify(place.value.canonical) !== undefined) protects.add(place.value.resource)
        }
        const verdict = verdicts.find((v) => v.segment === segment)
        const reader = READERS.get(path.posix.basename(segment.argv[0]?.text ?? ""))
        if (!wholesale && verdict?.effect === "allow" && segment.unresolved === undefined && reader !== undefined) {
          const files: Array<ShellCommand.Word> = segment.reads.map((r) =>
            r.target === undefined
              ? { text: r.raw, literal: false, glob: false }
              : { text: r.target, literal: true, glob: false },
          )
          let script = reader.script
          let optionsDone = false
          for (const w of segment.argv.slice(1)) {
            if (!optionsDone && w.literal && w.text === "--") {
              optionsDone = true
              continue
            }
            if (!optionsDone && w.literal && w.text.startsWith("-") && w.text !== "-") {
              if (reader.script && (w.text === "-e" || w.text === "-f" || w.text.startsWith("--regexp"))) script = false
              continue
            }
            if (script) {
              script = false
              continue
            }
            files.push(w)
          }
          const recursive = reader.recursive === true || (reader.script && isRecursiveGrep(segment.argv))
          if (recursive) {
            opaque.push({ segment, text: segment.text, reason: "it reads a whole directory tree, past the read rules" })
          }
          for (const file of files) {
            const target = file.literal && !file.glob ? homeOf(file.text) : undefined
            if (target === undefined) {
              opaque.push({
                segment,
                text: segment.text,
                reason: `it reads ${file.text}, known only when the shell runs`,
              })
              continue
            }
            const place = yield* locate(path.resolve(cwd, target), "file")
            if (Option.isNone(place)) continue
            if (place.value.externalDirectory !== undefined) {
              externals.set(place.value.externalDirectory.resource, place.value.externalDirectory)
            }
            reads.add(place.value.resource)
          }
        }
        if (segment.cd?.target !== undefined) {
          const target = homeOf(segment.cd.target)
          if (target === undefined) {
            opaque.push({
              segment,
              text: segment.text,
              reason: "the directory it enters is only known when the shell runs",
            })
            continue
          }
          cwd = path.resolve(cwd, target)
          const place = yield* locate(cwd, "directory")
          if (Option.isSome(place) && place.value.externalDirectory !== undefined)
            entered = place.value.externalDirectory
        }
      }
      if (opaque.length > 0) {
        const resources = opaque.map((item) => `${ShellCommand.UNRESOLVED_PREFIX}${item.text}`)
        const found = yield* check(name, resources)
        opaque.forEach((item, i) => {
          const resource = resources[i]!
          const effect = found.get(resource) ?? "ask"
          verdicts.push({ segment: item.segment, effect, resource, reason: item.reason })
        })
      }

      const unique = (values: ReadonlyArray<string>) => [...new Set(values)]
      const asking = verdicts.filter((v) => v.effect === "ask")
      const shown = asking.length > 0 ? asking : verdicts.filter((v) => v.effect !== "deny")
      const bashGroup: Group = {
        action: name,
        resources: shown.length === 0 ? [command] : unique(shown.map((v) => v.resource)),
        save:
          shown.length === 0
            ? [Wildcard.literal(command)]
            : unique(shown.flatMap((v) => (v.save === undefined ? [] : [v.save]))),
        metadata: {
          command,
          segments: asking.map((v) => ({
            text: v.segment.text,
            resource: v.resource,
            ...(v.reason === undefined ? {} : { reason: v.reason }),
          })),
        },
        always: true,
      }
      // The external workdir was approved first; writes into it need no second ask.
      if (approved !== undefined) externals.delete(approved)
      const literal = (resources: ReadonlySet<string>) => [...resources].map(Wildcard.literal)
      const groups: ReadonlyArray<Group> = [
        ...[...externals.values()].map((auth): Group => ({
          action: auth.action,
          resources: [auth.resource],
          save: [auth.save],
        })),
        bashGroup,
        { action: "read", resources: [...reads], save: literal(reads) },
        { action: "edit", resources: [...edits], save: literal(edits) },
        { action: ProtectedPath.ACTION, resources: [...protects], save: literal(protects) },
      ]

      // Denies first, so nothing is asked for a call that is blocked anyway.
      const deniedBash = unique(verdicts.filter((v) => v.effect === "deny").map((v) => v.resource))
      if (deniedBash.length > 0) yield* services.permission.assert({ ...base, action: name, resources: deniedBash })
      const effects = new Map<Group, ReadonlyMap<string, PermissionV2.Effect>>()
      for (const group of groups) {
        if (group === bashGroup || group.resources.length === 0) continue
        const found = yield* check(group.action, group.resources)
        effects.set(group, found)
        const denied = group.resources.filter((resource) => found.get(resource) === "deny")
        if (denied.length > 0) yield* services.permission.assert({ ...base, action: group.action, resources: denied })
      }
      for (const group of groups) {
        if (group.resources.length === 0) continue
        const found = effects.get(group)
        if (group.always !== true && found !== undefined && group.resources.every((r) => found.get(r) === "allow")) {
          continue
        }
        yield* services.permission.assert({
          ...base,
          action: group.action,
          resources: group.resources,
          save: group.save,
          ...(group.metadata === undefined ? {} : { metadata: group.metadata }),
        })
      }
      return parsed
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
            ...LocationMutation.externalDirectoryPermission(target.externalDirectory),
          })
        }
        const warnings = (yield* externalDirectories(input.command, target.canonical).pipe(
          Effect.provideService(FileSystem.FileSystem, services.fs),
        )).map(externalWarning)
        yield* review(input.command, target.canonical, base, target.externalDirectory?.resource)

        // The directory may have changed while the user was deciding.
        const info = yield* services.fs.stat(target.canonical)
        if (info.type !== "Directory") return yield* new NotDirectoryError({ path: target.canonical })

        const shell = Config.latest(yield* services.config.entries(), "shell") ?? defaultShell()
        const timeout = input.timeout ?? DEFAULT_TIMEOUT_MS
        const extra = warnings.length > 0 ? { warnings } : {}
        const prepared = yield* services.sandbox.prepare({
          command: input.command,
          cwd: target.canonical,
          shell,
          ...(target.externalDirectory === undefined ? {} : { writable: [target.canonical] }),
        })
        const stream = yield* streamOutput(services.store, context)
        const result = yield* services.process
          .run(prepared, {
            combineOutput: true,
            timeout: Duration.millis(timeout),
            maxOutputBytes: MAX_CAPTURE_BYTES,
            onOutput: stream.onOutput,
          })
          .pipe(
            Effect.catchTag("AppProcess.TimeoutError", () => Effect.succeed(undefined)),
            Effect.ensuring(Effect.sync(stream.flush)),
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
        const blocked = services.sandbox.diagnose(text)
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
    const protectedPaths = yield* Effect.serviceOption(ProtectedPath.Service)
    const tool = make({
      permission: yield* PermissionV2.Service,
      mutation: yield* LocationMutation.Service,
      process: yield* AppProcess.Service,
      config: yield* Config.Service,
      fs: yield* FileSystem.FileSystem,
      shell: yield* ShellCommand.Service,
      // Without the Location's service, the name-based protected paths still apply.
      protectedPaths: Option.getOrElse(protectedPaths, () => ProtectedPath.make([])),
      sandbox: yield* Sandbox.Service,
      store: yield* ToolOutputStore.Service,
    })
    return tool
  }),
).pipe(Layer.provide(ShellCommand.layer))
