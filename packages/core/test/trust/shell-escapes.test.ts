/**
 * The shell gate fails closed (docs/shell.md): every escape class of the attack pass, as real bash tool calls on a
 * real Location (`Core.layer`: discovery, the built-in agents, PermissionV2 over SQLite, bash run for real), under
 * the default `build` agent, a user configuration (`bash * ask`, `ls *` and `git status*` allowed, `rm *` denied)
 * and the `plan` agent. Every ask is rejected; for each profile the test checks the first ask (or the refusal) and
 * that nothing changed on the disk — the project, its `.git`, the folder around it and the victim file there.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { PermissionV2 } from "../../src/index.js"
import { tempDir } from "../support/location.js"
import { gitRepository, isolateUserConfig, location, observed, settle, write } from "../support/trust-policy.js"

isolateUserConfig()

const USER_RULES = [
  { action: "bash", resource: "*", effect: "ask" },
  { action: "bash", resource: "ls *", effect: "allow" },
  { action: "bash", resource: "git status*", effect: "allow" },
  { action: "bash", resource: "rm *", effect: "deny" },
]

type Profile = "build" | "user" | "plan"

/** What a profile must see: refused with no ask, or a first ask of this action (rejected). */
type Expect = "deny" | PermissionV2.Request["action"]

interface Case {
  readonly name: string
  readonly command: string
  readonly expect: Readonly<Record<Profile, Expect>>
  /** Something the first ask's resources must include when it is of this action. */
  readonly resource?: readonly [string, RegExp]
  readonly setup?: (project: string, outer: string) => void
  readonly shell?: string
}

const CASES: ReadonlyArray<Case> = [
  // Writes attached to nodes the old visitor did not read
  {
    name: "a redirection after a here-document",
    command: "cat <<'EOF' > toolgate.json\n{}\nEOF",
    expect: { build: "protected_path", user: "bash", plan: "deny" },
  },
  {
    name: "a redirection on a function definition",
    command: "f() { echo pwned; } > ../outside.txt; f",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "a redirection on a group, after cd in the group's list",
    command: "cd .. && { echo pwned; } > outside.txt",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "a redirection bound to the last command of a list",
    command: "cd .. && echo pwned > outside.txt",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  // Redirection targets misread
  {
    name: "a /dev/fd path that is a real path",
    command: "echo pwned > /dev/fd/../cwd/../outside.txt",
    expect: { build: "edit", user: "bash", plan: "deny" },
    resource: ["edit", /unresolved:/],
  },
  {
    name: "a target split by a line continuation",
    command: "echo pwned > ..\\\n/outside.txt",
    // The first word is a write of `..` itself (outside); the whole redirection is unresolved too.
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  // Filesystem changes made by the same command
  {
    name: "a link to outside, then a write through it",
    command: "ln -s ../away l && echo pwned > l/f",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "a link to .git, then a write through it",
    command: "ln -s .git g && echo '[core]' >> g/config",
    expect: { build: "protected_path", user: "bash", plan: "deny" },
  },
  {
    name: "a hard link to a file outside, then a write into it",
    command: "ln ../x h && echo pwned > h",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  // cd tracking
  {
    name: "cd inside a subshell does not move what follows",
    command: "(cd sub); echo pwned > ../outside.txt",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "a cd that may fail",
    command: "cd missing; echo pwned > ../outside.txt",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "cd -- DIR",
    command: "cd -- .. && echo pwned > outside.txt",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  {
    name: "CDPATH before cd",
    command: "CDPATH=.. cd away && echo pwned > f",
    expect: { build: "bash", user: "bash", plan: "deny" },
    resource: ["bash", /unresolved:/],
  },
  {
    name: "pushd and popd",
    command: "pushd sub && popd && echo pwned > ../outside.txt",
    expect: { build: "external_directory", user: "external_directory", plan: "deny" },
  },
  // Command text run by the shell but never parsed before
  {
    name: "shell options before -c",
    command: "bash --norc -c 'rm -f ../x'",
    expect: { build: "external_directory", user: "deny", plan: "deny" },
  },
  {
    name: "an env option cluster",
    command: "env -vS'rm -f ../x'",
    expect: { build: "external_directory", user: "deny", plan: "deny" },
  },
  {
    name: "a trap",
    command: "trap 'touch ../pwned' EXIT",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:trap/],
  },
  {
    name: "an alias",
    command: "alias x='touch ../pwned'\nx",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:alias/],
  },
  {
    name: "xargs handing its input to sh -c",
    command: "echo 'touch ../pwned' | xargs -I{} sh -c {}",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:/],
  },
  {
    name: "BASH_ENV from standard input",
    command: "BASH_ENV=/dev/stdin bash -c ls <<EOF\ntouch ../pwned\nEOF",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:/],
  },
  // Behaviour-changing assignments
  {
    name: "git configuration from the environment",
    command: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch ../pwned' git status",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:GIT_CONFIG_COUNT/],
  },
  {
    name: "PATH before an allowed command",
    command: "PATH=.:$PATH ls",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:/],
  },
  // Wrappers outside the old table
  {
    name: "flock",
    command: "flock . rm -f ../x",
    expect: { build: "external_directory", user: "deny", plan: "deny" },
  },
  {
    name: "taskset",
    command: "taskset 1 rm -f ../x",
    expect: { build: "external_directory", user: "deny", plan: "deny" },
  },
  {
    name: "busybox",
    command: "busybox rm -f ../x",
    expect: { build: "external_directory", user: "deny", plan: "deny" },
  },
  {
    name: "a runner the gate does not follow",
    command: "script -qc 'rm -f ../x' /dev/null",
    expect: { build: "bash", user: "deny", plan: "bash" },
    resource: ["bash", /unresolved:/],
  },
  // Unknown file arguments
  {
    name: "find -exec {}",
    command: "find .. -maxdepth 1 -name x -exec rm -f {} +",
    expect: { build: "edit", user: "deny", plan: "deny" },
    resource: ["edit", /unresolved:/],
  },
  {
    name: "what xargs appends",
    command: "echo ../x | xargs rm -f",
    expect: { build: "edit", user: "deny", plan: "deny" },
    resource: ["edit", /unresolved:/],
  },
  // Grammar mismatch: the configured shell is dash
  {
    name: "(( )) under sh",
    command: "((sh<x))",
    shell: "/bin/sh",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:/],
  },
  {
    name: "&> under sh",
    command: "echo pwned &> ../outside.txt",
    shell: "/bin/sh",
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:/],
  },
  // The parser bound
  {
    name: "3,000 nested parentheses",
    command: `${"(".repeat(3000)}touch ../pwned${")".repeat(3000)}`,
    expect: { build: "bash", user: "bash", plan: "bash" },
    resource: ["bash", /unresolved:/],
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

/** A git project `loc` inside `outer`, with `outer/x` (the victim), `outer/away/`, and `loc/sub/`. */
const workspace = (profile: Profile, shell: string | undefined) =>
  Effect.gen(function* () {
    const outer = yield* tempDir("toolgate-escapes-")
    const project = path.join(outer, "loc")
    gitRepository(project)
    fs.mkdirSync(path.join(project, "sub"))
    fs.mkdirSync(path.join(outer, "away"))
    fs.writeFileSync(path.join(outer, "x"), "keep")
    const config = {
      ...(profile === "user" ? { permissions: USER_RULES } : {}),
      ...(shell === undefined ? {} : { shell }),
    }
    write(project, { "toolgate.json": JSON.stringify(config) })
    return { outer, project, data: path.join(outer, "data") }
  })

describe.skipIf(process.platform === "win32")("the shell gate fails closed: every escape class", () => {
  for (const item of CASES) {
    for (const profile of ["build", "user", "plan"] as const) {
      const expected = item.expect[profile]
      it.scopedLive(`${item.name} — ${profile}: ${expected === "deny" ? "refused" : `asks ${expected}`}`, () =>
        Effect.gen(function* () {
          const space = yield* workspace(profile, item.shell)
          item.setup?.(space.project, space.outer)
          const log = observed()
          const { before, settled } = yield* Effect.gen(function* () {
            // Taken once the Location is built (it caches the project id in .git).
            const before = snapshot(space.outer)
            const settled = yield* settle("bash", { command: item.command }, profile === "plan" ? "plan" : "build")
            return { before, settled }
          }).pipe(Effect.provide(location({ directory: space.project, data: space.data, log })), Effect.scoped)
          expect(settled.result.type, JSON.stringify(settled.result)).toBe("error")
          if (expected === "deny") {
            expect(log.asks.map((ask) => [ask.action, ask.resources])).toEqual([])
            expect(JSON.stringify(settled.result)).toContain("Permission denied by configured rules")
          } else {
            expect(log.asks.map((ask) => ask.action)).toEqual([expected])
            if (item.resource !== undefined && item.resource[0] === expected) {
              expect(log.asks[0]!.resources.join("\n")).toMatch(item.resource[1])
            }
          }
          // Nothing ran: the disk is exactly as before, inside the project and around it.
          expect(snapshot(space.outer)).toEqual(before)
        }),
      )
    }
  }
})

describe.skipIf(process.platform === "win32")("the shell gate fails closed: saved approvals and real runs", () => {
  it.scopedLive("always on a protected_path ask from a redirection saves nothing: a later write asks again", () =>
    Effect.gen(function* () {
      const space = yield* workspace("build", undefined)
      const log = observed()
      log.answer = (request) => (request.action === "protected_path" ? { reply: "always" } : { reply: "reject", message: "no" })
      yield* Effect.gen(function* () {
        const first = yield* settle("bash", { command: `echo '{"permissions":[]}' > toolgate.json` })
        expect(first.result.type).toBe("content")
        expect(log.asks.map((ask) => [ask.action, ask.resources, ask.save])).toEqual([
          ["protected_path", ["toolgate.json"], []],
        ])
        expect(log.asks[0]?.always?.entries ?? []).toEqual([])
        log.answer = () => ({ reply: "reject", message: "no" })
        const again = yield* settle("write", { path: "toolgate.json", content: "{}" })
        expect(again.result.type).toBe("error")
        const third = yield* settle("bash", { command: "echo '{}' > toolgate.json" })
        expect(third.result.type).toBe("error")
      }).pipe(Effect.provide(location({ directory: space.project, data: space.data, log })), Effect.scoped)
      expect(log.asks.map((ask) => ask.action)).toEqual(["protected_path", "protected_path", "protected_path"])
      expect(fs.readFileSync(path.join(space.project, "toolgate.json"), "utf8")).toBe('{"permissions":[]}\n')
    }),
  )

  it.scopedLive("a saved `rm *` from build does not let plan delete: the file is an edit, which plan denies", () =>
    Effect.gen(function* () {
      const space = yield* workspace("build", undefined)
      write(space.project, {
        "toolgate.json": JSON.stringify({ permissions: [{ action: "bash", resource: "*", effect: "ask" }] }),
        "victim.txt": "keep",
      })
      const log = observed()
      log.answer = (request) => (request.action === "bash" ? { reply: "always" } : { reply: "reject", message: "no" })
      yield* Effect.gen(function* () {
        const build = yield* settle("bash", { command: "rm -f other.txt" })
        expect(build.result.type).toBe("content")
        const plan = yield* settle("bash", { command: "rm -f victim.txt" }, "plan")
        expect(JSON.stringify(plan.result)).toContain("Permission denied by configured rules for edit: victim.txt")
      }).pipe(Effect.provide(location({ directory: space.project, data: space.data, log })), Effect.scoped)
      expect(log.asks.map((ask) => [ask.action, ask.save])).toEqual([["bash", ["rm *"]]])
      expect(fs.readFileSync(path.join(space.project, "victim.txt"), "utf8")).toBe("keep")
    }),
  )

  it.scopedLive("approved once, a write through a link the command made lands where the ask said", () =>
    Effect.gen(function* () {
      const space = yield* workspace("build", undefined)
      const log = observed()
      log.answer = () => ({ reply: "once" })
      const settled = yield* settle("bash", { command: "ln -s ../away l && echo pwned > l/f" }).pipe(
        Effect.provide(location({ directory: space.project, data: space.data, log })),
        Effect.scoped,
      )
      expect(settled.result.type).toBe("content")
      const away = fs.realpathSync(path.join(space.outer, "away"))
      expect(log.asks.map((ask) => [ask.action, ask.resources])).toEqual([["external_directory", [`${away}/*`]]])
      expect(fs.readFileSync(path.join(away, "f"), "utf8")).toBe("pwned\n")
    }),
  )
})
