import * as fs from "node:fs"
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "vitest"
import { BIN, tempDir } from "./support.js"

describe("toolgate mcp", () => {
  it("serves the directory's twelve tools to the official MCP client over stdio", async () => {
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
      const listed = await client.listTools()
      expect(listed.tools).toHaveLength(12)
      const read = (await client.callTool({ name: "read", arguments: { path: "a.txt" } })) as CallToolResult
      expect(read.structuredContent).toMatchObject({ content: "alpha\n" })
    } finally {
      await client.close()
      fs.rmSync(directory, { recursive: true, force: true })
      fs.rmSync(data, { recursive: true, force: true })
    }
  }, 60_000)
})
