/**
 * The confined directory walk: the files below a directory whose real paths stay inside a root, confined like
 * `read`. An entry (file or folder) whose real path leaves the root through a symlink is skipped and handed to
 * `onOutside`, so neither its content nor its name is returned; a folder reached twice (a symlink loop) is walked
 * once. Entries that vanish or cannot be stat'ed are skipped; a folder that cannot be listed (or a root whose real
 * path cannot be found) fails the walk unless `lenient`. `walkSync` is the walk, over node:fs; `walk` runs the same
 * walk as an Effect. Skills (`SkillV2.walk`) and markdown agent files (`Config.agentFiles`) are found this way.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { type PlatformError, SystemError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Path from "../values/path.js"
import * as FsError from "./fs-error.js"

/**
 * An entry skipped because its real path is outside `root`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Outside {
  /** The entry as reached from the walked directory. */
  readonly entry: string
  /** Its real path. */
  readonly real: string
  /** The real root it left. */
  readonly root: string
}

/**
 * Options of `walk`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options {
  /** The directory every real path must stay in; the real path of the walked directory by default. */
  readonly root?: string
  /** Descend into folders (the default); `false` lists the walked directory only. */
  readonly recursive?: boolean
  /** Which files to return, by name (every regular file by default). */
  readonly include?: (name: string) => boolean
  /** A folder that cannot be listed, or a root that cannot be resolved, contributes nothing instead of failing. */
  readonly lenient?: boolean
  /** Sees each entry skipped for leaving the root. */
  readonly onOutside?: (outside: Outside) => Effect.Effect<void>
}

/**
 * Options of `walkSync`: those of `walk`, with an `onOutside` that is called as the walk meets each entry.
 *
 * @since 0.3.0
 * @category models
 */
export interface SyncOptions extends Omit<Options, "onOutside"> {
  /** Sees each entry skipped for leaving the root. */
  readonly onOutside?: (outside: Outside) => void
}

/** Runs one node:fs call; its failure is thrown as the `SystemError` that call of `FileSystem` would fail with. */
const call = <A>(method: string, target: string, run: () => A): A => {
  try {
    return run()
  } catch (cause) {
    throw FsError.fromErrno(method, target, cause as NodeJS.ErrnoException)
  }
}

/** An entry that vanished or cannot be stat'ed or resolved is `undefined`: the walk skips it. */
const optional = <A>(run: () => A): A | undefined => {
  try {
    return run()
  } catch {
    return undefined
  }
}

/** Runs part of a walk; when lenient, a file-system failure in it ends that part only (anything else still throws). */
const part = (lenient: boolean, run: () => void): void => {
  if (!lenient) return run()
  try {
    run()
  } catch (error) {
    if (!(error instanceof SystemError)) throw error
  }
}

/**
 * The regular files below `directory` (as reached from it, sorted) whose real paths lie inside the root, with
 * `onOutside` called for each entry skipped for leaving it. A failure is thrown as a `SystemError` (a
 * `PlatformError`) naming the `FileSystem` method and the path.
 *
 * @since 0.3.0
 * @category walking
 */
export const walkSync = (directory: string, options: SyncOptions = {}): ReadonlyArray<string> => {
  const lenient = options.lenient === true
  const include = options.include ?? (() => true)
  const found: Array<string> = []
  const visited = new Set<string>()
  const visit = (current: string, root: string): void => {
    const real = call("realPath", current, () => fs.realpathSync(current))
    if (!Path.isWithin(root, real)) return options.onOutside?.({ entry: current, real, root })
    if (visited.has(real)) return
    visited.add(real)
    for (const name of call("readDirectory", current, () => fs.readdirSync(current))) {
      const entry = path.join(current, name)
      const info = optional(() => fs.statSync(entry))
      if (info === undefined) continue
      const isDirectory = info.isDirectory()
      if (isDirectory ? options.recursive === false : !info.isFile() || !include(name)) continue
      const where = optional(() => fs.realpathSync(entry))
      if (where === undefined) continue
      if (!Path.isWithin(root, where)) options.onOutside?.({ entry, real: where, root })
      else if (isDirectory) part(lenient, () => visit(entry, root))
      else found.push(entry)
    }
  }
  part(lenient, () => {
    const root = options.root ?? directory
    visit(
      directory,
      call("realPath", root, () => fs.realpathSync(root)),
    )
  })
  return found.sort()
}

/**
 * The regular files below `directory` (as reached from it, sorted) whose real paths lie inside the root: `walkSync`
 * as an Effect, each skipped entry handed to `onOutside` once the walk has listed the folders.
 *
 * @since 0.3.0
 * @category walking
 */
export const walk = (directory: string, options: Options = {}): Effect.Effect<ReadonlyArray<string>, PlatformError> =>
  Effect.suspend(() => {
    const outside: Array<Outside> = []
    const report = Effect.forEach(outside, options.onOutside ?? (() => Effect.void), { discard: true })
    try {
      const files = walkSync(directory, { ...options, onOutside: (entry) => void outside.push(entry) })
      return Effect.as(report, files)
    } catch (error) {
      // Anything but a file-system failure (a throwing `include`) is a defect, not a failure of the walk.
      if (!(error instanceof SystemError)) throw error
      return Effect.zipRight(report, Effect.fail(error))
    }
  })
