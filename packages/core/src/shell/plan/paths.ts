/**
 * Where the paths of a command lead, resolved as the kernel resolves them: name by name from the directory the shell
 * is in, following symbolic links (and `..` after them) on the disk — and through the links, copies and moves the
 * same command makes (`ln -s OUTSIDE l && echo x > l/f` writes below OUTSIDE), since the disk is read before the
 * command runs. A path through `/proc` (it depends on the process that opens it), past 40 links, or below a
 * directory the command fills with unknown contents (`tar -x`) is unknown. See docs/shell.md.
 *
 * @since 0.3.0
 */
import * as path from "node:path"
import * as Effect from "effect/Effect"
import type { CdStep, Directory } from "../internal/segment.js"

/**
 * What is at a path, without following a final symbolic link.
 *
 * @since 0.3.0
 * @category models
 */
export interface Entry {
  readonly type: "missing" | "directory" | "file" | "symlink" | "other"
  /** A symbolic link's target, as stored. */
  readonly target?: string
}

/**
 * The file-system reads path resolution needs.
 *
 * @since 0.3.0
 * @category models
 */
export interface Disk {
  readonly inspect: (absolute: string) => Effect.Effect<Entry>
}

/**
 * What the command itself will have made at a canonical path: a symbolic link (its stored target), an alias of
 * another canonical path (a hard link, a copy or a move seen from the new name), or unknown contents.
 *
 * @since 0.3.0
 * @category models
 */
export type Made =
  | { readonly kind: "symlink"; readonly target: string }
  | { readonly kind: "alias"; readonly path: string }
  | { readonly kind: "opaque"; readonly reason: string }

/**
 * The links, copies and moves of a whole command, by canonical path.
 *
 * @since 0.3.0
 * @category models
 */
export type Overlay = ReadonlyMap<string, Made>

/**
 * A resolved path, or why it is unknown.
 *
 * @since 0.3.0
 * @category models
 */
export type Resolved = { readonly path: string } | { readonly unknown: string }

const MAX_LINKS = 40

const split = (relative: string): Array<string> => relative.split("/").filter((part) => part !== "" && part !== ".")

/**
 * Resolves `relative` from the canonical directory `from`; `follow` says whether a final symbolic link is followed.
 * With an `overlay`, the command's own links and copies count as if they were already made.
 *
 * @since 0.3.0
 * @category utilities
 */
export const walk = (
  disk: Disk,
  from: string,
  relative: string,
  follow: boolean,
  overlay?: Overlay,
): Effect.Effect<Resolved> =>
  Effect.gen(function* () {
    let current = relative.startsWith("/") ? "/" : from
    const queue = split(relative)
    let hops = 0
    while (queue.length > 0) {
      const part = queue.shift()!
      if (part === "..") {
        current = path.posix.dirname(current)
        continue
      }
      const next = current === "/" ? `/${part}` : `${current}/${part}`
      if (next === "/proc" || next.startsWith("/proc/")) {
        return { unknown: `${relative} leads through /proc, which depends on the process that opens it` }
      }
      const final = queue.length === 0
      const made = overlay?.get(next)
      if (made !== undefined) {
        if (made.kind === "opaque") return { unknown: made.reason }
        if (!final || follow) {
          if (++hops > MAX_LINKS) return { unknown: `${relative} goes through more than ${MAX_LINKS} links` }
          const target = made.kind === "symlink" ? made.target : made.path
          if (target.startsWith("/")) current = "/"
          queue.unshift(...split(target))
          continue
        }
      }
      if (overlay !== undefined) {
        // Below a directory the command fills with unknown contents.
        for (const [at, entry] of overlay) {
          if (entry.kind === "opaque" && next.startsWith(`${at}/`)) return { unknown: entry.reason }
        }
      }
      const entry = yield* disk.inspect(next)
      if (entry.type === "symlink" && entry.target !== undefined && (!final || follow)) {
        if (++hops > MAX_LINKS) return { unknown: `${relative} goes through more than ${MAX_LINKS} links` }
        if (entry.target.startsWith("/")) current = "/"
        queue.unshift(...split(entry.target))
        continue
      }
      current = next
    }
    return { path: current }
  })

/**
 * A directory the shell may be in: its logical name (`$PWD`) and where it is on the disk.
 *
 * @since 0.3.0
 * @category models
 */
export interface Cwd {
  readonly logical: string
  readonly physical: string
}

/**
 * The canonical directories `cd` steps lead to from `start`: logically (`..` drops a name, as `cd -L` does) and, as
 * bash falls back to when the logical one fails, physically; `CDPATH` entries for a bare name. `undefined` (with a
 * reason) when one of them cannot be known.
 *
 * @since 0.3.0
 * @category utilities
 */
export const directory = (
  disk: Disk,
  start: string,
  home: string,
  cdpath: ReadonlyArray<string>,
  steps: Directory,
  overlay: Overlay | undefined,
): Effect.Effect<ReadonlyArray<Cwd> | { readonly unknown: string }> =>
  Effect.gen(function* () {
    let current: Array<Cwd> = [{ logical: start, physical: start }]
    for (const step of steps) {
      const next = new Map<string, Cwd>()
      const add = (cwd: Cwd) => next.set(`${cwd.logical}\0${cwd.physical}`, cwd)
      for (const cwd of current) {
        for (const base of bases(cwd, step, home, cdpath)) {
          const logical = path.posix.resolve(base.logical, step.target)
          if (step.physical !== true) {
            const resolved = yield* walk(disk, "/", logical, true, overlay)
            if ("unknown" in resolved) return resolved
            add({ logical, physical: resolved.path })
          }
          const physical = yield* walk(disk, base.physical, step.target, true, overlay)
          if ("unknown" in physical) return physical
          add({ logical: step.physical === true ? physical.path : logical, physical: physical.path })
        }
      }
      current = [...next.values()]
      if (current.length > 16) return { unknown: "more than 16 directories are possible" }
    }
    return current
  })

const bases = (cwd: Cwd, step: CdStep, home: string, cdpath: ReadonlyArray<string>): ReadonlyArray<Cwd> => {
  if (step.home === true) return [{ logical: home, physical: home }]
  if (step.target.startsWith("/")) return [{ logical: "/", physical: "/" }]
  if (step.searched !== true || cdpath.length === 0) return [cwd]
  return [
    cwd,
    ...cdpath.map((entry) => {
      const at = path.posix.resolve(cwd.logical, entry === "" ? "." : entry)
      return { logical: at, physical: at }
    }),
  ]
}
