/**
 * The platform error of a failed node:fs call, for the code that calls node:fs directly (the confined walk, the
 * descriptor-based file operations of `VerifiedFile`): a `SystemError` shaped like the ones `NodeFileSystem`
 * produces, so a caller matches one error whichever way the file was reached. One table maps the errno codes.
 *
 * @since 0.3.0
 */
import { type PlatformError, SystemError, type SystemErrorReason } from "@effect/platform/Error"

const REASONS: Readonly<Record<string, SystemErrorReason>> = {
  ENOENT: "NotFound",
  EACCES: "PermissionDenied",
  EPERM: "PermissionDenied",
  EEXIST: "AlreadyExists",
  EISDIR: "BadResource",
  ENOTDIR: "BadResource",
  ELOOP: "BadResource",
  EBUSY: "Busy",
}

/**
 * The `SystemError` reason of an errno code (`Unknown` for a code the table does not name).
 *
 * @since 0.3.0
 * @category utilities
 */
export const reasonOf = (code: string | undefined): SystemErrorReason => REASONS[code ?? ""] ?? "Unknown"

/**
 * The platform error for `error`, thrown by the node:fs call `method` on `target` (a path or a descriptor).
 *
 * @since 0.3.0
 * @category constructors
 */
export const fromErrno = (method: string, target: string | number, error: NodeJS.ErrnoException): PlatformError =>
  new SystemError({
    reason: reasonOf(error.code),
    module: "FileSystem",
    method,
    pathOrDescriptor: target,
    ...(error.syscall === undefined ? {} : { syscall: error.syscall }),
    description: error.message,
    cause: error,
  })
