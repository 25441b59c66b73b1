/**
 * Descriptor-verified file access, shared by FileMutation and the `read` leaf. A path is checked when it is
 * resolved, but the filesystem can change between that check and the open: a parent directory swapped for a symlink
 * sends a path-based open somewhere else. Everything here therefore opens first and checks the descriptor it got:
 *
 * - files are opened with `O_NOFOLLOW`, so a final symlink is refused by the kernel;
 * - the opened descriptor's real location (Linux: the link `/proc/self/fd/N`) must equal the expected canonical
 *   path, or the handle is closed and `PathChangedError` fails the operation before a byte moves;
 * - directory operations (create, rename, unlink, mkdir) go through a verified directory descriptor
 *   (`/proc/self/fd/D/<name>`), so only one name inside an already-verified directory is ever looked up.
 *
 * Where `/proc/self/fd` is not available the checks fall back to comparing device and inode numbers of the
 * descriptor with the path's realpath, which narrows the window instead of closing it. See docs/trust/check-at-use.md.
 *
 * @since 0.2.0
 */
import * as nfs from "node:fs"
import * as path from "node:path"
import type { PlatformError, SystemError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as FsError from "../system/fs-error.js"

/**
 * The path (or one of its directories) no longer is the place that was resolved and approved: a symlink was swapped
 * in, or the file was moved. Nothing was read or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class PathChangedError extends Schema.TaggedError<PathChangedError>()("FileMutation.PathChangedError", {
  path: Schema.String,
}) {
  override get message(): string {
    return `The path changed after it was checked: ${this.path}`
  }
}

const C = nfs.constants
/**
 * Open flags, with the ones a platform lacks set to 0.
 *
 * @since 0.2.0
 * @category utilities
 */
export const flags = {
  read: C.O_RDONLY | (C.O_NOFOLLOW ?? 0) | (C.O_NONBLOCK ?? 0),
  readWrite: C.O_RDWR | (C.O_NOFOLLOW ?? 0),
  createExclusive: C.O_WRONLY | C.O_CREAT | C.O_EXCL | (C.O_NOFOLLOW ?? 0),
  directory: C.O_RDONLY | (C.O_DIRECTORY ?? 0),
  directoryNoFollow: C.O_RDONLY | (C.O_DIRECTORY ?? 0) | (C.O_NOFOLLOW ?? 0),
} as const

/**
 * The platform error for a failed node:fs call, shaped like the ones `NodeFileSystem` produces (`FsError.fromErrno`).
 *
 * @since 0.2.0
 * @category utilities
 */
export const systemError: (method: string, target: string | number, error: NodeJS.ErrnoException) => PlatformError =
  FsError.fromErrno

/** True for the error `O_NOFOLLOW` gives when the final component is a symlink. */
const isSymlinkRefusal = (error: NodeJS.ErrnoException): boolean => error.code === "ELOOP" || error.code === "EMLINK"

/**
 * True iff the error is the platform's NotFound.
 *
 * @since 0.2.0
 * @category guards
 */
export const isNotFound = (error: { readonly _tag: string }): boolean =>
  error._tag === "SystemError" && (error as SystemError).reason === "NotFound"

/**
 * True iff the error is the platform's AlreadyExists.
 *
 * @since 0.2.0
 * @category guards
 */
export const isAlreadyExists = (error: { readonly _tag: string }): boolean =>
  error._tag === "SystemError" && (error as SystemError).reason === "AlreadyExists"

const call = <A>(
  method: string,
  target: string | number,
  run: (callback: (error: NodeJS.ErrnoException | null, value: A) => void) => void,
): Effect.Effect<A, PlatformError> =>
  Effect.async<A, PlatformError>((resume) => {
    run((error, value) => resume(error ? Effect.fail(systemError(method, target, error)) : Effect.succeed(value)))
  })

let procChecked: boolean | undefined
/**
 * True iff `/proc/self/fd/N` names the real path of descriptor N on this system (checked once).
 *
 * @since 0.2.0
 * @category guards
 */
export const hasProcFd = (): boolean => {
  if (procChecked !== undefined) return procChecked
  try {
    const root = nfs.realpathSync.native(path.parse(process.cwd()).root)
    const fd = nfs.openSync(root, flags.directory)
    try {
      procChecked = nfs.readlinkSync(`/proc/self/fd/${fd}`) === root
    } finally {
      nfs.closeSync(fd)
    }
  } catch {
    procChecked = false
  }
  return procChecked
}

/**
 * The path the kernel reports for `fd`, or undefined where it cannot tell.
 *
 * @since 0.2.0
 * @category utilities
 */
export const locate = (fd: number): string | undefined => {
  if (!hasProcFd()) return undefined
  try {
    return nfs.readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    return undefined
  }
}

/**
 * True iff the descriptor `fd` is the file (or directory) at `expected`, which must be a canonical path.
 *
 * @since 0.2.0
 * @category guards
 */
export const isAt = (fd: number, expected: string): boolean => {
  const actual = locate(fd)
  if (actual !== undefined) return actual === expected
  // Without /proc: the descriptor must be the inode the canonical path names now, and that path must still be
  // its own realpath (no symlink on the way).
  try {
    const held = nfs.fstatSync(fd)
    const named = nfs.lstatSync(expected)
    return held.dev === named.dev && held.ino === named.ino && nfs.realpathSync.native(expected) === expected
  } catch {
    return false
  }
}

/**
 * An open, verified file descriptor.
 *
 * @since 0.2.0
 * @category models
 */
export interface Handle {
  readonly fd: number
  /** The canonical path it was verified at. */
  readonly path: string
}

/**
 * An open, verified directory; `via` is the prefix to look names up in it without walking the path again.
 *
 * @since 0.2.0
 * @category models
 */
export interface Directory extends Handle {
  readonly via: string
}

/**
 * Closes a descriptor, ignoring errors (the descriptor is gone either way).
 *
 * @since 0.2.0
 * @category utilities
 */
export const close = (handle: Handle): Effect.Effect<void> =>
  Effect.async<void>((resume) => nfs.close(handle.fd, () => resume(Effect.void)))

const openRaw = (method: string, target: string, flag: number, mode?: number) =>
  Effect.async<number, PlatformError | PathChangedError>((resume) => {
    nfs.open(target, flag, mode, (error, fd) => {
      if (error === null) return resume(Effect.succeed(fd))
      // A final symlink refused by O_NOFOLLOW means the resolved path was replaced by a link.
      resume(
        Effect.fail(
          isSymlinkRefusal(error) ? new PathChangedError({ path: target }) : systemError(method, target, error),
        ),
      )
    })
  })

const verified = (fd: number, expected: string) =>
  isAt(fd, expected)
    ? Effect.succeed(fd)
    : Effect.zipRight(close({ fd, path: expected }), Effect.fail(new PathChangedError({ path: expected })))

/**
 * Opens the file at the canonical path `canonical` (`flag` should carry `O_NOFOLLOW`, see `flags`) and verifies the
 * descriptor lies exactly there. The caller closes the handle.
 *
 * @since 0.2.0
 * @category utilities
 */
export const openFile = (canonical: string, flag: number): Effect.Effect<Handle, PlatformError | PathChangedError> =>
  openRaw("open", canonical, flag).pipe(
    Effect.flatMap((fd) => verified(fd, canonical)),
    Effect.map((fd) => ({ fd, path: canonical })),
  )

const viaOf = (fd: number, canonical: string): string => (hasProcFd() ? `/proc/self/fd/${fd}` : canonical)

/**
 * Opens and verifies the directory at the canonical path `canonical`; `method` names it in errors.
 *
 * @since 0.2.0
 * @category utilities
 */
export const openDirectory = (
  canonical: string,
  method = "open",
): Effect.Effect<Directory, PlatformError | PathChangedError> =>
  openRaw(method, canonical, flags.directory).pipe(
    Effect.flatMap((fd) => verified(fd, canonical)),
    Effect.map((fd) => ({ fd, path: canonical, via: viaOf(fd, canonical) })),
  )

/**
 * The path naming `name` inside `directory`, looked up from the verified descriptor.
 *
 * @since 0.2.0
 * @category utilities
 */
export const child = (directory: Directory, name: string): string => `${directory.via}/${name}`

/**
 * Opens `name` inside `directory` (never following a final symlink) and verifies the descriptor. With
 * `flags.createExclusive`, a file created somewhere else in a lost race is removed before the failure.
 *
 * @since 0.2.0
 * @category utilities
 */
export const openIn = (
  directory: Directory,
  name: string,
  flag: number,
  mode = 0o666,
): Effect.Effect<Handle, PlatformError | PathChangedError> => {
  const expected = path.join(directory.path, name)
  return Effect.flatMap(openRaw("open", child(directory, name), flag, mode), (fd) => {
    if (isAt(fd, expected)) return Effect.succeed({ fd, path: expected })
    const created = (flag & C.O_CREAT) !== 0 ? locate(fd) : undefined
    return Effect.zipRight(
      Effect.sync(() => {
        if (created === undefined) return
        try {
          // Remove only the inode this call just created (same device and inode), never a file that replaced it.
          const held = nfs.fstatSync(fd)
          const named = nfs.lstatSync(created)
          if (held.dev === named.dev && held.ino === named.ino) nfs.unlinkSync(created)
        } catch {
          // Already gone.
        }
      }).pipe(Effect.zipRight(close({ fd, path: expected }))),
      Effect.fail(new PathChangedError({ path: expected })),
    )
  })
}

/**
 * Opens the subdirectory `name` of `directory` without following a symlink, verified.
 *
 * @since 0.2.0
 * @category utilities
 */
export const openDirectoryIn = (
  directory: Directory,
  name: string,
): Effect.Effect<Directory, PlatformError | PathChangedError> => {
  const expected = path.join(directory.path, name)
  return openRaw("open", child(directory, name), flags.directoryNoFollow).pipe(
    Effect.flatMap((fd) => verified(fd, expected)),
    Effect.map((fd) => ({ fd, path: expected, via: viaOf(fd, expected) })),
  )
}

/**
 * Opens the directory `canonical`, creating missing directories on the way. Each created directory is made inside
 * an already-verified parent, so none can land outside.
 *
 * @since 0.2.0
 * @category utilities
 */
export const ensureDirectory = (canonical: string): Effect.Effect<Directory, PlatformError | PathChangedError> =>
  openDirectory(canonical).pipe(
    Effect.catchIf(isNotFound, (missing) => {
      const parent = path.dirname(canonical)
      if (parent === canonical) return Effect.fail(missing)
      const name = path.basename(canonical)
      return Effect.acquireUseRelease(
        ensureDirectory(parent),
        (above) =>
          call<void>("makeDirectory", canonical, (done) =>
            nfs.mkdir(child(above, name), 0o777, (error) => done(error, undefined)),
          ).pipe(
            Effect.catchIf(isAlreadyExists, () => Effect.void),
            Effect.zipRight(openDirectoryIn(above, name)),
          ),
        close,
      )
    }),
  )

/**
 * fstat of a handle.
 *
 * @since 0.2.0
 * @category utilities
 */
export const stat = (handle: Handle): Effect.Effect<nfs.Stats, PlatformError> =>
  call("stat", handle.path, (done) => nfs.fstat(handle.fd, done))

/**
 * lstat of `name` inside `directory`, or undefined when it does not exist.
 *
 * @since 0.2.0
 * @category utilities
 */
export const lstatIn = (directory: Directory, name: string): Effect.Effect<nfs.Stats | undefined, PlatformError> =>
  call<nfs.Stats | undefined>("stat", path.join(directory.path, name), (done) =>
    nfs.lstat(child(directory, name), done),
  ).pipe(Effect.catchIf(isNotFound, () => Effect.succeed(undefined)))

/**
 * Reads up to `length` bytes at `position` (the current offset when null); undefined at the end of the file.
 *
 * @since 0.2.0
 * @category utilities
 */
export const readAt = (
  handle: Handle,
  length: number,
  position: number | null = null,
): Effect.Effect<Uint8Array | undefined, PlatformError> =>
  call<Uint8Array | undefined>("read", handle.path, (done) => {
    const buffer = Buffer.allocUnsafe(length)
    nfs.read(handle.fd, buffer, 0, length, position, (error, bytes) =>
      done(error, bytes === 0 ? undefined : buffer.subarray(0, bytes)),
    )
  })

/**
 * Reads the whole file from the start.
 *
 * @since 0.2.0
 * @category utilities
 */
export const readAll = (handle: Handle): Effect.Effect<Uint8Array, PlatformError> =>
  Effect.gen(function* () {
    const chunks: Array<Uint8Array> = []
    let total = 0
    while (true) {
      const chunk = yield* readAt(handle, 64 * 1024, total)
      if (chunk === undefined) break
      chunks.push(chunk)
      total += chunk.length
    }
    return Buffer.concat(chunks, total)
  })

/**
 * Writes all of `bytes` at the start of the file and cuts it to that length.
 *
 * @since 0.2.0
 * @category utilities
 */
export const replaceContent = (handle: Handle, bytes: Uint8Array): Effect.Effect<void, PlatformError> =>
  Effect.gen(function* () {
    yield* call<void>("truncate", handle.path, (done) => nfs.ftruncate(handle.fd, 0, (error) => done(error, undefined)))
    let written = 0
    while (written < bytes.length) {
      written += yield* call<number>("write", handle.path, (done) =>
        nfs.write(handle.fd, bytes, written, bytes.length - written, written, done),
      )
    }
  })

/**
 * Sets the permission bits of a handle.
 *
 * @since 0.2.0
 * @category utilities
 */
export const chmod = (handle: Handle, mode: number): Effect.Effect<void, PlatformError> =>
  call<void>("chmod", handle.path, (done) => nfs.fchmod(handle.fd, mode, (error) => done(error, undefined)))

/**
 * Renames `from` to `to`, both inside `directory`.
 *
 * @since 0.2.0
 * @category utilities
 */
export const renameIn = (directory: Directory, from: string, to: string): Effect.Effect<void, PlatformError> =>
  call<void>("rename", path.join(directory.path, to), (done) =>
    nfs.rename(child(directory, from), child(directory, to), (error) => done(error, undefined)),
  )

/**
 * Removes the name `name` inside `directory` (not a directory).
 *
 * @since 0.2.0
 * @category utilities
 */
export const unlinkIn = (directory: Directory, name: string): Effect.Effect<void, PlatformError> =>
  call<void>("remove", path.join(directory.path, name), (done) =>
    nfs.unlink(child(directory, name), (error) => done(error, undefined)),
  )

/**
 * Lists the names inside `directory`.
 *
 * @since 0.2.0
 * @category utilities
 */
export const readDirectory = (directory: Directory): Effect.Effect<Array<string>, PlatformError> =>
  call<Array<string>>("readDirectory", directory.path, (done) => nfs.readdir(directory.via, done))
