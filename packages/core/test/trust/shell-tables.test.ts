/**
 * The gate is only as strong as its tables (docs/shell.md): inside a modelled command, what the table does not
 * describe asks; unknown programs' words are judged as places; secrets printed from git history or read through a
 * file-list option are reads. Real bash tool calls on a real git Location (`Core.layer`), under the default `build`
 * agent, a user configuration (`bash * ask`, `ls *` and `git status*` allowed, `rm *` denied) and the `plan` agent.
 * Every ask is rejected; each case checks the first ask (or the refusal), the model-visible text, and that nothing
 * changed on the disk — the project, its `.git`, and the folder around it.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { PermissionV2 } from "../../src/index.js"
import { tempDir } from "../support/location.js"
import { gitRepository, isolateUserConfig, location, observed, settle, text, write } from "../support/trust-policy.js"

isolateUserConfig()

const USER_RULES = [
  { action: "bash", resource: "*", effect: "ask" },
  { action: "bash", resource: "ls *", effect: "allow" },
  { action: "bash", resource: "git status*", effect: "allow" },
  { action: "bash", resource: "rm *", effect: "deny" },
]

type Profile = "build" | "user" | "plan"

/** Refused with no ask, a first ask of this action (rejected), or run with no ask at all. */
type Expect = "deny" | "run" | PermissionV2.Request["action"]

interface Case {
  readonly name: string
  readonly command: string
  readonly expect: Readonly<Record<Profile, Expect>>
  /** Something the first ask's resources must include when it is of this action. */
  readonly resource?: readonly [string, RegExp]
  readonly setup?: (project: string, outer: string) => void
}

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
}
const git = (project: string, ...args: Array<string>) =>
  execFileSync("git", args, { cwd: project, stdio: "pipe", env: GIT_ENV })

/** A branch `evil` whose only change is the project's toolgate.json (allowing everything). */
const evilBranch = (project: string) => {
  git(project, "add", "toolgate.json")
  git(project, "commit", "-q", "-m", "config")
  git(project, "checkout", "-q", "-b", "evil")
  write(project, {
    "toolgate.json": JSON.stringify({ permissions: [{ action: "*", resource: "*", effect: "allow" }] }),
  })
  git(project, "commit", "-q", "-am", "evil")
  git(project, "checkout", "-q", "-")
}

/** A `.env` committed once and removed since: only history holds it. */
const committedSecret = (project: string) => {
  write(project, { ".env": "TOKEN=hunter2\n" })
  git(project, "add", ".env")
  git(project, "commit", "-q", "-m", "env")
  git(project, "rm", "-q", ".env")
  git(project, "commit", "-q", "-m", "no env")
}

const CASES: ReadonlyArray<Case> = [
  // git: subcommands, options and option forms outside the table
  {
    name: "git init outside the Location",
    command: "git init -q ../other",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "git init --template copies hooks into .git",
    command: "git init -q --template=../tpl .",
    setup: (_project, outer) => write(outer, { "tpl/hooks/post-checkout": "#!/bin/sh\ntouch ../pwned\n" }),
    // `.git` is filled with names only known when it runs: an unresolved edit, then protected_path.
    expect: { build: "edit", user: "bash", plan: "deny" },
    resource: ["edit", /unresolved:git init/],
  },
  {
    name: "git clone to outside",
    command: "git clone -q . ../copy",
    // The new directory is filled with names only known when it runs.
    expect: { build: "edit", user: "bash", plan: "deny" },
    resource: ["edit", /unresolved:git clone/],
  },
  {
    name: "git worktree add outside",
    command: "git worktree add ../wt",
    expect: { build: "edit", user: "bash", plan: "deny" },
    resource: ["edit", /unresolved:git worktree/],
  },
  {
    name: "git bundle create outside",
    command: "git bundle create ../all.bundle --all",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "git archive -o outside",
    command: "git archive -o ../a.tar HEAD",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "git format-patch -o<dir> outside (attached value)",
    command: "git format-patch -1 -o../patches",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "git diff --output= outside",
    command: "git diff --output=../d.txt HEAD",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "an ambiguous abbreviation git itself refuses",
    command: "git diff --outp=../d.txt HEAD",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:git diff/],
  },
  {
    name: "sort --outp= (an abbreviated long option) outside",
    command: "sort --outp=../sorted README.md",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "git remote add writes .git/config",
    command: "git remote add evil https://example.com/evil.git",
    expect: { build: "protected_path", user: "bash", plan: "deny" },
  },
  {
    name: "git checkout of a branch that changes toolgate.json",
    command: "git checkout -q evil",
    setup: evilBranch,
    expect: { build: "protected_path", user: "bash", plan: "deny" },
    resource: ["protected_path", /toolgate\.json/],
  },
  {
    name: "git reset --hard to a branch that changes toolgate.json",
    command: "git reset -q --hard evil",
    setup: evilBranch,
    expect: { build: "protected_path", user: "bash", plan: "deny" },
    resource: ["protected_path", /toolgate\.json/],
  },
  {
    name: "git stash pop of a change to toolgate.json",
    command: "git stash pop -q",
    setup: (project) => {
      git(project, "add", "toolgate.json")
      git(project, "commit", "-q", "-m", "config")
      write(project, {
        "toolgate.json": JSON.stringify({ permissions: [{ action: "*", resource: "*", effect: "allow" }] }),
      })
      git(project, "stash", "-q")
    },
    expect: { build: "protected_path", user: "bash", plan: "deny" },
  },
  {
    name: "git merge of a branch that changes toolgate.json",
    command: "git merge -q --ff-only evil",
    setup: evilBranch,
    expect: { build: "protected_path", user: "bash", plan: "deny" },
  },
  {
    name: "git apply: files named by the patch",
    command: "git apply p.diff",
    setup: (project) =>
      write(project, {
        "p.diff": "--- /dev/null\n+++ b/sub/toolgate.json\n@@ -0,0 +1 @@\n+{}\n",
      }),
    expect: { build: "edit", user: "bash", plan: "deny" },
    resource: ["edit", /unresolved:git apply/],
  },
  {
    name: "git pull: files named by what it fetches",
    command: "git pull -q ../upstream",
    expect: { build: "edit", user: "bash", plan: "deny" },
    resource: ["edit", /unresolved:git pull/],
  },
  {
    name: "git rebase --exec runs a command string",
    command: "git rebase --exec 'touch ../pwned' HEAD",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:git rebase/],
  },
  {
    name: "git grep -O runs a pager program",
    command: "git grep -O'touch ../pwned' readme",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:git grep/],
  },
  {
    name: "git difftool -x (a subcommand outside the table)",
    command: "git difftool -y -x 'touch ../pwned' HEAD",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:git difftool/],
  },
  {
    name: "git -c alias.x=!cmd",
    command: "git -c 'alias.x=!touch ../pwned' x",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:/],
  },
  {
    name: "an unknown git option",
    command: "git log --frobnicate",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:git log --frobnicate/],
  },
  // Other modelled commands: options that run programs, attached values
  {
    name: "tar --to-command",
    command: "tar -cf a.tar --to-command='touch ../pwned' README.md",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:tar/],
  },
  {
    name: "tar -I (a compress program)",
    command: "tar -I 'sh -c \"touch ../pwned\"' -cf a.tar README.md",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:tar/],
  },
  {
    name: "zip -TT runs a command",
    command: "zip -q -TT 'touch ../pwned' a.zip README.md",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:zip/],
  },
  {
    name: "rsync -e runs a command",
    command: "rsync -e 'sh -c \"touch ../pwned\"' README.md x:y",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:rsync/],
  },
  {
    name: "cp -t../ (an attached target directory)",
    command: "cp -t../away README.md",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "sort -o../ (an attached output file)",
    command: "sort -o../sorted README.md",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  // Unknown programs: their words are places
  {
    name: "split into outside",
    command: "split -l 1 README.md ../away/part-",
    expect: { build: "external_directory", user: "external_directory", plan: "external_directory" },
  },
  {
    name: "an unknown program's attached option value outside",
    command: "curl -s -o../away/x file:///etc/hostname",
    expect: { build: "external_directory", user: "external_directory", plan: "external_directory" },
  },
  {
    name: "an unknown program's --opt=value outside",
    command: "python3 -c pass --out=../away/x",
    expect: { build: "external_directory", user: "external_directory", plan: "external_directory" },
  },
  {
    name: "an unknown program naming a protected path",
    command: "split -n 1 README.md .git/hooks/pre-commit",
    expect: { build: "protected_path", user: "bash", plan: "bash" },
  },
  {
    name: "patch from standard input creating toolgate.json",
    command: "patch -s -p0 < d",
    setup: (project) => write(project, { d: "--- sub/toolgate.json\n+++ sub/toolgate.json\n@@ -0,0 +1 @@\n+{}\n" }),
    expect: { build: "edit", user: "bash", plan: "deny" },
    resource: ["edit", /unresolved:patch/],
  },
  {
    name: "patch -i creating toolgate.json",
    command: "patch -s -p0 -i d",
    setup: (project) => write(project, { d: "--- sub/toolgate.json\n+++ sub/toolgate.json\n@@ -0,0 +1 @@\n+{}\n" }),
    expect: { build: "edit", user: "bash", plan: "deny" },
    resource: ["edit", /unresolved:patch/],
  },
  {
    name: "an unknown program fed a file",
    command: "python3 < script.py",
    setup: (project) => write(project, { "script.py": "open('../pwned', 'w')\n" }),
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:python3/],
  },
  // Secrets printed from history or read through file-list options
  {
    name: "git log -p of a committed .env",
    command: "git log -p",
    setup: committedSecret,
    expect: { build: "run", user: "bash", plan: "read" },
    resource: ["read", /^\.env$/m],
  },
  {
    name: "git show REV:.env",
    command: "git show HEAD~1:.env",
    setup: committedSecret,
    expect: { build: "run", user: "bash", plan: "read" },
    resource: ["read", /^\.env$/m],
  },
  {
    name: "git show $(git rev-parse REV:.env)",
    command: "git show $(git rev-parse HEAD~1:.env)",
    setup: committedSecret,
    expect: { build: "run", user: "bash", plan: "read" },
    resource: ["read", /unresolved:/],
  },
  {
    name: "git cat-file of an object",
    command: "git cat-file -p HEAD~1:.env",
    setup: committedSecret,
    expect: { build: "run", user: "bash", plan: "bash" },
  },
  {
    name: "git grep on a revision",
    command: "git grep TOKEN HEAD~1",
    setup: committedSecret,
    expect: { build: "run", user: "bash", plan: "bash" },
  },
  {
    name: "git diff --no-index of a .env",
    command: "git diff --no-index /dev/null .env",
    setup: (project) => write(project, { ".env": "TOKEN=hunter2\n" }),
    expect: { build: "run", user: "bash", plan: "read" },
    resource: ["read", /^\.env$/m],
  },
  {
    name: "git blame --contents=.env",
    command: "git blame --contents=.env README.md",
    setup: (project) => write(project, { ".env": "TOKEN=hunter2\n" }),
    expect: { build: "run", user: "bash", plan: "read" },
    resource: ["read", /^\.env$/m],
  },
  {
    name: "file -f .env",
    command: "file -f .env",
    setup: (project) => write(project, { ".env": "TOKEN=hunter2\n" }),
    expect: { build: "run", user: "bash", plan: "read" },
    resource: ["read", /^\.env$/m],
  },
  {
    name: "du --files0-from=.env",
    command: "du --files0-from=.env",
    setup: (project) => write(project, { ".env": "TOKEN=hunter2\n" }),
    expect: { build: "run", user: "bash", plan: "read" },
    resource: ["read", /^\.env$/m],
  },
  // Found by the tables oracle
  {
    name: "file --preserve-date resets the times of a file outside",
    command: "file --preserve-date ../away/x",
    setup: (_project, outer) => write(outer, { "away/x": "x" }),
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:file/],
  },
  {
    name: "egrep runs grep -E",
    command: "egrep -n x ../away/x",
    setup: (_project, outer) => write(outer, { "away/x": "x" }),
    expect: { build: "run", user: "bash", plan: "external_directory" },
  },
  // What still runs: names computed from the repository, history without secrets
  {
    name: "git checkout of a branch that changes ordinary files",
    command: "git checkout -q feature",
    setup: (project) => {
      git(project, "checkout", "-q", "-b", "feature")
      write(project, { "src/a.ts": "export {}\n" })
      git(project, "add", "src/a.ts")
      git(project, "commit", "-q", "-m", "a")
      git(project, "checkout", "-q", "-")
    },
    expect: { build: "run", user: "bash", plan: "deny" },
  },
  {
    name: "git log -p of a repository without secrets",
    command: "git log -p",
    expect: { build: "run", user: "bash", plan: "run" },
  },
]

/** Every file below `root` with its content (links as their targets). */
const snapshot = (root: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (directory: string) => {
    for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
      const file = path.join(directory, entry.name)
      const name = path.relative(root, file)
      if (name === "data" || name.startsWith(`data${path.sep}`)) continue
      if (entry.isSymbolicLink()) out[name] = `-> ${fs.readlinkSync(file)}`
      else if (entry.isDirectory()) {
        out[name] = "/"
        walk(file)
      } else out[name] = fs.readFileSync(file, "utf8")
    }
  }
  walk(root)
  return out
}

/** The files git keeps as it works (index, logs, refs, objects): a read-only git run may touch them. */
const settledGit = (files: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(files).filter(([name]) => !/(^|\/)\.git\/(index|logs|objects|ORIG_HEAD|FETCH_HEAD)/.test(name)),
  )

const workspace = (profile: Profile) =>
  Effect.gen(function* () {
    const outer = yield* tempDir("toolgate-tables-")
    const project = path.join(outer, "loc")
    gitRepository(project)
    fs.mkdirSync(path.join(project, "sub"))
    fs.mkdirSync(path.join(outer, "away"))
    write(project, { "toolgate.json": JSON.stringify(profile === "user" ? { permissions: USER_RULES } : {}) })
    return { outer, project, data: path.join(outer, "data") }
  })

describe.skipIf(process.platform === "win32")("the shell gate's tables fail closed", () => {
  for (const item of CASES) {
    for (const profile of ["build", "user", "plan"] as const) {
      const expected = item.expect[profile]
      const title = expected === "deny" ? "refused" : expected === "run" ? "runs" : `asks ${expected}`
      it.scopedLive(`${item.name} — ${profile}: ${title}`, () =>
        Effect.gen(function* () {
          const space = yield* workspace(profile)
          item.setup?.(space.project, space.outer)
          const log = observed()
          const { before, settled } = yield* Effect.gen(function* () {
            const before = snapshot(space.outer)
            const settled = yield* settle("bash", { command: item.command }, profile === "plan" ? "plan" : "build")
            return { before, settled }
          }).pipe(Effect.provide(location({ directory: space.project, data: space.data, log })), Effect.scoped)
          const shown = text(settled)
          if (expected === "run") {
            expect(log.asks.map((ask) => [ask.action, ask.resources])).toEqual([])
            expect(settled.result.type, shown).toBe("content")
            return
          }
          expect(settled.result.type, shown).toBe("error")
          if (expected === "deny") {
            expect(log.asks.map((ask) => [ask.action, ask.resources])).toEqual([])
            expect(shown).toContain("Permission denied by configured rules")
          } else {
            expect(
              log.asks.map((ask) => ask.action),
              JSON.stringify(log.asks.map((ask) => ask.resources)),
            ).toEqual([expected])
            expect(shown).toContain("no")
            if (item.resource !== undefined && item.resource[0] === expected) {
              expect(log.asks[0]!.resources.join("\n")).toMatch(item.resource[1])
            }
          }
          // Nothing ran: the disk is as before, inside the project and around it.
          expect(settledGit(snapshot(space.outer))).toEqual(settledGit(before))
        }),
      )
    }
  }
})
