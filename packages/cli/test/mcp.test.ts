import * as fs from "node:fs"
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { McpCommand } from "@toolgate/mcp"
import { BIN, tempDir, toolgate } from "./support.js"

describe("toolgate mcp", () => {
  it("serves the directory's tools to the official MCP client over stdio", async () => {
    const directory = tempDir("toolgate-cli-mcp-")
    const data = tempDir("toolgate-cli-mcp-data-")
    fs.writeFileSync(path.join(directory, "a.txt"), "alpha\n")
    const client = new Client({ name: "toolgate-cli-test", version: "1.0.0" })
    try {
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [...BIN, "mcp", "--dir", directory, "--data", data],
          stderr: "pipe",
        }),
      )
      // Eleven: this client cannot elicit, so the question tool is hidden from it.
      const listed = await client.listTools()
      expect(listed.tools).toHaveLength(11)
      expect(listed.tools.map((tool) => tool.name)).not.toContain("question")
      const read = (await client.callTool({ name: "read", arguments: { path: "a.txt" } })) as CallToolResult
      expect(read.structuredContent).toMatchObject({ content: "alpha\n" })
    } finally {
      await client.close()
      fs.rmSync(directory, { recursive: true, force: true })
      fs.rmSync(data, { recursive: true, force: true })
    }
  }, 60_000)
})

// The same check as `toolgate-mcp` (McpCommand.check): the same messages, exit 2 for usage, 1 for a bad directory.
describe.concurrent("toolgate mcp arguments", () => {
  it("no --dir: exit 2", async () => {
    const run = await toolgate(["mcp"], { home: tempDir() })
    expect(run.code).toBe(2)
    expect(run.stderr).toBe("toolgate: --dir is required: the project directory whose tools are served\n")
    expect(run.stdout).toBe("")
  })

  it("a --dir that does not exist or is a regular file: exit 1, one line", async () => {
    const home = tempDir()
    const missing = path.join(home, "nope")
    const file = path.join(home, "notes.txt")
    fs.writeFileSync(file, "x")
    const [absent, regular] = await Promise.all([
      toolgate(["mcp", "--dir", missing], { home }),
      toolgate(["mcp", "--dir", file], { home }),
    ])
    expect([absent.code, absent.stderr]).toEqual([1, `toolgate: --dir ${missing} does not exist\n`])
    expect([regular.code, regular.stderr]).toEqual([1, `toolgate: --dir ${file} is not a directory\n`])
  })

  it("a bad --heartbeat: exit 2", async () => {
    const home = tempDir()
    const run = await toolgate(["mcp", "--dir", home, "--heartbeat", "soon"], { home })
    expect(run.code).toBe(2)
    expect(run.stderr).toBe("toolgate: --heartbeat soon is not a whole number of milliseconds (1 or more)\n")
  })

  it("the options and errors of toolgate-mcp: the one parser, McpCommand.parseArgs", async () => {
    const home = tempDir()
    const cases = [["--dir"], ["--dir="], ["--dir", "--agent", "plan"], ["--bogus"], ["--no-watch=1"], ["stray"]]
    const runs = await Promise.all(cases.map((args) => toolgate(["mcp", ...args], { home })))
    for (const [index, args] of cases.entries()) {
      const parsed = McpCommand.parseArgs(args)
      expect(Either.isLeft(parsed), args.join(" ")).toBe(true)
      const message = Either.isLeft(parsed) ? parsed.left.message : ""
      expect([runs[index]!.code, runs[index]!.stderr], args.join(" ")).toEqual([2, `toolgate: ${message}\n`])
    }
  })
})
