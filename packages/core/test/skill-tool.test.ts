import * as fs from "node:fs"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import {
  ApplicationTools,
  Global,
  Location,
  SkillTool,
  SkillV2,
  Tool,
  ToolOutputStore,
  ToolRegistry,
} from "../src/index.js"
import { tempDir } from "./support/location.js"
import * as Permission from "./support/permission.js"
import { ToolTest } from "../src/entry/testing.js"

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

const registry = ToolRegistry.layer.pipe(
  Layer.provide(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
)
const environment = (skills: Layer.Layer<SkillV2.Service>) =>
  SkillTool.layer.pipe(Layer.provideMerge(Layer.mergeAll(registry, Permission.layer, skills, NodeContext.layer)))

const identity = { sessionID: "ses_tool_test", agent: "build", assistantMessageID: "msg_tool_test" } as const

const settle = (skill: string) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize()).pipe(
    Effect.flatMap((turn) =>
      turn.settle({ ...identity, call: { id: `call-${skill}`, name: "skill", input: { name: skill } } }),
    ),
  )

const effectSkill = "---\nname: effect\ndescription: Effect patterns\n---\n\n  Use Effect.gen for sequencing.\n\n"

describe("skill tool", () => {
  it.scoped("lists available skills, authorizes the selected name, and loads model-facing content", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-skill-tool-")
      write(path.join(root, "effect", "SKILL.md"), effectSkill)
      write(path.join(root, "effect", "reference.md"), "# Reference\n")
      const skills = SkillV2.layerFromSources([{ type: "directory", path: root }]).pipe(
        Layer.provide(NodeContext.layer),
      )

      yield* Effect.gen(function* () {
        // definition
        const turn = yield* Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize())
        expect(turn.definitions.map((d) => d.name)).toEqual(["skill"])
        expect(turn.definitions[0]!.description).toBe(SkillTool.description)
        expect(SkillTool.description.split("\n\n")).toHaveLength(3)

        // load
        const info = (yield* Effect.flatMap(SkillV2.Service, (s) => s.list())).find((s) => s.name === "effect")!
        const directory = path.join(root, "effect")
        const expected = SkillTool.toModelOutput(info, [path.join(directory, "reference.md")])
        const settlement = yield* settle("effect")
        expect(settlement.result).toEqual({ type: "text", value: expected })
        expect(expected).toContain(`Base directory for this skill: ${directory}`)
        expect(expected).toBe(
          [
            '<skill_content name="effect">',
            "# Skill: effect",
            "",
            "Use Effect.gen for sequencing.",
            "",
            `Base directory for this skill: ${directory}`,
            "Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.",
            "Note: file list is sampled.",
            "",
            "<skill_files>",
            `<file>${path.join(directory, "reference.md")}</file>`,
            "</skill_files>",
            "</skill_content>",
          ].join("\n"),
        )
        expect(settlement.output?.structured).toEqual({ name: "effect", directory, output: expected })

        // a second load, then the assertions
        yield* settle("effect")
        const asserts = yield* Permission.asserts
        expect(asserts.map(({ action, resources, save }) => ({ action, resources, save }))).toEqual([
          { action: "skill", resources: ["effect"], save: ["effect"] },
          { action: "skill", resources: ["effect"], save: ["effect"] },
        ])
        expect(asserts[0]).toMatchObject({
          sessionID: identity.sessionID,
          agent: "build",
          source: { type: "tool", messageID: identity.assistantMessageID, callID: "call-effect" },
        })

        // unknown name: no assertion
        expect((yield* settle("missing")).result).toEqual({ type: "error", value: "Unable to load skill missing" })
        expect(yield* Permission.actions).toHaveLength(2)

        // denied
        yield* Permission.deny("skill")
        expect((yield* settle("effect")).result).toEqual({
          type: "error",
          value: "Permission denied by configured rules for skill: effect",
        })
      }).pipe(Effect.provide(environment(skills)))
    }),
  )

  it.scoped("a flat skill lists no files, even with files next to it", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-skill-flat-")
      const location = path.join(root, "public.md")
      write(location, "---\nname: public\n---\nFlat body\n")
      write(path.join(root, "secret.md"), "secret\n")
      const info: SkillV2.Info = { name: "public", location, content: "Flat body\n" }
      const settlement = yield* settle("public").pipe(Effect.provide(environment(SkillV2.layerWith([info]))))
      const text = SkillTool.toModelOutput(info, [])
      expect(settlement.result).toEqual({ type: "text", value: text })
      expect(text).toContain("<skill_files>\n</skill_files>")
      expect(text).not.toContain("secret.md")
    }),
  )

  it.scoped("samples at most 10 files, sorted, dotfiles included, SKILL.md files dropped", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-skill-sample-")
      const directory = path.join(root, "big")
      write(path.join(directory, "SKILL.md"), "---\nname: big\n---\nBig\n")
      const names = ["z.md", ".env", "a.txt", "scripts/run.sh", "nested/SKILL.md", "nested/notes.md"]
      for (let i = 0; i < 8; i++) names.push(`file-${i}.md`)
      for (const name of names) write(path.join(directory, name), name)
      const info: SkillV2.Info = { name: "big", location: path.join(directory, "SKILL.md"), content: "Big\n" }
      const settlement = yield* settle("big").pipe(Effect.provide(environment(SkillV2.layerWith([info]))))
      const expected = names
        .filter((name) => path.basename(name) !== "SKILL.md")
        .map((name) => path.join(directory, name))
        .sort()
        .slice(0, SkillTool.FILE_LIMIT)
      expect(expected).toHaveLength(10)
      expect(settlement.result).toEqual({ type: "text", value: SkillTool.toModelOutput(info, expected) })
      expect(expected).toContain(path.join(directory, ".env"))
    }),
  )

  it.scoped("a skill whose directory vanished fails with the generic message and keeps the cause", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-skill-gone-")
      const info: SkillV2.Info = { name: "gone", location: path.join(root, "gone", "SKILL.md"), content: "x" }
      const settlement = yield* settle("gone").pipe(Effect.provide(environment(SkillV2.layerWith([info]))))
      expect(settlement.result).toEqual({ type: "error", value: "Unable to load skill gone" })
      const { service } = yield* Permission.makeFake
      const tool = SkillTool.make({
        permission: service,
        skills: Context.get(yield* Layer.build(SkillV2.layerWith([info])), SkillV2.Service),
        fs: yield* FileSystem.FileSystem.pipe(Effect.provide(NodeContext.layer)),
      })
      const failure = yield* Effect.flip(
        ToolTest.settle(tool, { name: "gone" }, { name: "skill", context: { ...identity, toolCallID: "call-gone" } }),
      )
      expect(failure.message).toBe("Unable to load skill gone")
      expect((failure.error as { readonly _tag?: string })._tag).toBe("SystemError")
    }),
  )

  it.scoped("loads a skill discovered in our locations (.claude/skills under the Location)", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-skill-discovered-")
      write(path.join(root, ".claude", "skills", "effect", "SKILL.md"), effectSkill)
      const skills = SkillV2.layer.pipe(
        Layer.provide(
          Layer.mergeAll(
            NodeContext.layer,
            Global.layerWith({ config: path.join(root, "no-global") }),
            Location.layerWith({ directory: root, project: { id: "p", directory: root } }),
          ),
        ),
      )
      const settlement = yield* settle("effect").pipe(Effect.provide(environment(skills)))
      expect(settlement.result.type).toBe("text")
      expect(String(settlement.result.value)).toContain(
        `Base directory for this skill: ${path.join(root, ".claude", "skills", "effect")}`,
      )
    }),
  )
})
