/**
 * What the traversal knows about the running shell between commands: the directories it may be in, `OLDPWD` and
 * the `pushd` stack. `cd` is followed with real scoping (a subshell, a pipeline element or a background job ends
 * what it changes) and with uncertainty (a `cd` that may fail leaves both directories possible). Past a bound, or
 * after a `cd` whose target is only known at run time, the directory is unknown.
 *
 * @since 0.3.0
 */
import type { CdStep, Directory, Place } from "./segment.js"

/**
 * The most directories a segment is judged from before the directory counts as unknown.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_DIRECTORIES = 16

/**
 * The shell's directory state.
 *
 * @since 0.3.0
 * @category models
 */
export interface State {
  /** Every directory the shell may be in; `undefined` when unknown (`unknown` says why). */
  readonly dirs: ReadonlyArray<Directory> | undefined
  readonly unknown?: string
  /** Where `cd -` goes; `undefined` when unknown (at the start it comes from the environment). */
  readonly oldpwd: ReadonlyArray<Directory> | undefined
  /** The `pushd` stack, top first; `undefined` when unknown. */
  readonly stack: ReadonlyArray<ReadonlyArray<Directory>> | undefined
}

/**
 * The state after a command: when it succeeded (`ok`) and when it failed (`fail`).
 *
 * @since 0.3.0
 * @category models
 */
export interface Outcome {
  readonly ok: State
  readonly fail: State
}

/**
 * The state at the start of a command string: the starting directory.
 *
 * @since 0.3.0
 * @category constants
 */
export const START: State = { dirs: [[]], oldpwd: undefined, stack: [] }

/**
 * An unknown directory, and why.
 *
 * @since 0.3.0
 * @category utilities
 */
export const unknown = (reason: string): State => ({
  dirs: undefined,
  unknown: reason,
  oldpwd: undefined,
  stack: undefined,
})

/**
 * The same state whatever the command's exit status.
 *
 * @since 0.3.0
 * @category utilities
 */
export const same = (state: State): Outcome => ({ ok: state, fail: state })

const key = (directory: Directory): string => JSON.stringify(directory)

const unionDirs = (
  a: ReadonlyArray<Directory> | undefined,
  b: ReadonlyArray<Directory> | undefined,
): ReadonlyArray<Directory> | undefined => {
  if (a === undefined || b === undefined) return undefined
  const seen = new Map<string, Directory>()
  for (const d of [...a, ...b]) seen.set(key(d), d)
  return seen.size > MAX_DIRECTORIES ? undefined : [...seen.values()]
}

/**
 * Either state may hold.
 *
 * @since 0.3.0
 * @category utilities
 */
export const union = (a: State, b: State): State => {
  if (a === b) return a
  const dirs = unionDirs(a.dirs, b.dirs)
  const stack =
    a.stack !== undefined && b.stack !== undefined && a.stack.length === b.stack.length
      ? a.stack.map((entry, i) => unionDirs(entry, b.stack![i]!))
      : undefined
  return {
    dirs,
    ...(dirs === undefined
      ? { unknown: a.unknown ?? b.unknown ?? `more than ${MAX_DIRECTORIES} directories are possible` }
      : {}),
    oldpwd: unionDirs(a.oldpwd, b.oldpwd),
    stack:
      stack !== undefined && stack.every((entry) => entry !== undefined)
        ? (stack as ReadonlyArray<ReadonlyArray<Directory>>)
        : undefined,
  }
}

/**
 * Any of the outcomes' states may hold.
 *
 * @since 0.3.0
 * @category utilities
 */
export const either = (outcome: Outcome): State => union(outcome.ok, outcome.fail)

/**
 * After `cd STEP` succeeded.
 *
 * @since 0.3.0
 * @category utilities
 */
export const enter = (state: State, step: CdStep): State => {
  if (state.dirs === undefined) return state
  return { dirs: state.dirs.map((d) => [...d, step]), oldpwd: state.dirs, stack: state.stack }
}

/**
 * Where a segment runs, for a state.
 *
 * @since 0.3.0
 * @category utilities
 */
export const placeOf = (state: State): Place =>
  state.dirs === undefined
    ? { directories: [], unknown: state.unknown ?? "the directory is only known when the shell runs" }
    : { directories: state.dirs }
