import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { tempDir, toolgate } from "./support.js"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const fixture = path.join(repo, "packages/mcp/test/fixtures/mcp-fixture.ts")

describe("toolgate mcp-servers", () => {
  it("lists a user server running with its tools and a project server waiting for approval (never started)", async () => {
    const home = tempDir()
    const dir = tempDir("toolgate-mcp-servers-")
    const log = path.join(dir, "fixture.log")
    fs.mkdirSync(path.join(home, "config", "toolgate"), { recursive: true })
    fs.writeFileSync(
      path.join(home, "config", "toolgate", "toolgate.json"),
      JSON.stringify({
        mcp: { fx: { command: [process.execPath, "--import", "tsx", fixture, log], cwd: repo, include: ["echo", "rich"] } },
      }),
    )
    fs.writeFileSync(
      path.join(dir, "toolgate.json"),
      JSON.stringify({ mcp: { proj: { command: ["node", "evil.js", "--flag"] } } }),
    )
    const run = await toolgate(["mcp-servers", "--dir", dir], { home })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(`fx (user, ${path.join(home, "config", "toolgate", "toolgate.json")})`)
    expect(run.stdout).toContain("  state: running\n  tools: fx_echo, fx_rich")
    expect(run.stdout).toContain(
      `proj (project, ${path.join(dir, "toolgate.json")})\n  program: node evil.js --flag\n  state: waiting for approval (project_program)\n  tools: none`,
    )
  })
})
