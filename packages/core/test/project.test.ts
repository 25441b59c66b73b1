import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { Database, Location, Project } from "../src/index.js"
import { tempDir } from "./support/location.js"

const env = (() => {
  const copy: NodeJS.ProcessEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }
  for (const name of ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"]) delete copy[name]
  return copy
})()

const git = (cwd: string, ...args: Array<string>): string =>
  execFileSync(
    "git",
    ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", ...args],
    {
      cwd,
      env,
      encoding: "utf8",
    },
  ).trim()

/** A repository with one commit (and optionally an origin). */
const repo = (dir: string, origin?: string) => {
  fs.mkdirSync(dir, { recursive: true })
  git(dir, "init", "-q")
  fs.writeFileSync(path.join(dir, "a.txt"), "a")
  git(dir, "add", "a.txt")
  git(dir, "commit", "-q", "-m", "first")
  if (origin !== undefined) git(dir, "remote", "add", "origin", origin)
  return dir
}

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex")

describe("Project.normalizeRemote", () => {
  it("normalises scp, https and ssh forms to host/path", () => {
    expect(Project.normalizeRemote("git@github.com:Org/Repo.git")).toBe("github.com/Org/Repo")
    expect(Project.normalizeRemote("  https://GitHub.com/Org/Repo/  ")).toBe("github.com/Org/Repo")
    expect(Project.normalizeRemote("https://github.com/Org/Repo.git/")).toBe("github.com/Org/Repo")
    expect(Project.normalizeRemote("ssh://git@github.com:22//Org/Repo.git")).toBe("github.com/Org/Repo")
    expect(Project.normalizeRemote("git@GitLab.Example.com:group/sub/proj.git")).toBe(
      "gitlab.example.com/group/sub/proj",
    )
    // without `user@`, `host.tld:path` parses as a URL whose scheme is the host, so its hostname is empty (reference)
    expect(Project.normalizeRemote("gitlab.example.com:group/proj.git")).toBeUndefined()
  })

  it("gives none for file: remotes, unparsable strings and empty paths", () => {
    expect(Project.normalizeRemote("file:///tmp/repo.git")).toBeUndefined()
    expect(Project.normalizeRemote("/srv/git/repo.git")).toBeUndefined()
    expect(Project.normalizeRemote("https://github.com/")).toBeUndefined()
    expect(Project.normalizeRemote("https://github.com/.git")).toBeUndefined()
    expect(Project.normalizeRemote("")).toBeUndefined()
  })
})

describe("Project.resolve", () => {
  it.scoped("remote id: scp and https origins of the same repository give the same sha1", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const scp = repo(path.join(root, "scp"), "git@github.com:Org/Repo.git")
      const https = repo(path.join(root, "https"), "https://github.com/Org/Repo")
      const a = yield* Project.resolve(scp)
      const b = yield* Project.resolve(https)
      const expected = sha1("git-remote:github.com/Org/Repo")
      expect(a.id).toBe(expected)
      expect(b.id).toBe(expected)
      expect(a.directory).toBe(scp)
      expect(a.vcs).toEqual({ type: "git", store: path.join(scp, ".git") })
      expect(a.previous).toBeUndefined()
    }),
  )

  it.scoped("file: remote is ignored: falls through to the root commit, then to the cached id", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const dir = repo(path.join(root, "r"), "file:///srv/elsewhere.git")
      const first = git(dir, "rev-list", "--max-parents=0", "HEAD")
      expect((yield* Project.resolve(dir)).id).toBe(first)
      fs.writeFileSync(path.join(dir, ".git", "toolgate"), "cached-id\n")
      expect((yield* Project.resolve(dir)).id).toBe("cached-id")
    }),
  )

  it.scoped("cached id: the trimmed content of <git common dir>/toolgate wins over the root commit", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const dir = repo(path.join(root, "r"))
      fs.writeFileSync(path.join(dir, ".git", "toolgate"), "  abc123 \n")
      const info = yield* Project.resolve(dir)
      expect(info.id).toBe("abc123")
      expect(info.previous).toBe("abc123")
      // empty cache content gives none
      fs.writeFileSync(path.join(dir, ".git", "toolgate"), " \n")
      expect((yield* Project.resolve(dir)).id).toBe(git(dir, "rev-list", "--max-parents=0", "HEAD"))
    }),
  )

  it.scoped("a linked worktree reads the cache of the common dir and shares the id", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const main = repo(path.join(root, "main"))
      const linked = path.join(root, "linked")
      git(main, "worktree", "add", "-q", linked)
      fs.writeFileSync(path.join(main, ".git", "toolgate"), "shared")
      const info = yield* Project.resolve(linked)
      expect(info).toEqual({
        id: "shared",
        directory: linked,
        vcs: { type: "git", store: path.join(main, ".git") },
        previous: "shared",
        root: git(main, "rev-list", "--max-parents=0", "HEAD"),
      })
    }),
  )

  it.scoped(
    "root commit: the lexicographically first of several root commits; subdirectories resolve to the worktree",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir()
        const dir = repo(path.join(root, "r"))
        git(dir, "checkout", "-q", "--orphan", "other")
        fs.writeFileSync(path.join(dir, "b.txt"), "b")
        git(dir, "add", "b.txt")
        git(dir, "commit", "-q", "-m", "second root")
        git(dir, "checkout", "-q", "main")
        git(dir, "merge", "-q", "--allow-unrelated-histories", "-m", "merge", "other")
        const roots = git(dir, "rev-list", "--max-parents=0", "HEAD").split("\n").sort()
        expect(roots).toHaveLength(2)
        const sub = path.join(dir, "deep", "er")
        fs.mkdirSync(sub, { recursive: true })
        const info = yield* Project.resolve(sub)
        expect(info.id).toBe(roots[0])
        expect(info.directory).toBe(dir)
      }),
  )

  it.scoped("a repository without commits, remote or cache is global but keeps its vcs", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      git(root, "init", "-q")
      expect(yield* Project.resolve(root)).toEqual({
        id: "global",
        directory: root,
        vcs: { type: "git", store: path.join(root, ".git") },
      })
    }),
  )

  // Overrides the reference (filesystem root as directory): a non-git directory is its own project directory, so
  // configuration stops there and saved approvals are filed per directory.
  it.scoped("non-repository: global, with the directory itself as directory", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const info = yield* Project.resolve(root)
      expect(info).toEqual({ id: "global", directory: root })
    }),
  )

  it.scoped("commit writes the cache file and ignores errors", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      yield* Project.commit({ store: root, id: "xyz" })
      expect(fs.readFileSync(path.join(root, "toolgate"), "utf8")).toBe("xyz")
      yield* Project.commit({ store: path.join(root, "missing", "dir"), id: "xyz" })
    }),
  )
})

describe("Location.layer", () => {
  const build = (directory: string, workspaceID?: string) =>
    Effect.gen(function* () {
      const location = yield* Location.Service
      const sql = yield* SqlClient.SqlClient
      const projects = yield* sql<{ id: string; worktree: string }>`SELECT id, worktree FROM project`
      return { location, projects }
    }).pipe(
      Effect.provide(
        Location.layer({ directory, ...(workspaceID !== undefined ? { workspaceID } : {}) }).pipe(
          Layer.provideMerge(Database.layerMemory),
        ),
      ),
    )

  it.scoped("realpaths the directory, upserts the project row and caches the id in the common dir", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const dir = repo(path.join(root, "r"), "git@github.com:Org/Repo.git")
      fs.mkdirSync(path.join(dir, "src"))
      const link = path.join(root, "link")
      fs.symlinkSync(path.join(dir, "src"), link)
      const { location, projects } = yield* build(link, "wrk_1")
      const id = sha1("git-remote:github.com/Org/Repo")
      expect(location).toEqual({
        directory: path.join(dir, "src"),
        workspaceID: "wrk_1",
        project: { id, directory: dir },
        vcs: { type: "git", store: path.join(dir, ".git") },
      })
      expect(projects).toEqual([{ id, worktree: dir }])
      expect(fs.readFileSync(path.join(dir, ".git", "toolgate"), "utf8")).toBe(id)
      // the cache keeps the id once the remote disappears
      git(dir, "remote", "remove", "origin")
      expect((yield* build(dir)).location.project.id).toBe(id)
    }),
  )

  it.scoped("a non-repository Location upserts the global project; no cache file is written", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const { location, projects } = yield* build(root)
      expect(location).toEqual({ directory: root, project: { id: "global", directory: root } })
      expect(projects).toEqual([{ id: "global", worktree: root }])
    }),
  )

  it.scoped(
    "a repository without commits is not pinned to global: after its first commit it gets the root commit",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir()
        git(root, "init", "-q")
        expect((yield* build(root)).location).toMatchObject({
          project: { id: "global", directory: root },
          vcs: { type: "git" },
        })
        expect(fs.existsSync(path.join(root, ".git", "toolgate"))).toBe(false)
        fs.writeFileSync(path.join(root, "a.txt"), "a")
        git(root, "add", "a.txt")
        git(root, "commit", "-q", "-m", "first")
        const first = git(root, "rev-list", "--max-parents=0", "HEAD")
        expect((yield* build(root)).location.project.id).toBe(first)
        expect(fs.readFileSync(path.join(root, ".git", "toolgate"), "utf8")).toBe(first)
      }),
  )

  it.scoped("a missing directory fails with Location.DirectoryError", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const exit = yield* Effect.exit(build(path.join(root, "missing")))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag).toBe(
        "Location.DirectoryError",
      )
    }),
  )
})

describe("Project.bind (docs/trust/approvals.md)", () => {
  const bound = (directory: string) =>
    Effect.flatMap(Project.resolve(directory), (info) => Project.bind(info, directory))

  it.scoped("records the first root commit; a claim of the id from another root falls back to its own root", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const a = repo(path.join(root, "a"), "git@github.com:Org/A.git")
      const first = yield* bound(a)
      const id = sha1("git-remote:github.com/Org/A")
      expect(first.id).toBe(id)
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ root_commit: string }>`SELECT root_commit FROM project WHERE id = ${id}`
      expect(row!.root_commit).toBe(git(a, "rev-list", "--max-parents=0", "HEAD"))
      const b = path.join(root, "b")
      fs.mkdirSync(b)
      git(b, "init", "-q")
      fs.writeFileSync(path.join(b, "b.txt"), "different content")
      git(b, "add", "b.txt")
      git(b, "commit", "-q", "-m", "b")
      git(b, "remote", "add", "origin", "https://github.com/Org/A")
      const claimed = yield* bound(b)
      expect(claimed.id).toBe(git(b, "rev-list", "--max-parents=0", "HEAD"))
      expect(claimed.previous).toBeUndefined()
    }).pipe(Effect.provide(Database.layerMemory)),
  )

  it.scoped("an id recorded without a root commit is accepted only from the same worktree, which then records it", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const a = repo(path.join(root, "a"))
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO project (id, worktree) VALUES ('legacy', ${a}), ('elsewhere', '/not/here')`
      fs.writeFileSync(path.join(a, ".git", "toolgate"), "elsewhere")
      expect((yield* bound(a)).id).toBe(git(a, "rev-list", "--max-parents=0", "HEAD"))
      fs.writeFileSync(path.join(a, ".git", "toolgate"), "legacy")
      expect((yield* bound(a)).id).toBe("legacy")
      const [row] = yield* sql<{ root_commit: string }>`SELECT root_commit FROM project WHERE id = 'legacy'`
      expect(row!.root_commit).toBe(git(a, "rev-list", "--max-parents=0", "HEAD"))
    }).pipe(Effect.provide(Database.layerMemory)),
  )
})
