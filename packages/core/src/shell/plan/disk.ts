/**
 * What `ShellPlan` reads off the disk beyond a path walk: the git directory above a cwd, whether a tree holds a
 * protected path (a bounded scan), where a link points, and the overlay of the links, copies and moves the command
 * itself makes.
 *
 * @since 0.3.0
 */
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Paths from "./paths.js"
import type * as Segments from "../internal/segment.js"
import * as ShellCommand from "../shell-command.js"
import type { Input, Places } from "./schema.js"

/** How many directory entries a tree change's protected scan reads before it counts the tree as protected. */
const SCAN_LIMIT = 20_000

/** The directories the shell may be in when it runs `segment` (`unknown` when they are only known then). */
type CwdsOf = (
  segment: Segments.Segment,
  overlay: Paths.Overlay | undefined,
) => Effect.Effect<ReadonlyArray<Paths.Cwd> | { readonly unknown: string }>

/**
 * The git directory above `start` (`config` is written there), `undefined` when there is none.
 *
 * @since 0.3.0
 * @internal
 */
export const gitDirectory = (disk: Paths.Disk, start: string) =>
  Effect.gen(function* () {
    for (let at = start; ; at = path.posix.dirname(at)) {
      const entry = yield* disk.inspect(path.posix.join(at, ".git"))
      if (entry.type === "directory") return path.posix.join(at, ".git")
      if (entry.type !== "missing") return { unknown: "the git directory is named by a .git file or link" }
      if (at === "/") return undefined
    }
  })

/**
 * True when a directory holds a protected path below it (a bounded scan: past the bound, true).
 *
 * @since 0.3.0
 * @internal
 */
export const containsProtected = (places: Places, root: string) =>
  Effect.gen(function* () {
    const entry = yield* places.inspect(root)
    if (entry.type !== "directory") return false
    const queue = [root]
    let seen = 0
    while (queue.length > 0) {
      const directory = queue.shift()!
      const names = yield* places.list(directory)
      if (names === undefined) continue
      for (const name of names) {
        if (++seen > SCAN_LIMIT) return true
        const child = path.posix.join(directory, name)
        if (places.isProtected(child)) return true
        const info = yield* places.inspect(child)
        if (info.type === "directory") queue.push(child)
      }
    }
    return false
  })

/**
 * Where a link points: relative to the link's own directory for a symbolic link, to the cwd otherwise.
 *
 * @since 0.3.0
 * @internal
 */
export const linkTargets = (
  segment: Segments.Segment,
  link: Segments.Link,
  disk: Paths.Disk,
  places: Places,
  input: Input,
  cwdsOf: CwdsOf,
) =>
  Effect.gen(function* () {
    const target = link.target
    if (!target.literal || target.glob)
      return { unknown: `the link target ${target.text} is only known when the shell runs` }
    if (link.link.unknown !== undefined) return { unknown: link.link.unknown }
    const cwds = yield* cwdsOf(segment, undefined)
    if ("unknown" in cwds) return cwds
    const text = target.home === true ? path.posix.join(places.home, target.text.replace(/^~\/?/, "")) : target.text
    const out = new Set<string>()
    for (const cwd of cwds.length === 0 ? [{ logical: input.workdir, physical: input.workdir }] : cwds) {
      let base = cwd.physical
      if (link.symbolic && link.relativeToCwd !== true) {
        // The link's directory: where the link is made.
        const where = yield* Paths.walk(disk, cwd.physical, link.link.word.text, false)
        if ("unknown" in where) return where
        const entry = yield* disk.inspect(where.path)
        base = entry.type === "directory" && link.link.into !== undefined ? where.path : path.posix.dirname(where.path)
      }
      const resolved = yield* Paths.walk(disk, base, text, link.symbolic, undefined)
      if ("unknown" in resolved) return resolved
      out.add(resolved.path)
    }
    return { paths: [...out] }
  })

/**
 * The links, copies, moves and unknown fills of the whole command, keyed by where they will be.
 *
 * @since 0.3.0
 * @internal
 */
export const buildOverlay = (
  parsed: ShellCommand.Parsed,
  places: Places,
  disk: Paths.Disk,
  input: Input,
  cwdsOf: CwdsOf,
) =>
  Effect.gen(function* () {
    const overlay = new Map<string, Paths.Made>()
    const destinations = (
      segment: Segments.Segment,
      use: Segments.PathUse,
      source?: Segments.Segment["argv"][number],
    ) =>
      Effect.gen(function* () {
        if (use.unknown !== undefined || !use.word.literal) return []
        const cwds = yield* cwdsOf(segment, undefined)
        if ("unknown" in cwds) return []
        const text =
          use.word.home === true ? path.posix.join(places.home, use.word.text.replace(/^~\/?/, "")) : use.word.text
        const out: Array<string> = []
        for (const cwd of cwds.length === 0 ? [{ logical: input.workdir, physical: input.workdir }] : cwds) {
          const at = yield* Paths.walk(disk, cwd.physical, text, false)
          if ("unknown" in at) continue
          const entry = yield* disk.inspect(at.path)
          const followed = entry.type === "symlink" ? yield* Paths.walk(disk, cwd.physical, text, true) : at
          const isDirectory = "path" in followed && (yield* disk.inspect(followed.path)).type === "directory"
          if (source !== undefined && use.into !== undefined && isDirectory && "path" in followed) {
            out.push(path.posix.join(followed.path, path.posix.basename(source.text)))
          } else out.push(at.path)
        }
        return out
      })
    for (const segment of parsed.segments) {
      for (const link of segment.links) {
        for (const at of yield* destinations(segment, link.link, link.target)) {
          if (!link.target.literal)
            overlay.set(at, {
              kind: "opaque",
              reason: `${at} becomes a link to a target only known when the shell runs`,
            })
          else if (link.symbolic) overlay.set(at, { kind: "symlink", target: link.target.text })
          else {
            const cwds = yield* cwdsOf(segment, undefined)
            const from = "unknown" in cwds || cwds.length === 0 ? input.workdir : cwds[0]!.physical
            const target = yield* Paths.walk(disk, from, link.target.text, false)
            overlay.set(
              at,
              "path" in target ? { kind: "alias", path: target.path } : { kind: "opaque", reason: target.unknown },
            )
          }
        }
      }
      for (const mirror of segment.mirrors) {
        for (const at of yield* destinations(segment, mirror.to, mirror.from)) {
          if (!mirror.from.literal || mirror.from.glob) {
            overlay.set(at, { kind: "opaque", reason: `${at} receives files only known when the shell runs` })
            continue
          }
          const cwds = yield* cwdsOf(segment, undefined)
          const from = "unknown" in cwds || cwds.length === 0 ? input.workdir : cwds[0]!.physical
          const source = yield* Paths.walk(disk, from, mirror.from.text, false)
          if ("path" in source && source.path !== at) overlay.set(at, { kind: "alias", path: source.path })
        }
      }
      for (const use of segment.writes) {
        if (use.mode !== "opaque") continue
        for (const at of yield* destinations(segment, use)) {
          overlay.set(at, { kind: "opaque", reason: `${use.raw} fills ${at} with files only known when it runs` })
        }
      }
    }
    return overlay as Paths.Overlay
  })
