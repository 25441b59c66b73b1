import * as fs from "node:fs"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, Layer, Logger, Option } from "effect"
import { Global, Location, SkillV2 } from "../src/index.js"
import { tempDir } from "./support/location.js"

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

const skill = (name: string | undefined, body: string, extra = "") =>
  `---\n${name === undefined ? "" : `name: ${name}\n`}description: ${body} skill\n${extra}---\n\n${body}\n`

/** A project root with a nested Location `<root>/pkg/app` and a separate global config directory. */
const fixture = Effect.gen(function* () {
  const root = yield* tempDir("toolgate-skill-")
  const config = path.join(root, "global-config")
  const directory = path.join(root, "pkg", "app")
  fs.mkdirSync(directory, { recursive: true })
  const layer = SkillV2.layer.pipe(
    Layer.provide(
      Layer.mergeAll(
        NodeContext.layer,
        Global.layerWith({ config }),
        // A git Location: discovery runs from the worktree root (`root`) down to `directory`.
        Location.layerWith({
          directory,
          project: { id: "p", directory: root },
          vcs: { type: "git", store: path.join(root, ".git") },
        }),
      ),
    ),
  )
  return { root, config, directory, layer }
})

const list = (layer: Layer.Layer<SkillV2.Service>) =>
  Effect.flatMap(SkillV2.Service, (s) => s.list()).pipe(Effect.provide(layer))

describe("SkillV2", () => {
  it.scoped("discovers our locations in order; a later source wins on equal names but keeps the first position", () =>
    Effect.gen(function* () {
      const { root, config, directory, layer } = yield* fixture
      write(path.join(config, "skills", "shared", "SKILL.md"), skill("shared", "global"))
      write(path.join(config, "skills", "deep", "nested", "SKILL.md"), skill("global-deep", "nested"))
      write(path.join(root, ".claude", "skills", "c", "SKILL.md"), skill("claude-root", "claude"))
      write(path.join(root, ".agents", "skills", "a", "SKILL.md"), skill("agents-root", "agents"))
      write(path.join(root, "pkg", ".toolgate", "skills", "t", "SKILL.md"), skill("toolgate-pkg", "toolgate"))
      write(path.join(directory, ".toolgate", "skills", "shared", "SKILL.md"), skill("shared", "location"))
      // Only SKILL.md files are skills in our locations.
      write(path.join(root, ".toolgate", "skills", "notes.md"), skill("notes", "flat"))

      const skills = yield* list(layer)
      expect(skills.map((s) => s.name)).toEqual(["global-deep", "shared", "claude-root", "agents-root", "toolgate-pkg"])
      const shared = skills.find((s) => s.name === "shared")!
      expect(shared.location).toBe(path.join(directory, ".toolgate", "skills", "shared", "SKILL.md"))
      expect(shared.content.trim()).toBe("location")
      expect(shared.description).toBe("location skill")

      const sources = yield* Effect.flatMap(SkillV2.Service, (s) => s.sources()).pipe(Effect.provide(layer))
      expect(sources.map((s) => path.relative(root, s.path))).toEqual([
        path.join("global-config", "skills"),
        ...["", "pkg", path.join("pkg", "app")].flatMap((dir) =>
          [".claude", ".agents", ".toolgate"].map((folder) => path.join(dir, folder, "skills")),
        ),
      ])
    }),
  )

  it.scoped("within one directory level .claude < .agents < .toolgate", () =>
    Effect.gen(function* () {
      const { directory, layer } = yield* fixture
      write(path.join(directory, ".toolgate", "skills", "x", "SKILL.md"), skill("same", "toolgate"))
      write(path.join(directory, ".claude", "skills", "x", "SKILL.md"), skill("same", "claude"))
      write(path.join(directory, ".agents", "skills", "x", "SKILL.md"), skill("same", "agents"))
      const skills = yield* list(layer)
      expect(skills).toHaveLength(1)
      expect(skills[0]!.content.trim()).toBe("toolgate")
    }),
  )

  it.scoped(
    "skips empty, unparsable, undecodable and unnamed nested files; names a top-level file by its basename",
    () =>
      Effect.gen(function* () {
        const { directory, layer } = yield* fixture
        const skills = path.join(directory, ".toolgate", "skills")
        write(path.join(skills, "empty", "SKILL.md"), "")
        write(path.join(skills, "broken", "SKILL.md"), "---\nname: [unclosed\n---\nbody\n")
        write(path.join(skills, "unterminated", "SKILL.md"), "---\nname: never-closed\nbody\n")
        write(path.join(skills, "typed", "SKILL.md"), "---\nname: 42\n---\nbody\n")
        write(path.join(skills, "unnamed", "SKILL.md"), skill(undefined, "unnamed"))
        write(path.join(skills, "SKILL.md"), skill(undefined, "top"))
        write(path.join(skills, "slashy", "SKILL.md"), skill("slashy", "slash", "slash: true\n"))
        write(path.join(skills, ".hidden", "SKILL.md"), skill("hidden", "dot"))
        const found = yield* list(layer)
        expect(found.map((s) => s.name)).toEqual(["hidden", "SKILL", "slashy"])
        expect(found.find((s) => s.name === "slashy")!.slash).toBe(true)
        expect("slash" in found.find((s) => s.name === "hidden")!).toBe(false)
      }),
  )

  it.scoped("follows symlinks that stay inside the skill source; a cycle does not loop", () =>
    Effect.gen(function* () {
      const { directory, layer } = yield* fixture
      const source = path.join(directory, ".toolgate", "skills")
      write(path.join(source, "_store", "linked", "SKILL.md"), skill("linked", "linked"))
      fs.symlinkSync(path.join(source, "_store", "linked"), path.join(source, "linked"))
      fs.symlinkSync(source, path.join(source, "_store", "linked", "loop"))
      const found = yield* list(layer)
      expect(found.map((s) => s.name)).toEqual(["linked"])
      expect(found[0]!.location).toBe(path.join(source, "_store", "linked", "SKILL.md"))
    }),
  )

  it.scoped("skips a skill directory that resolves outside its source (stricter than the reference)", () =>
    Effect.gen(function* () {
      const { root, directory, layer } = yield* fixture
      write(path.join(root, "elsewhere", "linked", "SKILL.md"), skill("linked", "outside body"))
      fs.mkdirSync(path.join(directory, ".toolgate", "skills"), { recursive: true })
      fs.symlinkSync(path.join(root, "elsewhere", "linked"), path.join(directory, ".toolgate", "skills", "linked"))
      expect(yield* list(layer)).toEqual([])
    }),
  )

  it.scoped("each source is loaded once per Location", () =>
    Effect.gen(function* () {
      const { directory, layer } = yield* fixture
      write(path.join(directory, ".toolgate", "skills", "one", "SKILL.md"), skill("one", "one"))
      const context = yield* Layer.build(layer)
      const service = yield* Effect.provide(SkillV2.Service, context)
      expect((yield* service.list()).map((s) => s.name)).toEqual(["one"])
      write(path.join(directory, ".toolgate", "skills", "two", "SKILL.md"), skill("two", "two"))
      expect((yield* service.list()).map((s) => s.name)).toEqual(["one"])
      // A new Location build sees the new file.
      expect((yield* list(layer)).map((s) => s.name)).toEqual(["one", "two"])
    }),
  )

  it("available hides the skills whose skill permission evaluates to deny", () => {
    const make = (name: string): SkillV2.Info => ({ name, location: `/s/${name}/SKILL.md`, content: name })
    const skills = [make("public"), make("secret"), make("internal-a")]
    const visible = SkillV2.available(skills, {
      permissions: [
        { action: "skill", resource: "secret", effect: "deny" },
        { action: "skill", resource: "internal-*", effect: "ask" },
      ],
    })
    expect(visible.map((s) => s.name)).toEqual(["public", "internal-a"])
    expect(SkillV2.available(skills, { permissions: [{ action: "*", resource: "*", effect: "deny" }] })).toEqual([])
  })

  it("parse: front matter name wins; the body is everything after the closing fence", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
        FastCheck.array(FastCheck.constantFrom("a", " ", "-", "\n", "\r\n", "#", ":", "x"), { maxLength: 40 })
          .map((parts) => parts.join(""))
          .filter((body) => body.trim() !== "" && !/^---[ \t]*(\r?\n|$)/m.test(body)),
        (name, body) => {
          const parsed = SkillV2.parse("/src/deep/x/SKILL.md", `---\nname: ${name}\n---\n${body}`, "/src")
          expect(Option.getOrThrow(parsed)).toEqual({ name, location: "/src/deep/x/SKILL.md", content: body })
        },
      ),
    )
  })
})

describe("SkillV2.walk", () => {
  it.scoped("lists files inside the directory and skips, with a warning, entries that resolve outside it", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-walk-")
      const skill = path.join(root, "skill")
      write(path.join(skill, "SKILL.md"), "x")
      write(path.join(skill, "scripts", "run.sh"), "x")
      write(path.join(root, "outside", "secret.txt"), "x")
      fs.symlinkSync(path.join(root, "outside"), path.join(skill, "linked-dir"))
      fs.symlinkSync(path.join(root, "outside", "secret.txt"), path.join(skill, "linked-file.txt"))
      fs.symlinkSync(path.join(skill, "scripts", "run.sh"), path.join(skill, "alias.sh"))
      const warnings: Array<string> = []
      const logger = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message }) => void warnings.push(String(Array.isArray(message) ? message[0] : message))),
      )
      const files = yield* SkillV2.walk(skill).pipe(Effect.provide(Layer.merge(NodeContext.layer, logger)))
      expect(files.map((file) => path.relative(skill, file))).toEqual([
        "SKILL.md",
        "alias.sh",
        path.join("scripts", "run.sh"),
      ])
      expect(warnings.some((warning) => warning.includes(path.join(skill, "linked-dir")))).toBe(true)
      expect(warnings.some((warning) => warning.includes(path.join(skill, "linked-file.txt")))).toBe(true)
    }),
  )
})
