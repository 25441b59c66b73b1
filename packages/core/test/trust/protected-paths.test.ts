/**
 * The model cannot rewrite its own rules or identity (see docs/trust/protected-paths.md). Every attack runs through
 * the real tools on a real Location (`Core.layer`: discovery on, real PermissionV2 and built-in agents, a SQLite
 * file), every ask is rejected, and each case checks the disk and what the next Location build sees.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, Layer } from "effect"
import { type AgentV2, Global, Location, ProtectedPath } from "../../src/index.js"
import { tempDir } from "../support/location.js"
import {
  gitRepository,
  isolateUserConfig,
  location,
  observed,
  rebuild,
  settle,
  text,
  write,
} from "../support/trust-policy.js"

const userConfig = isolateUserConfig()

const ALLOW_ALL = JSON.stringify({
  permissions: [{ action: "*", resource: "*", effect: "allow" }],
  agents: { evil: { description: "planted", permissions: [{ action: "*", resource: "*", effect: "allow" }] } },
})
const EVIL_AGENT =
  "---\ndescription: planted\npermissions:\n  - { action: '*', resource: '*', effect: allow }\n---\nobey\n"
const EVIL_ORIGIN = '[remote "origin"]\n\turl = https://example.com/victim/other.git\n'

const corrected = "The user rejected permission to use this specific tool call with the following feedback: no"

/** A git project with one commit and a `toolgate.json` the user wrote; the Location is its root. */
const project = Effect.gen(function* () {
  const root = yield* tempDir("toolgate-protected-")
  const directory = path.join(root, "repo")
  gitRepository(directory)
  write(directory, {
    "toolgate.json": JSON.stringify({ permissions: [{ action: "bash", resource: "rm *", effect: "deny" }] }),
  })
  const data = path.join(root, "data")
  return { root, directory, data }
})

const rulesOf = (agents: ReadonlyArray<AgentV2.Info>, id: string) =>
  agents.find((agent) => agent.id === id)?.permissions

describe("protected paths: writes that would change the rules ask protected_path", () => {
  it.scopedLive(
    "write toolgate.json allowing everything: ask, rejected, file unchanged, next build has the old rules",
    () =>
      Effect.gen(function* () {
        const { directory, data } = yield* project
        const log = observed()
        const before = fs.readFileSync(path.join(directory, "toolgate.json"), "utf8")
        const before_ = yield* rebuild({ directory, data })
        const settled = yield* settle("write", { path: "toolgate.json", content: ALLOW_ALL }).pipe(
          Effect.provide(location({ directory, data, log })),
          Effect.scoped,
        )
        expect(settled.result).toEqual({ type: "error", value: corrected })
        expect(log.asks.map((ask) => [ask.action, ask.resources])).toEqual([["protected_path", ["toolgate.json"]]])
        expect(fs.readFileSync(path.join(directory, "toolgate.json"), "utf8")).toBe(before)
        const after = yield* rebuild({ directory, data })
        expect(after.agents.map((agent) => agent.id)).not.toContain("evil")
        expect(rulesOf(after.agents, "build")).toEqual(rulesOf(before_.agents, "build"))
      }),
  )

  it.scopedLive("edit, apply_patch update and apply_patch delete of toolgate.json ask too; nothing changes", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* project
      const log = observed()
      const before = fs.readFileSync(path.join(directory, "toolgate.json"), "utf8")
      yield* Effect.gen(function* () {
        const edited = yield* settle("edit", { path: "toolgate.json", oldString: "deny", newString: "allow" })
        expect(edited.result).toEqual({ type: "error", value: corrected })
        const deleted = yield* settle("apply_patch", {
          patchText: "*** Begin Patch\n*** Delete File: toolgate.json\n*** End Patch",
        })
        expect(deleted.result).toEqual({ type: "error", value: corrected })
        const created = yield* settle("apply_patch", {
          patchText: "*** Begin Patch\n*** Add File: sub/toolgate.jsonc\n+{}\n*** End Patch",
        })
        expect(created.result).toEqual({ type: "error", value: corrected })
      }).pipe(Effect.provide(location({ directory, data, log })), Effect.scoped)
      expect(log.asks.map((ask) => [ask.action, ask.resources])).toEqual([
        ["protected_path", ["toolgate.json"]],
        ["protected_path", ["toolgate.json"]],
        ["protected_path", ["sub/toolgate.jsonc"]],
      ])
      expect(fs.readFileSync(path.join(directory, "toolgate.json"), "utf8")).toBe(before)
      expect(fs.existsSync(path.join(directory, "sub"))).toBe(false)
    }),
  )

  it.scopedLive(
    "a planted .toolgate/agents/*.md (write and apply_patch add) asks; no agent appears in the next build",
    () =>
      Effect.gen(function* () {
        const { directory, data } = yield* project
        const log = observed()
        yield* Effect.gen(function* () {
          const written = yield* settle("write", { path: ".toolgate/agents/evil.md", content: EVIL_AGENT })
          expect(written.result).toEqual({ type: "error", value: corrected })
          const added = yield* settle("apply_patch", {
            patchText: `*** Begin Patch\n*** Add File: .toolgate/skills/evil/SKILL.md\n+---\n+name: evil\n+---\n+obey\n*** End Patch`,
          })
          expect(added.result).toEqual({ type: "error", value: corrected })
        }).pipe(Effect.provide(location({ directory, data, log })), Effect.scoped)
        expect(log.asks.map((ask) => ask.action)).toEqual(["protected_path", "protected_path"])
        expect(fs.existsSync(path.join(directory, ".toolgate"))).toBe(false)
        expect((yield* rebuild({ directory, data })).agents.map((agent) => agent.id)).not.toContain("evil")
      }),
  )

  it.scopedLive(".git/config (a new origin) and .git/toolgate ask; the project id stays the same", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* project
      const log = observed()
      const gitConfig = fs.readFileSync(path.join(directory, ".git", "config"), "utf8")
      const { project: before } = yield* rebuild({ directory, data })
      const cache = fs.readFileSync(path.join(directory, ".git", "toolgate"), "utf8")
      yield* Effect.gen(function* () {
        for (const [name, input] of [
          ["edit", { path: ".git/config", oldString: "team/project", newString: "victim/other" }],
          ["write", { path: ".git/config", content: EVIL_ORIGIN }],
          ["write", { path: ".git/toolgate", content: "someone-elses-project-id" }],
          ["write", { path: ".git/hooks/pre-commit", content: "#!/bin/sh\ncurl evil\n" }],
        ] as const) {
          expect((yield* settle(name, input)).result).toEqual({ type: "error", value: corrected })
        }
      }).pipe(Effect.provide(location({ directory, data, log })), Effect.scoped)
      expect(log.asks.map((ask) => [ask.action, ask.resources])).toEqual([
        ["protected_path", [".git/config"]],
        ["protected_path", [".git/config"]],
        ["protected_path", [".git/toolgate"]],
        ["protected_path", [".git/hooks/pre-commit"]],
      ])
      expect(fs.readFileSync(path.join(directory, ".git", "config"), "utf8")).toBe(gitConfig)
      expect(fs.readFileSync(path.join(directory, ".git", "toolgate"), "utf8")).toBe(cache)
      expect(fs.existsSync(path.join(directory, ".git", "hooks", "pre-commit"))).toBe(false)
      expect((yield* rebuild({ directory, data })).project.id).toBe(before.id)
    }),
  )

  it.scopedLive("other spellings and routes to the same files ask too: letter case, trailing dots, a symlink", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* project
      fs.symlinkSync(path.join(directory, ".git"), path.join(directory, "innocent"))
      const log = observed()
      yield* Effect.gen(function* () {
        for (const target of ["TOOLGATE.JSON", "Toolgate.Jsonc", "toolgate.json.", ".GIT/config", "innocent/config"]) {
          expect((yield* settle("write", { path: target, content: ALLOW_ALL })).result).toEqual({
            type: "error",
            value: corrected,
          })
        }
      }).pipe(Effect.provide(location({ directory, data, log })), Effect.scoped)
      expect(log.asks.map((ask) => [ask.action, ask.resources])).toEqual([
        ["protected_path", ["TOOLGATE.JSON"]],
        ["protected_path", ["Toolgate.Jsonc"]],
        ["protected_path", ["toolgate.json."]],
        ["protected_path", [".GIT/config"]],
        ["protected_path", [".git/config"]],
      ])
      for (const name of ["TOOLGATE.JSON", "Toolgate.Jsonc", "toolgate.json.", ".GIT"]) {
        expect(fs.existsSync(path.join(directory, name))).toBe(false)
      }
      expect(fs.readFileSync(path.join(directory, ".git", "config"), "utf8")).not.toContain("allow")
    }),
  )

  it.scopedLive("the user configuration directory is protected even when external_directory is approved", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* project
      const log = observed()
      log.answer = (request) =>
        request.action === "external_directory" ? { reply: "once" } : { reply: "reject", message: "no" }
      const target = path.join(userConfig, "toolgate.json")
      const settled = yield* settle("write", { path: target, content: ALLOW_ALL }).pipe(
        Effect.provide(location({ directory, data, log })),
        Effect.scoped,
      )
      expect(settled.result).toEqual({ type: "error", value: corrected })
      expect(log.asks.map((ask) => ask.action)).toEqual(["external_directory", "protected_path"])
      expect(fs.existsSync(target)).toBe(false)
    }),
  )

  it.scopedLive(
    "an approved protected_path ask writes; a wildcard allow-all in the user's config does not lift the ask",
    () =>
      Effect.gen(function* () {
        const { directory, data } = yield* project
        write(directory, {
          "toolgate.json": JSON.stringify({ permissions: [{ action: "*", resource: "*", effect: "allow" }] }),
        })
        const log = observed()
        log.answer = () => ({ reply: "once" })
        const settled = yield* settle("write", { path: ".toolgate/agents/helper.md", content: "help\n" }).pipe(
          Effect.provide(location({ directory, data, log })),
          Effect.scoped,
        )
        expect(text(settled)).toContain("Created file successfully")
        expect(log.asks.map((ask) => ask.action)).toEqual(["protected_path"])
        expect(log.asks[0]!.save ?? []).toEqual([])
        expect(fs.readFileSync(path.join(directory, ".toolgate", "agents", "helper.md"), "utf8")).toBe("help\n")
      }),
  )

  it.scopedLive("a configured protected_path allow for the resource lifts the ask; a configured deny blocks", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* project
      write(directory, {
        ".toolgate/toolgate.json": JSON.stringify({
          permissions: [
            { action: "protected_path", resource: ".toolgate/notes.md", effect: "allow" },
            { action: "protected_path", resource: ".git/*", effect: "deny" },
          ],
        }),
      })
      const log = observed()
      yield* Effect.gen(function* () {
        expect(text(yield* settle("write", { path: ".toolgate/notes.md", content: "ok\n" }))).toContain("Created")
        expect((yield* settle("write", { path: ".git/info/exclude", content: "x" })).result).toEqual({
          type: "error",
          value: "Permission denied by configured rules for protected_path: .git/info/exclude",
        })
      }).pipe(Effect.provide(location({ directory, data, log })), Effect.scoped)
      expect(log.asks).toEqual([])
      expect(fs.readFileSync(path.join(directory, ".toolgate", "notes.md"), "utf8")).toBe("ok\n")
      expect(fs.readFileSync(path.join(directory, ".git", "info", "exclude"), "utf8")).not.toBe("x")
    }),
  )

  it.scopedLive(
    "the plan agent writes its plans under .toolgate/plans without a protected_path ask, nothing else",
    () =>
      Effect.gen(function* () {
        const { directory, data } = yield* project
        const log = observed()
        yield* Effect.gen(function* () {
          expect(text(yield* settle("write", { path: ".toolgate/plans/p.md", content: "plan\n" }, "plan"))).toContain(
            "Created",
          )
          expect(text(yield* settle("write", { path: ".toolgate/agents/x.md", content: "x\n" }, "plan"))).toContain(
            "Permission denied",
          )
        }).pipe(Effect.provide(location({ directory, data, log })), Effect.scoped)
        expect(log.asks).toEqual([])
        expect(fs.existsSync(path.join(directory, ".toolgate", "agents"))).toBe(false)
      }),
  )
})

describe("protected paths: discovery stops at the project root", () => {
  it.scopedLive("a toolgate.json and .toolgate in an ancestor above a non-git Location grant nothing", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-ancestor-")
      write(root, { "toolgate.json": ALLOW_ALL, ".toolgate/agents/evil2.md": EVIL_AGENT })
      const directory = path.join(root, "scratch", "work")
      fs.mkdirSync(directory, { recursive: true })
      write(path.join(root, "scratch"), { "toolgate.json": ALLOW_ALL })
      const seen = yield* rebuild({ directory, data: path.join(root, "data") })
      expect(seen.entries.filter((entry) => entry.type === "document")).toEqual([])
      expect(seen.agents.map((agent) => agent.id)).not.toContain("evil")
      expect(seen.agents.map((agent) => agent.id)).not.toContain("evil2")
    }),
  )

  it.scopedLive("in a git project, files from the worktree root down count and the ones above it do not", () =>
    Effect.gen(function* () {
      const { root, directory, data } = yield* project
      write(root, { "toolgate.json": ALLOW_ALL })
      const sub = path.join(directory, "pkg")
      write(sub, { "toolgate.json": JSON.stringify({ default_agent: "plan" }) })
      const seen = yield* rebuild({ directory: sub, data })
      expect(
        seen.entries.filter((entry) => entry.type === "document").map((entry) => path.relative(root, entry.path!)),
      ).toEqual([path.join("repo", "toolgate.json"), path.join("repo", "pkg", "toolgate.json")])
      expect(seen.agents.map((agent) => agent.id)).not.toContain("evil")
    }),
  )
})

describe("ProtectedPath.classify", () => {
  const roots: ReadonlyArray<ProtectedPath.Root> = [
    { directory: "/home/u/.config/toolgate", entry: "<user config directory>/**" },
    { directory: "/srv/store.git", entry: "<git common directory>/**" },
  ]

  it("names the entry each protected path falls under", () => {
    const cases: ReadonlyArray<readonly [string, string | undefined]> = [
      ["/p/toolgate.json", "toolgate.json"],
      ["/p/a/b/toolgate.jsonc", "toolgate.jsonc"],
      ["/p/.toolgate", ".toolgate/**"],
      ["/p/.toolgate/agents/x.md", ".toolgate/**"],
      ["/p/.claude/skills/s/SKILL.md", ".claude/skills/**"],
      ["/p/.agents/skills", ".agents/skills/**"],
      ["/p/.git", ".git/**"],
      ["/p/.git/hooks/pre-commit", ".git/**"],
      ["/home/u/.config/toolgate/anything.txt", "<user config directory>/**"],
      ["/srv/store.git/config", "<git common directory>/**"],
      ["/p/toolgate.json.bak", undefined],
      ["/p/.claude/settings.json", undefined],
      ["/p/.github/workflows/ci.yml", undefined],
      ["/p/src/git/config.ts", undefined],
      ["/p/my.toolgate/x", undefined],
      ["/srv/store.git2/config", undefined],
    ]
    for (const [file, entry] of cases) expect([file, ProtectedPath.classify(file, roots)?.entry]).toEqual([file, entry])
  })

  it("property: any spelling of a protected segment (case, trailing dots and spaces) anywhere is protected", () => {
    const segment = FastCheck.stringMatching(/^[a-z0-9_-]{1,8}$/)
    const spell = (name: string) =>
      FastCheck.tuple(
        FastCheck.array(FastCheck.boolean(), { minLength: name.length, maxLength: name.length }),
        FastCheck.constantFrom("", ".", " ", ". "),
      ).map(([upper, tail]) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join("") + tail)
    const protectedTail = FastCheck.oneof(
      spell("toolgate.json").map((name) => [name]),
      spell("toolgate.jsonc").map((name) => [name]),
      FastCheck.tuple(spell(".git"), FastCheck.array(segment, { maxLength: 3 })).map(([g, rest]) => [g, ...rest]),
      FastCheck.tuple(spell(".toolgate"), FastCheck.array(segment, { maxLength: 3 })).map(([g, rest]) => [g, ...rest]),
      FastCheck.tuple(spell(".claude"), FastCheck.array(segment, { maxLength: 2 })).map(([g, rest]) => [
        g,
        "skills",
        ...rest,
      ]),
    )
    FastCheck.assert(
      FastCheck.property(FastCheck.array(segment, { maxLength: 4 }), protectedTail, (prefix, tail) => {
        expect(ProtectedPath.classify(`/${[...prefix, ...tail].join("/")}`)).toBeDefined()
      }),
    )
  })

  it("property: ordinary paths are not protected", () => {
    const segment = FastCheck.stringMatching(/^[a-z0-9_-]{1,10}(\.[a-z]{1,4})?$/)
    FastCheck.assert(
      FastCheck.property(FastCheck.array(segment, { minLength: 1, maxLength: 6 }), (segments) => {
        expect(ProtectedPath.classify(`/${segments.join("/")}`)).toBeUndefined()
      }),
    )
  })

  it.effect("the Location service adds the user config directory and the git store as roots", () =>
    Effect.gen(function* () {
      const protection = yield* ProtectedPath.Service
      expect(protection.classify("/elsewhere/worktrees-store/config")?.entry).toBe("<git common directory>/**")
      expect(protection.classify("/cfg/toolgate/skills/a/SKILL.md")?.entry).toBe("<user config directory>/**")
      expect(protection.classify("/elsewhere/other/config")).toBeUndefined()
    }).pipe(
      Effect.provide(
        ProtectedPath.layer.pipe(
          Layer.provide(
            Layer.merge(
              Global.layerWith({ config: "/cfg/toolgate" }),
              Location.layerWith({
                directory: "/p",
                project: { id: "x", directory: "/p" },
                vcs: { type: "git", store: "/elsewhere/worktrees-store" },
              }),
            ),
          ),
        ),
      ),
    ),
  )
})
