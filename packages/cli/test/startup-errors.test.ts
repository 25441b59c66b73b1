import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { tempDir, toolgate } from "./support.js"

/** `toolgate-mcp`, bundled once per run by global-setup.ts next to `toolgate`. */
const MCP_BIN = fileURLToPath(new URL("../test-bundle/toolgate-mcp.js", import.meta.url))

/** A data directory whose database file is not a database: opening it fails inside the layer build. */
const brokenData = (): string => {
  const data = path.join(tempDir(), "data")
  fs.mkdirSync(data, { recursive: true })
  fs.writeFileSync(path.join(data, "toolgate.db"), "not a database ".repeat(64))
  return data
}

describe.concurrent("startup failures are one readable line with their cause", () => {
  it("toolgate permissions list on a broken database: exit 1, one line naming the file and SQLITE_NOTADB", async () => {
    const data = brokenData()
    const run = await toolgate(["permissions", "list", "--data", data], { home: tempDir() })
    expect(run.code).toBe(1)
    const lines = run.stderr.trimEnd().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^toolgate: cannot open .*toolgate\.db: .*SQLITE_NOTADB: file is not a database$/)
    expect(lines[0]).toContain(path.join(data, "toolgate.db"))
  })

  it("toolgate-mcp on a broken database: exit 1, one line naming SQLITE_NOTADB", async () => {
    const data = brokenData()
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [MCP_BIN, "--dir", tempDir(), "--data", data], {
        stdio: ["pipe", "pipe", "pipe"],
      })
      let stderr = ""
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, stderr }))
      child.stdin.end()
    })
    expect(run.code).toBe(1)
    const lines = run.stderr.trimEnd().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^toolgate-mcp: cannot open .*toolgate\.db: .*SQLITE_NOTADB: file is not a database$/)
  })
})
