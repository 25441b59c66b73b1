import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import { AgentV2, Config, Global, PermissionV2, Project, Wildcard } from "../src/index.js"
import { locationLayer, tempDir } from "./support/location.js"

const withEmpty = <A, E>(effect: Effect.Effect<A, E, AgentV2.Service | Scope.Scope>) =>
  effect.pipe(Effect.provide(AgentV2.layerEmpty))

interface Dirs {
  readonly root: string
  readonly data: string
  readonly tmp: string
  readonly home: string
  readonly worktree: string
}

const dirs = Effect.gen(function* () {
  const root = yield* tempDir("toolgate-agent-")
  const make = (name: string) => {
    const dir = path.join(root, name)
    fs.mkdirSync(dir, { recursive: true })
    return dir
  }
  return { root, data: make("data"), tmp: make("tmp"), home: make("home"), worktree: make("work") } satisfies Dirs
})

const pluginLayer = (d: Dirs, entries: ReadonlyArray<Config.Entry> = []) =>
  AgentV2.layer.pipe(
    Layer.provide([
      Global.layerWith({ data: d.data, tmp: d.tmp, home: d.home }),
      Config.layerFromEntries(entries),
      locationLayer(d.worktree),
    ]),
  )

const withPlugin = <A, E>(
  build: (d: Dirs) => ReadonlyArray<Config.Entry>,
  body: (d: Dirs) => Effect.Effect<A, E, AgentV2.Service | Scope.Scope>,
) =>
  Effect.gen(function* () {
    const d = yield* dirs
    return yield* body(d).pipe(Effect.provide(pluginLayer(d, build(d))))
  })

const doc = (info: Config.Info): Config.Entry => ({ type: "document", info })

/** The managed tool-output folder of the test Location (project `global` in `d.worktree`). */
const ownOutput = (d: Dirs) => path.join(d.data, "tool-output", Project.storageKey("global", d.worktree))

const rulesOf = (agent: AgentV2.Info | undefined) => agent?.permissions ?? []

describe("AgentV2 state", () => {
  it.scoped("starts without agents", () =>
    withEmpty(
      Effect.gen(function* () {
        const agents = yield* AgentV2.Service
        expect(yield* agents.all()).toEqual([])
        expect(yield* agents.get("build")).toBeUndefined()
        expect(yield* agents.resolve()).toBeUndefined()
        expect(yield* agents.select()).toEqual({ id: "build", info: undefined })
      }),
    ),
  )

  it.scoped("materializes replayable agent transforms", () =>
    withEmpty(
      Effect.gen(function* () {
        const agents = yield* AgentV2.Service
        yield* agents.transform((draft) => draft.update("a", (agent) => void (agent.description = "first")))
        yield* agents.transform((draft) => {
          draft.update("a", (agent) => void (agent.description = `${agent.description} then second`))
          draft.update("b", (agent) => void (agent.mode = "subagent"))
        })
        const all = yield* agents.all()
        expect(all.map((agent) => agent.id)).toEqual(["a", "b"])
        expect(all[0]?.description).toBe("first then second")
        expect(all[1]?.mode).toBe("subagent")
      }),
    ),
  )

  it.scoped("rebuilds state when a transform is replaced", () =>
    withEmpty(
      Effect.gen(function* () {
        const agents = yield* AgentV2.Service
        let description = "one"
        yield* agents.transform((draft) => draft.update("a", (agent) => void (agent.description = description)))
        expect((yield* agents.get("a"))?.description).toBe("one")
        description = "two"
        expect((yield* agents.get("a"))?.description).toBe("one")
        yield* agents.reload()
        expect((yield* agents.get("a"))?.description).toBe("two")
      }),
    ),
  )

  it.scoped("removes a transform when its scope closes", () =>
    withEmpty(
      Effect.gen(function* () {
        const agents = yield* AgentV2.Service
        yield* agents.transform((draft) => draft.update("kept", () => {}))
        const scope = yield* Scope.make()
        yield* agents.transform((draft) => draft.update("temp", () => {})).pipe(Scope.extend(scope))
        expect((yield* agents.all()).map((agent) => agent.id)).toEqual(["kept", "temp"])
        yield* Scope.close(scope, Exit.void)
        expect((yield* agents.all()).map((agent) => agent.id)).toEqual(["kept"])
        expect(yield* agents.get("temp")).toBeUndefined()
      }),
    ),
  )

  it.scoped("applies direct agent updates", () =>
    withEmpty(
      Effect.gen(function* () {
        const agents = yield* AgentV2.Service
        yield* agents.transform((draft) => {
          draft.update("a", (agent) => {
            agent.mode = "primary"
            agent.hidden = true
            agent.steps = 3
            agent.system = "sys"
            agent.color = "#ff00ff"
            agent.permissions.push({ action: "read", resource: "*", effect: "deny" })
            agent.id = AgentV2.ID.make("renamed")
          })
          draft.update("a", (agent) => void agent.permissions.push({ action: "edit", resource: "*", effect: "ask" }))
        })
        const agent = yield* agents.get("a")
        expect(agent).toEqual({
          ...AgentV2.empty("a"),
          mode: "primary",
          hidden: true,
          steps: 3,
          system: "sys",
          color: "#ff00ff",
          permissions: [
            { action: "read", resource: "*", effect: "deny" },
            { action: "edit", resource: "*", effect: "ask" },
          ],
        })
        expect(yield* agents.get("renamed")).toBeUndefined()
      }),
    ),
  )

  it.scoped("creates agents with runtime defaults and supports direct removal", () =>
    withEmpty(
      Effect.gen(function* () {
        const agents = yield* AgentV2.Service
        yield* agents.transform((draft) => {
          draft.update("x", () => {})
          draft.update("y", () => {})
        })
        expect(yield* agents.get("x")).toEqual(AgentV2.empty("x"))
        expect(AgentV2.empty("x")).toEqual({
          id: "x",
          request: { headers: {}, body: {} },
          mode: "all",
          hidden: false,
          permissions: [],
        })
        yield* agents.transform((draft) => draft.remove("x"))
        expect(yield* agents.get("x")).toBeUndefined()
        expect((yield* agents.all()).map((agent) => agent.id)).toEqual(["y"])
      }),
    ),
  )

  it.scoped("resolves the default agent", () =>
    withEmpty(
      Effect.gen(function* () {
        const agents = yield* AgentV2.Service
        yield* agents.transform((draft) => {
          draft.update("sub", (agent) => void (agent.mode = "subagent"))
          draft.update("secret", (agent) => void (agent.hidden = true))
          draft.update("first", (agent) => void (agent.mode = "primary"))
          draft.update("build", (agent) => void (agent.mode = "primary"))
        })
        expect((yield* agents.resolve())?.id).toBe("build")
        const configured = yield* agents.transform((draft) => draft.default("first"))
        expect((yield* agents.resolve())?.id).toBe("first")
        expect((yield* agents.default())?.id).toBe("first")
        yield* configured.dispose
        // A non-selectable configured default falls back to build.
        const sub = yield* agents.transform((draft) => draft.default("sub"))
        expect((yield* agents.resolve())?.id).toBe("build")
        yield* sub.dispose
        // Without build, the first selectable agent in insertion order ("sub" and "secret" are not selectable).
        yield* agents.transform((draft) => draft.remove("build"))
        expect((yield* agents.select()).id).toBe("first")
        // An explicit id is an exact lookup, selectable or not; unknown ids resolve to nothing.
        expect((yield* agents.resolve("sub"))?.id).toBe("sub")
        expect(yield* agents.resolve("missing")).toBeUndefined()
        expect(yield* agents.select("missing")).toEqual({ id: "missing", info: undefined })
        yield* agents.transform((draft) => draft.remove("first"))
        expect(yield* agents.resolve()).toBeUndefined()
        expect(yield* agents.select()).toEqual({ id: "build", info: undefined })
      }),
    ),
  )
})

describe("AgentV2 built-ins", () => {
  it.scoped("does not ambiently opt built-in agents into bash", () =>
    withPlugin(
      () => [],
      () =>
        Effect.gen(function* () {
          const agents = yield* AgentV2.Service
          const all = yield* agents.all()
          expect(all.map((agent) => agent.id).sort()).toEqual([
            "build",
            "compaction",
            "explore",
            "general",
            "plan",
            "summary",
            "title",
          ])
          // Only plan mode carries bash rules (ask, with its read-only commands allowed per segment; docs/shell.md).
          for (const agent of all.filter((a) => a.id !== "plan")) {
            expect(agent.permissions.filter((r) => r.action === "bash" && r.effect !== "deny")).toEqual([])
          }
          const bash = (agent: AgentV2.Info) => PermissionV2.evaluate("bash", "rm -rf /", agent.permissions).effect
          const byID = new Map(all.map((agent) => [agent.id as string, agent]))
          for (const id of ["build", "general"]) expect(bash(byID.get(id)!)).toBe("allow")
          expect(bash(byID.get("plan")!)).toBe("ask")
          expect(PermissionV2.evaluate("bash", "git status", byID.get("plan")!.permissions).effect).toBe("allow")
          for (const id of ["explore", "compaction", "title", "summary"]) expect(bash(byID.get(id)!)).toBe("deny")
        }),
    ),
  )

  it.scoped("installs exactly the default rules, flags and descriptions in order", () =>
    withPlugin(
      () => [],
      (d) =>
        Effect.gen(function* () {
          const agents = yield* AgentV2.Service
          const ext = [
            { action: "external_directory", resource: "*", effect: "ask" },
            // only this project's managed output folder (docs/trust/managed-output.md), not every project's
            { action: "external_directory", resource: Wildcard.literal(`${ownOutput(d)}/`) + "*", effect: "allow" },
            { action: "external_directory", resource: path.join(d.tmp, "*"), effect: "allow" },
          ]
          const defaults = [
            { action: "*", resource: "*", effect: "allow" },
            ...ext,
            { action: "question", resource: "*", effect: "deny" },
            { action: "plan_enter", resource: "*", effect: "deny" },
            { action: "plan_exit", resource: "*", effect: "deny" },
            { action: "read", resource: "*", effect: "allow" },
            // The secret family, case-insensitive on every platform (stricter than the reference's three rules).
            ...["*.env", "*.env.*", ".env-*", "*/.env-*", ".env_*", "*/.env_*", "*.env~", ".envrc", "*/.envrc"].map(
              (resource) => ({ action: "read", resource, effect: "ask", ignore_case: true }),
            ),
            { action: "read", resource: "*.env.example", effect: "allow", ignore_case: true },
            { action: "read", resource: "*.env.sample", effect: "allow", ignore_case: true },
          ]
          const build = yield* agents.get("build")
          expect(build?.mode).toBe("primary")
          expect(build?.hidden).toBe(false)
          expect(build?.description).toBe("The default agent. Executes tools based on configured permissions.")
          expect(build?.system).toBeUndefined()
          expect(rulesOf(build)).toEqual([
            ...defaults,
            { action: "question", resource: "*", effect: "allow" },
            { action: "plan_enter", resource: "*", effect: "allow" },
          ])
          const plan = yield* agents.get("plan")
          expect(plan?.description).toBe("Plan mode. Disallows all edit tools.")
          expect(plan?.mode).toBe("primary")
          expect(plan?.hidden).toBe(false)
          expect(rulesOf(plan)).toEqual([
            ...defaults,
            { action: "question", resource: "*", effect: "allow" },
            { action: "plan_exit", resource: "*", effect: "allow" },
            { action: "external_directory", resource: path.join(d.data, "plans", "*"), effect: "allow" },
            { action: "edit", resource: "*", effect: "deny" },
            { action: "edit", resource: ".toolgate/plans/*.md", effect: "allow" },
            { action: "protected_path", resource: ".toolgate/plans/*.md", effect: "allow" },
            {
              action: "edit",
              resource: path.relative(d.worktree, path.join(d.data, "plans", "*.md")),
              effect: "allow",
            },
            { action: "bash", resource: "*", effect: "ask" },
            ...AgentV2.PLAN_READ_ONLY_COMMANDS.map((command) => ({
              action: "bash",
              resource: `${command} *`,
              effect: "allow",
            })),
            { action: "bash", resource: "git *--output*", effect: "ask" },
            { action: "bash", resource: "rg *--pre*", effect: "ask" },
          ])
          const general = yield* agents.get("general")
          expect(general?.mode).toBe("subagent")
          expect(general?.hidden).toBe(false)
          expect(general?.description).toBe(
            "General-purpose agent for researching complex questions and executing multi-step tasks. Use this agent to execute multiple units of work in parallel.",
          )
          expect(rulesOf(general)).toEqual([...defaults, { action: "todowrite", resource: "*", effect: "deny" }])
          const explore = yield* agents.get("explore")
          expect(explore?.mode).toBe("subagent")
          expect(explore?.hidden).toBe(false)
          expect(explore?.description).toBe(
            'Fast agent specialized for exploring codebases. Use this when you need to quickly find files by patterns (eg. "src/components/**/*.tsx"), search code for keywords (eg. "API endpoints"), or answer questions about the codebase (eg. "how do API endpoints work?"). When calling this agent, specify the desired thoroughness level: "quick" for basic searches, "medium" for moderate exploration, or "very thorough" for comprehensive analysis across multiple locations and naming conventions.',
          )
          expect(rulesOf(explore)).toEqual([
            ...defaults,
            { action: "*", resource: "*", effect: "deny" },
            { action: "grep", resource: "*", effect: "allow" },
            { action: "glob", resource: "*", effect: "allow" },
            { action: "webfetch", resource: "*", effect: "allow" },
            { action: "websearch", resource: "*", effect: "allow" },
            { action: "read", resource: "*", effect: "allow" },
            ...ext,
          ])
          // Explore reads .env without asking; an external directory asks again; managed output is allowed.
          expect(PermissionV2.evaluate("read", "a/.env", rulesOf(explore)).effect).toBe("allow")
          expect(PermissionV2.evaluate("read", "a/.env", rulesOf(build)).effect).toBe("ask")
          expect(PermissionV2.evaluate("read", "x/.env.example", rulesOf(build)).effect).toBe("allow")
          expect(PermissionV2.evaluate("external_directory", "/elsewhere/*", rulesOf(explore)).effect).toBe("ask")
          expect(
            PermissionV2.evaluate("external_directory", path.join(ownOutput(d), "*"), rulesOf(explore)).effect,
          ).toBe("allow")
          const other = path.join(d.data, "tool-output", Project.storageKey("global", d.root), "*")
          expect(PermissionV2.evaluate("external_directory", other, rulesOf(explore)).effect).toBe("ask")
          for (const id of ["compaction", "title", "summary"]) {
            const agent = yield* agents.get(id)
            expect(agent?.mode).toBe("primary")
            expect(agent?.hidden).toBe(true)
            expect(agent?.description).toBeUndefined()
            expect(rulesOf(agent)).toEqual([...defaults, { action: "*", resource: "*", effect: "deny" }])
          }
          expect((yield* agents.resolve())?.id).toBe("build")
        }),
    ),
  )

  it.scoped("plan paths", () =>
    withPlugin(
      () => [],
      (d) =>
        Effect.gen(function* () {
          const plan = yield* (yield* AgentV2.Service).get("plan")
          const rules = rulesOf(plan)
          expect(rules).toContainEqual({ action: "edit", resource: ".toolgate/plans/*.md", effect: "allow" })
          expect(rules).toContainEqual({
            action: "external_directory",
            resource: `${d.data}/plans/*`,
            effect: "allow",
          })
          expect(PermissionV2.evaluate("edit", "src/index.ts", rules).effect).toBe("deny")
          expect(PermissionV2.evaluate("edit", ".toolgate/plans/p.md", rules).effect).toBe("allow")
          expect(PermissionV2.evaluate("edit", "../data/plans/p.md", rules).effect).toBe("allow")
        }),
    ),
  )

  it.scoped("plan data path is $XDG_DATA_HOME/toolgate", () =>
    Effect.gen(function* () {
      const d = yield* dirs
      const global = Global.fromEnvironment({ HOME: d.home, XDG_DATA_HOME: path.join(d.root, "xdg") })
      const plan = yield* Effect.flatMap(AgentV2.Service, (agents) => agents.get("plan")).pipe(
        Effect.provide(
          AgentV2.layer.pipe(
            Layer.provide([Layer.succeed(Global.Service, global), Config.layerEmpty, locationLayer(d.worktree)]),
          ),
        ),
      )
      expect(rulesOf(plan)).toContainEqual({
        action: "external_directory",
        resource: path.join(d.root, "xdg", "toolgate", "plans", "*"),
        effect: "allow",
      })
    }),
  )
})

describe("AgentV2 config layering", () => {
  it.scoped("appends top-level rules everywhere, then per-agent entries; disabled, default_agent, fields", () =>
    withPlugin(
      () => [
        doc({
          permissions: [{ action: "bash", resource: "git *", effect: "ask" }],
          agents: {
            general: { disabled: true },
            reviewer: {
              mode: "primary",
              description: "Reviews",
              model: "anthropic/claude-x",
              variant: "high",
              request: { headers: { a: "1" }, body: { x: 1 } },
              permissions: [{ action: "edit", resource: "*", effect: "deny" }],
            },
          },
        }),
        doc({
          permissions: [{ action: "webfetch", resource: "*", effect: "deny" }],
          default_agent: "reviewer",
          agents: {
            reviewer: {
              request: { headers: { b: "2" }, body: { y: 2 } },
              steps: 4,
              color: "accent",
              hidden: false,
              system: "Be picky.",
            },
            build: { permissions: [{ action: "bash", resource: "rm *", effect: "deny" }] },
          },
        }),
      ],
      () =>
        Effect.gen(function* () {
          const agents = yield* AgentV2.Service
          const top = [
            { action: "bash", resource: "git *", effect: "ask" },
            { action: "webfetch", resource: "*", effect: "deny" },
          ]
          expect(yield* agents.get("general")).toBeUndefined()
          const build = yield* agents.get("build")
          expect(rulesOf(build).slice(-3)).toEqual([...top, { action: "bash", resource: "rm *", effect: "deny" }])
          for (const id of ["plan", "explore", "compaction", "title", "summary"]) {
            expect(rulesOf(yield* agents.get(id)).slice(-2)).toEqual(top)
          }
          const reviewer = yield* agents.get("reviewer")
          expect(reviewer).toEqual({
            id: "reviewer",
            mode: "primary",
            hidden: false,
            description: "Reviews",
            system: "Be picky.",
            steps: 4,
            color: "accent",
            model: { providerID: "anthropic", id: "claude-x", variant: "high" },
            request: { headers: { a: "1", b: "2" }, body: { x: 1, y: 2 } },
            permissions: [...top, { action: "edit", resource: "*", effect: "deny" }],
          })
          expect((yield* agents.resolve())?.id).toBe("reviewer")
          expect((yield* agents.select()).id).toBe("reviewer")
        }),
    ),
  )

  it.scoped("expands home only for external_directory, read and edit, and only at the start", () =>
    withPlugin(
      () => [
        doc({
          permissions: [
            { action: "read", resource: "~/notes/*", effect: "allow" },
            { action: "edit", resource: "$HOME/src/*", effect: "allow" },
            { action: "external_directory", resource: "~", effect: "allow" },
            { action: "external_directory", resource: "$HOME", effect: "allow" },
            { action: "read", resource: "$HOME\\win", effect: "allow" },
            { action: "read", resource: "a/~/b", effect: "deny" },
            { action: "read", resource: "x$HOME/y", effect: "deny" },
            { action: "bash", resource: "cat ~/secret", effect: "deny" },
            { action: "bash", resource: "$HOME/bin/x", effect: "deny" },
          ],
          agents: { build: { permissions: [{ action: "read", resource: "~/.ssh/*", effect: "deny" }] } },
        }),
      ],
      (d) =>
        Effect.gen(function* () {
          const rules = rulesOf(yield* (yield* AgentV2.Service).get("build"))
          expect(rules.slice(-10)).toEqual([
            { action: "read", resource: `${d.home}/notes/*`, effect: "allow" },
            { action: "edit", resource: `${d.home}/src/*`, effect: "allow" },
            { action: "external_directory", resource: d.home, effect: "allow" },
            { action: "external_directory", resource: d.home, effect: "allow" },
            { action: "read", resource: `${d.home}\\win`, effect: "allow" },
            { action: "read", resource: "a/~/b", effect: "deny" },
            { action: "read", resource: "x$HOME/y", effect: "deny" },
            { action: "bash", resource: "cat ~/secret", effect: "deny" },
            { action: "bash", resource: "$HOME/bin/x", effect: "deny" },
            { action: "read", resource: `${d.home}/.ssh/*`, effect: "deny" },
          ])
        }),
    ),
  )

  it.scoped("a new configured agent first receives the top-level rules; order is kept, no sorting", () =>
    withPlugin(
      () => [
        doc({
          permissions: [
            { action: "*", resource: "*", effect: "ask" },
            { action: "read", resource: "src/*", effect: "allow" },
          ],
        }),
        doc({ agents: { fresh: { permissions: [{ action: "read", resource: "src/secret/*", effect: "deny" }] } } }),
      ],
      () =>
        Effect.gen(function* () {
          const fresh = yield* (yield* AgentV2.Service).get("fresh")
          expect(fresh?.mode).toBe("all")
          expect(rulesOf(fresh)).toEqual([
            { action: "*", resource: "*", effect: "ask" },
            { action: "read", resource: "src/*", effect: "allow" },
            { action: "read", resource: "src/secret/*", effect: "deny" },
          ])
          // The wildcard listed first acts as a fallback; a later, more general rule would win again.
          expect(PermissionV2.evaluate("edit", "x", rulesOf(fresh)).effect).toBe("ask")
          expect(PermissionV2.evaluate("read", "src/a.ts", rulesOf(fresh)).effect).toBe("allow")
          expect(PermissionV2.evaluate("read", "src/secret/k", rulesOf(fresh)).effect).toBe("deny")
        }),
    ),
  )

  it.scoped("reads markdown agents from configuration directories", () =>
    withPlugin(
      (d) => {
        const dir = path.join(d.root, "cfg")
        const write = (file: string, content: string) => {
          fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
          fs.writeFileSync(path.join(dir, file), content)
        }
        write(
          "agent/review.md",
          "---\ndescription: Looks at diffs\nmode: subagent\npermissions:\n  - action: read\n    resource: ~/x/*\n    effect: deny\n---\n\n  Review carefully.  \n",
        )
        write("agents/nested/deep.md", "---\nsteps: 2\n---\nDeep body")
        write("agent/plain.md", "No front matter at all")
        write("agent/broken.md", "---\nmode: [unclosed\n---\nbody")
        write("agent/invalid.md", "---\nmode: sideways\n---\nbody")
        write("agent/unterminated.md", "---\nmode: primary\n")
        write("modes/quick.md", "---\nmode: subagent\nhidden: true\n---\nQuick")
        write("modes/sub/ignored.md", "---\n---\nnot a direct child")
        write("agent/notes.txt", "ignored")
        return [
          doc({ permissions: [{ action: "todowrite", resource: "*", effect: "deny" }] }),
          { type: "directory", path: dir },
        ]
      },
      (d) =>
        Effect.gen(function* () {
          const agents = yield* AgentV2.Service
          const review = yield* agents.get("review")
          expect(review).toMatchObject({ mode: "subagent", description: "Looks at diffs", system: "Review carefully." })
          expect(rulesOf(review)).toEqual([
            { action: "todowrite", resource: "*", effect: "deny" },
            { action: "read", resource: `${d.home}/x/*`, effect: "deny" },
          ])
          expect(yield* agents.get("nested/deep")).toMatchObject({ steps: 2, system: "Deep body", mode: "all" })
          expect((yield* agents.get("plain"))?.system).toBe("No front matter at all")
          expect(yield* agents.get("broken")).toBeUndefined()
          expect(yield* agents.get("invalid")).toBeUndefined()
          expect(yield* agents.get("unterminated")).toBeUndefined()
          expect(yield* agents.get("quick")).toMatchObject({ mode: "primary", hidden: true, system: "Quick" })
          expect(yield* agents.get("sub/ignored")).toBeUndefined()
          const ids = (yield* agents.all()).map((agent) => agent.id as string)
          // Built-ins first, then the markdown agents: the agent pattern (sorted), then the mode pattern.
          expect(ids.slice(7)).toEqual(["plain", "review", "nested/deep", "quick"])
        }),
    ),
  )
})
