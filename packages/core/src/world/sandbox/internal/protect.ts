/**
 * The protected paths of a Location inside a bubblewrap sandbox: every configuration file, configuration folder,
 * skill root and git directory that decides this Location (in each directory from the project root down to it), and
 * the wholesale-protected roots (the user configuration directory, the git store, embedder roots), wherever they
 * fall inside a writable bind.
 *
 * An existing one is bound read-only. A missing one has no mount point, so a sandboxed command could create it;
 * it gets a **placeholder**: an empty directory created on the host right before the call and bound read-only onto
 * itself, so inside the sandbox the name exists, cannot be written, removed or replaced, and a create fails. The
 * placeholder is removed with `rmdir` after the last call using it — `rmdir` removes only an empty directory, so
 * nothing anyone else put there is lost, and configuration discovery ignores a directory named `toolgate.json`
 * while it exists. Directories on the way from the writable bind to a protected path are bound onto themselves
 * (mount points cannot be renamed), so `mv .claude x && mkdir -p .claude/skills` cannot route around the
 * protection. A placeholder still mounted in another process's sandbox (two toolgate processes in one Location) is
 * left in place rather than pulled from under it.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as ProtectedPath from "../../../place/protected-path.js"
import * as ProcessGroup from "../../../system/process-group.js"

/**
 * The names protected in every directory of the Location's chain, in the order they are bound.
 *
 * @since 0.3.0
 * @category constants
 */
export const CHAIN_ENTRIES: ReadonlyArray<string> = [
  ...ProtectedPath.CONFIG_FILES,
  ...ProtectedPath.DIRECTORIES,
  ...ProtectedPath.SKILL_FOLDERS.map((folder) => path.join(folder, "skills")),
]

/**
 * True iff `child` is `root` or below it (both absolute and resolved).
 *
 * @since 0.3.0
 * @category utilities
 */
export const within = (root: string, child: string): boolean => {
  const relative = path.relative(root, child)
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
}

/**
 * What the sandbox binds for the protected paths of one call.
 *
 * @since 0.3.0
 * @category models
 */
export interface Protection {
  /** Bound read-only (existing protected paths and placeholders). */
  readonly readOnly: ReadonlyArray<string>
  /** Bound read-write onto themselves (directories between a writable bind and a protected path). */
  readonly pinned: ReadonlyArray<string>
}

const exists = (entry: string): boolean => fs.lstatSync(entry, { throwIfNoEntry: false }) !== undefined

/**
 * The protected paths that lie inside `writable` (resolved absolute directories): `CHAIN_ENTRIES` in each of
 * `chain`, and `roots`. Paths outside every writable bind stay read-only with the root filesystem.
 *
 * @since 0.3.0
 * @category utilities
 */
export const targets = (
  chain: ReadonlyArray<string>,
  roots: ReadonlyArray<string>,
  writable: ReadonlyArray<string>,
): ReadonlyArray<{ readonly path: string; readonly base: string }> => {
  const out = new Map<string, string>()
  const all = [...chain.flatMap((directory) => CHAIN_ENTRIES.map((entry) => path.join(directory, entry))), ...roots]
  // One inside another is read-only with it already.
  const candidates = all.filter((candidate) => !all.some((other) => other !== candidate && within(other, candidate)))
  for (const candidate of candidates) {
    // The innermost writable bind is where the mount point would be created.
    let base: string | undefined
    for (const directory of writable) {
      if (within(directory, candidate) && directory !== candidate && (base === undefined || within(base, directory)))
        base = directory
    }
    if (base !== undefined && !out.has(candidate)) out.set(candidate, base)
  }
  return [...out].map(([entry, base]) => ({ path: entry, base }))
}

/**
 * The placeholders of one Location, shared by its concurrent calls: created by the first call that needs one,
 * removed after the last.
 *
 * @since 0.3.0
 * @category models
 */
export interface Registry {
  /**
   * Creates what is missing and returns the binds; `release` must be called once the call's sandbox is gone. A
   * placeholder that cannot be created (a read-only or foreign directory) throws: the call must not run unprotected.
   */
  readonly acquire: (entries: ReadonlyArray<{ readonly path: string; readonly base: string }>) => {
    readonly protection: Protection
    readonly release: () => void
  }
}

/** The mount namespace of a process, or `undefined` when it cannot be read (another user's process). */
const namespaceOf = (pid: string): string | undefined => {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/mnt`)
  } catch {
    return undefined
  }
}

/** Placeholder paths still mounted in some other process's mount namespace (a concurrent sandbox elsewhere). */
const mountedElsewhere = (paths: ReadonlyArray<string>): ReadonlySet<string> => {
  const wanted = new Set(
    paths.map((entry) => entry.replace(/[\\ \t\n]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`)),
  )
  const found = new Set<string>()
  let pids: Array<string>
  try {
    pids = fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
  } catch {
    return new Set(paths)
  }
  const own = namespaceOf("self")
  for (const pid of pids) {
    // A process in this mount namespace cannot hold a sandbox's mount; only others are read.
    if (own !== undefined && namespaceOf(pid) === own) continue
    let info: string
    try {
      info = fs.readFileSync(`/proc/${pid}/mountinfo`, "utf8")
    } catch {
      continue
    }
    for (const line of info.split("\n")) {
      const point = line.split(" ")[4]
      if (point !== undefined && wanted.has(point))
        found.add(point.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))))
    }
  }
  return found
}

/**
 * The names whose empty directory is never anyone's real content (a configuration document is a file, a git
 * directory is never empty): a placeholder of one of these left by a toolgate process that died during a call.
 *
 * @since 0.3.0
 * @category constants
 */
export const SWEPT: ReadonlyArray<string> = ["toolgate.json", "toolgate.jsonc", ".git"]

/**
 * Removes the placeholders a process that died during a call left behind in `chain` (empty directories named in
 * `SWEPT` that no sandbox has mounted); the other placeholders are empty folders that add nothing and are left.
 *
 * @since 0.3.0
 * @category utilities
 */
export const sweep = (chain: ReadonlyArray<string>): void => {
  const candidates = chain
    .flatMap((directory) => SWEPT.map((name) => path.join(directory, name)))
    .filter((entry) => {
      try {
        return fs.lstatSync(entry).isDirectory() && fs.readdirSync(entry).length === 0
      } catch {
        return false
      }
    })
  if (candidates.length === 0) return
  const busy = mountedElsewhere(candidates)
  for (const entry of candidates) {
    if (busy.has(entry)) continue
    try {
      fs.rmdirSync(entry)
    } catch {
      // Someone put something there since, or it is not ours to remove.
    }
  }
}

/**
 * A registry for one Location.
 *
 * @since 0.3.0
 * @category utilities
 */
export const registry = (): Registry => {
  /** Paths this process created, with the number of calls using each. */
  const users = new Map<string, number>()

  const release = (created: ReadonlyArray<string>) => {
    const last: Array<string> = []
    for (const entry of created) {
      const count = (users.get(entry) ?? 1) - 1
      if (count > 0) users.set(entry, count)
      else {
        users.delete(entry)
        last.push(entry)
      }
    }
    if (last.length === 0) return
    const busy = mountedElsewhere(last)
    // Deepest first, so a placeholder parent is empty when its turn comes.
    for (const entry of [...last].sort((a, b) => b.length - a.length)) {
      if (busy.has(entry)) continue
      try {
        fs.rmdirSync(entry)
      } catch {
        // Not empty (the command or the user put something there): it is theirs now.
      }
    }
  }

  return {
    acquire: (entries) => {
      const readOnly: Array<string> = []
      const pinned = new Set<string>()
      const created: Array<string> = []
      const use = (entry: string): boolean => {
        const count = users.get(entry)
        if (count !== undefined) {
          users.set(entry, count + 1)
          created.push(entry)
          return true
        }
        if (exists(entry)) return false
        try {
          fs.mkdirSync(entry, { mode: 0o755 })
        } catch (error) {
          release(created)
          throw error
        }
        users.set(entry, 1)
        created.push(entry)
        return true
      }
      for (const { path: target, base } of entries) {
        // Every directory between the writable bind and the target: pinned, created when missing.
        const parts = path.relative(base, target).split(path.sep)
        let current = base
        for (const part of parts.slice(0, -1)) {
          current = path.join(current, part)
          use(current)
          pinned.add(current)
        }
        use(target)
        readOnly.push(target)
      }
      return {
        protection: { readOnly, pinned: [...pinned] },
        release: () => release(created),
      }
    },
  }
}

/** Variables that would point git at another repository than the one asked about. */
const GIT_ENVIRONMENT: Readonly<Record<string, undefined>> = {
  GIT_DIR: undefined,
  GIT_WORK_TREE: undefined,
  GIT_COMMON_DIR: undefined,
  GIT_INDEX_FILE: undefined,
  GIT_PREFIX: undefined,
}

/**
 * The git directories that `.git` files (linked worktrees, submodules, `--separate-git-dir` repositories) point at,
 * asked of git itself (`rev-parse --absolute-git-dir --git-common-dir`) and kept per file while its inode and change
 * time stay the same. A file git cannot read points nowhere git would use; it is bound read-only itself.
 *
 * @since 0.4.0
 * @category utilities
 */
export const gitDirectories = (): ((entries: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>) => {
  const cache = new Map<string, { readonly key: string; readonly directories: ReadonlyArray<string> }>()
  return (entries) =>
    Effect.forEach(
      entries,
      (entry) => {
        const info = fs.lstatSync(entry, { throwIfNoEntry: false, bigint: true })
        if (info === undefined || !info.isFile()) return Effect.succeed<ReadonlyArray<string>>([])
        const key = `${info.ino}:${info.ctimeNs}:${info.mtimeNs}`
        const cached = cache.get(entry)
        if (cached !== undefined && cached.key === key) return Effect.succeed(cached.directories)
        const worktree = path.dirname(entry)
        return ProcessGroup.run(
          {
            command: "git",
            args: ["rev-parse", "--absolute-git-dir", "--git-common-dir"],
            cwd: worktree,
            env: GIT_ENVIRONMENT,
          },
          { maxOutputBytes: 64 * 1024, maxErrorBytes: 0, timeout: "10 seconds" },
        ).pipe(
          Effect.map((result) =>
            result.exitCode !== 0 || result.stdoutTruncated
              ? []
              : Buffer.from(result.stdout)
                  .toString("utf8")
                  .split("\n")
                  .filter((line) => line !== "")
                  .map((line) => path.resolve(worktree, line)),
          ),
          Effect.orElseSucceed((): ReadonlyArray<string> => []),
          Effect.tap((directories) => Effect.sync(() => cache.set(entry, { key, directories }))),
        )
      },
      { concurrency: 4 },
    ).pipe(Effect.map((lists) => [...new Set(lists.flat())]))
}
