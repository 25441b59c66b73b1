/**
 * Discovery: which directories are read (the user's configuration directory, then the project root down to the
 * Location), which files in them, and how each is confined — a file or folder that resolves outside its directory,
 * or to an unprotected real file, is skipped with a warning. `Config` names everything exported here.
 *
 * @since 0.3.0
 */
import * as path from "node:path"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Global from "../../system/global.js"
import * as Path from "../../values/path.js"
import * as Location from "../location.js"
import * as ProtectedPath from "../protected-path.js"
import { agentFiles } from "./config-agent-files.js"
import { type Entry, InvalidError, parseDocument, Service } from "./config-document.js"

/**
 * The document file names, in priority order within one directory.
 *
 * @since 0.1.0
 * @category constants
 */
export const FILE_NAMES = ProtectedPath.CONFIG_FILES
/**
 * The per-directory configuration folder.
 *
 * @since 0.1.0
 * @category constants
 */
export const DIRECTORY_NAME = ".toolgate"
/**
 * The directories discovery reads, farthest first: from the project root (the git worktree root) down to the
 * Location. Outside git — or when the Location is not below its project's directory — only the Location itself:
 * nothing above the project can add rules (see docs/trust/protected-paths.md).
 *
 * @since 0.2.0
 * @category utilities
 */
export const projectChain = (location: Location.Interface): ReadonlyArray<string> => {
  const here = path.resolve(location.directory)
  if (location.vcs === undefined) return [here]
  const top = path.resolve(location.project.directory)
  if (here === top || !Path.isWithin(top, here)) return [here]
  const relative = path.relative(top, here)
  const out = [top]
  let current = top
  for (const part of relative.split(path.sep)) {
    current = path.join(current, part)
    out.push(current)
  }
  return out
}

/**
 * Where a discovered path really is: `inside` with its real path when it resolves within the real path of `root`,
 * `outside` (with the real path it resolves to) when a symlink on its way leads elsewhere, `missing` when it does not
 * resolve at all.
 *
 * @since 0.2.0
 * @category models
 */
export type Confinement =
  | { readonly _tag: "inside"; readonly real: string }
  | { readonly _tag: "outside"; readonly real: string }
  | { readonly _tag: "missing" }

/**
 * Resolves `target` and checks it against `root`, the same confinement `read` applies: a configuration file, agent
 * file or skill that resolves through a symlink outside its root is not used.
 *
 * @since 0.2.0
 * @category utilities
 */
export const confine = (target: string, root: string): Effect.Effect<Confinement, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const realRoot = yield* fs.realPath(root).pipe(Effect.orElseSucceed(() => path.resolve(root)))
    const real = yield* Effect.option(fs.realPath(target))
    if (real._tag === "None") return { _tag: "missing" } as const
    return Path.isWithin(realRoot, real.value)
      ? ({ _tag: "inside", real: real.value } as const)
      : ({ _tag: "outside", real: real.value } as const)
  })

/**
 * Logs that `target` was skipped because it resolves to `real`, outside `root` (or to an unprotected file). Nothing
 * of the skipped file reaches the model; the warning names it for the user.
 *
 * @since 0.2.0
 * @category utilities
 */
export const warnSkipped = (target: string, real: string, root: string): Effect.Effect<void> =>
  Effect.logWarning(`Skipped ${target}: it resolves to ${real}, outside ${root}`).pipe(
    Effect.annotateLogs({ skipped: target, resolved: real, root }),
  )

/** How discovery treats a file that cannot be read, parsed or decoded. */
type Mode = "strict" | "lenient"

const discover = (mode: Mode) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const global = yield* Global.Service
    const location = yield* Location.Service
    const protectedRoots = ProtectedPath.roots(location, global)
    const globalDirectory = path.resolve(global.config)

    const realOrResolved = (target: string) =>
      fs.realPath(target).pipe(Effect.orElseSucceed(() => path.resolve(target)))
    const isType = (target: string, type: "File" | "Directory") =>
      fs.stat(target).pipe(
        Effect.map((info) => info.type === type),
        Effect.orElseSucceed(() => false),
      )

    // One file may be reachable twice (the walk crossing the global directory); it is read once, first wins.
    const seen = new Set<string>()
    const entries: Array<Entry> = []

    /**
     * A document is used only when it resolves inside `root` and its real file is itself protected, so the model
     * cannot change the rules by writing an unprotected file a `toolgate.json` symlink points at.
     */
    const readDocument = (file: string, root: string) =>
      Effect.gen(function* () {
        if (!(yield* isType(file, "File"))) return
        const where = yield* confine(file, root)
        if (where._tag === "missing") return
        if (where._tag === "outside" || ProtectedPath.classify(where.real, protectedRoots) === undefined) {
          return yield* warnSkipped(file, where.real, root)
        }
        if (seen.has(where.real)) return
        seen.add(where.real)
        const text = yield* fs.readFileString(where.real).pipe(
          Effect.mapError(
            (cause) => new InvalidError({ path: file, message: `Unable to read ${file}: ${cause.message}` }),
          ),
          Effect.either,
        )
        const parsed = Either.flatMap(text, (content) =>
          Either.flatMap(parseDocument(file, content), (document) =>
            document.info.database === undefined || root === globalDirectory
              ? Either.right(document)
              : Either.left(
                  new InvalidError({
                    path: file,
                    message: `Invalid config in ${file} at database: the database is chosen per process, by $TOOLGATE_DATABASE_URL or the database section of ${path.join(globalDirectory, FILE_NAMES[0]!)}, never by a project's configuration`,
                  }),
                ),
          ),
        )
        if (Either.isRight(parsed)) entries.push(parsed.right)
        else if (mode === "strict") return yield* parsed.left
      })

    const addDirectory = (directory: string, root: string) =>
      Effect.gen(function* () {
        const where = yield* confine(directory, root)
        if (where._tag === "outside") return yield* warnSkipped(directory, where.real, root)
        // A missing directory is still listed (it contributes nothing); its resolved path keeps it unique.
        const key = where._tag === "inside" ? where.real : path.resolve(directory)
        if (seen.has(key)) return
        seen.add(key)
        if (mode === "strict" && where._tag === "inside") {
          const invalid = agentFiles(directory).invalid[0]
          if (invalid !== undefined) return yield* invalid
        }
        entries.push({ type: "directory", path: directory })
      })

    for (const name of FILE_NAMES) yield* readDocument(path.join(globalDirectory, name), globalDirectory)
    yield* addDirectory(globalDirectory, globalDirectory)

    const here = yield* realOrResolved(location.directory)
    if (here === (yield* realOrResolved(globalDirectory))) return entries as ReadonlyArray<Entry>

    const walk = projectChain(location)
    for (const directory of walk) {
      for (const name of FILE_NAMES) yield* readDocument(path.join(directory, name), directory)
    }
    for (const directory of walk) {
      const folder = path.join(directory, DIRECTORY_NAME)
      if (!(yield* isType(folder, "Directory"))) continue
      // The folder's real place must itself be protected, or the model could edit the agents it holds.
      const where = yield* confine(folder, directory)
      if (where._tag === "missing") continue
      if (where._tag === "outside" || ProtectedPath.classify(where.real, protectedRoots) === undefined) {
        yield* warnSkipped(folder, where.real, directory)
        continue
      }
      for (const name of FILE_NAMES) yield* readDocument(path.join(folder, name), folder)
      yield* addDirectory(folder, directory)
    }
    return entries as ReadonlyArray<Entry>
  })

/**
 * The Location-scoped configuration discovered on disk, read once when the layer is built: the user's configuration
 * directory, then `toolgate.json(c)` files farthest-first, then `.toolgate/` directories farthest-first, from the
 * project root down to the Location (never above it). A file that does not parse or decode, or has an unknown
 * top-level key, fails the layer with `InvalidError` naming the file and the field; a file or folder that resolves
 * outside its directory through a symlink is skipped with a warning.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service, InvalidError, FileSystem.FileSystem | Global.Service | Location.Service> =
  Layer.effect(
    Service,
    Effect.map(discover("strict"), (entries) => Service.of({ entries: () => Effect.succeed(entries) })),
  )

/**
 * Like `layer`, but unreadable, unparsable or undecodable files are skipped silently, as the reference does.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLenient: Layer.Layer<Service, never, FileSystem.FileSystem | Global.Service | Location.Service> =
  Layer.effect(
    Service,
    Effect.map(Effect.orDie(discover("lenient")), (entries) => Service.of({ entries: () => Effect.succeed(entries) })),
  )
