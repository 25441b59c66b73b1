import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { tempDir, toolgate } from "./support.js"

describe("toolgate permissions lint", () => {
  it("reports findings with file and index, exits 1 on errors and 0 on a clean configuration", async () => {
    const home = tempDir()
    const dir = tempDir("toolgate-lint-project-")
    fs.writeFileSync(
      path.join(dir, "toolgate.json"),
      JSON.stringify({
        permissions: [
          { action: "bash", resource: "git status *", effect: "allow" },
          { action: "external_directory", resource: "build/*", effect: "allow" },
          { action: "bash", resource: "*", effect: "ask", efect: "deny" },
        ],
      }),
    )
    fs.mkdirSync(path.join(dir, ".toolgate", "agents"), { recursive: true })
    fs.writeFileSync(
      path.join(dir, ".toolgate", "agents", "build.md"),
      "---\npermissions:\n  - { action: bash, resource: 'rm *', effect: deny }\n  - { action: bash, resource: 'rm *', effect: deny }\n---\nBuild.\n",
    )
    const run = await toolgate(["permissions", "lint", "--dir", dir], { home })
    expect(run.code).toBe(1)
    expect(run.stderr).toBe("toolgate: lint found 2 errors\n")
    const file = path.join(dir, "toolgate.json")
    expect(run.stdout).toContain(`error never-matches: ${file} permissions[1]:`)
    expect(run.stdout).toContain(`error unknown-key: ${file} permissions[2]: unknown key "efect"`)
    expect(run.stdout).toContain(`warning shadowed: ${file} permissions[0]:`)
    expect(run.stdout).toMatch(/warning duplicate: .*build\.md agents\.build\.permissions\[0\]/)

    fs.writeFileSync(
      path.join(dir, "toolgate.json"),
      JSON.stringify({ permissions: [{ action: "bash", resource: "git status *", effect: "allow" }] }),
    )
    fs.rmSync(path.join(dir, ".toolgate"), { recursive: true })
    const clean = await toolgate(["permissions", "lint", "--dir", dir], { home })
    expect(clean.stderr).toBe("")
    expect(clean.code).toBe(0)
    expect(clean.stdout).toBe("No problems found.\n")
  })
})
