import * as fs from "node:fs"
import * as path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { Config, Global, Location } from "../src/index.js"
import { tempDir } from "./support/location.js"

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** Config discovered for a Location at `directory` inside project `project`, global config dir `global`. */
const discovered = (
  options: { readonly directory: string; readonly project: string; readonly global: string; readonly git?: boolean },
  layer: typeof Config.layer | typeof Config.layerLenient = Config.layer,
) =>
  layer.pipe(
    Layer.provide(
      Layer.mergeAll(
        NodeFileSystem.layer,
        Global.layerWith({ config: options.global }),
        Location.layerWith({
          directory: options.directory,
          project: { id: "p", directory: options.project },
          ...(options.git === false
            ? {}
            : { vcs: { type: "git" as const, store: path.join(options.project, ".git") } }),
        }),
      ),
    ),
  )

const entriesOf = (layer: Layer.Layer<Config.Service, Config.InvalidError>) =>
  Effect.flatMap(Config.Service, (config) => config.entries()).pipe(Effect.provide(layer))

const describeEntry = (entry: Config.Entry, root: string) => `${entry.type}:${path.relative(root, entry.path ?? "")}`

describe("Config discovery", () => {
  it.scoped("orders global, direct files farthest first, then .toolgate directories farthest first", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const global = path.join(root, "global")
      const project = path.join(root, "project")
      const location = path.join(project, "a", "b")
      // Written in scrambled order so the result cannot follow creation order.
      write(path.join(location, ".toolgate", "toolgate.jsonc"), "{}")
      write(path.join(location, "toolgate.json"), "{}")
      write(path.join(project, "a", "toolgate.jsonc"), "{}")
      write(path.join(project, "a", "toolgate.json"), "{}")
      write(path.join(project, ".toolgate", "toolgate.jsonc"), "{}")
      write(path.join(project, ".toolgate", "toolgate.json"), "{}")
      write(path.join(project, "toolgate.jsonc"), "{}")
      write(path.join(global, "toolgate.jsonc"), "{}")
      write(path.join(global, "toolgate.json"), "{}")
      fs.mkdirSync(path.join(project, "a", ".toolgate-not-this"), { recursive: true })
      // Above the project directory: never read.
      write(path.join(root, "toolgate.json"), "{}")

      const entries = yield* entriesOf(discovered({ directory: location, project, global }))
      expect(entries.map((entry) => describeEntry(entry, root))).toEqual([
        "document:global/toolgate.json",
        "document:global/toolgate.jsonc",
        "directory:global",
        "document:project/toolgate.jsonc",
        "document:project/a/toolgate.json",
        "document:project/a/toolgate.jsonc",
        "document:project/a/b/toolgate.json",
        "document:project/.toolgate/toolgate.json",
        "document:project/.toolgate/toolgate.jsonc",
        "directory:project/.toolgate",
        "document:project/a/b/.toolgate/toolgate.jsonc",
        "directory:project/a/b/.toolgate",
      ])
    }),
  )

  it.scoped("uses only the global directory when the Location is the global config directory", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const global = path.join(root, "global")
      write(path.join(global, "toolgate.json"), "{}")
      write(path.join(global, ".toolgate", "toolgate.json"), "{}")
      write(path.join(root, "toolgate.json"), "{}")
      const entries = yield* entriesOf(discovered({ directory: global, project: root, global }))
      expect(entries.map((entry) => describeEntry(entry, root))).toEqual([
        "document:global/toolgate.json",
        "directory:global",
      ])
    }),
  )

  it.scoped("reads JSONC with comments and trailing commas; later documents win per key", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const global = path.join(root, "global")
      const project = path.join(root, "project")
      write(
        path.join(global, "toolgate.json"),
        `{ "shell": "/bin/zsh", "default_agent": "plan", "tool_output": { "max_lines": 10 } }`,
      )
      write(
        path.join(project, "toolgate.jsonc"),
        `{
          // a line comment
          "default_agent": "build", /* a block comment */
          "tool_output": { "max_bytes": 500, },
        }`,
      )
      const entries = yield* entriesOf(discovered({ directory: project, project, global }))
      expect(Config.latest(entries, "default_agent")).toBe("build")
      expect(Config.latest(entries, "shell")).toBe("/bin/zsh")
      // `latest` replaces whole values: the nearer tool_output object wins as a whole.
      expect(Config.latest(entries, "tool_output")).toEqual({ max_bytes: 500 })
      expect(Config.latest(entries, "agents")).toBeUndefined()
    }),
  )

  it.scoped("reads the files once, when the layer is built", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const file = path.join(root, "toolgate.json")
      write(file, `{ "shell": "sh" }`)
      const context = yield* Layer.build(discovered({ directory: root, project: root, global: path.join(root, "g") }))
      const config = Effect.flatMap(Config.Service, (service) => service.entries()).pipe(Effect.provide(context))
      write(file, `{ "shell": "bash" }`)
      write(path.join(root, "toolgate.jsonc"), `{ "shell": "fish" }`)
      expect(Config.latest(yield* config, "shell")).toBe("sh")
    }),
  )

  it.scoped("fails with InvalidError naming the file and the field of a document that does not decode", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const file = path.join(root, ".toolgate", "toolgate.json")
      write(file, `{ "tool_output": { "max_lines": -3 } }`)
      const error = yield* Effect.flip(
        entriesOf(discovered({ directory: root, project: root, global: path.join(root, "g") })),
      )
      expect(error._tag).toBe("Config.InvalidError")
      expect(error).toBeInstanceOf(Config.InvalidError)
      expect(error.path).toBe(file)
      expect(error.message).toContain(file)
      expect(error.message).toContain("tool_output.max_lines")
      // The `undefined` member `Schema.optional` adds to the field's union is not reported, the refinement is.
      expect(error.message).not.toContain("Expected undefined")
      expect(error.message).toMatch(/tool_output\.max_lines: .*-3/)
    }),
  )

  it.scoped("fails with InvalidError giving the line of a JSONC syntax error", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const file = path.join(root, "toolgate.jsonc")
      write(file, `{\n  "shell": "sh"\n  "default_agent": "build"\n}`)
      const error = yield* Effect.flip(
        entriesOf(discovered({ directory: root, project: root, global: path.join(root, "g") })),
      )
      expect(error._tag).toBe("Config.InvalidError")
      expect(error.path).toBe(file)
      expect(error.message).toContain("line 3, column 3")
      expect(error.message).toContain("CommaExpected")
    }),
  )

  it.scoped("layerLenient skips unparsable and undecodable files and keeps the rest", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const project = path.join(root, "project")
      write(path.join(project, "toolgate.json"), `{ "shell": 42 }`)
      write(path.join(project, "toolgate.jsonc"), `{ "shell": `)
      write(path.join(project, ".toolgate", "toolgate.json"), `{ "default_agent": "review" }`)
      const entries = yield* entriesOf(
        discovered({ directory: project, project, global: path.join(root, "g") }, Config.layerLenient),
      )
      expect(entries.map((entry) => describeEntry(entry, root))).toEqual([
        "directory:g",
        "document:project/.toolgate/toolgate.json",
        "directory:project/.toolgate",
      ])
      expect(Config.latest(entries, "default_agent")).toBe("review")
    }),
  )
})

describe("Config.parseDocument", () => {
  it("names every offending field", () => {
    const result = Config.parseDocument("/x/toolgate.json", `{ "shell": 1, "agents": { "a": { "steps": 0 } } }`)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left.message).toContain("shell")
      expect(result.left.message).toContain("agents.a.steps")
    }
  })
  it("rejects a document that is not an object at the root", () => {
    const result = Config.parseDocument("/x/toolgate.json", `[]`)
    expect(Either.isLeft(result) && result.left.message.includes("(root)")).toBe(true)
  })
})

describe("Config.projectChain", () => {
  const at = (directory: string, project: string, git: boolean): Location.Interface => ({
    directory,
    project: { id: "p", directory: project },
    ...(git ? { vcs: { type: "git" as const, store: path.join(project, ".git") } } : {}),
  })

  it("runs from the git worktree root down to the Location", () => {
    expect(Config.projectChain(at("/r/a/b", "/r", true))).toEqual(["/r", "/r/a", "/r/a/b"])
    expect(Config.projectChain(at("/r", "/r", true))).toEqual(["/r"])
  })

  it("is only the Location outside git, or when the Location is not below its project directory", () => {
    expect(Config.projectChain(at("/tmp/scratch/work", "/", false))).toEqual(["/tmp/scratch/work"])
    expect(Config.projectChain(at("/elsewhere/x", "/r", true))).toEqual(["/elsewhere/x"])
    expect(Config.projectChain(at("/r/..sibling", "/r", true))).toEqual(["/r", "/r/..sibling"])
  })

  it.scoped("a non-git Location reads no document from its parents", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const directory = path.join(root, "a", "b")
      write(path.join(root, "toolgate.json"), `{ "shell": "from-root" }`)
      write(path.join(root, "a", "toolgate.json"), `{ "shell": "from-a" }`)
      write(path.join(directory, "toolgate.json"), `{ "shell": "here" }`)
      const entries = yield* entriesOf(
        discovered({ directory, project: "/", global: path.join(root, "g"), git: false }),
      )
      expect(Config.documents(entries).map((entry) => entry.path)).toEqual([path.join(directory, "toolgate.json")])
      expect(Config.latest(entries, "shell")).toBe("here")
    }),
  )
})
