/**
 * What `glob` and `grep` may touch and hand back (see docs/trust/search.md). The search root is resolved like any
 * other path the model names: a relative path stays inside the Location, an absolute path outside it needs
 * `external_directory`, and a symlink may not carry an inside path outside. grep content is then held to the
 * agent's `read` rules file by file: a denied file's matches are dropped, and files whose read would ask are
 * returned only after one ask for all of them is approved.
 *
 * @since 0.2.0
 */
import * as fs from "node:fs"
import * as nodePath from "node:path"
import type { PlatformError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as LocationMutation from "../location-mutation.js"
import * as PermissionV2 from "../../permission/permission.js"
import * as Path from "../../values/path.js"
import type * as SessionV2 from "../../place/session.js"
import { invalidInput, type InvalidInputError, type Match } from "./schema.js"

/**
 * Files whose grep matches were left out of a result, and why: `denied` — the `read` rules deny reading them;
 * `changed` — the file no longer was what the search read (replaced, moved or turned into a symlink meanwhile);
 * `special` — the path named a FIFO, socket or device, which grep does not open (reading one may never end).
 *
 * @since 0.2.0
 * @category models
 */
export const Withheld = Schema.Struct({
  files: Schema.Int.pipe(Schema.positive()),
  reason: Schema.Literal("denied", "changed", "special"),
})
/**
 * @see Withheld
 *
 * @since 0.2.0
 * @category models
 */
export type Withheld = typeof Withheld.Type

/**
 * The caller fields of a permission request (`PermissionV2.fromToolCall`).
 *
 * @since 0.2.0
 * @category models
 */
export type Caller = ReturnType<typeof PermissionV2.fromToolCall>

/**
 * The failures of `confineRoot`.
 *
 * @since 0.2.0
 * @category errors
 */
export type RootError =
  | InvalidInputError
  | LocationMutation.PathError
  | PlatformError
  | LocationMutation.PathChangedError
  | PermissionV2.Error
  | SessionV2.NotFoundError

/**
 * Resolves the directory (or file) a search runs in. Order: check the text → resolve → assert
 * `external_directory` when the target is outside → `authorize` (the tool's own permission) → `recheck` (resolve
 * again; `LocationMutation.PathChangedError` when it no longer gives the same place, resource and authority).
 *
 * @since 0.2.0
 * @category utilities
 */
export const confineRoot = <E>(options: {
  readonly mutation: LocationMutation.Interface
  readonly permission: PermissionV2.Interface
  readonly caller: Caller
  readonly path: string
  readonly authorize: Effect.Effect<void, E>
}): Effect.Effect<LocationMutation.Target, RootError | E> =>
  Effect.gen(function* () {
    const invalid = invalidInput("path", options.path)
    if (invalid !== undefined) return yield* invalid
    const target = yield* options.mutation.resolve({ path: options.path, kind: "directory" })
    if (target.externalDirectory !== undefined) {
      yield* options.permission.assert({
        ...LocationMutation.externalDirectoryPermission(target.externalDirectory),
        ...options.caller,
      })
    }
    yield* options.authorize
    yield* options.mutation.recheck({ path: options.path, kind: "directory" }, target)
    return target
  })

const ROOT_FAILURES: ReadonlySet<string> = new Set([
  "Search.InvalidInputError",
  "FileMutation.PathChangedError",
  "LocationMutation.PathError",
  "SystemError",
  "BadArgument",
])

/**
 * True for the failures of `confineRoot` that concern the path itself (not a permission or session failure): the
 * ones `rootFailureMessage` explains.
 *
 * @since 0.2.0
 * @category guards
 */
export const isRootFailure = (
  error: unknown,
): error is InvalidInputError | LocationMutation.PathChangedError | LocationMutation.PathError | PlatformError =>
  typeof error === "object" && error !== null && ROOT_FAILURES.has((error as { readonly _tag?: string })._tag ?? "")

const visible = (value: string): string =>
  // Control characters and lone surrogates are shown escaped so the model sees what it sent.
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f]|[\uD800-\uDFFF]/.test(value) ? JSON.stringify(value).slice(1, -1) : value

/**
 * The model-visible message for a failure of `confineRoot` other than a permission error: `Unable to search <path>`,
 * then why.
 *
 * @since 0.2.0
 * @category utilities
 */
export const rootFailureMessage = (path: string, error: { readonly _tag: string }): string => {
  const head = `Unable to search ${visible(path)}`
  switch (error._tag) {
    case "Search.InvalidInputError":
      return `${head}: ${(error as InvalidInputError).message.replace(/^The path /, "the path ")}`
    case "FileMutation.PathChangedError":
      return `${head}: it resolved to another place after permission was asked`
    case "LocationMutation.PathError":
      switch ((error as LocationMutation.PathError).reason) {
        case "relative_escape":
          return `${head}: a relative path must stay inside the Location (an absolute path outside it needs approval)`
        case "location_escape":
          return `${head}: it leads outside the Location through a symbolic link`
        case "non_directory_ancestor":
          return `${head}: a parent of it is not a directory`
        case "invalid_path":
          return `${head}: it is not a valid path`
      }
      return head
    default:
      return head
  }
}

/**
 * The `read` resource of an absolute file path: relative to the Location root inside it, else absolute.
 *
 * @since 0.2.0
 * @category utilities
 */
export const readResource = (root: string, absolute: string): string => {
  const inside = Path.isWithin(root, absolute)
  return (inside ? nodePath.relative(root, absolute) : absolute).replaceAll("\\", "/")
}

const realPath = (file: string): string | undefined => {
  try {
    return fs.realpathSync.native(file)
  } catch {
    return undefined
  }
}

/**
 * True iff `absolute` is, by its real path, itself: its directory resolves to itself (checked once per directory
 * through `directories`) and the file is a regular file, not a symlink. Cheaper than a real path per file.
 */
const isItself = (absolute: string, directories: Map<string, boolean>): boolean => {
  const directory = nodePath.dirname(absolute)
  let same = directories.get(directory)
  if (same === undefined) {
    same = realPath(directory) === directory
    directories.set(directory, same)
  }
  if (!same) return false
  try {
    return fs.lstatSync(absolute).isFile()
  } catch {
    return false
  }
}

/**
 * What `readable` returns: the matches that may be shown, and the files left out.
 *
 * @since 0.2.0
 * @category models
 */
export interface Readable {
  readonly matches: ReadonlyArray<Match>
  readonly withheld: ReadonlyArray<Withheld>
}

const enum Verdict {
  Show,
  Denied,
  Changed,
}

/**
 * Holds grep matches to the `read` rules. `cwd` is the canonical directory the engine searched (match paths are
 * relative to it) and `root` the Location's real path. Each matched file must still be, by its real path, the file
 * the search named (a file swapped for a symlink in the meantime is withheld as `changed`); its `read` resource is
 * then evaluated without asking. Denied files are withheld; files that would ask are shown only after one `read`
 * ask listing them all (saved as read saves) is approved. A rejection fails or stops the call as any ask does.
 *
 * @since 0.2.0
 * @category utilities
 */
export const readable = (input: {
  readonly permission: PermissionV2.Interface
  readonly caller: Caller
  readonly root: string
  readonly cwd: string
  readonly matches: ReadonlyArray<Match>
  /** Shown with the ask (for example the tool and its pattern), so the user knows which call wants to read. */
  readonly metadata?: Record<string, unknown> | undefined
}): Effect.Effect<Readable, PermissionV2.Error | SessionV2.NotFoundError> =>
  Effect.gen(function* () {
    if (input.matches.length === 0) return { matches: input.matches, withheld: [] }
    const verdicts = new Map<string, Verdict>()
    const directories = new Map<string, boolean>()
    const checked: Array<string> = []
    const resources: Array<string> = []
    for (const match of input.matches) {
      const path = match.entry.path
      if (verdicts.has(path)) continue
      const absolute = nodePath.join(input.cwd, path)
      if (!isItself(absolute, directories)) {
        verdicts.set(path, Verdict.Changed)
        continue
      }
      verdicts.set(path, Verdict.Show)
      checked.push(path)
      resources.push(readResource(input.root, absolute))
    }
    const effects = yield* input.permission.check({
      sessionID: input.caller.sessionID,
      agent: input.caller.agent,
      action: "read",
      resources,
    })
    const asking: Array<string> = []
    effects.forEach((effect, i) => {
      if (effect === "deny") verdicts.set(checked[i]!, Verdict.Denied)
      else if (effect === "ask") asking.push(resources[i]!)
    })
    if (asking.length > 0) {
      yield* input.permission.assert({
        ...input.caller,
        action: "read",
        resources: asking,
        save: ["*"],
        ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
      })
    }
    let denied = 0
    let changed = 0
    for (const verdict of verdicts.values()) {
      if (verdict === Verdict.Denied) denied++
      else if (verdict === Verdict.Changed) changed++
    }
    const withheld: Array<Withheld> = []
    if (denied > 0) withheld.push({ files: denied, reason: "denied" })
    if (changed > 0) withheld.push({ files: changed, reason: "changed" })
    if (withheld.length === 0) return { matches: input.matches, withheld }
    return {
      matches: input.matches.filter((match) => verdicts.get(match.entry.path) === Verdict.Show),
      withheld,
    }
  })

/**
 * The sentence the model reads about withheld files, or `undefined` when none were.
 *
 * @since 0.2.0
 * @category utilities
 */
export const withheldText = (withheld: ReadonlyArray<Withheld>): string | undefined => {
  if (withheld.length === 0) return undefined
  const parts = withheld.map(({ files, reason }) => {
    const count = files === 1 ? "1 file" : `${files} files`
    return reason === "denied"
      ? `${count} withheld because the read permission rules deny reading ${files === 1 ? "it" : "them"}`
      : reason === "special"
        ? `${count} skipped because ${files === 1 ? "it is" : "they are"} not a regular file (a FIFO, socket or device)`
        : `${count} withheld because ${files === 1 ? "it" : "they"} changed or moved during the search`
  })
  return `(Matches in ${parts.join("; matches in ")}.)`
}
