// @toolgate/mcp as a consumer runs it: the installed `toolgate-mcp` bin, driven by the official MCP client.
import * as assert from "node:assert/strict"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"

const temp = (prefix) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
const directory = temp("toolgate-consumer-mcp-")
const data = temp("toolgate-consumer-mcp-data-")
fs.writeFileSync(path.join(directory, "a.txt"), "alpha\n")
const bin = path.join(process.cwd(), "node_modules", ".bin", "toolgate-mcp")
const transport = new StdioClientTransport({ command: bin, args: ["--dir", directory, "--data", data], stderr: "pipe" })
const client = new Client({ name: "toolgate-consumer", version: "1.0.0" })
await client.connect(transport)
const { tools } = await client.listTools()
assert.ok(tools.some((tool) => tool.name === "read") && tools.some((tool) => tool.name === "glob"))
const result = await client.callTool({ name: "read", arguments: { path: "a.txt" } })
assert.match(JSON.stringify(result.content), /alpha/)
await client.close()
fs.rmSync(directory, { recursive: true, force: true })
fs.rmSync(data, { recursive: true, force: true })
console.log(`mcp: toolgate-mcp listed ${tools.length} tools and settled read`)
