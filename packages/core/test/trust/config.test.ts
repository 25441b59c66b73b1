/**
 * Policy inputs fail closed and are confined like `read` (see docs/trust/protected-paths.md): an unknown top-level
 * key, a rule whose fields are not strings or an unknown effect stops the Location from building with
 * `Config.InvalidError` naming the file and the field; configuration, agent and skill files that resolve outside
 * their root through a symlink are skipped with a warning, and nothing of them reaches the model.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit } from "effect"
import { AgentV2, Config, SkillV2 } from "../../src/index.js"
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

const OUTSIDE_SECRET = "OUTSIDE_SECRET_e2c4"

/** A git project (Location = its root), a data directory and an outside directory holding a secret. */
const fixture = Effect.gen(function* () {
  const root = yield* tempDir("toolgate-config-trust-")
  const directory = path.join(root, "repo")
  gitRepository(directory)
  const outside = path.join(root, "outside")
  write(outside, {
    "secret.txt": `${OUTSIDE_SECRET}\n`,
    "toolgate.json": JSON.stringify({ agents: { planted: { description: OUTSIDE_SECRET } } }),
    "agent.md": `---\ndescription: planted\n---\n${OUTSIDE_SECRET}\n`,
    "skill/SKILL.md": `---\nname: planted\ndescription: planted\n---\n${OUTSIDE_SECRET}\n`,
    "skill/secret-name-only.txt": "x\n",
  })
  return { root, directory, outside, data: path.join(root, "data") }
})

/** Builds the Location and returns its build failure (or undefined). */
const buildFailure = (directory: string, data: string) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(rebuild({ directory, data }))
    if (Exit.isSuccess(exit)) return undefined
    const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    return failure as Config.InvalidError | undefined
  })

describe("bad policy input fails closed", () => {
  it.scopedLive(
    "`permission` instead of `permissions`: the Location does not build; the error names key and file",
    () =>
      Effect.gen(function* () {
        const { directory, data } = yield* fixture
        const file = path.join(directory, "toolgate.json")
        write(directory, {
          "toolgate.json": JSON.stringify({ permission: [{ action: "*", resource: "*", effect: "deny" }] }),
        })
        const error = yield* buildFailure(directory, data)
        expect(error?._tag).toBe("Config.InvalidError")
        expect(error?.path).toBe(file)
        // `permission` is the gate's settings object (`permission.ask_timeout`): a rules array there is refused at that
        // key, never read as rules.
        expect(error?.message).toMatch(/\bat permission: /)
        expect(error?.message).toContain(file)
      }),
  )

  it.scopedLive("an unknown top-level key in a .toolgate document or the user's configuration fails too", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* fixture
      write(directory, { ".toolgate/toolgate.jsonc": `{ // comment\n "agent": {} }` })
      const error = yield* buildFailure(directory, data)
      expect(error?.path).toBe(path.join(directory, ".toolgate", "toolgate.jsonc"))
      expect(error?.message).toContain('"agent"')
      fs.rmSync(path.join(directory, ".toolgate"), { recursive: true })
      write(userConfig, { "toolgate.json": JSON.stringify({ defaultAgent: "plan" }) })
      try {
        const global = yield* buildFailure(directory, data)
        expect(global?.path).toBe(path.join(userConfig, "toolgate.json"))
        expect(global?.message).toContain('"defaultAgent"')
      } finally {
        fs.rmSync(path.join(userConfig, "toolgate.json"))
      }
    }),
  )

  it.scopedLive("an agent file whose rules do not decode stops the build too (no silent fall back to defaults)", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* fixture
      const file = path.join(directory, ".toolgate", "agents", "build.md")
      write(directory, {
        ".toolgate/agents/build.md":
          "---\npermissions:\n  - { action: edit, resource: '*', effect: denyy }\n---\nbody\n",
      })
      const error = yield* buildFailure(directory, data)
      expect(error?._tag).toBe("Config.InvalidError")
      expect(error?.path).toBe(file)
      expect(error?.message).toContain("permissions.0.effect")
      write(directory, { ".toolgate/agents/build.md": "---\npermissions: [unterminated\n---\nbody\n" })
      expect((yield* buildFailure(directory, data))?.path).toBe(file)
    }),
  )

  it("a rule whose action or resource is not a string, or whose effect is unknown, names file and field", () => {
    const cases = [
      [{ action: 1, resource: "*", effect: "allow" }, "permissions.0.action"],
      [{ action: "read", resource: ["*"], effect: "allow" }, "permissions.0.resource"],
      [{ action: "read", resource: "*", effect: "allow-all" }, "permissions.0.effect"],
      [{ action: "read", resource: "*" }, "permissions.0.effect"],
    ] as const
    for (const [rule, field] of cases) {
      const result = Config.parseDocument("/p/toolgate.json", JSON.stringify({ permissions: [rule] }))
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left.path).toBe("/p/toolgate.json")
        expect(result.left.message).toContain("/p/toolgate.json")
        expect(result.left.message).toContain(field)
      }
    }
    const agent = Config.parseDocument(
      "/p/toolgate.json",
      JSON.stringify({ agents: { a: { permissions: [{ action: "read", resource: 7, effect: "deny" }] } } }),
    )
    expect(Either.isLeft(agent) && agent.left.message.includes("agents.a.permissions.0.resource")).toBe(true)
  })

  it("unknown keys inside a rule stay harmless; $schema is accepted", () => {
    const result = Config.parseDocument(
      "/p/toolgate.json",
      JSON.stringify({
        $schema: "https://example.com/toolgate.json",
        permissions: [{ action: "read", resource: "*", effect: "deny", note: "why" }],
      }),
    )
    expect(Either.isRight(result)).toBe(true)
    if (Either.isRight(result)) {
      expect(result.right.info.permissions).toEqual([{ action: "read", resource: "*", effect: "deny" }])
    }
  })
})

describe("configuration, agent and skill files are confined like read", () => {
  it.scopedLive("a toolgate.json symlinked outside is skipped with a warning naming it; its rules do not apply", () =>
    Effect.gen(function* () {
      const { directory, outside, data } = yield* fixture
      fs.symlinkSync(path.join(outside, "toolgate.json"), path.join(directory, "toolgate.json"))
      const log = observed()
      const agents = yield* Effect.flatMap(AgentV2.Service, (service) => service.all()).pipe(
        Effect.provide(location({ directory, data, log })),
      )
      expect(agents.map((agent) => agent.id)).not.toContain("planted")
      expect(JSON.stringify(agents)).not.toContain(OUTSIDE_SECRET)
      expect(log.warnings.some((warning) => warning.includes(path.join(directory, "toolgate.json")))).toBe(true)
    }),
  )

  it.scopedLive("a toolgate.json symlinked to an unprotected file inside the project is skipped too", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* fixture
      write(directory, { "conf/rules.json": JSON.stringify({ agents: { planted: {} } }) })
      fs.symlinkSync(path.join(directory, "conf", "rules.json"), path.join(directory, "toolgate.json"))
      const seen = yield* rebuild({ directory, data })
      expect(seen.agents.map((agent) => agent.id)).not.toContain("planted")
      expect(seen.entries.filter((entry) => entry.type === "document")).toEqual([])
    }),
  )

  it.scopedLive("an agent file or a whole .toolgate folder symlinked outside is skipped with a warning", () =>
    Effect.gen(function* () {
      const { directory, outside, data } = yield* fixture
      fs.mkdirSync(path.join(directory, ".toolgate", "agents"), { recursive: true })
      fs.symlinkSync(path.join(outside, "agent.md"), path.join(directory, ".toolgate", "agents", "planted.md"))
      write(directory, { ".toolgate/agents/real.md": "---\ndescription: real\n---\nreal prompt\n" })
      const log = observed()
      const agents = yield* Effect.flatMap(AgentV2.Service, (service) => service.all()).pipe(
        Effect.provide(location({ directory, data, log })),
      )
      expect(agents.map((agent) => agent.id)).toContain("real")
      expect(agents.map((agent) => agent.id)).not.toContain("planted")
      expect(JSON.stringify(agents)).not.toContain(OUTSIDE_SECRET)
      expect(log.warnings.some((warning) => warning.includes("planted.md"))).toBe(true)

      fs.rmSync(path.join(directory, ".toolgate"), { recursive: true })
      fs.mkdirSync(path.join(outside, "cfg", "agents"), { recursive: true })
      fs.copyFileSync(path.join(outside, "agent.md"), path.join(outside, "cfg", "agents", "planted.md"))
      fs.symlinkSync(path.join(outside, "cfg"), path.join(directory, ".toolgate"))
      const again = observed()
      const moreAgents = yield* Effect.flatMap(AgentV2.Service, (service) => service.all()).pipe(
        Effect.provide(location({ directory, data, log: again })),
      )
      expect(moreAgents.map((agent) => agent.id)).not.toContain("planted")
      expect(again.warnings.some((warning) => warning.includes(path.join(directory, ".toolgate")))).toBe(true)
    }),
  )

  it.scopedLive("a skill symlinked to an outside secret is not listed, not loaded and not sampled", () =>
    Effect.gen(function* () {
      const { directory, outside, data } = yield* fixture
      const skills = path.join(directory, ".toolgate", "skills")
      write(skills, { "good/SKILL.md": "---\nname: good\ndescription: good\n---\ngood body\n" })
      fs.symlinkSync(path.join(outside, "skill"), path.join(skills, "planted"))
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(skills, "good", "notes.txt"))
      fs.mkdirSync(path.join(skills, "good", "more"))
      fs.symlinkSync(path.join(outside, "skill", "SKILL.md"), path.join(skills, "good", "more", "SKILL.md"))
      const log = observed()
      const { listed, planted, good } = yield* Effect.gen(function* () {
        const listed = yield* Effect.flatMap(SkillV2.Service, (service) => service.list())
        const planted = yield* settle("skill", { name: "planted" })
        const good = yield* settle("skill", { name: "good" })
        return { listed, planted, good }
      }).pipe(Effect.provide(location({ directory, data, log })))
      expect(listed.map((skill) => skill.name)).toEqual(["good"])
      expect(text(planted)).toContain("Unable to load skill planted")
      expect(text(good)).toContain("good body")
      for (const result of [text(planted), text(good), JSON.stringify(listed)]) {
        expect(result).not.toContain(OUTSIDE_SECRET)
        expect(result).not.toContain("secret-name-only")
        expect(result).not.toContain("notes.txt")
      }
      expect(log.warnings.some((warning) => warning.includes(path.join(skills, "planted")))).toBe(true)
    }),
  )

  it.scopedLive("a skill root that is itself a symlink to an ordinary folder is not read", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* fixture
      write(directory, { "plain/x/SKILL.md": "---\nname: plain\ndescription: plain\n---\nbody\n" })
      fs.mkdirSync(path.join(directory, ".claude"))
      fs.symlinkSync(path.join(directory, "plain"), path.join(directory, ".claude", "skills"))
      const listed = yield* Effect.flatMap(SkillV2.Service, (service) => service.list()).pipe(
        Effect.provide(location({ directory, data, log: observed() })),
      )
      expect(listed).toEqual([])
    }),
  )
})
