/**
 * What a bubblewrap sandbox hides: the user's credential stores, the system's secret files (which a root runner's
 * sandbox could otherwise read, its host-side uid being root), the secret-file family (`.env*`) found in the
 * Location at call time, and the configured `deny_read` paths. A hidden file reads as empty, a hidden directory as
 * an empty directory; both are read-only.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as AgentBuiltins from "../../../agent/builtins.js"
import * as PermissionV2 from "../../../permission/permission.js"
import * as ProtectedPath from "../../../place/protected-path.js"
import * as ProcessGroup from "../../../system/process-group.js"

/**
 * Credential stores below the home directory. Each is hidden when it exists.
 *
 * @since 0.3.0
 * @category constants
 */
export const CREDENTIAL_STORES: ReadonlyArray<string> = [
  // Keys and agents.
  ".ssh",
  ".gnupg",
  ".local/share/keyrings",
  ".password-store",
  ".pki",
  // Clouds and clusters.
  ".aws",
  ".azure",
  ".config/gcloud",
  ".kube",
  ".oci",
  ".config/doctl",
  ".terraform.d/credentials.tfrc.json",
  ".vault-token",
  ".config/rclone",
  // Containers.
  ".docker",
  ".config/containers/auth.json",
  // Package registries.
  ".npmrc",
  ".yarnrc.yml",
  ".pypirc",
  ".gem/credentials",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".m2/settings.xml",
  ".gradle/gradle.properties",
  // Source hosting and git.
  ".netrc",
  ".git-credentials",
  ".config/git/credentials",
  ".config/gh",
  ".config/hub",
  // Databases.
  ".pgpass",
  ".my.cnf",
  // Password managers.
  ".config/op",
]

/**
 * System files that hold secrets; the kernel keeps them from an ordinary user, but a root runner's sandbox runs with
 * the host-side uid root. Each is hidden when it exists, whoever runs toolgate.
 *
 * @since 0.3.0
 * @category constants
 */
export const SYSTEM_SECRETS: ReadonlyArray<string> = [
  "/etc/shadow",
  "/etc/shadow-",
  "/etc/gshadow",
  "/etc/gshadow-",
  "/etc/security/opasswd",
  "/etc/ssl/private",
  "/etc/krb5.keytab",
]

/** The directory of the SSH host keys; its `ssh_host_*_key` files are hidden too. */
const SSH_DIRECTORY = "/etc/ssh"
const SSH_HOST_KEY = /^ssh_host_.*_key$/

/**
 * Directories the call-time search for the secret family does not enter: `.git` (repository metadata, read-only in
 * the sandbox) and `node_modules` (installed packages; a secret cannot be moved there from inside the sandbox,
 * since the hidden file reads as empty and its mount cannot be renamed). See docs/sandbox.md for the measured cost.
 *
 * @since 0.3.0
 * @category constants
 */
export const SEARCH_SKIPS: ReadonlyArray<string> = [".git", "node_modules"]

/** The default `read` rules' verdict on the secret family, `allow` for everything else. */
const FAMILY: ReadonlyArray<PermissionV2.Rule> = [
  { action: "read", resource: "*", effect: "allow" },
  ...AgentBuiltins.secretRules,
]

/** A cheap first test every member of the family passes (the patterns all contain `.env`, in any case). */
const mayBeSecret = (name: string): boolean => name.toLowerCase().includes(".env")

/**
 * True iff `absolute` is in the secret family the default `read` rules ask for (templates excluded).
 *
 * @since 0.3.0
 * @category guards
 */
export const isSecretFile = (absolute: string): boolean =>
  mayBeSecret(path.basename(absolute)) &&
  PermissionV2.evaluate("read", absolute.replaceAll("\\", "/"), FAMILY).effect === "ask"

/**
 * What to hide: existing paths, split by what replaces them.
 *
 * @since 0.3.0
 * @category models
 */
export interface Hidden {
  readonly files: ReadonlyArray<string>
  readonly directories: ReadonlyArray<string>
}

/**
 * How many directory entries the search visits before it gives up (the call then fails rather than run with secrets
 * it did not look for).
 *
 * @since 0.3.0
 * @category constants
 */
export const SEARCH_LIMIT = 200_000

/** What one directory held when it was last read. */
interface Listing {
  readonly ino: bigint
  readonly mtimeNs: bigint
  readonly ctimeNs: bigint
  /** Read long enough after its last change that a change in the same clock tick cannot hide in it. */
  readonly settled: boolean
  readonly entries: number
  readonly subdirectories: ReadonlyArray<string>
  readonly files: ReadonlyArray<string>
  readonly links: ReadonlyArray<string>
  /** Protected entries (`.git`, configuration documents and folders, skill roots), not followed through links. */
  readonly protected: ReadonlyArray<string>
}

/**
 * Directory listings kept between searches of one Location: a directory whose inode, modification and change times
 * are unchanged has the same entries, so it is not read again — a search then costs one `lstat` per directory
 * instead of reading every entry. A directory changed less than `SETTLE_NS` before it was read is read again next
 * time (file times move in clock ticks, so a later change in the same tick would not show), as git does with its
 * index.
 *
 * @since 0.3.0
 * @category models
 */
export type SearchCache = Map<string, Listing>

/** How long after its last change a directory listing is trusted. */
const SETTLE_NS = 2_000_000_000n

const read = (
  directory: string,
  info: fs.BigIntStats,
  skips: ReadonlySet<string>,
  settle: bigint,
): Listing | undefined => {
  let entries: Array<fs.Dirent>
  try {
    entries = fs.readdirSync(directory, { withFileTypes: true })
  } catch {
    return undefined
  }
  const subdirectories: Array<string> = []
  const files: Array<string> = []
  const links: Array<string> = []
  const protectedEntries: Array<string> = []
  const parent = path.basename(directory)
  for (const entry of entries) {
    const name = entry.name
    if (ProtectedPath.classifyName(name, parent) !== undefined) protectedEntries.push(path.join(directory, name))
    if (entry.isDirectory()) {
      if (!skips.has(name)) subdirectories.push(path.join(directory, name))
      continue
    }
    if (!mayBeSecret(name)) continue
    const full = path.join(directory, name)
    if (!isSecretFile(full)) continue
    if (entry.isSymbolicLink()) links.push(full)
    else if (entry.isFile()) files.push(full)
  }
  // Rounded up to the next millisecond: a file time is never later than that.
  const now = (BigInt(Date.now()) + 1n) * 1_000_000n
  return {
    ino: info.ino,
    mtimeNs: info.mtimeNs,
    ctimeNs: info.ctimeNs,
    settled: now - (info.mtimeNs > info.ctimeNs ? info.mtimeNs : info.ctimeNs) >= settle,
    entries: entries.length,
    subdirectories,
    files,
    links,
    protected: protectedEntries,
  }
}

/**
 * The secret-family files below `root` (their real paths), found now; `undefined` when the tree has more than
 * `limit` entries. Symbolic links are not followed into directories; a link whose name is in the family is reported
 * by its target, which is what a reader would get (resolved on every search). With `cache`, unchanged directories
 * are not read again; `settle` (nanoseconds) is how long after its last change a listing is trusted.
 *
 * @since 0.3.0
 * @category utilities
 */
export const findSecretFiles = (
  root: string,
  limit: number = SEARCH_LIMIT,
  cache: SearchCache = new Map(),
  settle: bigint = SETTLE_NS,
): ReadonlyArray<string> | undefined => search(root, limit, cache, settle)?.secrets

/**
 * What one search of a Location found: the secret-family files (as `findSecretFiles` reports them) and the protected
 * entries at every depth — each `.git` directory or file (nested repositories, linked worktrees), configuration
 * document, `.toolgate` folder and skill root, by the path it has below `root` (links are reported, not followed).
 *
 * @since 0.4.0
 * @category models
 */
export interface Found {
  readonly secrets: ReadonlyArray<string>
  readonly protected: ReadonlyArray<string>
}

/**
 * One search below `root`, bounded by `limit` entries like `findSecretFiles` (`undefined` past it), with the
 * protected entries found on the way.
 *
 * @since 0.4.0
 * @category utilities
 */
export const search = (
  root: string,
  limit: number = SEARCH_LIMIT,
  cache: SearchCache = new Map(),
  settle: bigint = SETTLE_NS,
): Found | undefined => {
  const found: Array<string> = []
  const protectedEntries: Array<string> = []
  const skips = new Set(SEARCH_SKIPS)
  const pending: Array<string> = [root]
  const seen = new Set<string>()
  let visited = 0
  while (pending.length > 0) {
    const directory = pending.pop()!
    const info = fs.lstatSync(directory, { bigint: true, throwIfNoEntry: false })
    if (info === undefined || !info.isDirectory()) continue
    const cached = cache.get(directory)
    const listing =
      cached !== undefined &&
      cached.settled &&
      cached.ino === info.ino &&
      cached.mtimeNs === info.mtimeNs &&
      cached.ctimeNs === info.ctimeNs
        ? cached
        : read(directory, info, skips, settle)
    if (listing === undefined) continue
    cache.set(directory, listing)
    seen.add(directory)
    visited += listing.entries
    if (visited > limit) return undefined
    pending.push(...listing.subdirectories)
    found.push(...listing.files)
    protectedEntries.push(...listing.protected)
    for (const link of listing.links) {
      try {
        const target = fs.realpathSync(link)
        if (fs.statSync(target).isFile()) found.push(target)
      } catch {
        // A dangling link reads nothing.
      }
    }
  }
  for (const directory of cache.keys()) if (!seen.has(directory)) cache.delete(directory)
  return { secrets: found, protected: protectedEntries }
}

/**
 * Sorts existing `paths` (resolved through symbolic links) into files and directories; missing ones are dropped.
 *
 * @since 0.3.0
 * @category utilities
 */
export const classify = (paths: Iterable<string>): Hidden => {
  const files = new Set<string>()
  const directories = new Set<string>()
  for (const entry of paths) {
    // Most of the listed paths do not exist: a check that does not throw first.
    if (!fs.existsSync(entry)) continue
    try {
      const real = fs.realpathSync(entry)
      const info = fs.statSync(real)
      if (info.isDirectory()) directories.add(real)
      else files.add(real)
    } catch {
      // Nothing there to hide.
    }
  }
  return { files: [...files], directories: [...directories] }
}

/**
 * The system secrets that exist now, SSH host keys included.
 *
 * @since 0.3.0
 * @category utilities
 */
export const systemSecrets = (): ReadonlyArray<string> => {
  const out = [...SYSTEM_SECRETS]
  try {
    for (const name of fs.readdirSync(SSH_DIRECTORY)) {
      if (SSH_HOST_KEY.test(name)) out.push(path.join(SSH_DIRECTORY, name))
    }
  } catch {
    // No SSH server keys here.
  }
  return out
}

/**
 * The credential stores of `home`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const credentialStores = (home: string): ReadonlyArray<string> =>
  CREDENTIAL_STORES.map((entry) => path.join(home, entry))

let empty: string | undefined

const isEmptyFile = (file: string): boolean => {
  try {
    const info = fs.lstatSync(file)
    return info.isFile() && info.size === 0
  } catch {
    return false
  }
}

/**
 * The empty file hidden files are covered with: one per process, in a directory of its own below the system temp
 * directory (private in the sandbox), made again if anything removed or filled it, and removed when the process
 * exits.
 *
 * @since 0.3.0
 * @category utilities
 */
export const emptyFile = (): string => {
  if (empty !== undefined && isEmptyFile(empty)) return empty
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-sandbox-"))
  fs.chmodSync(directory, 0o755)
  const file = path.join(directory, "empty")
  fs.writeFileSync(file, "", { mode: 0o444 })
  if (empty === undefined)
    process.once("exit", () => fs.rmSync(path.dirname(empty ?? file), { recursive: true, force: true }))
  else fs.rmSync(path.dirname(empty), { recursive: true, force: true })
  empty = file
  return file
}

/** The pathspec every secret-family name matches (templates too; `isSecretFile` sorts them out). */
const FAMILY_PATHSPEC = ":(glob,icase)**/*.env*"

/** How long the history search may take before the answer counts as "maybe" (fail closed). */
const HISTORY_TIMEOUT = "10 seconds"

/** The most names the history search may print; past it the answer counts as "maybe". */
const HISTORY_OUTPUT_BYTES = 1024 * 1024

/**
 * The secret-family files the git repository at `worktree` holds in its history (every ref, the stash included) or
 * its index, by their path in the repository; `undefined` when git could not tell in time (the caller treats that as
 * "some"). Inside the sandbox these stay readable through git's object store even though the working copies are
 * hidden (see docs/sandbox.md).
 *
 * @since 0.4.0
 * @category utilities
 */
export const committedSecrets = (worktree: string): Effect.Effect<ReadonlyArray<string> | undefined> => {
  const names = (args: ReadonlyArray<string>) =>
    ProcessGroup.run(
      { command: "git", args, cwd: worktree, env: { GIT_DIR: undefined, GIT_WORK_TREE: undefined } },
      { maxOutputBytes: HISTORY_OUTPUT_BYTES, maxErrorBytes: 0, timeout: HISTORY_TIMEOUT },
    ).pipe(
      Effect.map((result) =>
        result.exitCode !== 0 || result.stdoutTruncated
          ? undefined
          : Buffer.from(result.stdout)
              .toString("utf8")
              .split("\0")
              .filter((name) => name !== ""),
      ),
      Effect.orElseSucceed(() => undefined),
    )
  return Effect.gen(function* () {
    const [history, index] = yield* Effect.all(
      [
        names(["log", "--all", "--format=", "--name-only", "-z", "--no-renames", "--", FAMILY_PATHSPEC]),
        names(["ls-files", "-z", "--cached", "--", FAMILY_PATHSPEC]),
      ],
      { concurrency: 2 },
    )
    if (history === undefined || index === undefined) return undefined
    return [...new Set([...history, ...index])].filter((name) => isSecretFile(path.join(worktree, name))).sort()
  })
}
