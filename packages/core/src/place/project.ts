/**
 * Project identity (the spec's ProjectV2): which project a directory belongs to. The id is the sha1 of the
 * normalised git `origin` URL, else the id cached in `<git common dir>/toolgate`, else the first root commit, else
 * `"global"`. Every non-repository directory belongs to the `global` project, whose directory is the directory
 * itself; what is saved for it is filed per directory (`approvalScope`). Runs the `git` CLI.
 *
 * The origin URL and the cache file live in `.git`, which a tool call could write. So `resolve` refuses git layouts
 * that borrow another repository (a symlinked `.git`, a gitlink or `commondir` that the target does not link back, a
 * `core.worktree` elsewhere), and `bind` accepts a claimed id only from a repository with the same first root commit
 * the id was first seen with. See docs/trust/approvals.md.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Database from "../system/database-error.js"
import * as ProcessGroup from "../system/process-group.js"

/**
 * The id shared by every directory outside a git repository (and repositories without any identity).
 *
 * @since 0.1.0
 * @category constants
 */
export const GLOBAL_ID = "global"

/**
 * The name of the cached-id file in the git common directory.
 *
 * @since 0.1.0
 * @category constants
 */
export const CACHE_FILE = "toolgate"

/**
 * A resolved project. `previous` is the id found in the cache file, if any.
 *
 * @since 0.1.0
 * @category models
 */
export interface Info {
  readonly id: string
  readonly directory: string
  readonly vcs?: { readonly type: "git"; readonly store: string }
  readonly previous?: string
  /** The first root commit of `HEAD`, when the repository has one (what `bind` checks a claimed id against). */
  readonly root?: string
}

/**
 * Where saved approvals of a Location are filed: its project, and the directory they are limited to — `""` (every
 * Location of the project) for a real project, the Location directory itself for `global`.
 *
 * @since 0.2.0
 * @category models
 */
export interface ApprovalScope {
  readonly projectID: string
  readonly directory: string
}

/**
 * The approval scope of a Location in `directory` belonging to `projectID`.
 *
 * @since 0.2.0
 * @category utilities
 */
export const approvalScope = (projectID: string, directory: string): ApprovalScope => ({
  projectID,
  directory: projectID === GLOBAL_ID ? directory : "",
})

/**
 * A file-system-safe folder name for a Location's per-project storage (managed tool output): the project id when it
 * is a plain token, else a hash of it; for `global`, `global-` + a hash of the Location directory.
 *
 * @since 0.2.0
 * @category utilities
 */
export const storageKey = (projectID: string, directory: string): string => {
  const hash = (text: string) => createHash("sha1").update(text).digest("hex")
  if (projectID === GLOBAL_ID) return `${GLOBAL_ID}-${hash(directory)}`
  return /^[A-Za-z0-9_-]{1,128}$/.test(projectID) ? projectID : `id-${hash(projectID)}`
}

/**
 * The `git` executable could not be run at all (as opposed to exiting non-zero).
 *
 * @since 0.1.0
 * @category errors
 */
export class GitError extends Schema.TaggedError<GitError>()("Project.GitError", {
  args: Schema.Array(Schema.String),
  message: Schema.String,
}) {}

interface GitResult {
  readonly code: number
  readonly stdout: string
}

/**
 * Variables that would point git at another repository than the one found on disk (they are set, for example,
 * inside git hooks); discovery must only see the directory's own `.git`.
 */
const GIT_LOCATION_VARIABLES = ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_PREFIX"]

/** The environment of a git run: this process's, without the variables above. */
const GIT_ENVIRONMENT: Readonly<Record<string, undefined>> = Object.fromEntries(
  GIT_LOCATION_VARIABLES.map((name) => [name, undefined]),
)

/** The most stdout a git run may print (what `execFile` allowed); more is a `GitError`. */
const GIT_OUTPUT_BYTES = 1024 * 1024

/** Runs `git args` in `cwd`; a non-zero exit is a result, failing to spawn is a `GitError`. */
const git = (args: ReadonlyArray<string>, cwd: string): Effect.Effect<GitResult, GitError> =>
  ProcessGroup.run(
    { command: "git", args, cwd, env: GIT_ENVIRONMENT },
    { maxOutputBytes: GIT_OUTPUT_BYTES, maxErrorBytes: 0 },
  ).pipe(
    Effect.flatMap((result) =>
      result.stdoutTruncated
        ? Effect.fail(new GitError({ args: [...args], message: `git printed more than ${GIT_OUTPUT_BYTES} bytes` }))
        : Effect.succeed({ code: result.exitCode, stdout: Buffer.from(result.stdout).toString("utf8") }),
    ),
    Effect.catchTags({
      "AppProcess.AppProcessError": (error) => Effect.fail(new GitError({ args: [...args], message: error.message })),
      // No timeout is given, so none can pass.
      "AppProcess.TimeoutError": (error) => Effect.die(error),
    }),
  )

/** stdout of a successful run, else undefined (non-zero exit or git unavailable). */
const gitOutput = (args: ReadonlyArray<string>, cwd: string): Effect.Effect<string | undefined> =>
  git(args, cwd).pipe(
    Effect.map((result) => (result.code === 0 ? result.stdout : undefined)),
    Effect.catchTag("Project.GitError", () => Effect.succeed(undefined)),
  )

/**
 * Normalises a remote URL to `<host lower-cased>/<path>`, or undefined (`file:` remotes, unparsable or empty).
 * URLs use their hostname and pathname; otherwise the scp form `[user@]host:path` is accepted.
 *
 * @since 0.1.0
 * @category utilities
 * @internal
 */
export const normalizeRemote = (url: string): string | undefined => {
  const trimmed = url.trim()
  let host: string
  let pathname: string
  let parsed: URL | undefined
  try {
    parsed = new URL(trimmed)
  } catch {
    parsed = undefined
  }
  if (parsed !== undefined) {
    if (parsed.protocol === "file:") return undefined
    host = parsed.hostname
    pathname = parsed.pathname
  } else {
    const scp = /^([^@/:]+@)?([^/:]+):(.+)$/.exec(trimmed)
    if (scp === null) return undefined
    host = scp[2]!
    pathname = scp[3]!
  }
  const cleaned = pathname
    .replace(/^\/+/, "")
    .replace(/\.git\/?$/, "")
    .replace(/\/+$/, "")
  if (host === "" || cleaned === "") return undefined
  return `${host.toLowerCase()}/${cleaned}`
}

/**
 * The project id of a remote URL: lowercase hex sha1 of `git-remote:<normalised>`, or undefined.
 *
 * @since 0.1.0
 * @category utilities
 */
export const remoteID = (url: string): string | undefined => {
  const normalized = normalizeRemote(url)
  if (normalized === undefined) return undefined
  return createHash("sha1").update(`git-remote:${normalized}`).digest("hex")
}

/** The nearest directory at or above `directory` holding a `.git` entry (directory or file). */
const findRepository = (directory: string): string | undefined => {
  let current = path.resolve(directory)
  for (;;) {
    if (fs.existsSync(path.join(current, ".git"))) return current
    const parent = path.dirname(current)
    if (parent === current) return undefined
    current = parent
  }
}

const realOrSelf = (target: string): string => {
  try {
    return fs.realpathSync(target)
  } catch {
    return path.resolve(target)
  }
}

const readText = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, "utf8").trim()
  } catch {
    return undefined
  }
}

/**
 * True iff the git layout found at `repository` is its own: `.git` is a real directory that is its own common dir,
 * or a gitlink file whose target links back (a linked worktree's `gitdir` file, or a submodule's `core.worktree`);
 * and the worktree git reports is `repository` itself. Anything else could borrow another repository's identity.
 */
const ownLayout = (
  repository: string,
  toplevel: string | undefined,
  gitDir: string,
  commonDir: string,
): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const dotGit = path.join(repository, ".git")
    let stat: fs.Stats
    try {
      stat = fs.lstatSync(dotGit)
    } catch {
      return false
    }
    const real = realOrSelf(repository)
    if (toplevel === undefined || realOrSelf(toplevel) !== real) return false
    const git = realOrSelf(gitDir)
    const common = realOrSelf(commonDir)
    if (stat.isSymbolicLink()) return false
    if (stat.isDirectory()) return git === realOrSelf(dotGit) && common === git
    if (!stat.isFile()) return false
    if (common !== git) {
      // a linked worktree: <common>/worktrees/<name>, whose `gitdir` file names this `.git` file
      if (path.dirname(git) !== path.join(common, "worktrees")) return false
      const back = readText(path.join(git, "gitdir"))
      return back !== undefined && realOrSelf(path.resolve(git, back)) === realOrSelf(dotGit)
    }
    // a submodule or separate git dir: its config must name this worktree
    const configured = yield* gitOutput(["config", "--file", path.join(git, "config"), "--get", "core.worktree"], real)
    return configured !== undefined && realOrSelf(path.resolve(git, configured.trim())) === real
  })

const readCache = (store: string): Effect.Effect<string | undefined> =>
  Effect.sync(() => {
    try {
      const content = fs.readFileSync(path.join(store, CACHE_FILE), "utf8").trim()
      return content === "" ? undefined : content
    } catch {
      return undefined
    }
  })

const rootCommit = (worktree: string): Effect.Effect<string | undefined> =>
  gitOutput(["rev-list", "--max-parents=0", "HEAD"], worktree).pipe(
    Effect.map((stdout) => {
      if (stdout === undefined) return undefined
      const commits = stdout
        .split("\n")
        .map((line) => line.trim())
        .filter((line) => line !== "")
        .sort()
      return commits[0]
    }),
  )

/**
 * Resolves the project of an absolute `directory`. Git failures fall through to the next source. A directory outside
 * any repository, or in one whose layout borrows another repository (see the module comment), is `global` with the
 * directory itself as its directory.
 *
 * @since 0.1.0
 * @category utilities
 */
export const resolve = Effect.fn("Project.resolve")(function* (directory: string) {
  const global: Info = { id: GLOBAL_ID, directory: path.resolve(directory) }
  const repository = findRepository(directory)
  if (repository === undefined) return global
  const absolute = (output: string) => path.resolve(repository, output.trim())
  const [toplevel, gitDir, commonDir] = yield* Effect.all(
    [
      gitOutput(["rev-parse", "--show-toplevel"], repository),
      gitOutput(["rev-parse", "--git-dir"], repository),
      gitOutput(["rev-parse", "--git-common-dir"], repository),
    ],
    { concurrency: "unbounded" },
  )
  if (gitDir === undefined || commonDir === undefined) return global
  const top = toplevel !== undefined && toplevel.trim() !== "" ? absolute(toplevel) : undefined
  if (!(yield* ownLayout(repository, top, absolute(gitDir), absolute(commonDir)))) return global
  const worktree = top ?? repository
  const store = absolute(commonDir)
  const origin = yield* gitOutput(["remote", "get-url", "origin"], worktree)
  const fromRemote = origin !== undefined && origin.trim() !== "" ? remoteID(origin) : undefined
  const previous = yield* readCache(store)
  const root = yield* rootCommit(worktree)
  const id = fromRemote ?? previous ?? root ?? GLOBAL_ID
  const info: Info = { id, directory: worktree, vcs: { type: "git", store } }
  const withRoot = root === undefined ? info : { ...info, root }
  return previous === undefined ? withRoot : { ...withRoot, previous }
})

/**
 * Records `info` in the `project` table and returns the identity the Location may use. The first root commit an id
 * is seen with is kept; a later claim of the same id (through an origin URL or a cache file) from a repository
 * whose first root commit differs, or that has none, is refused: the Location falls back to its own root commit, or
 * to `global` for its directory. Rows recorded before root commits were kept accept the claim only from the same
 * worktree (and then record the root commit).
 *
 * @since 0.2.0
 * @category utilities
 */
export const bind = Effect.fn("Project.bind")(function* (info: Info, location: string) {
  const sql = yield* SqlClient.SqlClient
  const now = Date.now()
  const upsert = (bound: Info) =>
    Database.orDie(sql)(sql`INSERT INTO project (id, worktree, root_commit, time_created, time_updated)
      VALUES (${bound.id}, ${bound.directory}, ${bound.root ?? null}, ${now}, ${now})
      ON CONFLICT (id) DO UPDATE SET root_commit = COALESCE(project.root_commit, excluded.root_commit)`)
  if (info.id === GLOBAL_ID || info.id === info.root) {
    yield* upsert(info)
    return info
  }
  const rows = yield* Database.orDie(sql)(
    sql<{
      worktree: string
      root_commit: string | null
    }>`SELECT worktree, root_commit FROM project WHERE id = ${info.id}`,
  )
  const known = rows[0]
  const accepted =
    known === undefined ||
    (known.root_commit === null ? known.worktree === info.directory : known.root_commit === info.root)
  if (accepted) {
    yield* upsert(info)
    return info
  }
  const { previous: _previous, ...rest } = info
  const fallback: Info =
    info.root !== undefined
      ? { ...rest, id: info.root }
      : { id: GLOBAL_ID, directory: path.resolve(location), ...(info.vcs === undefined ? {} : { vcs: info.vcs }) }
  yield* upsert(fallback)
  return fallback
})

/**
 * Writes `id` to `<store>/toolgate` so the id stays stable if the remote later disappears; errors are ignored.
 *
 * @since 0.1.0
 * @category utilities
 */
export const commit = Effect.fn("Project.commit")(function* (input: { readonly store: string; readonly id: string }) {
  yield* Effect.sync(() => {
    try {
      fs.writeFileSync(path.join(input.store, CACHE_FILE), input.id)
    } catch {
      // the cache is an optimisation; a read-only repository keeps resolving through its other sources
    }
  })
})
