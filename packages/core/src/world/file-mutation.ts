/**
 * Safe file mutation shared by write, edit and apply_patch. Every operation runs under a per-canonical-path,
 * process-local lock and is uninterruptible once started. Beyond the reference, it checks at use, not only before
 * (see docs/trust/check-at-use.md):
 *
 * - the target's directory is opened and its descriptor verified to be the resolved directory, and the file is
 *   opened inside that descriptor without following a final symlink, so a symlink swapped in after approval fails
 *   the mutation with `PathChangedError` before anything is written;
 * - missing parent directories are created one by one inside verified parents;
 * - a file with more than one hard link is never written in place: the new bytes go to a fresh file beside it
 *   (same permission bits) that is renamed over the name, so the other links keep their bytes.
 *
 * Each check at use guards the step after it on the same descriptors, so the steps live together here; the lock is
 * in `internal/path-lock.ts`.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { randomBytes } from "node:crypto"
import type { PlatformError } from "@effect/platform/Error"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as LocationMutation from "./location-mutation.js"
import { withLock } from "./internal/path-lock.js"
import * as VerifiedFile from "./verified-file.js"

export {
  /**
   * The path (or one of its directories) changed between approval and the I/O; nothing was read or written.
   *
   * @since 0.1.0
   */
  PathChangedError,
} from "./verified-file.js"
type PathChangedError = VerifiedFile.PathChangedError

/**
 * `create` found the target already present.
 *
 * @since 0.1.0
 * @category errors
 */
export class TargetExistsError extends Schema.TaggedError<TargetExistsError>()("FileMutation.TargetExistsError", {
  path: Schema.String,
}) {}

/**
 * `writeIfUnchanged` found different bytes than expected.
 *
 * @since 0.1.0
 * @category errors
 */
export class StaleContentError extends Schema.TaggedError<StaleContentError>()("FileMutation.StaleContentError", {
  path: Schema.String,
}) {}

/**
 * The result of a write-like operation.
 *
 * @since 0.1.0
 * @category models
 */
export interface WriteResult {
  readonly operation: "write"
  readonly target: string
  readonly resource: string
  readonly existed: boolean
}

/**
 * The result of `remove`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RemoveResult {
  readonly operation: "remove"
  readonly target: string
  readonly resource: string
  readonly existed: boolean
}

type Target = Pick<LocationMutation.Target, "canonical" | "resource">

/**
 * The FileMutation operations.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  readonly write: (input: {
    readonly target: Target
    readonly content: string | Uint8Array
  }) => Effect.Effect<WriteResult, PlatformError | PathChangedError>
  /** Writes text with exactly one UTF-8 BOM if the old file or the new text had one. */
  readonly writeTextPreservingBom: (input: {
    readonly target: Target
    readonly content: string
  }) => Effect.Effect<WriteResult, PlatformError | PathChangedError>
  /** Exclusive create; creates parent directories. */
  readonly create: (input: {
    readonly target: Target
    readonly content: string | Uint8Array
  }) => Effect.Effect<WriteResult, TargetExistsError | PlatformError | PathChangedError>
  /** Compare-and-swap: writes only if the current bytes equal `expected`. */
  readonly writeIfUnchanged: (input: {
    readonly target: Target
    readonly expected: Uint8Array
    readonly content: string | Uint8Array
  }) => Effect.Effect<WriteResult, StaleContentError | PlatformError | PathChangedError>
  readonly remove: (input: { readonly target: Target }) => Effect.Effect<RemoveResult, PlatformError | PathChangedError>
  /**
   * Reads the target's bytes through a verified descriptor (never a final symlink, never a file that moved out
   * of its resolved place). Leaves that read before they mutate use it so a swapped path cannot feed them outside
   * bytes.
   *
   * @since 0.2.0
   */
  readonly read: (input: { readonly target: Target }) => Effect.Effect<Uint8Array, PlatformError | PathChangedError>
}

/**
 * The FileMutation service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/FileMutation")<Service, Interface>() {}

/**
 * The descriptor-level operations FileMutation runs on (by default the node:fs implementation). Tests substitute
 * single operations to observe or pace them.
 *
 * @since 0.2.0
 * @category models
 * @internal
 */
export type Io = typeof VerifiedFile

/**
 * The default descriptor-level operations.
 *
 * @since 0.2.0
 * @category utilities
 * @internal
 */
export const io: Io = VerifiedFile

const BOM = new Uint8Array([0xef, 0xbb, 0xbf])
const encoder = new TextEncoder()

/**
 * True iff `bytes` start with a UTF-8 BOM.
 *
 * @since 0.1.0
 * @category guards
 */
export const hasBom = (bytes: Uint8Array): boolean => bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf

const bytesOf = (content: string | Uint8Array): Uint8Array =>
  typeof content === "string" ? encoder.encode(content) : content

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.compare(a, b) === 0

type Existing = { readonly handle: VerifiedFile.Handle; readonly links: number; readonly mode: number }

/**
 * Builds the service on `operations` (the node:fs implementation by default).
 *
 * @since 0.1.0
 * @category constructors
 * @internal
 */
export const makeWith = (operations: Io): Effect.Effect<Interface> =>
  Effect.sync(() => {
    const { flags } = operations

    /** Every PathChangedError names the target, whichever directory on its way moved. */
    const changed =
      (canonical: string) =>
      <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
        Effect.mapError(effect, (error) =>
          error instanceof VerifiedFile.PathChangedError && error.path !== canonical
            ? (new VerifiedFile.PathChangedError({ path: canonical }) as E)
            : error,
        )

    /**
     * Runs `use` with the target's directory open and verified (`create`: missing directories are made first).
     * `missing` is what to do when the directory does not exist and `create` is false.
     */
    const inDirectory = <A, E>(
      canonical: string,
      create: boolean,
      use: (directory: VerifiedFile.Directory, name: string) => Effect.Effect<A, E>,
      missing?: () => Effect.Effect<A, E>,
    ): Effect.Effect<A, E | PlatformError | PathChangedError> => {
      const parent = path.dirname(canonical)
      const open = create ? operations.ensureDirectory(parent) : operations.openDirectory(parent)
      const opened = open.pipe(
        Effect.map((directory): VerifiedFile.Directory | undefined => directory),
        Effect.catchIf(
          (error) => missing !== undefined && operations.isNotFound(error),
          () => Effect.succeed(undefined),
        ),
      )
      return Effect.acquireUseRelease(
        opened,
        (directory) => (directory === undefined ? missing!() : use(directory, path.basename(canonical))),
        (directory) => (directory === undefined ? Effect.void : operations.close(directory)),
      ).pipe(changed(canonical))
    }

    /** Opens an existing regular file for reading and writing, or undefined when the name is free. */
    const openExisting = (directory: VerifiedFile.Directory, name: string) =>
      operations.openIn(directory, name, flags.readWrite).pipe(
        Effect.flatMap((handle) =>
          Effect.flatMap(operations.stat(handle), (info) =>
            info.isFile()
              ? Effect.succeed<Existing | undefined>({ handle, links: info.nlink, mode: info.mode & 0o7777 })
              : Effect.zipRight(
                  operations.close(handle),
                  Effect.fail(
                    VerifiedFile.systemError(
                      "open",
                      handle.path,
                      Object.assign(new Error(`not a regular file: ${handle.path}`), { code: "EISDIR" }),
                    ),
                  ),
                ),
          ),
        ),
        Effect.catchIf(operations.isNotFound, () => Effect.succeed<Existing | undefined>(undefined)),
      )

    const closing = <A, E>(handle: VerifiedFile.Handle, effect: Effect.Effect<A, E>) =>
      Effect.ensuring(effect, operations.close(handle))

    /** Creates `name` exclusively and writes `bytes` into it; AlreadyExists when the name is taken. */
    const createIn = (directory: VerifiedFile.Directory, name: string, bytes: Uint8Array, mode?: number) =>
      Effect.flatMap(operations.openIn(directory, name, flags.createExclusive, mode), (handle) =>
        closing(
          handle,
          Effect.zipRight(
            mode === undefined ? Effect.void : operations.chmod(handle, mode),
            operations.replaceContent(handle, bytes),
          ),
        ),
      )

    /** Replaces a multiply-linked file by a new file renamed over its name (the other links keep their bytes). */
    const replaceLinked = (directory: VerifiedFile.Directory, name: string, bytes: Uint8Array, mode: number) => {
      const temporary = `.${randomBytes(6).toString("hex")}.toolgate.tmp`
      return createIn(directory, temporary, bytes, mode).pipe(
        Effect.zipRight(operations.renameIn(directory, temporary, name)),
        Effect.tapError(() => Effect.ignore(operations.unlinkIn(directory, temporary))),
      )
    }

    /** Writes `bytes` to an existing file: in place when it has one link, by replacement otherwise. */
    const overwrite = (directory: VerifiedFile.Directory, name: string, existing: Existing, bytes: Uint8Array) =>
      existing.links > 1
        ? replaceLinked(directory, name, bytes, existing.mode)
        : operations.replaceContent(existing.handle, bytes)

    /** Writes `content(current)` to the target, creating it when missing; returns whether it existed. */
    const put = (
      canonical: string,
      content: (current: Uint8Array | undefined) => Uint8Array,
      readCurrent: boolean,
    ): Effect.Effect<boolean, PlatformError | PathChangedError> =>
      inDirectory(canonical, true, (directory, name) => {
        const attempt = (tries: number): Effect.Effect<boolean, PlatformError | PathChangedError> =>
          Effect.flatMap(openExisting(directory, name), (existing) => {
            if (existing === undefined) {
              return createIn(directory, name, content(undefined)).pipe(
                Effect.as(false),
                // Someone created the name in between: write it as an existing file instead.
                Effect.catchIf(
                  (error) => tries > 0 && operations.isAlreadyExists(error),
                  () => attempt(tries - 1),
                ),
              )
            }
            return closing(
              existing.handle,
              Effect.gen(function* () {
                const current = readCurrent ? yield* operations.readAll(existing.handle) : undefined
                yield* overwrite(directory, name, existing, content(current))
                return true
              }),
            )
          })
        return attempt(3)
      })

    const result = (target: Target, existed: boolean): WriteResult => ({
      operation: "write",
      target: target.canonical,
      resource: target.resource,
      existed,
    })

    const write = Effect.fn("FileMutation.write")(function* (input: {
      readonly target: Target
      readonly content: string | Uint8Array
    }) {
      const { canonical } = input.target
      const bytes = bytesOf(input.content)
      const existed = yield* withLock(
        canonical,
        put(canonical, () => bytes, false),
      )
      return result(input.target, existed)
    })

    const writeTextPreservingBom = Effect.fn("FileMutation.writeTextPreservingBom")(function* (input: {
      readonly target: Target
      readonly content: string
    }) {
      const { canonical } = input.target
      const text = input.content.replace(/^\uFEFF+/, "")
      const body = encoder.encode(text)
      const existed = yield* withLock(
        canonical,
        put(
          canonical,
          (current) =>
            (current !== undefined && hasBom(current)) || input.content.startsWith("\uFEFF")
              ? Buffer.concat([BOM, body])
              : body,
          true,
        ),
      )
      return result(input.target, existed)
    })

    const create = Effect.fn("FileMutation.create")(function* (input: {
      readonly target: Target
      readonly content: string | Uint8Array
    }) {
      const { canonical } = input.target
      const bytes = bytesOf(input.content)
      yield* withLock(
        canonical,
        inDirectory(canonical, true, (directory, name) =>
          createIn(directory, name, bytes).pipe(
            Effect.catchIf(operations.isAlreadyExists, () => Effect.fail(new TargetExistsError({ path: canonical }))),
          ),
        ),
      )
      return result(input.target, false)
    })

    const writeIfUnchanged = Effect.fn("FileMutation.writeIfUnchanged")(function* (input: {
      readonly target: Target
      readonly expected: Uint8Array
      readonly content: string | Uint8Array
    }) {
      const { canonical } = input.target
      const stale = new StaleContentError({ path: canonical })
      yield* withLock(
        canonical,
        inDirectory(
          canonical,
          false,
          (directory, name) =>
            Effect.flatMap(openExisting(directory, name), (existing) =>
              existing === undefined
                ? Effect.fail(stale)
                : closing(
                    existing.handle,
                    Effect.gen(function* () {
                      const current = yield* operations.readAll(existing.handle)
                      if (!sameBytes(current, input.expected)) return yield* stale
                      yield* overwrite(directory, name, existing, bytesOf(input.content))
                    }),
                  ),
            ),
          () => Effect.fail(stale),
        ),
      )
      return result(input.target, true)
    })

    const remove = Effect.fn("FileMutation.remove")(function* (input: { readonly target: Target }) {
      const { canonical } = input.target
      const existed = yield* withLock(
        canonical,
        inDirectory(
          canonical,
          false,
          (directory, name) =>
            Effect.flatMap(
              operations.lstatIn(directory, name),
              (info): Effect.Effect<boolean, PlatformError | PathChangedError> => {
                if (info === undefined) return Effect.succeed(false)
                if (info.isSymbolicLink()) return Effect.fail(new VerifiedFile.PathChangedError({ path: canonical }))
                return operations.unlinkIn(directory, name).pipe(
                  Effect.as(true),
                  Effect.catchIf(operations.isNotFound, () => Effect.succeed(false)),
                )
              },
            ),
          () => Effect.succeed(false),
        ),
      )
      return {
        operation: "remove",
        target: canonical,
        resource: input.target.resource,
        existed,
      } satisfies RemoveResult
    })

    const read = Effect.fn("FileMutation.read")(function* (input: { readonly target: Target }) {
      const { canonical } = input.target
      return yield* Effect.acquireUseRelease(
        operations.openFile(canonical, flags.read),
        (handle) => operations.readAll(handle),
        operations.close,
      )
    })

    return Service.of({ write, writeTextPreservingBom, create, writeIfUnchanged, remove, read })
  })

/**
 * Builds the service on the node:fs operations.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Interface> = makeWith(io)

/**
 * The Location-scoped layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service> = Layer.effect(Service, make)

/**
 * The layer on substituted descriptor operations (tests).
 *
 * @since 0.2.0
 * @category layers
 * @internal
 */
export const layerWith = (operations: Io): Layer.Layer<Service> => Layer.effect(Service, makeWith(operations))
