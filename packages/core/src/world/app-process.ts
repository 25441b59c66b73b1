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
 * The spawner itself is `system/process-group.ts` (ripgrep and git use it too); this module is the service tools
 * are given, with a traced `run`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ProcessGroup from "../system/process-group.js"

export {
  /**
   * A spawn failure, a non-zero exit under `requireSuccess`, or an abort.
   *
   * @since 0.1.0
   * @category errors
   */
  AppProcessError,
  /**
   * A command to run. With `shell`, `command` is a command string handed to that shell (`true` = the platform
   * shell).
   *
   * @since 0.1.0
   * @category models
   */
  type Command,
  /**
   * A byte collector with an optional cap: keeps bytes up to `max`, counts everything, never stops draining.
   *
   * @since 0.1.0
   * @category output
   */
  type Collector,
  /**
   * Creates a collector. The chunk that crosses `max` is sliced; `truncated` becomes true only once the total
   * exceeds `max` (exactly `max` bytes is not truncated).
   *
   * @since 0.1.0
   * @category output
   */
  collector,
  /**
   * The human-readable form of a command: the string itself, followed by its arguments.
   *
   * @since 0.1.0
   * @category models
   */
  describe,
  /**
   * The child's descriptor of the first entry of `Command.inputs`.
   *
   * @since 0.3.0
   * @category constants
   */
  FIRST_INPUT_FD,
  /**
   * The time a killed process group gets between SIGTERM and SIGKILL.
   *
   * @since 0.1.0
   * @category constants
   */
  KILL_GRACE_MS,
  /**
   * Fails with `AppProcessError{ command, exitCode, stderr }` unless the exit code is 0.
   *
   * @since 0.1.0
   * @category running
   */
  requireSuccess,
  /**
   * Options of `run`.
   *
   * @since 0.1.0
   * @category models
   */
  type RunOptions,
  /**
   * The outcome of a finished run.
   *
   * @since 0.1.0
   * @category models
   */
  type RunResult,
  /**
   * The run's timeout passed: the whole process group was killed (and is gone) before this failure.
   *
   * @since 0.3.0
   * @category errors
   */
  TimeoutError,
} from "../system/process-group.js"

/**
 * The AppProcess service shape.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /** Spawns `command`, waits for it to exit and its output to close, and returns the captured output. */
  readonly run: (
    command: ProcessGroup.Command,
    options?: ProcessGroup.RunOptions,
  ) => Effect.Effect<ProcessGroup.RunResult, ProcessGroup.AppProcessError | ProcessGroup.TimeoutError>
}

/**
 * The process-wide AppProcess service.
 *
 * @since 0.1.0
 * @category services
 */
export class Service extends Context.Tag("@toolgate/v2/AppProcess")<Service, Interface>() {}

/**
 * Builds the service.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Interface = {
  run: Effect.fn("AppProcess.run")(function* (command: ProcessGroup.Command, options?: ProcessGroup.RunOptions) {
    return yield* ProcessGroup.run(command, options)
  }),
}

/**
 * The process-wide layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service> = Layer.succeed(Service, Service.of(make))
