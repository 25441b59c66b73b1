/**
 * Project identity (P11, the spec's ProjectV2): which project a directory belongs to. The id is the sha1 of the
 * normalised git `origin` URL, else the id cached in `<git common dir>/toolgate`, else the first root commit, else
 * `"global"`. Every non-repository directory shares the `global` project. Runs the `git` CLI.
 *
 * @since 0.1.0
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, Schema } from "effect"

/** The id shared by every directory outside a git repository (and repositories without any identity). */
export const GLOBAL_ID = "global"

/** The name of the cached-id file in the git common directory. */
export const CACHE_FILE = "toolgate"

/** A resolved project. `previous` is the id found in the cache file, if any. */
export interface Info {
  readonly id: string
  readonly directory: string
  readonly vcs?: { readonly type: "git"; readonly store: string }
  readonly previous?: string
}

/** The `git` executable could not be run at all (as opposed to exiting non-zero). */
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

const gitEnvironment = (): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const name of GIT_LOCATION_VARIABLES) delete env[name]
  return env
}

/** Runs `git args` in `cwd`; a non-zero exit is a result, failing to spawn is a `GitError`. */
const git = (args: ReadonlyArray<string>, cwd: string): Effect.Effect<GitResult, GitError> =>
  Effect.async<GitResult, GitError>((resume, signal) => {
    execFile("git", [...args], { cwd, env: gitEnvironment(), signal, encoding: "utf8" }, (error, stdout) => {
      if (error === null) return resume(Effect.succeed({ code: 0, stdout }))
      const code = (error as NodeJS.ErrnoException & { code?: unknown }).code
      if (typeof code === "number") return resume(Effect.succeed({ code, stdout }))
      resume(Effect.fail(new GitError({ args: [...args], message: error.message })))
    })
  })

/** stdout of a successful run, else undefined (non-zero exit or git unavailable). */
const gitOutput = (args: ReadonlyArray<string>, cwd: string): Effect.Effect<string | undefined> =>
  git(args, cwd).pipe(
    Effect.map((result) => (result.code === 0 ? result.stdout : undefined)),
    Effect.catchTag("Project.GitError", () => Effect.succeed(undefined)),
  )

/**
 * Normalises a remote URL to `<host lower-cased>/<path>`, or undefined (`file:` remotes, unparsable or empty).
 * URLs use their hostname and pathname; otherwise the scp form `[user@]host:path` is accepted.
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

/** The project id of a remote URL: lowercase hex sha1 of `git-remote:<normalised>`, or undefined. */
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

/** Resolves the project of an absolute `directory` (02 §10.2). Git failures fall through to the next source. */
export const resolve = Effect.fn("Project.resolve")(function* (directory: string) {
  const global: Info = { id: GLOBAL_ID, directory: path.parse(path.resolve(directory)).root }
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
  const worktree = toplevel !== undefined && toplevel.trim() !== "" ? absolute(toplevel) : repository
  const store = absolute(commonDir)
  const origin = yield* gitOutput(["remote", "get-url", "origin"], worktree)
  const fromRemote = origin !== undefined && origin.trim() !== "" ? remoteID(origin) : undefined
  const previous = yield* readCache(store)
  const id = fromRemote ?? previous ?? (yield* rootCommit(worktree)) ?? GLOBAL_ID
  const info: Info = { id, directory: worktree, vcs: { type: "git", store } }
  return previous === undefined ? info : { ...info, previous }
})

/** Writes `id` to `<store>/toolgate` so the id stays stable if the remote later disappears; errors are ignored. */
export const commit = Effect.fn("Project.commit")(function* (input: { readonly store: string; readonly id: string }) {
  yield* Effect.sync(() => {
    try {
      fs.writeFileSync(path.join(input.store, CACHE_FILE), input.id)
    } catch {
      // the cache is an optimisation; a read-only repository keeps resolving through its other sources
    }
  })
})
