/**
 * The confined directory walk: the files below a directory whose real paths stay inside a root, confined like
 * `read`. An entry (file or folder) whose real path leaves the root through a symlink is skipped and handed to
 * `onOutside`, so neither its content nor its name is returned; a folder reached twice (a symlink loop) is walked
 * once. Entries that vanish or cannot be stat'ed are skipped; a folder that cannot be listed fails the walk unless
 * `lenient`. Skills and markdown agent files are found this way.
 *
 * @since 0.3.0
 */
import * as path from "node:path"
import type { PlatformError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Path from "../values/path.js"

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
  /** A folder that cannot be listed is skipped instead of failing the walk. */
  readonly lenient?: boolean
  /** Sees each entry skipped for leaving the root. */
  readonly onOutside?: (outside: Outside) => Effect.Effect<void>
}

/**
 * The regular files below `directory` (as reached from it, sorted) whose real paths lie inside the root.
 *
 * @since 0.3.0
 * @category walking
 */
export const walk = (
  directory: string,
  options: Options = {},
): Effect.Effect<ReadonlyArray<string>, PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const root = options.root === undefined ? yield* fs.realPath(directory) : yield* fs.realPath(options.root)
    const include = options.include ?? (() => true)
    const onOutside = options.onOutside ?? (() => Effect.void)
    const found: Array<string> = []
    const visited = new Set<string>()
    const visit = (current: string): Effect.Effect<void, PlatformError> =>
      Effect.gen(function* () {
        const real = yield* fs.realPath(current)
        if (!Path.isWithin(root, real)) return yield* onOutside({ entry: current, real, root })
        if (visited.has(real)) return
        visited.add(real)
        const names = yield* fs.readDirectory(current)
        for (const name of names) {
          const entry = path.join(current, name)
          const info = yield* Effect.option(fs.stat(entry))
          if (Option.isNone(info)) continue
          const isDirectory = info.value.type === "Directory"
          if (isDirectory ? options.recursive === false : info.value.type !== "File" || !include(name)) continue
          const where = yield* Effect.option(fs.realPath(entry))
          if (Option.isNone(where)) continue
          if (!Path.isWithin(root, where.value)) {
            yield* onOutside({ entry, real: where.value, root })
            continue
          }
          if (isDirectory) yield* options.lenient === true ? Effect.ignore(visit(entry)) : visit(entry)
          else found.push(entry)
        }
      })
    yield* options.lenient === true ? Effect.ignore(visit(directory)) : visit(directory)
    return found.sort()
  })
