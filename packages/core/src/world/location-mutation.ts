/**
 * Path resolution against the Location for every tool that reads or writes files. Relative paths may not escape
 * the Location (never promoted to external authority); symlink escapes are refused for existing and prospective
 * targets; external absolute targets carry an `external_directory` authorization the caller must assert first.
 * `resolve` never asks for permission itself. A path the OS cannot represent faithfully (a NUL byte, an unpaired
 * UTF-16 surrogate, a name or path longer than the OS allows) is a typed `invalid_path` error, never a defect.
 * `recheck` resolves again after an ask and refuses a target that moved (see docs/trust/check-at-use.md).
 *
 * @since 0.1.0
 */
import * as nodeFs from "node:fs"
import * as path from "node:path"
import * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Location from "../place/location.js"
import * as Path from "../values/path.js"
import * as Wildcard from "../values/wildcard.js"
import { PathChangedError } from "./verified-file.js"

export {
  /**
   * The path (or one of its directories) changed between approval and the I/O; nothing was read or written.
   *
   * @since 0.1.0
   */
  PathChangedError,
} from "./verified-file.js"

/**
 * What to resolve. Unknown fields (such as `reference`) are dropped on decode.
 *
 * @since 0.1.0
 * @category models
 */
export const ResolveInput = Schema.Struct({
  path: Schema.String,
  kind: Schema.optional(Schema.Literal("file", "directory")),
})
/**
 * @see ResolveInput
 *
 * @since 0.1.0
 * @category models
 */
export type ResolveInput = typeof ResolveInput.Type

const REASONS = {
  relative_escape: "a relative path may not leave the current location",
  location_escape: "the path leads outside the current location through a symbolic link",
  non_directory_ancestor: "a parent of the path is not a directory",
  invalid_path: "the path cannot be used as a file name",
} as const

/**
 * The path cannot be used. `invalid_path` (our addition) covers paths the OS cannot represent faithfully: a NUL
 * byte, an unpaired UTF-16 surrogate (it would reach the disk as U+FFFD, another name than the one checked), a
 * name longer than `MAX_NAME_BYTES` or a path longer than `MAX_PATH_BYTES`; `detail` says which.
 *
 * @since 0.1.0
 * @category errors
 */
export class PathError extends Schema.TaggedError<PathError>()("LocationMutation.PathError", {
  path: Schema.String,
  reason: Schema.Literal("relative_escape", "location_escape", "non_directory_ancestor", "invalid_path"),
  detail: Schema.optional(Schema.String),
}) {
  override get message(): string {
    return this.detail ?? REASONS[this.reason]
  }
}

/**
 * Longest file name accepted, in UTF-8 bytes (the common NAME_MAX).
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_NAME_BYTES = 255
/**
 * Longest path accepted, in UTF-8 bytes (below the common PATH_MAX of 4096).
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_PATH_BYTES = 4095

/**
 * Why `value` cannot be a path, or undefined when it can: a NUL byte, an unpaired surrogate, or a name or path too
 * long for the OS.
 *
 * @since 0.2.0
 * @category utilities
 * @internal
 */
export const invalidPath = (value: string): string | undefined => {
  if (value.includes("\0")) return "the path contains a NUL byte"
  if (Path.hasLoneSurrogate(value)) return "the path contains an unpaired UTF-16 surrogate"
  if (Buffer.byteLength(value, "utf8") > MAX_PATH_BYTES) return `the path is longer than ${MAX_PATH_BYTES} bytes`
  for (const name of value.split(/[\\/]/)) {
    if (Buffer.byteLength(name, "utf8") > MAX_NAME_BYTES)
      return `a name in the path is longer than ${MAX_NAME_BYTES} bytes`
  }
  return undefined
}

/**
 * The external-directory authority a caller must assert before its own action.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExternalDirectoryAuthorization {
  readonly action: "external_directory"
  readonly directory: string
  readonly resource: string
  readonly save: string
}

/**
 * A resolved target: the canonical path, the permission resource, and external authority when needed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Target {
  readonly canonical: string
  readonly resource: string
  readonly externalDirectory?: ExternalDirectoryAuthorization
}

/**
 * The fields to spread into `PermissionV2.assert` for an external directory.
 *
 * @since 0.1.0
 * @category utilities
 */
export const externalDirectoryPermission = (auth: ExternalDirectoryAuthorization) => ({
  action: auth.action,
  resources: [auth.resource],
  save: [auth.save],
})

/**
 * The LocationMutation operations.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /** The realpath of the Location directory. */
  readonly root: string
  readonly resolve: (input: ResolveInput) => Effect.Effect<Target, PathError | PlatformError>
  /**
   * Resolves `input` again (after an ask was answered) and fails with `PathChangedError` unless it still gives
   * `target`: same canonical path, same resource, same external authority. Untraced: it runs on every call.
   *
   * @since 0.2.0
   */
  readonly recheck: (input: ResolveInput, target: Target) => Effect.Effect<void, PathChangedError | PlatformError>
  /** True iff `canonical` is the Location root or below it. */
  readonly contains: (canonical: string) => boolean
}

/**
 * The LocationMutation service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/LocationMutation")<Service, Interface>() {}

const slashes = (value: string): string => value.replaceAll("\\", "/")

/**
 * True iff `child` is `parent` or lexically below it: `Path.isWithin`, kept under this name for existing callers.
 *
 * @since 0.1.0
 * @category guards
 */
export const isWithin: (parent: string, child: string) => boolean = Path.isWithin

const boundaryResource = (directory: string): string => {
  const normalized = slashes(directory)
  return normalized.endsWith("/") ? `${normalized}*` : `${normalized}/*`
}

/** The saved pattern for a boundary: the directory taken literally (a `*` in its name is no wildcard), then `*`. */
const boundarySave = (directory: string): string => {
  const normalized = slashes(directory)
  return Wildcard.literal(normalized.endsWith("/") ? normalized : `${normalized}/`) + "*"
}

const isMissing = (error: PlatformError | PathError): boolean => {
  if (error._tag === "LocationMutation.PathError") return false
  if (error._tag === "SystemError" && error.reason === "NotFound") return true
  const code = (error as { readonly cause?: { readonly code?: unknown } }).cause?.code
  return code === "ENOTDIR" || code === "ENOENT"
}

/**
 * Builds the service for the current Location.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Interface, never, Location.Service | FileSystem.FileSystem> = Effect.gen(function* () {
  const location = yield* Location.Service
  const fs = yield* FileSystem.FileSystem
  const root = yield* Effect.orDie(fs.realPath(location.directory))
  const contains = (canonical: string) => Path.isWithin(root, canonical)

  /** The realpath of `absolute`, or of its nearest existing ancestor joined with the missing tail. */
  const physical = (absolute: string) =>
    fs.realPath(absolute).pipe(
      Effect.flatMap((canonical) =>
        Effect.map(fs.stat(canonical), (info) => ({
          canonical,
          isDirectory: info.type === "Directory",
          directory: info.type === "Directory" ? canonical : path.dirname(canonical),
        })),
      ),
      Effect.catchIf(isMissing, () => ancestor(absolute, path.dirname(absolute))),
    )

  const ancestor = (
    absolute: string,
    current: string,
  ): Effect.Effect<{ canonical: string; isDirectory: boolean; directory: string }, PathError | PlatformError> =>
    fs.realPath(current).pipe(
      Effect.flatMap((real) =>
        Effect.flatMap(fs.stat(real), (info) =>
          info.type === "Directory"
            ? Effect.succeed({
                canonical: path.join(real, path.relative(current, absolute)),
                isDirectory: false,
                directory: real,
              })
            : Effect.fail(new PathError({ path: absolute, reason: "non_directory_ancestor" })),
        ),
      ),
      Effect.catchIf(isMissing, () =>
        path.dirname(current) === current
          ? Effect.fail(new PathError({ path: absolute, reason: "non_directory_ancestor" }))
          : ancestor(absolute, path.dirname(current)),
      ),
    )

  const resolveNow = Effect.fnUntraced(function* (input: ResolveInput) {
    const invalid = invalidPath(input.path)
    if (invalid !== undefined)
      return yield* new PathError({ path: input.path, reason: "invalid_path", detail: invalid })
    const relative = !path.isAbsolute(input.path)
    const absolute = path.resolve(location.directory, input.path)
    const lexicallyInternal = Path.isWithin(location.directory, absolute)
    if (relative && !lexicallyInternal) return yield* new PathError({ path: input.path, reason: "relative_escape" })
    const resolved = yield* physical(absolute)
    if (lexicallyInternal && !contains(resolved.canonical)) {
      return yield* new PathError({ path: input.path, reason: "location_escape" })
    }
    if (lexicallyInternal) {
      const inside = slashes(path.relative(root, resolved.canonical))
      return { canonical: resolved.canonical, resource: inside === "" ? "." : inside } satisfies Target
    }
    const boundary = input.kind === "directory" && resolved.isDirectory ? resolved.canonical : resolved.directory
    const resource = boundaryResource(boundary)
    return {
      canonical: resolved.canonical,
      resource: slashes(resolved.canonical),
      externalDirectory: { action: "external_directory", directory: boundary, resource, save: boundarySave(boundary) },
    } satisfies Target
  })

  const resolve = Effect.fn("LocationMutation.resolve")(resolveNow)

  const recheck = (input: ResolveInput, target: Target) =>
    Effect.suspend(() => {
      // Fast path for an existing target inside the Location: its resource depends on its canonical path alone, and
      // one realpath call (no disk I/O once cached) tells whether the path still leads there.
      if (
        target.externalDirectory === undefined &&
        !path.isAbsolute(input.path) &&
        invalidPath(input.path) === undefined
      ) {
        try {
          if (nodeFs.realpathSync.native(path.resolve(location.directory, input.path)) === target.canonical) {
            return Effect.void
          }
        } catch {
          // Missing or unreadable now: the full resolution below decides.
        }
      }
      return fullRecheck(input, target)
    })

  const fullRecheck = (input: ResolveInput, target: Target) =>
    resolveNow(input).pipe(
      // A path that resolved before and is refused now (say, it leads outside through a new link) has changed.
      Effect.catchTag("LocationMutation.PathError", () => Effect.fail(new PathChangedError({ path: input.path }))),
      Effect.flatMap((again) =>
        again.canonical === target.canonical &&
        again.resource === target.resource &&
        again.externalDirectory?.resource === target.externalDirectory?.resource
          ? Effect.void
          : Effect.fail(new PathChangedError({ path: input.path })),
      ),
    )

  return Service.of({ root, resolve, recheck, contains })
})

/**
 * The Location-scoped layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, Location.Service | FileSystem.FileSystem> = Layer.effect(Service, make)
