/**
 * ProtectedPath: the files and folders that decide a Location's rules and identity — configuration documents,
 * `.toolgate/` folders (agents, skills), the other skill roots, the user's configuration directory and git metadata
 * (`.git/`, the git common directory). A tool that would change one of them asks `protected_path` first, even when
 * its own rules allow the write. See docs/trust/protected-paths.md.
 *
 * Matching is by path segment and ignores letter case and trailing dots or spaces, so a case-insensitive or Windows
 * file system cannot offer a second spelling of the same file.
 *
 * @since 0.2.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Global from "../system/global.js"
import * as Path from "../values/path.js"
import * as GitConfigured from "./internal/git-configured.js"
import * as Location from "./location.js"

/**
 * The permission action a mutation of a protected path asks. Only a rule naming this action exactly can allow it;
 * a wildcard-action allow (`* * allow`) does not.
 *
 * @since 0.2.0
 * @category constants
 */
export const ACTION = "protected_path"

/**
 * The configuration document names, protected in every directory.
 *
 * @since 0.2.0
 * @category constants
 */
export const CONFIG_FILES = ["toolgate.json", "toolgate.jsonc"] as const

/**
 * Folders protected with everything below them, wherever they appear: the per-directory configuration folder (agents,
 * skills, nested documents) and git metadata (hooks, `config`, the project-id cache).
 *
 * @since 0.2.0
 * @category constants
 */
export const DIRECTORIES = [".toolgate", ".git"] as const

/**
 * Skill roots outside `.toolgate/`: `<folder>/skills` below each of these folders, wherever it appears.
 *
 * @since 0.2.0
 * @category constants
 */
export const SKILL_FOLDERS = [".claude", ".agents"] as const

/**
 * The documented list of protected paths. Entries without a leading `<…>` apply in every directory, at any depth
 * (a nested repository's `.git`, a linked worktree's `.git` file); the `<…>` entries are the current Location's user
 * configuration directory, its git store, what its git configuration names (the `core.hooksPath` directory, the
 * files `include.path` and `includeIf.*.path` name, the configuration files git reads) and any directory an embedder
 * adds (`layerWith`).
 *
 * @since 0.2.0
 * @category constants
 */
export const PATHS = [
  "toolgate.json",
  "toolgate.jsonc",
  ".toolgate/**",
  ".claude/skills/**",
  ".agents/skills/**",
  ".git/**",
  "<user config directory>/**",
  "<git common directory>/**",
  "<git hooks directory>/**",
  "<git include file>",
  "<git configuration file>",
  "<extra root>/**",
] as const

/**
 * Why a path is protected: the `PATHS` entry it falls under.
 *
 * @since 0.2.0
 * @category models
 */
export interface Match {
  /** The classified absolute path. */
  readonly path: string
  /** The `PATHS` entry, e.g. `.git/**`. */
  readonly entry: (typeof PATHS)[number]
}

/** Lower-cases and drops trailing dots and spaces (Windows ignores them; `.GIT` is `.git` on macOS). */
const fold = (segment: string): string => segment.replace(/[. ]+$/, "").toLowerCase()

const FOLDED_FILES: ReadonlySet<string> = new Set(CONFIG_FILES.map(fold))
const FOLDED_DIRECTORIES: ReadonlyMap<string, Match["entry"]> = new Map([
  [fold(".toolgate"), ".toolgate/**"],
  [fold(".git"), ".git/**"],
])
const FOLDED_SKILL_FOLDERS: ReadonlyMap<string, Match["entry"]> = new Map([
  [fold(".claude"), ".claude/skills/**"],
  [fold(".agents"), ".agents/skills/**"],
])

const segmentsOf = (absolute: string): ReadonlyArray<string> =>
  absolute
    .replaceAll("\\", "/")
    .split("/")
    .filter((segment) => segment !== "")

/**
 * A directory protected with everything below it, and the `PATHS` entry it stands for.
 *
 * @since 0.2.0
 * @category models
 */
export interface Root {
  readonly directory: string
  readonly entry: Match["entry"]
}

/**
 * Classifies an absolute path: the `PATHS` entry it falls under, or `undefined`. `roots` are the Location's
 * wholesale-protected directories (see `roots`). Pass the canonical path (symlinks resolved) so a link cannot
 * disguise its target; the check is pure and never touches the disk.
 *
 * @since 0.2.0
 * @category utilities
 */
export const classify = (absolute: string, roots: ReadonlyArray<Root> = []): Match | undefined => {
  const resolved = path.resolve(absolute)
  for (const root of roots) if (Path.isWithin(root.directory, resolved)) return { path: absolute, entry: root.entry }
  const segments = segmentsOf(resolved).map(fold)
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!
    const directory = FOLDED_DIRECTORIES.get(segment)
    if (directory !== undefined) return { path: absolute, entry: directory }
    const skills = FOLDED_SKILL_FOLDERS.get(segment)
    if (skills !== undefined && segments[i + 1] === "skills") return { path: absolute, entry: skills }
  }
  const last = segments[segments.length - 1]
  if (last !== undefined && FOLDED_FILES.has(last)) {
    return { path: absolute, entry: last === fold("toolgate.json") ? "toolgate.json" : "toolgate.jsonc" }
  }
  return undefined
}

/**
 * The `PATHS` entry a directory entry named `name` falls under wherever it appears, given the name of the directory
 * holding it (`parent`): a configuration document, `.toolgate`, `.git` (a directory, or a linked worktree's file) or
 * a `skills` folder of `.claude`/`.agents`; `undefined` otherwise. What a walk over a tree uses to find the protected
 * paths at every depth.
 *
 * @since 0.4.0
 * @category utilities
 */
export const classifyName = (name: string, parent: string): Match["entry"] | undefined => {
  const folded = fold(name)
  const directory = FOLDED_DIRECTORIES.get(folded)
  if (directory !== undefined) return directory
  if (FOLDED_FILES.has(folded)) return folded === fold("toolgate.json") ? "toolgate.json" : "toolgate.jsonc"
  if (folded === "skills") return FOLDED_SKILL_FOLDERS.get(fold(parent))
  return undefined
}

const real = (directory: string): string => {
  try {
    return fs.realpathSync(directory)
  } catch {
    return path.resolve(directory)
  }
}

/**
 * The wholesale-protected directories of a Location: the user's configuration directory and, for a git Location,
 * the git common directory (which holds the project-id cache and, for linked worktrees, the real hooks and config).
 * Each is listed as given and as its real path.
 *
 * @since 0.2.0
 * @category utilities
 */
export const roots = (location: Location.Interface, global: Global.Interface): ReadonlyArray<Root> => {
  const out: Array<Root> = []
  const add = (directory: string, entry: Match["entry"]) => {
    for (const candidate of new Set([path.resolve(directory), real(directory)]))
      out.push({ directory: candidate, entry })
  }
  add(global.config, "<user config directory>/**")
  if (location.vcs !== undefined) add(location.vcs.store, "<git common directory>/**")
  return out
}

/**
 * The ProtectedPath operations of one Location.
 *
 * @since 0.2.0
 * @category models
 */
export interface Interface {
  /** The wholesale-protected directories. */
  readonly roots: ReadonlyArray<Root>
  /** `classify` against this Location's roots. */
  readonly classify: (absolute: string) => Match | undefined
}

/**
 * The ProtectedPath service (Location-scoped).
 *
 * @since 0.2.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/ProtectedPath")<Service, Interface>() {}

/**
 * A service over explicit roots (embedders with their own skill sources add them here).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (rootList: ReadonlyArray<Root>): Interface =>
  Service.of({ roots: rootList, classify: (absolute) => classify(absolute, rootList) })

/**
 * The roots a repository's git configuration names: the `core.hooksPath` directories, the included files and the
 * configuration files git reads (each as given and as its real path), read with `git config` in `worktree`. A
 * repository whose configuration git cannot list gets none, with a warning naming it.
 *
 * @since 0.4.0
 * @category utilities
 */
export const gitRoots = (worktree: string, home: string): Effect.Effect<ReadonlyArray<Root>> =>
  Effect.gen(function* () {
    const configured = yield* GitConfigured.read(worktree, home)
    if (configured === undefined) {
      yield* Effect.logWarning(
        `The git configuration of ${worktree} could not be read: the hooks directory and included files it may name are not protected`,
      )
      return []
    }
    const out: Array<Root> = []
    const add = (entries: ReadonlyArray<string>, entry: Match["entry"]) => {
      for (const directory of entries)
        for (const candidate of new Set([path.resolve(directory), real(directory)]))
          out.push({ directory: candidate, entry })
    }
    add(configured.hooks, "<git hooks directory>/**")
    add(configured.includes, "<git include file>")
    add(configured.files, "<git configuration file>")
    return out
  })

/**
 * The Location-scoped layer: the name-based entries plus this Location's user configuration directory, git store and
 * what its git configuration names (`gitRoots`, read once when the layer is built); `extra` adds more
 * wholesale-protected directories (for example skill sources given to `SkillV2.layerFromSources`).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerWith = (
  extra: ReadonlyArray<string> = [],
): Layer.Layer<Service, never, Location.Service | Global.Service> =>
  Layer.effect(
    Service,
    Effect.gen(function* () {
      return make(yield* locationRoots(yield* Location.Service, yield* Global.Service, extra))
    }),
  )

/**
 * Every wholesale-protected root of a Location: `roots`, its repository's `gitRoots` and the `extra` directories.
 * What `layerWith` serves; a service that needs the set without the layer (the sandbox built alone) reads it here.
 *
 * @since 0.4.0
 * @category utilities
 */
export const locationRoots = (
  location: Location.Interface,
  global: Global.Interface,
  extra: ReadonlyArray<string> = [],
): Effect.Effect<ReadonlyArray<Root>> =>
  Effect.gen(function* () {
    const more = extra.flatMap((directory) =>
      [...new Set([path.resolve(directory), real(directory)])].map((candidate): Root => ({
        directory: candidate,
        entry: "<extra root>/**",
      })),
    )
    const git = location.vcs === undefined ? [] : yield* gitRoots(location.project.directory, global.home)
    return [...roots(location, global), ...git, ...more]
  })

/**
 * The Location-scoped layer with no extra roots.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, Location.Service | Global.Service> = layerWith()
