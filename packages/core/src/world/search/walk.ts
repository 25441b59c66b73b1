/**
 * What the Node engine's walk decides: ripgrep's per-entry decision order (overrides, then ignore files, then the
 * hidden rule) over `ConfinedWalk.traverse`, which walks depth first without following symlinks, each directory's
 * entries in UTF-8 byte order, and returns only regular files. The ignore files in effect in a directory are read
 * as the walk enters it.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as nodePath from "node:path"
import * as ConfinedWalk from "../../system/confined-walk.js"
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

const readText = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

const lstat = (file: string): fs.Stats | undefined => {
  try {
    return fs.lstatSync(file)
  } catch {
    return undefined
  }
}

/** Files visited between two yields to the event loop, so interruption and other fibers still run. */
const YIELD_EVERY = 64

/** `.git/info/exclude` of a repository root, following a `gitdir:` file (worktrees) to the common directory. */
const excludeFile = (directory: string, gitIsDirectory: boolean): string | undefined => {
  const dotGit = nodePath.join(directory, ".git")
  if (gitIsDirectory) return readText(nodePath.join(dotGit, "info", "exclude"))
  const pointer = readText(dotGit)
  const gitdir = pointer?.match(/^gitdir:\s*(.+?)\s*$/m)?.[1]
  if (gitdir === undefined) return undefined
  const resolved = nodePath.resolve(directory, gitdir)
  const common = readText(nodePath.join(resolved, "commondir"))
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
const enter = (
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
): Scope => {
  const hasGit = present.git !== "none"
  const anyGit = hasGit || parent.anyGit
  const custom = present.rgignore ? readText(nodePath.join(directory, ".rgignore")) : undefined
  const ignore = present.ignore ? readText(nodePath.join(directory, ".ignore")) : undefined
  const git = anyGit && present.gitignore ? readText(nodePath.join(directory, ".gitignore")) : undefined
  const exclude = hasGit ? excludeFile(directory, present.git === "directory") : undefined
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
const ancestors = (root: string): Scope => {
  const chain: Array<string> = []
  for (let current = nodePath.dirname(root); ; current = nodePath.dirname(current)) {
    chain.push(current)
    if (nodePath.dirname(current) === current) break
  }
  let scope = emptyScope
  for (const directory of chain.reverse()) {
    const rgignore = fs.existsSync(nodePath.join(directory, ".rgignore"))
    const ignore = fs.existsSync(nodePath.join(directory, ".ignore"))
    const gitignore = fs.existsSync(nodePath.join(directory, ".gitignore"))
    const git = lstat(nodePath.join(directory, ".git"))
    const relative = nodePath.relative(directory, root).split(nodePath.sep).join("/")
    scope = enter(
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

/**
 * Walks `walk.root` (a directory) under `walk.cwd`, calling `visit` for each accepted file in path order and
 * awaiting it before going on. Fails only when the root itself cannot be read.
 *
 * @since 0.1.0
 * @category utilities
 */
export const run = async (walk: Walk, visit: Visit): Promise<void> => {
  const rootReal = fs.realpathSync(nodePath.resolve(walk.cwd, walk.root))
  const printedRoot = walk.root === "." ? "" : `${walk.root.replace(/[\\/]+$/, "")}/`
  const files = ConfinedWalk.traverse<Scope>(rootReal, {
    symlinks: "skip",
    lenient: true,
    compare: compareNames,
    initial: ancestors(rootReal),
    enter: (folder, listing, parent) => {
      let git: "none" | "file" | "directory" = "none"
      let rgignore = false
      let ignore = false
      let gitignore = false
      for (const { name, kind } of listing) {
        if (name.charCodeAt(0) !== 46) continue
        if (name === ".git") git = kind === "directory" ? "directory" : "file"
        else if (name === ".rgignore") rgignore = true
        else if (name === ".ignore") ignore = true
        else if (name === ".gitignore") gitignore = true
      }
      if (git === "none" && !rgignore && !ignore && !(gitignore && parent.anyGit)) return parent
      const under = folder?.relative ?? ""
      return enter(
        parent,
        folder?.path ?? rootReal,
        { rgignore, ignore, gitignore, git },
        "",
        under === "" ? 0 : under.length + 1,
      )
    },
    accept: (entry, scope) => {
      // Everything under a `.git` directory is excluded (`--glob=!**/.git/**`), so it is never walked.
      if (entry.directory && entry.name === ".git") return false
      const decision = walk.overrides.decide(printedRoot + entry.relative, entry.directory)
      if (decision === "exclude") return false
      if (decision === "include") return true
      const verdict = ignoreVerdict(scope, entry.directory ? `${entry.relative}/` : entry.relative)
      if (verdict === Rules.Verdict.Ignore) return false
      return verdict === Rules.Verdict.Whitelist || walk.hidden || entry.name.charCodeAt(0) !== 46
    },
  })
  let sinceYield = 0
  for (const file of files) {
    if (walk.stopped || walk.signal?.aborted) return
    await visit(printedRoot + file.relative, file.path)
    if (++sinceYield >= YIELD_EVERY) {
      sinceYield = 0
      await new Promise<void>((resolve) => setImmediate(resolve))
    }
  }
}
