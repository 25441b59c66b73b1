/**
 * Child processes on a tool's behalf. Every run spawns its command in its own process group (POSIX), with
 * stdin ignored unless input is given, and captures stdout/stderr (split or interleaved) under byte caps while the
 * child keeps being drained. A timeout, an abort signal or an interruption kills the **whole group** — SIGTERM, then
 * SIGKILL after a grace period — and waits until it is gone, so no grandchild outlives the run. A timeout fails with
 * `TimeoutError`.
 *
 * Children die with their runner, too: one keeper process per runner process (a small `/bin/sh` script in its own
 * session) holds the read end of a pipe whose write end only this process has, and is told the process group of
 * every run while it runs. When this process dies in any way — `kill -9` included — the kernel closes the pipe,
 * the keeper reads end of file and kills every group still registered with SIGKILL. See docs/shell.md.
 *
 * @since 0.1.0
 */
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import type * as net from "node:net"
import * as os from "node:os"
import type { Duplex } from "node:stream"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/**
 * The time a killed process group gets between SIGTERM and SIGKILL.
 *
 * @since 0.1.0
 */
export const KILL_GRACE_MS = 3000

/**
 * A command to run. With `shell`, `command` is a command string handed to that shell (`true` = the platform shell).
 *
 * @since 0.1.0
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
 * @since 0.1.0
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
}

/**
 * The outcome of a finished run.
 *
 * @since 0.1.0
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
}

/**
 * A spawn failure, a non-zero exit under `requireSuccess`, or an abort.
 *
 * @since 0.1.0
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
 * The AppProcess service shape.
 *
 * @since 0.1.0
 */
export interface Interface {
  /** Spawns `command`, waits for it to exit and its output to close, and returns the captured output. */
  readonly run: (command: Command, options?: RunOptions) => Effect.Effect<RunResult, AppProcessError | TimeoutError>
}

/**
 * The process-wide AppProcess service.
 *
 * @since 0.1.0
 */
export class Service extends Context.Tag("@toolgate/v2/AppProcess")<Service, Interface>() {}

/**
 * Fails with `AppProcessError{ command, exitCode, stderr }` unless the exit code is 0.
 *
 * @since 0.1.0
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
 * @since 0.1.0
 */
export const describe = (command: Command): string =>
  command.args !== undefined && command.args.length > 0
    ? `${command.command} ${command.args.join(" ")}`
    : command.command

/**
 * A byte collector with an optional cap: keeps bytes up to `max`, counts everything, never stops draining.
 *
 * @since 0.1.0
 */
export interface Collector {
  readonly push: (chunk: Uint8Array) => void
  readonly result: () => { readonly buffer: Buffer; readonly truncated: boolean; readonly total: number }
}

/**
 * Creates a collector. The chunk that crosses `max` is sliced; `truncated` becomes true only once the total exceeds
 * `max` (exactly `max` bytes is not truncated).
 *
 * @since 0.1.0
 */
export const collector = (max?: number): Collector => {
  const chunks: Array<Uint8Array> = []
  let kept = 0
  let total = 0
  return {
    push: (chunk) => {
      total += chunk.byteLength
      if (max === undefined) {
        chunks.push(chunk)
        kept += chunk.byteLength
        return
      }
      const remaining = max - kept
      if (remaining <= 0) return
      const part = chunk.byteLength <= remaining ? chunk : chunk.subarray(0, remaining)
      chunks.push(part)
      kept += part.byteLength
    },
    result: () => ({ buffer: Buffer.concat(chunks, kept), truncated: max !== undefined && total > max, total }),
  }
}

const isPosix = process.platform !== "win32"

/** True while a non-zombie process of group `pgid` exists. Zombies are dead: an init that never reaps keeps them. */
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch {
    return false
  }
  if (process.platform !== "linux") return true
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return true
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue
    }
    // Fields after the parenthesised command name: state ppid pgrp …
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true
  }
  return false
}

const signalGroup = (child: ChildProcess.ChildProcess, signal: NodeJS.Signals): void => {
  if (child.pid === undefined) return
  try {
    if (isPosix) process.kill(-child.pid, signal)
    else child.kill(signal)
  } catch {
    // The group is already gone.
  }
}

/**
 * The keeper's script. It reads `+<pgid>` (a run started) and `-<pgid>` (a run's group is gone or left alone) lines
 * until end of file — which comes only when every copy of the write end is closed, that is when the process that
 * started it is gone (the pipe is close-on-exec, so no other child holds it) — and then kills every group still
 * registered. Only digits are accepted as a group id.
 */
const KEEPER_SCRIPT = `live=" "
while IFS= read -r line; do
  case $line in
    +*) g=\${line#+} ;;
    -*) g=\${line#-} ;;
    *) continue ;;
  esac
  case $g in ""|*[!0-9]*) continue ;; esac
  case $line in
    +*) case $live in *" $g "*) ;; *) live="$live$g " ;; esac ;;
    *) case $live in *" $g "*) live="\${live%% $g *} \${live#* $g }" ;; esac ;;
  esac
done
for g in $live; do kill -s KILL -- "-$g" 2>/dev/null; done`

/** The process groups of the runs in progress, told to the keeper (again to a new one, if it had to restart). */
const guarded = new Set<number>()
let keeper: ChildProcess.ChildProcess | undefined
/** Set when the keeper could not be started at all (no `/bin/sh`): runs then go on without it. */
let keeperUnavailable = false

const tellKeeper = (line: string): void => {
  const stdin = keeper?.stdin
  if (stdin === null || stdin === undefined || stdin.destroyed) return
  stdin.write(line)
}

/** The running keeper, started on first use; neither it nor its pipe keeps this process alive. */
const ensureKeeper = (): void => {
  if (keeper !== undefined || keeperUnavailable || !isPosix) return
  const started = ChildProcess.spawn("/bin/sh", ["-c", KEEPER_SCRIPT], {
    stdio: ["pipe", "ignore", "ignore"],
    detached: true,
  })
  if (started.pid === undefined) {
    started.once("error", () => {})
    keeperUnavailable = true
    return
  }
  keeper = started
  started.once("error", () => {})
  started.stdin?.on("error", () => {})
  // A keeper that died (someone killed it) is replaced on the next run, and told every group still running.
  started.once("exit", () => {
    if (keeper === started) keeper = undefined
  })
  started.unref()
  ;(started.stdin as net.Socket | null)?.unref()
  for (const pgid of guarded) tellKeeper(`+${pgid}\n`)
}

/** Registers the group of a run that just started: from now on it dies with this process. */
const guard = (pgid: number): void => {
  if (!isPosix) return
  guarded.add(pgid)
  ensureKeeper()
  tellKeeper(`+${pgid}\n`)
}

/** Forgets a group: it is gone, or it finished normally and its background processes are left alone. */
const unguard = (pgid: number): void => {
  if (!guarded.delete(pgid)) return
  ensureKeeper()
  tellKeeper(`-${pgid}\n`)
}

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
  const child = ChildProcess.spawn(command.command, command.args ?? [], {
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
    detached: isPosix,
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
  if (child.pid !== undefined) guard(child.pid)
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

const runCommand = (
  command: Command,
  options: RunOptions | undefined,
): Effect.Effect<RunResult, AppProcessError | TimeoutError> => {
  const description = describe(command)
  const combined = options?.combineOutput === true
  const collect = Effect.suspend(() => {
    const output = combined ? collector(options?.maxOutputBytes) : undefined
    const stdout = output ?? collector(options?.maxOutputBytes)
    const stderr = output ?? collector(options?.maxErrorBytes)
    return Effect.acquireUseRelease(
      Effect.try({
        try: () => {
          const watch = options?.onOutput
          const sinks =
            watch === undefined
              ? { stdout: stdout.push, stderr: stderr.push }
              : {
                  stdout: (chunk: Uint8Array) => {
                    watch(chunk)
                    stdout.push(chunk)
                  },
                  stderr: (chunk: Uint8Array) => {
                    watch(chunk)
                    stderr.push(chunk)
                  },
                }
          return spawn(command, options, sinks)
        },
        catch: (cause) => new AppProcessError({ command: description, cause }),
      }),
      (running) =>
        Effect.flatMap(
          Effect.promise(() => running.closed),
          (closed): Effect.Effect<RunResult, AppProcessError> => {
            if (closed.error !== undefined)
              return Effect.fail(new AppProcessError({ command: description, cause: closed.error }))
            const exitCode = closed.code ?? (closed.signal === null ? -1 : signalExitCode(closed.signal))
            if (output !== undefined) {
              const captured = output.result()
              return Effect.succeed({
                command: description,
                exitCode,
                output: captured.buffer,
                stdout: Buffer.alloc(0),
                stderr: Buffer.alloc(0),
                outputTruncated: captured.truncated,
                stdoutTruncated: false,
                stderrTruncated: false,
              })
            }
            const out = stdout.result()
            const err = stderr.result()
            return Effect.succeed({
              command: description,
              exitCode,
              stdout: out.buffer,
              stderr: err.buffer,
              stdoutTruncated: out.truncated,
              stderrTruncated: err.truncated,
            })
          },
        ),
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

/**
 * Builds the service.
 *
 * @since 0.1.0
 */
export const make: Interface = {
  run: Effect.fn("AppProcess.run")(function* (command: Command, options?: RunOptions) {
    return yield* runCommand(command, options)
  }),
}

/**
 * The process-wide layer.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<Service> = Layer.succeed(Service, Service.of(make))
