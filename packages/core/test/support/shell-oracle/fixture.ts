/**
 * The oracle's fixture: a temporary root holding a project (a git repository with one commit, `toolgate.json`, a
 * `.toolgate/` folder, sources, a `.env`, a few files the generated commands use), an `outside` folder next to it
 * and a fake `home`. The gate sees the root on the host; the runners copy it from a read-only template.
 *
 * The protected paths here are the oracle's own reading of the rule (configuration files, `.toolgate/**`, `.git/**`),
 * not the gate's classifier.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, type Scope } from "effect"

/** The absolute paths of one oracle workspace. */
export interface Workspace {
  /** Where the oracle keeps everything (removed with the scope). */
  readonly base: string
  /** The temporary root: `project`, `outside` and `home` below it, at the path the gate and the runners share. */
  readonly root: string
  readonly project: string
  readonly outside: string
  readonly home: string
  /** The read-only copy every run starts from. */
  readonly template: string
  /** Puts back the `HOME` the process had before the workspace. */
  readonly restoreHome: () => void
  /** Runner i's scratch folder (its strace log and the command's output). */
  readonly scratch: (index: number) => string
}

const FILES: Record<string, string> = {
  "README.md": "readme\n",
  "notes.txt": "alpha\nbeta\n",
  "src/main.ts": 'export const main = () => "a"\n',
  "src/util.ts": "export const util = 1\n",
  "sub/a.txt": "a\n",
  "sub/deep/b.txt": "b\n",
  "list.txt": "notes.txt\nsub/a.txt\n",
  "cmds.txt": "touch from-stdin\n",
  "hook.sh": "touch hooked\n",
  "bin/ls": "#!/bin/sh\ntouch path-hijack\n",
  ".gitignore": ".env\n",
  ".env": "SECRET=1\n",
  "toolgate.json": "{}\n",
  ".toolgate/agents/helper.md": "---\ndescription: helper\n---\nhelp\n",
}

const OUTSIDE: Record<string, string> = { "o.txt": "outside\n", "dir/inner.txt": "inner\n" }
const HOME: Record<string, string> = { "h.txt": "home\n" }

const write = (root: string, files: Record<string, string>) => {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
  }
}

const git = (directory: string, ...args: Array<string>) =>
  execFileSync("git", args, {
    cwd: directory,
    stdio: "pipe",
    env: {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  })

/** Fills `root` with the project, outside and home folders. */
const populate = (root: string) => {
  const project = path.join(root, "project")
  write(project, FILES)
  fs.chmodSync(path.join(project, "bin/ls"), 0o755)
  // Files older than the index the commit writes: `git status` in a copy finds nothing racily clean to rewrite.
  const past = new Date("2001-01-01T00:00:00Z")
  for (const name of Object.keys(FILES)) fs.utimesSync(path.join(project, name), past, past)
  git(project, "init", "-q")
  // The copies the runners make keep modification times but not inodes or ctimes: compare only what survives a
  // copy, so `git status` in a fresh copy does not rewrite the index.
  git(project, "config", "core.checkStat", "minimal")
  git(project, "config", "core.trustctime", "false")
  git(project, "add", "-A")
  git(project, "commit", "-q", "-m", "first")
  // One pack instead of a folder per object: a smaller root to picture and restore.
  git(project, "gc", "-q")
  const hooks = path.join(project, ".git/hooks")
  for (const name of fs.readdirSync(hooks)) fs.rmSync(path.join(hooks, name))
  write(path.join(root, "outside"), OUTSIDE)
  write(path.join(root, "home"), HOME)
}

/**
 * Creates a workspace below `/tmp` (where the sandbox puts its tmpfs); everything is removed when the scope closes.
 * While it lives, `HOME` is its fake home: the gate resolves `~` and a bare `cd` from `HOME` as the shell does, so both
 * sides must see the same one (the bash tool hands its own environment to the shell).
 */
export const workspace: Effect.Effect<Workspace, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => {
    const base = fs.realpathSync(fs.mkdtempSync("/tmp/toolgate-oracle-"))
    const root = path.join(base, "root")
    populate(root)
    const home = process.env.HOME
    process.env.HOME = path.join(root, "home")
    return {
      restoreHome: () => {
        if (home === undefined) delete process.env.HOME
        else process.env.HOME = home
      },
      base,
      root,
      project: path.join(root, "project"),
      outside: path.join(root, "outside"),
      home: path.join(root, "home"),
      template: path.join(base, "template"),
      scratch: (index: number) => path.join(base, `scratch-${index}`),
    } satisfies Workspace
  }),
  (space) =>
    Effect.sync(() => {
      space.restoreHome()
      fs.rmSync(space.base, { recursive: true, force: true })
    }),
)

/** Freezes the template as a copy of the root as it is now (after the gate's Location was built on it). */
export const freeze = (space: Workspace) => {
  fs.rmSync(space.template, { recursive: true, force: true })
  fs.cpSync(space.root, space.template, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true })
}

/** True when `absolute` is a protected path of the fixture project. */
export const isProtected = (space: Workspace, absolute: string): boolean => {
  const relative = path.relative(space.project, absolute)
  if (!within(space.project, absolute)) return false
  const first = relative.split(path.sep)[0]
  return relative === "toolgate.json" || relative === "toolgate.jsonc" || first === ".toolgate" || first === ".git"
}

/** True when `child` is `parent` or below it. */
export const within = (parent: string, child: string): boolean => {
  const relative = path.relative(parent, child)
  return relative === "" || (relative !== ".." && !relative.startsWith("../") && !path.isAbsolute(relative))
}
