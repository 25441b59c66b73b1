/**
 * The one process spawner: every child process toolgate starts (bash, ripgrep, git, the sandbox) is spawned here,
 * in its own process group (POSIX), with stdin ignored unless input is given. Stdout and stderr are captured (split
 * or interleaved) under byte caps while the child keeps being drained; stdout can also be streamed line by line, and
 * the line handler can stop the run early. A timeout, an abort signal, an early stop or an interruption kills the
 * **whole group** — SIGTERM, then SIGKILL after a grace period — and waits until it is gone, so no grandchild
 * outlives the run. Children die with their runner too (`internal/process-keeper.ts`).
 *
 * The errors keep the `AppProcess.*` tags: `AppProcess` is the service through which tools run commands, and
 * this module is its body on the system floor, where `Project` (git) can use it too.
 *
 * @since 0.3.0
 */
import type * as ChildProcess from "node:child_process"
import * as os from "node:os"
import type { Duplex } from "node:stream"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { collector, lineSplitter } from "./internal/process-output.js"
import { groupAlive, isPosix, signalGroup, spawnGuarded, unguard } from "./internal/process-keeper.js"

/**
 * The time a killed process group gets between SIGTERM and SIGKILL.
 *
 * @since 0.3.0
 * @category constants
 */
export const KILL_GRACE_MS = 3000

/**
 * A command to run. With `shell`, `command` is a command string handed to that shell (`true` = the platform shell).
 *
 * @since 0.3.0
 * @category models
 */
export interface Command {
  readonly command: string
  readonly args?: ReadonlyArray<string>
  readonly cwd?: string
  readonly shell?: string | boolean
  /** Variables added to (overriding) the parent's environment; an `undefined` value removes the variable. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /**
   * Receives, right after the spawn, the parent's end of a connected socket pair that the child inherits as file
   * descriptor 3 (a sandbox's egress bridge reaches its proxy through it; see docs/egress.md).
   */
  readonly channel?: (socket: Duplex) => void
  /**
   * Bytes the child reads from its descriptors `FIRST_INPUT_FD`, `FIRST_INPUT_FD + 1`, …: one pipe each, written
   * and closed right after the spawn (a sandbox hands bubblewrap its seccomp program this way). Descriptor 3 is
   * `channel`'s, or closed.
   */
  readonly inputs?: ReadonlyArray<Uint8Array>
}

/**
 * The child's descriptor of the first entry of `Command.inputs`.
 *
 * @since 0.3.0
 * @category constants
 */
export const FIRST_INPUT_FD = 4

/**
 * Options of `run`.
 *
 * @since 0.3.0
 * @category models
 */
export interface RunOptions {
  /**
   * Interleave stdout and stderr into one buffer in the order their chunks arrive. The two pipes are read
   * independently, so writes to both within one event-loop turn may be reordered.
   */
  readonly combineOutput?: boolean
  /** Cap on captured stdout (or the combined output). */
  readonly maxOutputBytes?: number
  /** Cap on captured stderr. */
  readonly maxErrorBytes?: number
  /** Aborting fails the run with the abort reason and kills the process group. */
  readonly signal?: AbortSignal
  /** Overall timeout; expiry fails with `TimeoutError` after the process group is gone. */
  readonly timeout?: Duration.DurationInput
  /** Input written to the child's stdin (which is otherwise ignored). */
  readonly stdin?: string | Uint8Array
  /**
   * Sees every chunk of output as it arrives (both streams, before any cap), for producers that keep or report the
   * whole output. Synchronous; a chunk is not read further until it returns.
   */
  readonly onOutput?: (chunk: Uint8Array) => void
  /**
   * Sees stdout split at each newline (without it), and the last unterminated line when stdout closes; stdout is
   * still captured under `maxOutputBytes` (0 keeps none). Returning `false` stops the run: the process group is
   * killed and the run succeeds with `stopped: true`. Not with `combineOutput`.
   */
  readonly onLine?: (line: Buffer) => boolean | void
  /**
   * A line that grows past this many bytes is handed to `onLine` at once, unterminated, and the rest of it up to
   * the next newline is dropped (so one endless line cannot fill memory).
   */
  readonly maxLineBytes?: number
}

/**
 * The outcome of a finished run.
 *
 * @since 0.3.0
 * @category models
 */
export interface RunResult {
  readonly command: string
  readonly exitCode: number
  /** Combined mode only. */
  readonly output?: Uint8Array
  readonly stdout: Uint8Array
  readonly stderr: Uint8Array
  /** Combined mode only. */
  readonly outputTruncated?: boolean
  readonly stdoutTruncated: boolean
  readonly stderrTruncated: boolean
  /** Set when `onLine` stopped the run (the group was killed; `exitCode` is then the signal's). */
  readonly stopped?: boolean
}

/**
 * A spawn failure, a non-zero exit under `requireSuccess`, or an abort.
 *
 * @since 0.3.0
 * @category errors
 */
export class AppProcessError extends Schema.TaggedError<AppProcessError>()("AppProcess.AppProcessError", {
  command: Schema.String,
  exitCode: Schema.optional(Schema.Number),
  stderr: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect),
}) {
  /** `Command failed[ (exit N)]: <command>[: <stderr-or-cause>]`. */
  override get message(): string {
    const cause = this.cause
    const detail =
      this.stderr?.trim() ||
      (cause instanceof Error ? cause.message : cause === undefined || cause === null ? "" : String(cause))
    const status = this.exitCode === undefined ? "" : ` (exit ${this.exitCode})`
    return `Command failed${status}: ${this.command}${detail ? `: ${detail}` : ""}`
  }
}

/**
 * The run's timeout passed: the whole process group was killed (and is gone) before this failure.
 *
 * @since 0.3.0
 * @category errors
 */
export class TimeoutError extends Schema.TaggedError<TimeoutError>()("AppProcess.TimeoutError", {
  command: Schema.String,
  timeoutMs: Schema.Number,
}) {
  /** `Command timed out after <ms> ms: <command>`. */
  override get message(): string {
    return `Command timed out after ${this.timeoutMs} ms: ${this.command}`
  }
}

/**
 * Fails with `AppProcessError{ command, exitCode, stderr }` unless the exit code is 0.
 *
 * @since 0.3.0
 * @category utilities
 */
export const requireSuccess = (result: RunResult): Effect.Effect<RunResult, AppProcessError> =>
  result.exitCode === 0
    ? Effect.succeed(result)
    : Effect.fail(
        new AppProcessError({
          command: result.command,
          exitCode: result.exitCode,
          stderr: Buffer.from(result.stderr).toString("utf8"),
        }),
      )

/**
 * The human-readable form of a command: the string itself, followed by its arguments.
 *
 * @since 0.3.0
 * @category utilities
 */
export const describe = (command: Command): string =>
  command.args !== undefined && command.args.length > 0
    ? `${command.command} ${command.args.join(" ")}`
    : command.command

export {
  /**
   * A byte collector with an optional cap: keeps bytes up to `max`, counts everything, never stops draining.
   *
   * @since 0.3.0
   * @category output
   */
  type Collector,
  /**
   * Creates a collector. The chunk that crosses `max` is sliced; `truncated` becomes true only once the total
   * exceeds `max` (exactly `max` bytes is not truncated).
   *
   * @since 0.3.0
   * @category output
   */
  collector,
} from "./internal/process-output.js"

/** Waits (on real timers, independent of the Effect clock) until `done()` holds or `ms` elapse. */
const waitUntil = (done: () => boolean, ms: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const deadline = Date.now() + ms
    let timer: NodeJS.Timeout | undefined
    const tick = () => {
      if (done() || Date.now() >= deadline) resume(Effect.void)
      else timer = setTimeout(tick, 25)
    }
    tick()
    return Effect.sync(() => clearTimeout(timer))
  })

interface Running {
  readonly child: ChildProcess.ChildProcess
  /** Resolves once the child exited and its stdio closed (or the spawn failed). */
  readonly closed: Promise<{
    readonly code: number | null
    readonly signal: NodeJS.Signals | null
    readonly error?: Error
  }>
  readonly isClosed: () => boolean
}

const spawn = (
  command: Command,
  options: RunOptions | undefined,
  sinks: {
    readonly stdout: (chunk: Uint8Array) => void
    readonly stderr: (chunk: Uint8Array) => void
  },
): Running => {
  const child = spawnGuarded(command.command, command.args ?? [], {
    ...(command.cwd === undefined ? {} : { cwd: command.cwd }),
    ...(command.shell === undefined ? {} : { shell: command.shell }),
    env: command.env === undefined ? process.env : { ...process.env, ...command.env },
    stdio: [
      options?.stdin === undefined ? "ignore" : "pipe",
      "pipe",
      "pipe",
      ...(command.channel === undefined
        ? command.inputs === undefined
          ? []
          : (["ignore"] as const)
        : (["pipe"] as const)),
      ...(command.inputs ?? []).map(() => "pipe" as const),
    ],
    windowsHide: true,
  })
  let isClosed = false
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once("error", (error) => {
      // A spawn failure never emits "close" reliably; a later error (e.g. on kill) must not mask the exit.
      if (child.pid === undefined) {
        isClosed = true
        resolve({ code: null, signal: null, error })
      }
    })
    child.once("close", (code, signal) => {
      isClosed = true
      resolve({ code, signal })
    })
  })
  const channel = child.stdio[3] as Duplex | null | undefined
  if (command.channel !== undefined && channel != null) {
    if (child.pid === undefined) channel.destroy()
    else command.channel(channel)
  }
  command.inputs?.forEach((bytes, index) => {
    const input = child.stdio[FIRST_INPUT_FD + index] as Duplex | null | undefined
    if (input == null) return
    input.on("error", () => {})
    if (child.pid === undefined) input.destroy()
    else input.resume().end(bytes)
  })
  child.stdout?.on("data", sinks.stdout)
  child.stderr?.on("data", sinks.stderr)
  if (child.stdin !== null && options?.stdin !== undefined) {
    child.stdin.on("error", () => {})
    child.stdin.end(options.stdin)
  }
  return { child, closed, isClosed: () => isClosed }
}

/** Terminates the process group and waits until the child closed and no live group member remains. */
const terminate = (running: Running): Effect.Effect<void> =>
  Effect.suspend(() => {
    const { child } = running
    const pid = child.pid
    if (pid === undefined) return Effect.void
    const gone = () => running.isClosed() && (!isPosix || !groupAlive(pid))
    if (gone()) return Effect.void
    signalGroup(child, "SIGTERM")
    return waitUntil(gone, KILL_GRACE_MS).pipe(
      Effect.zipRight(
        Effect.suspend(() => {
          if (gone()) return Effect.void
          signalGroup(child, "SIGKILL")
          return Effect.promise(() => running.closed).pipe(Effect.zipRight(waitUntil(gone, KILL_GRACE_MS)))
        }),
      ),
    )
  })

/** A signal-terminated child reports `128 + <signal number>`, as shells do. */
const signalExitCode = (signal: NodeJS.Signals): number => 128 + (os.constants.signals[signal] ?? 0)

const abortReason = (signal: AbortSignal): unknown => {
  if (signal.reason instanceof Error) return signal.reason
  const error = new Error("Aborted")
  error.name = "AbortError"
  return error
}

/**
 * Spawns `command`, waits for it to exit and its output to close (or for `onLine` to stop it), and returns the
 * captured output. Untraced: `AppProcess.run` is the traced entry for tools.
 *
 * @since 0.3.0
 * @category running
 */
export const run = (
  command: Command,
  options: RunOptions | undefined,
): Effect.Effect<RunResult, AppProcessError | TimeoutError> => {
  const description = describe(command)
  const combined = options?.combineOutput === true
  const collect = Effect.suspend(() => {
    const output = combined ? collector(options?.maxOutputBytes) : undefined
    const stdout = output ?? collector(options?.maxOutputBytes)
    const stderr = output ?? collector(options?.maxErrorBytes)
    let stop: (() => void) | undefined
    const stopRequested = new Promise<"stopped">((resolve) => {
      stop = () => resolve("stopped")
    })
    let stopped = false
    const lines =
      options?.onLine === undefined || combined
        ? undefined
        : lineSplitter(options.onLine, options.maxLineBytes, () => {
            stopped = true
            stop?.()
          })
    return Effect.acquireUseRelease(
      Effect.try({
        try: () => {
          const watch = options?.onOutput
          const out = (chunk: Uint8Array) => {
            if (stopped) return
            watch?.(chunk)
            stdout.push(chunk)
            lines?.push(chunk)
          }
          const err = (chunk: Uint8Array) => {
            if (stopped) return
            watch?.(chunk)
            stderr.push(chunk)
          }
          return spawn(command, options, { stdout: out, stderr: err })
        },
        catch: (cause) => new AppProcessError({ command: description, cause }),
      }),
      (running) =>
        Effect.gen(function* () {
          const first = yield* Effect.promise(() => Promise.race([running.closed, stopRequested]))
          if (first === "stopped") yield* terminate(running)
          const closed = yield* Effect.promise(() => running.closed)
          if (closed.error !== undefined) {
            return yield* new AppProcessError({ command: description, cause: closed.error })
          }
          if (!stopped) lines?.end()
          const exitCode = closed.code ?? (closed.signal === null ? -1 : signalExitCode(closed.signal))
          const end = stopped ? { stopped: true } : {}
          if (output !== undefined) {
            const captured = output.result()
            return {
              command: description,
              exitCode,
              output: captured.buffer,
              stdout: Buffer.alloc(0),
              stderr: Buffer.alloc(0),
              outputTruncated: captured.truncated,
              stdoutTruncated: false,
              stderrTruncated: false,
              ...end,
            } satisfies RunResult
          }
          const out = stdout.result()
          const err = stderr.result()
          return {
            command: description,
            exitCode,
            stdout: out.buffer,
            stderr: err.buffer,
            stdoutTruncated: out.truncated,
            stderrTruncated: err.truncated,
            ...end,
          } satisfies RunResult
        }),
      // Normal completion leaves detached background processes alone; only an early exit kills the group. A group
      // that could not be confirmed gone stays registered with the keeper.
      (running, exit) => {
        const pid = running.child.pid
        const forget = Effect.sync(() => {
          if (pid !== undefined && (Exit.isSuccess(exit) || !isPosix || !groupAlive(pid))) unguard(pid)
        })
        return Exit.isSuccess(exit) ? forget : Effect.zipRight(terminate(running), forget)
      },
    )
  })
  const timed =
    options?.timeout === undefined
      ? collect
      : Effect.timeoutFail(collect, {
          duration: options.timeout,
          onTimeout: () =>
            new TimeoutError({ command: description, timeoutMs: Duration.toMillis(Duration.decode(options.timeout!)) }),
        })
  const signal = options?.signal
  if (signal === undefined) return timed
  const aborted = Effect.async<never, AppProcessError>((resume) => {
    const fail = () => resume(Effect.fail(new AppProcessError({ command: description, cause: abortReason(signal) })))
    if (signal.aborted) {
      fail()
      return
    }
    signal.addEventListener("abort", fail, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", fail))
  })
  return Effect.raceFirst(timed, aborted)
}
