/**
 * The Node engine's directory walk: depth first, each directory's entries in UTF-8 byte order, with ripgrep's
 * per-entry decision order (overrides, then ignore files, then the hidden rule). Symlinks are not followed and
 * only regular files are visited.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as nodePath from "node:path"
import type * as Globs from "./globs.js"
import { compareNames } from "./order.js"
import * as Rules from "./rules.js"

/** One ignore file in effect: `matcher` sees `prefix + underPath.slice(strip)`. */
interface Source {
  readonly matcher: Rules.Matcher
  readonly prefix: string
  readonly strip: number
}

/** The ignore files in effect inside one directory, nearest first per category. */
interface Scope {
  readonly custom: ReadonlyArray<Source>
  readonly ignore: ReadonlyArray<Source>
  readonly git: ReadonlyArray<Source>
  readonly exclude: ReadonlyArray<Source>
  /** This directory or an ancestor holds `.git`. */
  readonly anyGit: boolean
}

const emptyScope: Scope = { custom: [], ignore: [], git: [], exclude: [], anyGit: false }

/**
 * What a walk needs; `stopped` ends it at the next entry.
 *
 * @since 0.1.0
 * @category models
 */
export interface Walk {
  /** Directory the printed paths are relative to. */
  readonly cwd: string
  /** The walk root as given (`.` or a relative directory); printed paths start with it unless it is `.`. */
  readonly root: string
  readonly overrides: Globs.Overrides
  /** Whether hidden entries pass the hidden rule (grep) or not (glob). */
  readonly hidden: boolean
  readonly signal?: AbortSignal | undefined
  stopped: boolean
}

/**
 * Receives each accepted regular file: its printed path (normalized) and absolute path.
 *
 * @since 0.1.0
 * @category models
 */
export type Visit = (path: string, absolute: string) => void | Promise<void>

const readText = (file: string): Promise<string | undefined> =>
  new Promise((resolve) => fs.readFile(file, "utf8", (error, text) => resolve(error ? undefined : text)))

const readDirectory = (directory: string): Promise<Array<fs.Dirent>> =>
  new Promise((resolve, reject) =>
    fs.readdir(directory, { withFileTypes: true }, (error, entries) => (error ? reject(error) : resolve(entries))),
  )

const lstat = (file: string): Promise<fs.Stats | undefined> =>
  new Promise((resolve) => fs.lstat(file, (error, stats) => resolve(error ? undefined : stats)))

const exists = (file: string): Promise<boolean> => new Promise((resolve) => fs.stat(file, (error) => resolve(!error)))

/** `.git/info/exclude` of a repository root, following a `gitdir:` file (worktrees) to the common directory. */
const excludeFile = async (directory: string, gitIsDirectory: boolean): Promise<string | undefined> => {
  const dotGit = nodePath.join(directory, ".git")
  if (gitIsDirectory) return readText(nodePath.join(dotGit, "info", "exclude"))
  const pointer = await readText(dotGit)
  const gitdir = pointer?.match(/^gitdir:\s*(.+?)\s*$/m)?.[1]
  if (gitdir === undefined) return undefined
  const resolved = nodePath.resolve(directory, gitdir)
  const common = await readText(nodePath.join(resolved, "commondir"))
  const base = common === undefined ? resolved : nodePath.resolve(resolved, common.trim())
  return readText(nodePath.join(base, "info", "exclude"))
}

const source = (text: string | undefined, prefix: string, strip: number): Source | undefined => {
  if (text === undefined) return undefined
  const matcher = Rules.compile(text)
  return matcher === undefined ? undefined : { matcher, prefix, strip }
}

const push = (own: Source | undefined, inherited: ReadonlyArray<Source>): ReadonlyArray<Source> =>
  own === undefined ? inherited : [own, ...inherited]

/** Builds the scope of a directory from its parent's scope and the ignore files it holds. */
const enter = async (
  parent: Scope,
  directory: string,
  present: {
    readonly rgignore: boolean
    readonly ignore: boolean
    readonly gitignore: boolean
    readonly git: "none" | "file" | "directory"
  },
  prefix: string,
  strip: number,
): Promise<Scope> => {
  const hasGit = present.git !== "none"
  const anyGit = hasGit || parent.anyGit
  const [custom, ignore, git, exclude] = await Promise.all([
    present.rgignore ? readText(nodePath.join(directory, ".rgignore")) : undefined,
    present.ignore ? readText(nodePath.join(directory, ".ignore")) : undefined,
    anyGit && present.gitignore ? readText(nodePath.join(directory, ".gitignore")) : undefined,
    hasGit ? excludeFile(directory, present.git === "directory") : undefined,
  ])
  // Git rules stop at the nearest repository root: a directory holding `.git` starts a fresh list.
  const inheritedGit = hasGit ? [] : parent.git
  const inheritedExclude = hasGit ? [] : parent.exclude
  return {
    custom: push(source(custom, prefix, strip), parent.custom),
    ignore: push(source(ignore, prefix, strip), parent.ignore),
    git: anyGit ? push(source(git, prefix, strip), inheritedGit) : [],
    exclude: anyGit ? push(source(exclude, prefix, strip), inheritedExclude) : [],
    anyGit,
  }
}

/** The scope that ancestors of the walk root contribute (ripgrep reads ignore files up to the filesystem root). */
const ancestors = async (root: string): Promise<Scope> => {
  const chain: Array<string> = []
  for (let current = nodePath.dirname(root); ; current = nodePath.dirname(current)) {
    chain.push(current)
    if (nodePath.dirname(current) === current) break
  }
  let scope = emptyScope
  for (const directory of chain.reverse()) {
    const [rgignore, ignore, gitignore, git] = await Promise.all([
      exists(nodePath.join(directory, ".rgignore")),
      exists(nodePath.join(directory, ".ignore")),
      exists(nodePath.join(directory, ".gitignore")),
      lstat(nodePath.join(directory, ".git")),
    ])
    const relative = nodePath.relative(directory, root).split(nodePath.sep).join("/")
    scope = await enter(
      scope,
      directory,
      { rgignore, ignore, gitignore, git: git === undefined ? "none" : git.isDirectory() ? "directory" : "file" },
      `${relative}/`,
      0,
    )
  }
  return scope
}

const first = (sources: ReadonlyArray<Source>, path: string): Rules.Verdict => {
  for (const { matcher, prefix, strip } of sources) {
    const verdict = matcher(prefix + (strip === 0 ? path : path.slice(strip)))
    if (verdict !== Rules.Verdict.None) return verdict
  }
  return Rules.Verdict.None
}

const ignoreVerdict = (scope: Scope, path: string): Rules.Verdict => {
  let verdict = first(scope.custom, path)
  if (verdict === Rules.Verdict.None) verdict = first(scope.ignore, path)
  if (verdict === Rules.Verdict.None) verdict = first(scope.git, path)
  if (verdict === Rules.Verdict.None) verdict = first(scope.exclude, path)
  return verdict
}

const kindOf = async (entry: fs.Dirent, absolute: string): Promise<"file" | "directory" | "other"> => {
  if (entry.isFile()) return "file"
  if (entry.isDirectory()) return "directory"
  if (
    entry.isSymbolicLink() ||
    entry.isFIFO() ||
    entry.isSocket() ||
    entry.isCharacterDevice() ||
    entry.isBlockDevice()
  ) {
    return "other"
  }
  const stats = await lstat(absolute)
  return stats?.isFile() ? "file" : stats?.isDirectory() ? "directory" : "other"
}

/**
 * Walks `walk.root` (a directory) under `walk.cwd`, calling `visit` for each accepted file in path order and
 * awaiting it before going on. Fails only when the root itself cannot be read.
 *
 * @since 0.1.0
 * @category utilities
 */
export const run = async (walk: Walk, visit: Visit): Promise<void> => {
  const rootAbsolute = nodePath.resolve(walk.cwd, walk.root)
  const rootReal = await fs.promises.realpath(rootAbsolute)
  const printedRoot = walk.root === "." ? "" : `${walk.root.replace(/[\\/]+$/, "")}/`
  const parentScope = await ancestors(rootReal)

  const directory = async (absolute: string, under: string, parent: Scope, isRoot: boolean): Promise<void> => {
    let entries: Array<fs.Dirent>
    try {
      entries = await readDirectory(absolute)
    } catch (error) {
      if (isRoot) throw error
      return
    }
    let git: "none" | "file" | "directory" = "none"
    let rgignore = false
    let ignore = false
    let gitignore = false
    for (const entry of entries) {
      const name = entry.name
      if (name.charCodeAt(0) !== 46) continue
      if (name === ".git") git = entry.isDirectory() ? "directory" : "file"
      else if (name === ".rgignore") rgignore = true
      else if (name === ".ignore") ignore = true
      else if (name === ".gitignore") gitignore = true
    }
    const strip = under === "" ? 0 : under.length + 1
    const scope =
      git === "none" && !rgignore && !ignore && !(gitignore && parent.anyGit)
        ? parent
        : await enter(parent, absolute, { rgignore, ignore, gitignore, git }, "", strip)
    entries.sort((a, b) => compareNames(a.name, b.name))
    for (const entry of entries) {
      if (walk.stopped || walk.signal?.aborted) return
      const name = entry.name
      const childAbsolute = absolute + nodePath.sep + name
      const kind = await kindOf(entry, childAbsolute)
      if (kind === "other") continue
      const isDirectory = kind === "directory"
      // Everything under a `.git` directory is excluded (`--glob=!**/.git/**`), so it is never walked.
      if (isDirectory && name === ".git") continue
      const childUnder = under === "" ? name : `${under}/${name}`
      const printed = printedRoot + childUnder
      const decision = walk.overrides.decide(printed, isDirectory)
      if (decision === "exclude") continue
      if (decision === undefined) {
        const verdict = ignoreVerdict(scope, isDirectory ? `${childUnder}/` : childUnder)
        if (verdict === Rules.Verdict.Ignore) continue
        if (verdict !== Rules.Verdict.Whitelist && !walk.hidden && name.charCodeAt(0) === 46) continue
      }
      if (isDirectory) await directory(childAbsolute, childUnder, scope, false)
      else await visit(printed, childAbsolute)
    }
  }

  await directory(rootReal, "", parentScope, true)
}
