/**
 * Unix sockets of a sandbox with `allow_unix_sockets`. A client reaches a named socket only by creating an `AF_UNIX`
 * socket and connecting it to the path, so a seccomp filter cannot tell an allowed connection from any other: with
 * a non-empty list, the filter lets `AF_UNIX` sockets be created, and the mount plan takes over instead. Every
 * socket this module finds — each pathname socket bound in the runner's network namespace (`/proc/net/unix`) and
 * each socket that is itself a mount point (a socket bind-mounted in from elsewhere, such as a container's
 * `docker.sock`) — is covered with an empty read-only file, except the allowed ones, which are bound into the
 * sandbox even where their directory is private or hidden. Abstract sockets stay unreachable because the sandbox
 * keeps its own network namespace; `network: true` together with allowed sockets is therefore refused.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"

const unescapeMountPoint = (text: string): string =>
  text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)))

/**
 * The pathname sockets listed in `/proc/net/unix` text (bound sockets; abstract and unnamed ones left out).
 *
 * @since 0.3.0
 * @category utilities
 */
export const parseNetUnix = (text: string): ReadonlyArray<string> => {
  const out = new Set<string>()
  for (const line of text.split("\n").slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path: the path is everything after the seventh field.
    const match = /^\s*\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s(.+)$/.exec(line)
    const socketPath = match?.[1]
    if (socketPath !== undefined && socketPath.startsWith("/")) out.add(socketPath)
  }
  return [...out]
}

/**
 * The mount points listed in `/proc/self/mountinfo` text.
 *
 * @since 0.3.0
 * @category utilities
 */
export const parseMountPoints = (text: string): ReadonlyArray<string> =>
  text
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((point): point is string => point !== undefined && point.startsWith("/"))
    .map(unescapeMountPoint)

const isSocket = (entry: string): boolean => {
  try {
    return fs.lstatSync(entry).isSocket()
  } catch {
    return false
  }
}

const read = (file: string): string => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return ""
  }
}

/**
 * Every socket file found now (see the module doc), as paths of the runner's file system.
 *
 * @since 0.3.0
 * @category utilities
 */
export const findSockets = (): ReadonlyArray<string> => {
  const candidates = new Set([
    ...parseNetUnix(read("/proc/net/unix")),
    ...parseMountPoints(read("/proc/self/mountinfo")),
  ])
  return [...candidates].filter(isSocket)
}

/**
 * The allowed sockets that exist now, by real path.
 *
 * @since 0.3.0
 * @category utilities
 */
export const allowedSockets = (paths: ReadonlyArray<string>): ReadonlyArray<string> => {
  const out = new Set<string>()
  for (const entry of paths) {
    try {
      const real = fs.realpathSync(entry)
      if (isSocket(real)) out.add(real)
    } catch {
      // Not there now: nothing to bind.
    }
  }
  return [...out]
}
