/**
 * ShellPlan: the one planner behind the bash leaf and `permissions explain`. From a parsed command, it builds the
 * permission groups the leaf asks — `external_directory` for each outside directory the command runs in, writes in
 * or links to; one `bash` group of the segments; `read` for the files reading commands read (when bash is not
 * allowed wholesale); `edit` for every file the command writes, changes or removes; `protected_path` for the
 * protected ones — each with its save patterns, and the asserts the leaf makes, denies first. Files are resolved
 * from every directory the shell may be in, through links on the disk and the links and copies the command itself
 * makes. The planner only reads the disk and the rules (through `Places` and `check`); it never asks. See
 * docs/shell.md.
 *
 * @since 0.3.0
 */
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as BashArity from "./bash-arity.js"
import * as Paths from "./plan/paths.js"
import type * as Segments from "./internal/segment.js"
import * as ShellCommand from "./shell-command.js"
import { assemble, type Collected, unique, WHOLESALE_PROBE } from "./plan/assemble.js"
import { buildOverlay, containsProtected, gitDirectory, linkTargets } from "./plan/disk.js"
import { changesRepository } from "./programs/git.js"
import * as internal from "./plan/schema.js"

/**
 * What is at a path (`missing`, `directory`, `file`, `symlink` with its stored target, `other`).
 *
 * @since 0.3.0
 * @category models
 */
export type Entry = internal.Entry
/**
 * The permission form of a canonical path: its resource and, outside the Location, the `external_directory` it
 * needs. `impossible`: nothing can be written there (a parent is a file); `invalid`: the path cannot be used.
 *
 * @since 0.3.0
 * @category models
 */
export type Located = internal.Located
/**
 * The disk and the Location as the planner sees them.
 *
 * @since 0.3.0
 * @category models
 */
export type Places = internal.Places
/**
 * What the planner needs besides the command: the places, the rules (`check` evaluates resources for an action as
 * PermissionV2 would, saved approvals included), the arity table, and the sandbox.
 *
 * @since 0.3.0
 * @category models
 */
export type Environment<E = never> = internal.Environment<E>
/**
 * The planner's inputs and surroundings for one Location (`Environment` without the rules, plus the shell), as a
 * service: the bash tool's layer provides it, `permissions explain` uses it.
 *
 * @since 0.3.0
 * @category models
 */
export type Setting = internal.Setting
/**
 * One permission group: an action, its resources, what `always` saves, the effect of each resource under the
 * rules, and the prompt metadata.
 *
 * @since 0.3.0
 * @category models
 */
export type Group = internal.Group
/**
 * One assert the leaf makes, in order.
 *
 * @since 0.3.0
 * @category models
 */
export type Assert = internal.Assert
/**
 * The plan of one command.
 *
 * @since 0.3.0
 * @category models
 */
export type Plan = internal.Plan
/**
 * The input of `plan`.
 *
 * @since 0.3.0
 * @category models
 */
export type Input = internal.Input

/**
 * The planner's setting of the current Location.
 *
 * @since 0.3.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/ShellPlan")<Service, Setting>() {}

/** Names a redirection or a command may write or read without touching a file. */
const DEVICES: ReadonlySet<string> = new Set([
  "/dev/null",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/stdin",
  "/dev/tty",
  "/dev/fd/0",
  "/dev/fd/1",
  "/dev/fd/2",
])

/**
 * Builds the plan of one command.
 *
 * @since 0.3.0
 * @category utilities
 */
export const plan = <E>(input: Input, env: Environment<E>): Effect.Effect<Plan, E> =>
  Effect.gen(function* () {
    const { parsed } = input
    const places = env.places
    const disk: Paths.Disk = { inspect: places.inspect }

    // 1. The bash decision of every segment.
    const candidates = new Set<string>([WHOLESALE_PROBE])
    for (const segment of parsed.segments) {
      for (const form of ShellCommand.forms(segment)) candidates.add(form)
      candidates.add(`${ShellCommand.UNRESOLVED_PREFIX}${segment.text}`)
    }
    const bashEffects = yield* env.check("bash", [...candidates])
    const effectOf = (resource: string) => bashEffects.get(resource) ?? "ask"
    const wholesale = effectOf(WHOLESALE_PROBE) === "allow"
    const verdicts = ShellCommand.evaluate(parsed, effectOf, (argv) => BashArity.pattern(argv, env.table), {
      autoAllow: env.autoAllow,
    })
    const verdictOf = new Map(verdicts.map((verdict) => [verdict.segment, verdict]))

    // 2. Where every segment runs, and what the command itself links, copies and fills.
    const collected: Collected = {
      externals: new Map(),
      edits: new Set(),
      reads: new Set(),
      protects: new Set(),
      reasons: new Map(),
    }
    const unresolved = (set: Set<string>, text: string, reason: string) => {
      const resource = `${ShellCommand.UNRESOLVED_PREFIX}${text}`
      set.add(resource)
      collected.reasons.set(resource, reason)
    }
    const cwdCache = new Map<string, ReadonlyArray<Paths.Cwd> | { readonly unknown: string }>()
    const cwdsOf = (segment: Segments.Segment, overlay: Paths.Overlay | undefined) =>
      Effect.gen(function* () {
        if (segment.place.unknown !== undefined) return { unknown: segment.place.unknown }
        const out: Array<Paths.Cwd> = []
        for (const steps of segment.place.directories) {
          const key = `${overlay === undefined ? "disk" : "overlay"}:${JSON.stringify(steps)}`
          let found = cwdCache.get(key)
          if (found === undefined) {
            found = yield* Paths.directory(disk, input.workdir, places.home, places.cdpath, steps, overlay)
            cwdCache.set(key, found)
          }
          if ("unknown" in found) return found
          out.push(...found)
        }
        return out
      })

    const overlay = yield* buildOverlay(parsed, places, disk, input, cwdsOf)

    /** Whether an earlier segment may have changed the repository that git names files from. */
    let repositoryChanged = false
    const toplevels = new Map<string, string | undefined>()
    const toplevel = (cwd: string) =>
      Effect.gen(function* () {
        if (!toplevels.has(cwd)) {
          const out = yield* places.git(cwd, ["rev-parse", "--show-toplevel"])
          toplevels.set(cwd, out?.replace(/\n$/, ""))
        }
        return toplevels.get(cwd)
      })

    /** The files a git command names from the repository's data, from each directory it may run in. */
    const namedByGit = (segment: Segments.Segment, names: ReadonlyArray<ReadonlyArray<string>>) =>
      Effect.gen(function* () {
        if (repositoryChanged)
          return { unknown: "an earlier command may change the repository git names the files from" }
        const cwds = yield* cwdsOf(segment, undefined)
        if ("unknown" in cwds) return { unknown: cwds.unknown }
        const out = new Set<string>()
        for (const cwd of unique(cwds.map((c) => c.physical))) {
          const top = yield* toplevel(cwd)
          if (top === undefined) return { unknown: "git could not find the repository to name the files it writes" }
          for (const command of names) {
            const optional = command[0] === "?"
            const printed = yield* places.git(cwd, optional ? command.slice(1) : command)
            if (printed === undefined) {
              if (optional) continue
              return { unknown: "git could not name the files this command writes" }
            }
            for (const name of printed.split("\u0000")) {
              if (name === "") continue
              const resolved = yield* Paths.walk(disk, top, name, false, undefined)
              if ("unknown" in resolved) return { unknown: resolved.unknown }
              out.add(resolved.path)
            }
          }
        }
        return { paths: [...out] }
      })

    /** Every file the repository of a segment tracks, or has tracked in any commit a ref or reflog reaches. */
    const HISTORY_LIMIT = 20_000
    const historyNames = (segment: Segments.Segment) =>
      Effect.gen(function* () {
        const cwds = yield* cwdsOf(segment, undefined)
        if ("unknown" in cwds) return { unknown: cwds.unknown }
        const out = new Set<string>()
        for (const cwd of unique(cwds.map((c) => c.physical))) {
          const top = yield* toplevel(cwd)
          if (top === undefined) return { unknown: "git could not find the repository whose history it prints" }
          for (const command of [
            ["ls-files", "-z", "--full-name", "--", ":/"],
            ["log", "--all", "--reflog", "--format=", "--name-only", "--no-renames", "-z"],
          ]) {
            const printed = yield* places.git(cwd, command)
            if (printed === undefined) return { unknown: "git could not list the files its history holds" }
            for (const name of printed.split(/[\u0000\n]/)) if (name !== "") out.add(path.posix.join(top, name))
            if (out.size > HISTORY_LIMIT)
              return { unknown: `the repository's history names more than ${HISTORY_LIMIT} files` }
          }
        }
        return { paths: [...out] }
      })

    /** Every canonical path a path use may reach, from every directory, on the disk and through the overlay. */
    const targets = (segment: Segments.Segment, use: Segments.PathUse) =>
      Effect.gen(function* () {
        if (use.unknown !== undefined) return { unknown: use.unknown }
        if (use.gitNames !== undefined) return yield* namedByGit(segment, use.gitNames)
        if (use.history === true) return yield* historyNames(segment)
        const text = use.word.text
        if (DEVICES.has(text)) return { paths: [] as Array<string> }
        const cwds = use.word.home === true || text.startsWith("/") ? undefined : yield* cwdsOf(segment, undefined)
        if (cwds !== undefined && "unknown" in cwds) return { unknown: cwds.unknown }
        const starts = cwds === undefined ? [input.workdir] : cwds.map((cwd) => cwd.physical)
        const relative = use.word.home === true ? path.posix.join(places.home, text.replace(/^~\/?/, "")) : text
        const out = new Set<string>()
        for (const start of unique(starts)) {
          const from = use.git === true ? yield* gitDirectory(disk, start) : start
          if (from === undefined) continue
          if (typeof from !== "string") return { unknown: from.unknown }
          for (const layer of overlay.size === 0 ? [undefined] : [undefined, overlay]) {
            const resolved = yield* Paths.walk(disk, from, relative, use.follow, layer)
            if ("unknown" in resolved) return { unknown: resolved.unknown }
            const entry = yield* places.inspect(resolved.path)
            const isDirectory =
              entry.type === "directory" || (layer !== undefined && layer.get(resolved.path)?.kind === "alias")
            if (use.into !== undefined && (isDirectory || entry.type === "missing")) {
              for (const source of use.into) {
                if (!source.literal) return { unknown: `${source.text} is only known when the shell runs` }
                const inside = yield* Paths.walk(
                  disk,
                  resolved.path,
                  path.posix.basename(source.text),
                  use.follow,
                  layer,
                )
                if ("unknown" in inside) return { unknown: inside.unknown }
                out.add(inside.path)
              }
              if (isDirectory) continue
            }
            out.add(resolved.path)
          }
        }
        return { paths: [...out] }
      })

    const record = (set: Set<string>, canonical: string, kind: "file" | "directory", raw: string) =>
      Effect.gen(function* () {
        const located = yield* places.locate(canonical, kind)
        if (located._tag === "impossible") return undefined
        if (located._tag === "invalid") {
          unresolved(set, raw, located.reason)
          return undefined
        }
        if (located.external !== undefined && located.external.resource !== input.approved) {
          collected.externals.set(located.external.resource, located.external.save)
        }
        set.add(located.resource)
        return located
      })

    let previous: Segments.Segment | undefined
    for (const segment of parsed.segments) {
      if (previous !== undefined && changesGit(previous)) repositoryChanged = true
      previous = segment
      const verdict = verdictOf.get(segment)
      // The directories it runs in: outside the Location, they need external_directory.
      const cwds = yield* cwdsOf(segment, undefined)
      if (!("unknown" in cwds) && segment.argv.length > 0) {
        for (const cwd of cwds) {
          if (cwd.physical === input.workdir) continue
          const located = yield* places.locate(cwd.physical, "directory")
          if (
            located._tag === "located" &&
            located.external !== undefined &&
            located.external.resource !== input.approved
          ) {
            collected.externals.set(located.external.resource, located.external.save)
          }
        }
      }
      for (const use of segment.writes) {
        const found = yield* targets(segment, use)
        if (use.operand === true) {
          // A word of an unmodelled program: only where it lies is judged.
          if ("unknown" in found) continue
          for (const canonical of found.paths) {
            const located = yield* places.locate(canonical, "file")
            if (located._tag !== "located") continue
            if (located.external !== undefined && located.external.resource !== input.approved) {
              collected.externals.set(located.external.resource, located.external.save)
            }
            if (places.isProtected(canonical)) collected.protects.add(located.resource)
          }
          continue
        }
        if ("unknown" in found) {
          unresolved(collected.edits, use.raw, found.unknown)
          continue
        }
        for (const canonical of found.paths) {
          const located = yield* record(collected.edits, canonical, "file", use.raw)
          if (located === undefined) continue
          const protectedHere =
            places.isProtected(canonical) ||
            use.mode === "opaque" ||
            (use.mode === "tree" && (yield* containsProtected(places, canonical)))
          if (protectedHere) collected.protects.add(located.resource)
        }
      }
      for (const link of segment.links) {
        const found = yield* linkTargets(segment, link, disk, places, input, cwdsOf)
        if ("unknown" in found) {
          unresolved(collected.edits, link.link.raw, found.unknown)
          continue
        }
        for (const canonical of found.paths) {
          const located = yield* places.locate(canonical, "file")
          if (located._tag !== "located") continue
          if (located.external !== undefined && located.external.resource !== input.approved) {
            collected.externals.set(located.external.resource, located.external.save)
          }
          if (places.isProtected(canonical)) collected.protects.add(located.resource)
        }
      }
      // Reads count when bash is not allowed wholesale, for what runs without an ask.
      const runs = verdict === undefined ? segment.argv.length === 0 : verdict.effect === "allow"
      if (wholesale || !runs || segment.unresolved !== undefined) continue
      for (const use of segment.reads) {
        const found = yield* targets(segment, use)
        if ("unknown" in found) {
          unresolved(collected.reads, use.raw, found.unknown)
          continue
        }
        if (use.history === true) {
          // Only the files the read rules do not allow are named: the repository may track thousands.
          const located = new Map<string, string>()
          for (const canonical of found.paths) {
            const where = yield* places.locate(canonical, "file")
            if (where._tag === "located") located.set(where.resource, canonical)
          }
          const effects = yield* env.check("read", [...located.keys()])
          for (const [resource, canonical] of located) {
            if (effects.get(resource) !== "allow") yield* record(collected.reads, canonical, "file", use.raw)
          }
          continue
        }
        for (const canonical of found.paths) yield* record(collected.reads, canonical, "file", use.raw)
      }
    }

    return yield* assemble(input, env, parsed, verdicts, collected)
  })

/** A git segment that may change what a later git segment names its files from. */
const changesGit = (segment: Segments.Segment): boolean => {
  const first = segment.argv[0]
  return (
    first !== undefined && first.literal && path.posix.basename(first.text) === "git" && changesRepository(segment.argv)
  )
}
