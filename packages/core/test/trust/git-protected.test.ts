/**
 * One protected set for every writer (see docs/trust/protected-paths.md and docs/sandbox.md): `.git` at every depth
 * (nested repositories, a `.git` file and the git directory it names), the directory `core.hooksPath` names and the
 * files `include.path` names. The file tools and a plain `cp` ask `protected_path` (real Location, every ask
 * rejected); the bubblewrap sandbox — as root and as `nobody`, through the real Sandbox layer in a child process —
 * cannot change any of them. Every case checks the disk.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ProtectedPath } from "../../src/index.js"
import { tempDir } from "../support/location.js"
import { bwrapWorks, nobodyWorks, sandboxedRun, scene, TIMEOUT } from "../support/sandbox-scene.js"
import { gitRepository, isolateUserConfig, location, observed, settle, text, write } from "../support/trust-policy.js"

const userConfig = isolateUserConfig()

if (!bwrapWorks) console.warn("git-protected: bubblewrap cannot create namespaces here; the sandbox cases are skipped")
if (!nobodyWorks)
  console.warn("git-protected: not root or runuser/bwrap unusable as nobody; the nobody cases are skipped")

const git = (directory: string, ...args: Array<string>) =>
  execFileSync("git", args, {
    cwd: directory,
    stdio: "pipe",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  })

const corrected = "The user rejected permission to use this specific tool call with the following feedback: no"

/** A git project whose configuration names `.githooks` as its hooks and includes `ci/gitconfig`. */
const configuredProject = Effect.gen(function* () {
  const root = yield* tempDir("toolgate-git-protected-")
  const directory = path.join(root, "repo")
  gitRepository(directory)
  git(directory, "config", "core.hooksPath", ".githooks")
  git(directory, "config", "include.path", "../ci/gitconfig")
  write(directory, { "ci/gitconfig": "[user]\n\tname = ci\n", "payload.sh": "#!/bin/sh\necho planted\n" })
  return { directory, data: path.join(root, "data") }
})

describe("git's configuration names protected paths", () => {
  it.scopedLive("the Location's protected set holds the hooks directory, the included file and the config files", () =>
    Effect.gen(function* () {
      const { directory } = yield* configuredProject
      const roots = yield* ProtectedPath.gitRoots(directory, process.env.HOME ?? "/root")
      const service = ProtectedPath.make(roots)
      expect(service.classify(path.join(directory, ".githooks", "pre-commit"))?.entry).toBe("<git hooks directory>/**")
      expect(service.classify(path.join(directory, "ci", "gitconfig"))?.entry).toBe("<git include file>")
      expect(service.classify(path.join(directory, "ci", "other"))).toBeUndefined()
      expect(service.classify(path.join(directory, "payload.sh"))).toBeUndefined()
    }),
  )

  it.scopedLive("a plain cp into the hooks directory asks protected_path; rejected, no hook appears", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* configuredProject
      const log = observed()
      const settled = yield* settle("bash", {
        command: "mkdir -p .githooks && cp payload.sh .githooks/pre-commit",
      }).pipe(Effect.provide(location({ directory, data, log })), Effect.scoped)
      expect(text(settled)).toContain(corrected)
      const asked = log.asks.find((ask) => ask.action === "protected_path")
      expect(asked?.resources).toContain(".githooks/pre-commit")
      expect(fs.existsSync(path.join(directory, ".githooks", "pre-commit"))).toBe(false)
    }),
  )

  it.scopedLive("write to the hooks directory and edit of the included file ask protected_path; nothing changes", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* configuredProject
      const log = observed()
      yield* Effect.gen(function* () {
        const written = yield* settle("write", { path: ".githooks/post-checkout", content: "#!/bin/sh\nevil\n" })
        expect(written.result).toEqual({ type: "error", value: corrected })
        const edited = yield* settle("edit", {
          path: "ci/gitconfig",
          oldString: "name = ci",
          newString: "name = ci\n[core]\n\tfsmonitor = ./payload.sh",
        })
        expect(edited.result).toEqual({ type: "error", value: corrected })
      }).pipe(Effect.provide(location({ directory, data, log })), Effect.scoped)
      expect(log.asks.map((ask) => [ask.action, ask.resources])).toEqual([
        ["protected_path", [".githooks/post-checkout"]],
        ["protected_path", ["ci/gitconfig"]],
      ])
      expect(fs.existsSync(path.join(directory, ".githooks"))).toBe(false)
      expect(fs.readFileSync(path.join(directory, "ci", "gitconfig"), "utf8")).toBe("[user]\n\tname = ci\n")
    }),
  )

  it.scopedLive("a nested repository's hooks ask protected_path through write and bash alike", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* configuredProject
      git(path.join(directory), "init", "-q", "vendor/lib")
      const log = observed()
      yield* Effect.gen(function* () {
        const written = yield* settle("write", { path: "vendor/lib/.git/hooks/pre-commit", content: "evil\n" })
        expect(written.result).toEqual({ type: "error", value: corrected })
        const copied = yield* settle("bash", { command: "cp payload.sh vendor/lib/.git/hooks/pre-commit" })
        expect(text(copied)).toContain(corrected)
      }).pipe(Effect.provide(location({ directory, data, log })), Effect.scoped)
      const asked = log.asks.filter((ask) => ask.action === "protected_path").map((ask) => ask.resources)
      expect(asked).toHaveLength(2)
      for (const resources of asked) expect(resources).toContain("vendor/lib/.git/hooks/pre-commit")
      expect(fs.existsSync(path.join(directory, "vendor", "lib", ".git", "hooks", "pre-commit"))).toBe(false)
    }),
  )
})

describe.runIf(bwrapWorks)("a command that runs under the sandbox's autoAllow", () => {
  it.scopedLive(
    "plants no hook in a nested repository: it runs without an ask, the write is refused, the model is told",
    () =>
      Effect.gen(function* () {
        const { directory, data } = yield* configuredProject
        git(directory, "init", "-q", "vendor/lib")
        write(directory, {
          "plant.js": `require("fs").writeFileSync("vendor/lib/.git/hooks/pre-commit", "echo planted")`,
        })
        write(userConfig, {
          "toolgate.json": JSON.stringify({ bash: { sandbox: { mode: "bubblewrap", auto_allow: true } } }),
        })
        const log = observed()
        const settled = yield* settle("bash", { command: `${process.execPath} plant.js` }).pipe(
          Effect.provide(location({ directory, data, log })),
          Effect.scoped,
          Effect.ensuring(Effect.sync(() => fs.rmSync(path.join(userConfig, "toolgate.json"), { force: true }))),
        )
        expect(log.asks).toEqual([])
        expect(text(settled)).toContain("EROFS")
        expect(text(settled)).toContain("The sandbox blocked a write")
        expect(fs.existsSync(path.join(directory, "vendor", "lib", ".git", "hooks", "pre-commit"))).toBe(false)
      }),
    TIMEOUT,
  )
})

for (const user of ["root", "nobody"] as const) {
  describe.runIf(bwrapWorks && (user === "root" || nobodyWorks))(
    `the bubblewrap sandbox as ${user} keeps git's protected paths read-only at every depth`,
    () => {
      it.scoped(
        "a nested repository's hooks, the hooks directory (missing), the included file and a separate git directory cannot be written",
        () =>
          Effect.gen(function* () {
            const where = yield* scene(user, "toolgate-git-sandbox-")
            const { root } = where
            gitRepository(root)
            git(root, "config", "core.hooksPath", ".githooks")
            git(root, "config", "include.path", "../ci/gitconfig")
            git(root, "init", "-q", "vendor/lib")
            git(root, "init", "-q", "--separate-git-dir", path.join(root, "store"), "linked")
            write(root, { "ci/gitconfig": "[user]\n\tname = ci\n", "payload.sh": "#!/bin/sh\necho planted\n" })
            where.own()
            const hooks = fs.readdirSync(path.join(root, "vendor", "lib", ".git", "hooks")).sort()
            const run = yield* sandboxedRun(user, where, { sandbox: { mode: "bubblewrap", auto_allow: true } }, [
              "cp payload.sh vendor/lib/.git/hooks/pre-commit; echo nested=$?",
              "mv vendor/lib/.git vendor/lib/.old 2>/dev/null; echo moved=$?; rm -rf vendor 2>/dev/null; echo removed=$?",
              "mkdir .githooks/x 2>/dev/null; echo mkdir=$?; cp payload.sh .githooks/pre-commit 2>/dev/null; echo hook=$?",
              "printf '[core]\\n\\tfsmonitor = ./payload.sh\\n' >> ci/gitconfig; echo include=$?",
              "cp payload.sh store/hooks/pre-commit; echo store=$?; echo x > linked/.git; echo link=$?",
              "echo fine > vendor/lib/ordinary.txt && cat vendor/lib/ordinary.txt",
            ])
            const output = run.results.map((result) => result.output).join("")
            for (const field of ["nested", "moved", "removed", "mkdir", "hook", "include", "store", "link"]) {
              expect(output).toMatch(new RegExp(`${field}=[1-9]`))
            }
            expect(run.results[5]!.output).toBe("fine\n")
            expect(run.results[0]!.note).toContain("The sandbox blocked a write")
            expect(fs.readdirSync(path.join(root, "vendor", "lib", ".git", "hooks")).sort()).toEqual(hooks)
            expect(fs.existsSync(path.join(root, ".githooks"))).toBe(false)
            expect(fs.readFileSync(path.join(root, "ci", "gitconfig"), "utf8")).toBe("[user]\n\tname = ci\n")
            expect(fs.existsSync(path.join(root, "store", "hooks", "pre-commit"))).toBe(false)
            expect(fs.readFileSync(path.join(root, "linked", ".git"), "utf8")).toMatch(/^gitdir: /)
          }),
        TIMEOUT,
      )

      it.scoped(
        "autoAllow is withheld in a repository whose history holds a secret file, and kept where it does not",
        () =>
          Effect.gen(function* () {
            const clean = yield* scene(user, "toolgate-git-clean-")
            gitRepository(clean.root)
            write(clean.root, { ".env.example": "KEY=\n" })
            git(clean.root, "add", ".env.example")
            git(clean.root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "template")
            clean.own()
            const kept = yield* sandboxedRun(user, clean, { sandbox: { mode: "bubblewrap", auto_allow: true } }, [
              "true",
            ])
            expect(kept.autoAllow).toBe(true)

            const leaky = yield* scene(user, "toolgate-git-leaky-")
            gitRepository(leaky.root)
            write(leaky.root, { "config/.env": "SECRET=committed\n" })
            git(leaky.root, "add", "config/.env")
            git(leaky.root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "oops")
            git(leaky.root, "rm", "-q", "config/.env")
            git(leaky.root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "removed")
            leaky.own()
            const withheld = yield* sandboxedRun(user, leaky, { sandbox: { mode: "bubblewrap", auto_allow: true } }, [
              "git show HEAD~1:config/.env",
            ])
            expect(withheld.autoAllow).toBe(false)
            // Readable through git in the sandbox: this is why every such command asks first.
            expect(withheld.results[0]!.output).toContain("SECRET=committed")
          }),
        TIMEOUT,
      )
    },
  )
}
