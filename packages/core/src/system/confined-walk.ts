/**
 * The confined directory walk: the files below a directory whose real paths stay inside a root, confined like
 * `read`. An entry (file or folder) whose real path leaves the root through a symlink is skipped and handed to
 * `onOutside`, so neither its content nor its name is returned; a folder reached twice (a symlink loop) is walked
 * once. Entries that vanish or cannot be stat'ed are skipped; a folder that cannot be listed (or a root whose real
 * path cannot be found) fails the walk unless `lenient`. `traverse` is the one walk, over node:fs and lazy; with
 * `symlinks: "skip"` it follows no link, and its `enter` / `accept` hooks and `compare` order are how search walks
 * (`world/search/walk.ts` adds the ignore files, globs and hidden rule). `walkSync` collects it, `walk` runs that as
 * an Effect. Skills (`SkillV2.walk`) and markdown agent files (`Config.agentFiles`) are found this way.
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
 * An entry the walk reached: its path as reached from the walked directory, its path relative to that directory
 * (`/`-separated), its name, and whether it is a folder.
 *
 * @since 0.4.0
 * @category models
 */
export interface Entry {
  readonly path: string
  readonly relative: string
  readonly name: string
  readonly directory: boolean
}

/**
 * A folder's listing as the walk classified it: each name and its kind (`other`: anything the walk never returns
 * or enters — a symlink when links are not followed, a socket, a device, a FIFO, an entry that vanished).
 *
 * @since 0.4.0
 * @category models
 */
export interface Listing {
  readonly name: string
  readonly kind: "file" | "directory" | "other"
}

/**
 * Options of `traverse`. `S` is what a folder passes to the folders and files below it (`enter` makes it).
 *
 * @since 0.4.0
 * @category models
 */
export interface TraverseOptions<S> {
  /** The directory every real path must stay in; the real path of the walked directory by default. */
  readonly root?: string | undefined
  /** Descend into folders (the default); `false` lists the walked directory only. */
  readonly recursive?: boolean | undefined
  /**
   * `follow` (the default): a symlink is followed when its real path stays inside the root, and handed to
   * `onOutside` otherwise; a folder reached twice is walked once. `skip`: symlinks are neither followed nor returned,
   * so nothing leaves a real walked directory.
   */
  readonly symlinks?: "follow" | "skip" | undefined
  /** A folder below the walked directory that cannot be listed contributes nothing instead of failing the walk. */
  readonly lenient?: boolean | undefined
  /** The order of each folder's entries (the listing's order by default). */
  readonly compare?: ((a: string, b: string) => number) | undefined
  /** What the walked directory inherits. */
  readonly initial?: S | undefined
  /** What a folder passes down, from what its parent passed and its listing (ignore files, for search). */
  readonly enter?: ((folder: Entry | undefined, listing: ReadonlyArray<Listing>, parent: S) => S) | undefined
  /** Whether an entry is taken: a file returned, a folder entered (every one by default). */
  readonly accept?: ((entry: Entry, state: S) => boolean) | undefined
  /** Sees each entry skipped for leaving the root. */
  readonly onOutside?: ((outside: Outside) => void) | undefined
}

/** A folder's listing: without following links (the entry's own type), or following them (`stat`, and the real path). */
const list = (folder: string, follow: boolean): Array<Listing> =>
  call("readDirectory", folder, () => fs.readdirSync(folder, { withFileTypes: true })).map((dirent) => {
    const name = dirent.name
    const entry = path.join(folder, name)
    if (!follow) {
      if (dirent.isFile()) return { name, kind: "file" }
      if (dirent.isDirectory()) return { name, kind: "directory" }
      const typed =
        dirent.isSymbolicLink() ||
        dirent.isFIFO() ||
        dirent.isSocket() ||
        dirent.isCharacterDevice() ||
        dirent.isBlockDevice()
      // A file system that reports no type: ask it.
      const info = typed ? undefined : optional(() => fs.lstatSync(entry))
      return { name, kind: info?.isFile() ? "file" : info?.isDirectory() ? "directory" : "other" }
    }
    const info = optional(() => fs.statSync(entry))
    return { name, kind: info?.isFile() ? "file" : info?.isDirectory() ? "directory" : "other" }
  })

/**
 * The walk, lazily: each taken file below `directory` in walk order (depth first; each folder's entries in `compare`
 * order), its folders entered as they come. Confined to the root as the module describes; `enter` and `accept` let
 * a caller carry per-folder state down and choose entries (search applies its ignore files and globs this way). The
 * walked directory that cannot be listed, or a root whose real path cannot be found, fails with a `SystemError`;
 * folders below fail it too unless `lenient`.
 *
 * @since 0.4.0
 * @category walking
 */
export function* traverse<S = undefined>(directory: string, options: TraverseOptions<S> = {}): Generator<Entry> {
  const follow = options.symlinks !== "skip"
  const root = options.root ?? directory
  const realRoot = call("realPath", root, () => fs.realpathSync(root))
  const visited = new Set<string>()
  const accept = options.accept ?? (() => true)
  function* folder(current: string, relative: string, self: Entry | undefined, parent: S): Generator<Entry> {
    let listing: ReturnType<typeof list>
    try {
      if (follow) {
        const real = call("realPath", current, () => fs.realpathSync(current))
        if (!Path.isWithin(realRoot, real)) return options.onOutside?.({ entry: current, real, root: realRoot })
        if (visited.has(real)) return
        visited.add(real)
      }
      listing = list(current, follow)
    } catch (error) {
      if (self !== undefined && options.lenient === true && error instanceof SystemError) return
      throw error
    }
    const state = options.enter === undefined ? parent : options.enter(self, listing, parent)
    if (options.compare !== undefined) {
      const compare = options.compare
      listing.sort((a, b) => compare(a.name, b.name))
    }
    for (const item of listing) {
      if (item.kind === "other" || (item.kind === "directory" && options.recursive === false)) continue
      const entry: Entry = {
        path: path.join(current, item.name),
        relative: relative === "" ? item.name : `${relative}/${item.name}`,
        name: item.name,
        directory: item.kind === "directory",
      }
      if (!accept(entry, state)) continue
      if (follow) {
        const real = optional(() => fs.realpathSync(entry.path))
        if (real === undefined) continue
        if (!Path.isWithin(realRoot, real)) {
          options.onOutside?.({ entry: entry.path, real, root: realRoot })
          continue
        }
      }
      if (entry.directory) yield* folder(entry.path, entry.relative, entry, state)
      else yield entry
    }
  }
  yield* folder(directory, "", undefined, options.initial as S)
}

/**
 * The regular files below `directory` (as reached from it, sorted) whose real paths lie inside the root, with
 * `onOutside` called for each entry skipped for leaving it: `traverse`, collected. A failure is thrown as a
 * `SystemError` (a `PlatformError`) naming the `FileSystem` method and the path.
 *
 * @since 0.3.0
 * @category walking
 */
export const walkSync = (directory: string, options: SyncOptions = {}): ReadonlyArray<string> => {
  const include = options.include
  const found: Array<string> = []
  part(options.lenient === true, () => {
    for (const entry of traverse(directory, {
      root: options.root,
      recursive: options.recursive,
      lenient: options.lenient,
      onOutside: options.onOutside,
      ...(include === undefined ? {} : { accept: (entry: Entry) => entry.directory || include(entry.name) }),
    }))
      found.push(entry.path)
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
