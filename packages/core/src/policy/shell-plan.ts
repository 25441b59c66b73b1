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
import * as ProtectedPath from "../place/protected-path.js"
import * as Wildcard from "../values/wildcard.js"
import * as BashArity from "./bash-arity.js"
import * as Paths from "./internal/shell-paths.js"
import type * as Segments from "./internal/shell-segment.js"
import * as ShellCommand from "./shell-command.js"

/**
 * What is at a path (`missing`, `directory`, `file`, `symlink` with its stored target, `other`).
 *
 * @since 0.3.0
 * @category models
 */
export type Entry = Paths.Entry

/**
 * The permission form of a canonical path: its resource and, outside the Location, the `external_directory` it
 * needs. `impossible`: nothing can be written there (a parent is a file); `invalid`: the path cannot be used.
 *
 * @since 0.3.0
 * @category models
 */
export type Located =
  | {
      readonly _tag: "located"
      readonly canonical: string
      readonly resource: string
      readonly external?: { readonly resource: string; readonly save: string }
    }
  | { readonly _tag: "impossible" }
  | { readonly _tag: "invalid"; readonly reason: string }

/**
 * The disk and the Location as the planner sees them.
 *
 * @since 0.3.0
 * @category models
 */
export interface Places {
  /** The directory `~` and a bare `cd` stand for. */
  readonly home: string
  /** `CDPATH` as the shell will have it, split on `:` (empty when unset). */
  readonly cdpath: ReadonlyArray<string>
  /** What is at an absolute path, without following a final link. */
  readonly inspect: (absolute: string) => Effect.Effect<Entry>
  /** The permission form of a canonical path. */
  readonly locate: (canonical: string, kind: "file" | "directory") => Effect.Effect<Located>
  /** Whether a canonical path is protected (`toolgate.json`, `.toolgate/**`, `.git/**`, …). */
  readonly isProtected: (canonical: string) => boolean
  /** The names in a directory, or `undefined` when it cannot be read. */
  readonly list: (canonical: string) => Effect.Effect<ReadonlyArray<string> | undefined>
}

/**
 * What the planner needs besides the command: the places, the rules (`check` evaluates resources for an action as
 * PermissionV2 would, saved approvals included), the arity table, and the sandbox.
 *
 * @since 0.3.0
 * @category models
 */
export interface Environment<E = never> {
  readonly places: Places
  readonly check: (
    action: string,
    resources: ReadonlyArray<string>,
  ) => Effect.Effect<ReadonlyMap<string, "allow" | "ask" | "deny">, E>
  readonly table: BashArity.Table
  /** The Location's sandbox is active (asks say so). */
  readonly sandboxed: boolean
  /** `bash.sandbox.autoAllow` while the sandbox is active: segments that would only ask `bash` run. */
  readonly autoAllow: boolean
}

/**
 * The planner's inputs and surroundings for one Location (`Environment` without the rules, plus the shell), as a
 * service: the bash tool's layer provides it, `permissions explain` uses it.
 *
 * @since 0.3.0
 * @category models
 */
export interface Setting {
  /** The canonical directory of the Location: where a command starts when no workdir is given. */
  readonly root: string
  readonly places: Places
  readonly sandboxed: boolean
  readonly autoAllow: boolean
  /** The shell commands run with: its grammar decides how they are read. */
  readonly shell: string
}

/**
 * The planner's setting of the current Location.
 *
 * @since 0.3.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/ShellPlan")<Service, Setting>() {}

/**
 * One permission group: an action, its resources, what `always` saves, the effect of each resource under the
 * rules, and the prompt metadata.
 *
 * @since 0.3.0
 * @category models
 */
export interface Group {
  readonly action: string
  readonly resources: ReadonlyArray<string>
  readonly save: ReadonlyArray<string>
  readonly effects: ReadonlyMap<string, "allow" | "ask" | "deny">
  readonly metadata?: Record<string, unknown>
  /** Why an `unresolved:` resource of this group is unresolved. */
  readonly reasons?: ReadonlyMap<string, string>
}

/**
 * One assert the leaf makes, in order.
 *
 * @since 0.3.0
 * @category models
 */
export interface Assert {
  readonly action: string
  readonly resources: ReadonlyArray<string>
  readonly save?: ReadonlyArray<string>
  readonly metadata?: Record<string, unknown>
}

/**
 * The plan of one command.
 *
 * @since 0.3.0
 * @category models
 */
export interface Plan {
  readonly parsed: ShellCommand.Parsed
  readonly verdicts: ReadonlyArray<ShellCommand.Verdict>
  /** external_directory groups, then bash, read, edit, protected_path (empty groups left out). */
  readonly groups: ReadonlyArray<Group>
  /** The asserts, denies first: the first denied one blocks the call. */
  readonly asserts: ReadonlyArray<Assert>
  /** The decision: deny when any resource is denied, ask when any asks, else allow. */
  readonly effect: "allow" | "ask" | "deny"
}

/**
 * The input of `plan`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Input {
  readonly command: string
  /** The canonical directory the command starts in. */
  readonly workdir: string
  /** The `external_directory` resource already approved for an external workdir. */
  readonly approved?: string
  readonly description?: string
  readonly parsed: ShellCommand.Parsed
}

/** A resource no real command can be: `bash` allows it only when bash is allowed wholesale. */
const WHOLESALE_PROBE = "\u0000"

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

/** How many directory entries a tree change's protected scan reads before it counts the tree as protected. */
const SCAN_LIMIT = 20_000

const unique = <A>(values: Iterable<A>): Array<A> => [...new Set(values)]

interface Collected {
  readonly externals: Map<string, string>
  readonly edits: Set<string>
  readonly reads: Set<string>
  readonly protects: Set<string>
  readonly reasons: Map<string, string>
}

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

    /** Every canonical path a path use may reach, from every directory, on the disk and through the overlay. */
    const targets = (segment: Segments.Segment, use: Segments.PathUse) =>
      Effect.gen(function* () {
        if (use.unknown !== undefined) return { unknown: use.unknown }
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

    for (const segment of parsed.segments) {
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
        for (const canonical of found.paths) yield* record(collected.reads, canonical, "file", use.raw)
      }
    }

    return yield* assemble(input, env, parsed, verdicts, collected)
  })

/** The git directory above `start` (`config` is written there), `undefined` when there is none. */
const gitDirectory = (disk: Paths.Disk, start: string) =>
  Effect.gen(function* () {
    for (let at = start; ; at = path.posix.dirname(at)) {
      const entry = yield* disk.inspect(path.posix.join(at, ".git"))
      if (entry.type === "directory") return path.posix.join(at, ".git")
      if (entry.type !== "missing") return { unknown: "the git directory is named by a .git file or link" }
      if (at === "/") return undefined
    }
  })

/** True when a directory holds a protected path below it (a bounded scan: past the bound, true). */
const containsProtected = (places: Places, root: string) =>
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

/** Where a link points: relative to the link's own directory for a symbolic link, to the cwd otherwise. */
const linkTargets = (
  segment: Segments.Segment,
  link: Segments.Link,
  disk: Paths.Disk,
  places: Places,
  input: Input,
  cwdsOf: (
    segment: Segments.Segment,
    overlay: Paths.Overlay | undefined,
  ) => Effect.Effect<ReadonlyArray<Paths.Cwd> | { readonly unknown: string }>,
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

/** The links, copies, moves and unknown fills of the whole command, keyed by where they will be. */
const buildOverlay = (
  parsed: ShellCommand.Parsed,
  places: Places,
  disk: Paths.Disk,
  input: Input,
  cwdsOf: (
    segment: Segments.Segment,
    overlay: Paths.Overlay | undefined,
  ) => Effect.Effect<ReadonlyArray<Paths.Cwd> | { readonly unknown: string }>,
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

/** The groups and the asserts, denies first. */
const assemble = <E>(
  input: Input,
  env: Environment<E>,
  parsed: ShellCommand.Parsed,
  verdicts: ReadonlyArray<ShellCommand.Verdict>,
  collected: Collected,
) =>
  Effect.gen(function* () {
    const asking = verdicts.filter((v) => v.effect === "ask")
    const allowed = verdicts.filter((v) => v.effect === "allow" && v.sandboxed !== true)
    const sandboxed = verdicts.filter((v) => v.sandboxed === true)
    const shown = asking.length > 0 ? asking : allowed
    const bashResources =
      shown.length > 0
        ? unique(shown.map((v) => v.resource))
        : sandboxed.length > 0 || verdicts.length > 0
          ? []
          : [input.command]
    const bashSave =
      shown.length > 0
        ? unique(shown.flatMap((v) => (v.save === undefined ? [] : [v.save])))
        : [Wildcard.literal(input.command)]
    const metadata: Record<string, unknown> = {
      command: input.command,
      ...(input.description === undefined ? {} : { description: input.description }),
      segments: asking.map((v) => ({
        text: v.segment.text,
        resource: v.resource,
        ...(v.reason === undefined ? {} : { reason: v.reason }),
      })),
      ...(env.sandboxed ? { sandboxed: true } : {}),
      ...(sandboxed.length > 0 ? { autoAllowed: unique(sandboxed.map((v) => v.resource)) } : {}),
    }
    const literal = (resources: ReadonlySet<string>) =>
      [...resources].filter((r) => !r.startsWith(ShellCommand.UNRESOLVED_PREFIX)).map(Wildcard.literal)
    const drafts: Array<Omit<Group, "effects"> & { readonly always?: boolean }> = [
      ...[...collected.externals].map(([resource, save]) => ({
        action: "external_directory",
        resources: [resource],
        save: [save],
        metadata: { command: input.command },
      })),
      { action: "bash", resources: bashResources, save: bashSave, metadata, always: true },
      {
        action: "read",
        resources: [...collected.reads],
        save: literal(collected.reads),
        metadata: { command: input.command },
      },
      {
        action: "edit",
        resources: [...collected.edits],
        save: literal(collected.edits),
        metadata: { command: input.command },
      },
      {
        action: ProtectedPath.ACTION,
        resources: [...collected.protects],
        save: [],
        metadata: { command: input.command },
      },
    ]
    const groups: Array<Group & { readonly always?: boolean }> = []
    for (const draft of drafts) {
      if (draft.resources.length === 0) continue
      const reasons = new Map(
        draft.resources.flatMap((r) => {
          const reason = collected.reasons.get(r)
          return reason === undefined ? [] : [[r, reason] as const]
        }),
      )
      const effects =
        draft.action === "bash"
          ? new Map(draft.resources.map((r) => [r, verdicts.find((v) => v.resource === r)?.effect ?? "ask"] as const))
          : yield* env.check(draft.action, draft.resources)
      groups.push({ ...draft, effects, ...(reasons.size > 0 ? { reasons } : {}) })
    }
    const asserts: Array<Assert> = []
    const denied = unique(verdicts.filter((v) => v.effect === "deny").map((v) => v.resource))
    if (denied.length > 0) asserts.push({ action: "bash", resources: denied })
    for (const group of groups) {
      if (group.action === "bash") continue
      const refused = group.resources.filter((r) => group.effects.get(r) === "deny")
      if (refused.length > 0) asserts.push({ action: group.action, resources: refused })
    }
    for (const group of groups) {
      const all = group.resources.every((r) => group.effects.get(r) === "allow")
      if (all && group.always !== true) continue
      asserts.push({
        action: group.action,
        resources: group.resources,
        save: group.save,
        ...(group.metadata === undefined ? {} : { metadata: group.metadata }),
      })
    }
    const every = [...denied.map(() => "deny" as const), ...groups.flatMap((g) => [...g.effects.values()])]
    const effect = every.includes("deny") ? "deny" : every.includes("ask") ? "ask" : "allow"
    return { parsed, verdicts, groups, asserts, effect } satisfies Plan
  })
