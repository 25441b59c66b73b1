/**
 * Why a file leaf (read, write, edit, apply_patch) could not do its work, in words the model and the user can act
 * on: the leaves keep the reference's `Unable to read <path>` and add `: <cause>` — not found, outside the
 * Location, the operating system's refusal, an I/O error with its code. Only typed failures are described (by tag,
 * reason and error code, never by message text); anything else gives no cause, and the leaf's message stays as it
 * was. See docs/built-ins.md.
 *
 * @since 0.3.0
 */
import type { PlatformError, SystemErrorReason } from "@effect/platform/Error"
import type * as LocationMutation from "../../world/location-mutation.js"

/** The errno code of a platform error's cause (`ENOENT`, `EACCES`, `EIO`, …), when it has one. */
const codeOf = (error: PlatformError): string | undefined => {
  const cause = error.cause as { readonly code?: unknown } | undefined
  return typeof cause?.code === "string" ? cause.code : undefined
}

const withCode = (text: string, code: string | undefined): string => (code === undefined ? text : `${text} (${code})`)

const SYSTEM: Record<SystemErrorReason, string> = {
  NotFound: "not found",
  PermissionDenied: "the operating system denied access",
  AlreadyExists: "it already exists",
  BadResource: "I/O error",
  Busy: "the file is busy",
  InvalidData: "I/O error: invalid data",
  TimedOut: "I/O error: timed out",
  UnexpectedEof: "I/O error: unexpected end of file",
  WouldBlock: "I/O error: the operation would block",
  WriteZero: "I/O error: nothing could be written",
  Unknown: "I/O error",
}

/** Codes with a more precise text than their reason's. */
const CODES: Record<string, string> = {
  EISDIR: "it is a directory",
  ENOTDIR: "a parent of the path is not a directory",
  ELOOP: "it is a symbolic link (links are not followed)",
  ENOSPC: "I/O error: no space left on the device",
  EROFS: "the file system is read-only",
  EMFILE: "I/O error: too many open files",
  ENAMETOOLONG: "the name is too long",
}

const PATH_REASONS: Record<LocationMutation.PathError["reason"], string> = {
  relative_escape:
    "a relative path may not leave the current location (an absolute path outside it asks for external_directory)",
  location_escape: "it is outside the current location (through a symbolic link)",
  non_directory_ancestor: "a parent of the path is not a directory",
  invalid_path: "the path cannot be used as a file name",
}

/** The typed failures described here, by tag. */
interface Tagged {
  readonly _tag: string
}

/**
 * The cause of a typed failure of a file leaf, or `undefined` when it is not one this module knows.
 *
 * @since 0.3.0
 * @category utilities
 */
export const cause = (error: unknown): string | undefined => {
  if (error === null || typeof error !== "object" || typeof (error as Tagged)._tag !== "string") return undefined
  const tagged = error as Tagged
  switch (tagged._tag) {
    case "SystemError": {
      const system = error as PlatformError & { readonly _tag: "SystemError"; readonly reason: SystemErrorReason }
      const code = codeOf(system)
      return withCode((code === undefined ? undefined : CODES[code]) ?? SYSTEM[system.reason], code)
    }
    case "BadArgument": {
      const bad = error as PlatformError & { readonly description?: string }
      return `invalid argument${bad.description === undefined ? "" : `: ${bad.description}`}`
    }
    case "LocationMutation.PathError": {
      const path = error as LocationMutation.PathError
      return path.reason === "invalid_path" && path.detail !== undefined ? path.detail : PATH_REASONS[path.reason]
    }
    case "FileMutation.PathChangedError":
      return "it changed after it was checked (a symbolic link was swapped in, or the file moved); nothing was done"
    case "FileMutation.TargetExistsError":
      return "it already exists"
    case "ReadTool.PathKindError":
      return "it is neither a regular file nor a directory"
    case "ReadTool.MalformedUtf8Error":
      return "the file is not valid UTF-8 text"
    case "ReadTool.OffsetOutOfRangeError":
      return `offset ${(error as { readonly offset: number }).offset} is out of range`
    case "Session.NotFoundError":
      return `the session ${(error as { readonly sessionID: string }).sessionID} does not exist`
    default:
      return undefined
  }
}

/**
 * `message` followed by the cause of `error` when there is one: `Unable to read src/a.ts: not found (ENOENT)`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const describe = (message: string, error: unknown): string => {
  const found = cause(error)
  return found === undefined ? message : `${message}: ${found}`
}
