import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as ProtectedPath from "../src/place/protected-path.js"

const entryOf = (absolute: string, roots: ReadonlyArray<ProtectedPath.Root> = []) =>
  ProtectedPath.classify(absolute, roots)?.entry

describe("ProtectedPath.classify", () => {
  it("names the entry a path falls under, by its segments, folding case and trailing dots and spaces", () => {
    expect(entryOf("/p/toolgate.json")).toBe("toolgate.json")
    expect(entryOf("/p/sub/TOOLGATE.JSONC")).toBe("toolgate.jsonc")
    expect(entryOf("/p/toolgate.json. ")).toBe("toolgate.json")
    expect(entryOf("/p/.toolgate/agents/a.md")).toBe(".toolgate/**")
    expect(entryOf("/p/.GIT/hooks/pre-commit")).toBe(".git/**")
    expect(entryOf("/p/.claude/skills/x/SKILL.md")).toBe(".claude/skills/**")
    expect(entryOf("/p/.agents/skills")).toBe(".agents/skills/**")
  })

  it("leaves ordinary paths and near misses alone", () => {
    expect(entryOf("/p/src/index.ts")).toBeUndefined()
    expect(entryOf("/p/.claude/settings.json")).toBeUndefined()
    expect(entryOf("/p/toolgate.json.bak")).toBeUndefined()
    expect(entryOf("/p/.gitignore")).toBeUndefined()
  })

  it("protects a root and everything below it, never a sibling that shares its name as a prefix", () => {
    const roots: ReadonlyArray<ProtectedPath.Root> = [
      { directory: "/home/u/.config/toolgate", entry: "<user config directory>/**" },
    ]
    expect(entryOf("/home/u/.config/toolgate", roots)).toBe("<user config directory>/**")
    expect(entryOf("/home/u/.config/toolgate/x/y.txt", roots)).toBe("<user config directory>/**")
    expect(entryOf("/home/u/.config/toolgate-other/y.txt", roots)).toBeUndefined()
    expect(entryOf("/home/u/.config/toolgate/../other.txt", roots)).toBeUndefined()
  })

  it("a path below a root is protected whatever its name", () => {
    const roots: ReadonlyArray<ProtectedPath.Root> = [{ directory: "/r", entry: "<extra root>/**" }]
    FastCheck.assert(
      FastCheck.property(FastCheck.array(FastCheck.stringMatching(/^[a-z]{1,6}$/), { maxLength: 4 }), (parts) => {
        expect(entryOf(path.join("/r", ...parts), roots)).toBe("<extra root>/**")
      }),
    )
  })
})

describe("ProtectedPath.roots", () => {
  it("lists the user configuration directory and the git store, each as given and as its real path", () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-protected-")))
    try {
      const realConfig = path.join(base, "real-config")
      fs.mkdirSync(realConfig)
      const linkedConfig = path.join(base, "config-link")
      fs.symlinkSync(realConfig, linkedConfig)
      const store = path.join(base, "repo", ".git")
      fs.mkdirSync(store, { recursive: true })
      const location = {
        directory: path.join(base, "repo"),
        project: { id: "p", directory: path.join(base, "repo") },
        vcs: { store },
      } as unknown as Parameters<typeof ProtectedPath.roots>[0]
      const global = { config: linkedConfig } as unknown as Parameters<typeof ProtectedPath.roots>[1]
      const roots = ProtectedPath.roots(location, global)
      expect(roots).toEqual([
        { directory: linkedConfig, entry: "<user config directory>/**" },
        { directory: realConfig, entry: "<user config directory>/**" },
        { directory: store, entry: "<git common directory>/**" },
      ])
      expect(ProtectedPath.make(roots).classify(path.join(realConfig, "toolgate.txt"))?.entry).toBe(
        "<user config directory>/**",
      )
    } finally {
      fs.rmSync(base, { recursive: true, force: true })
    }
  })
})
