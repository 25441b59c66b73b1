import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { BuiltInTools } from "@toolgate/core"
import { McpServer } from "../src/index.js"
import { SOURCE_NODE_ARGS } from "../../../vitest.shared.js"

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const entry = path.join(packageDir, "test", "support", "entry.ts")

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const tempDir = (prefix: string) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Starts the server as a child process over stdio and connects the official SDK client to it. */
const connect = async (
  options: { readonly elicit?: (message: string) => ElicitResult; readonly config?: unknown } = {},
) => {
  const directory = tempDir("toolgate-mcp-dir-")
  const data = tempDir("toolgate-mcp-data-")
  fs.writeFileSync(path.join(directory, "a.txt"), "alpha\n")
  fs.writeFileSync(path.join(directory, "b.md"), "beta\n")
  if (options.config !== undefined)
    fs.writeFileSync(path.join(directory, "toolgate.json"), JSON.stringify(options.config))
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...SOURCE_NODE_ARGS, entry],
    cwd: packageDir,
    env: { ...(process.env as Record<string, string>), TOOLGATE_MCP_DIR: directory, TOOLGATE_MCP_DATA: data },
    stderr: "pipe",
  })
  const client = new Client(
    { name: "toolgate-test", version: "1.0.0" },
    { capabilities: options.elicit ? { elicitation: {} } : {} },
  )
  const changes: Array<number> = []
  const waiters: Array<() => void> = []
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    changes.push(Date.now())
    for (const wake of waiters.splice(0)) wake()
  })
  if (options.elicit) {
    const elicit = options.elicit
    client.setRequestHandler(ElicitRequestSchema, async (request) => elicit(request.params.message))
  }
  await client.connect(transport)
  cleanups.push(() => client.close())
  const listChanged = (timeout: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no tools/list_changed")), timeout)
      waiters.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  const call = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }) as Promise<CallToolResult>
  return { client, directory, data, changes, listChanged, call }
}

const text = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n")

describe("McpServer over stdio", () => {
  it("lists the twelve tools, calls glob and read, announces a registration, and flags unknown tools", async () => {
    const { client, directory, data, changes, listChanged, call } = await connect()
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true })

    const listed = await client.listTools()
    expect(listed.tools.map((tool) => tool.name)).toEqual([...BuiltInTools.names])
    const read = listed.tools.find((tool) => tool.name === "read")!
    expect(read.inputSchema.type).toBe("object")
    expect(read.inputSchema.properties).toHaveProperty("path")

    const globbed = await call("glob", { pattern: "*.txt" })
    expect(globbed.isError).toBeFalsy()
    expect(text(globbed)).toContain(path.join(directory, "a.txt"))
    expect(text(globbed)).not.toContain("b.md")

    const contents = await call("read", { path: "a.txt" })
    expect(contents.isError).toBeFalsy()
    expect(contents.structuredContent).toMatchObject({ content: "alpha\n", encoding: "utf8" })
    expect(JSON.parse(text(contents))).toMatchObject({ content: "alpha\n" })

    const invalid = await call("read", { file: "a.txt" })
    expect(invalid.isError).toBe(true)
    expect(text(invalid)).toMatch(/^Invalid tool input: /)

    const unknown = await call("nope", {})
    expect(unknown).toMatchObject({ isError: true, content: [{ type: "text", text: "Unknown tool: nope" }] })

    // No change, no notification; a registration in the server's Location is announced once.
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(changes).toEqual([])
    const announced = listChanged(10_000)
    fs.writeFileSync(path.join(data, "register-now"), "")
    await announced
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(changes).toHaveLength(1)
    const relisted = await client.listTools()
    expect(relisted.tools.map((tool) => tool.name)).toContain("echo")
    expect(relisted.tools).toHaveLength(13)
    expect(await call("echo", { text: "hi" })).toMatchObject({ content: [{ type: "text", text: "echo: hi" }] })
  })

  it("refuses an ask with a clear message when the client cannot elicit; never allows it silently", async () => {
    const { directory, call } = await connect({
      config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
    })
    const written = await call("write", { path: "new.txt", content: "x" })
    expect(written.isError).toBe(true)
    expect(text(written)).toBe(
      `The user rejected permission to use this specific tool call with the following feedback: ${McpServer.NO_PROMPT}`,
    )
    expect(fs.existsSync(path.join(directory, "new.txt"))).toBe(false)
  })

  it("answers asks through elicitation: allow once writes, decline refuses", async () => {
    const prompts: Array<string> = []
    let decision: ElicitResult = { action: "accept", content: { decision: "once" } }
    const { directory, call } = await connect({
      config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
      elicit: (message) => {
        prompts.push(message)
        return decision
      },
    })
    const allowed = await call("write", { path: "new.txt", content: "hello" })
    expect(allowed.isError).toBeFalsy()
    expect(fs.readFileSync(path.join(directory, "new.txt"), "utf8")).toBe("hello")
    // the prompt names what "Always allow" saves and where: this non-git directory only
    expect(prompts).toEqual([
      `Allow edit on new.txt?\nalways: saves edit for the directory ${directory} only (no git repository):\n  pattern: *`,
    ])

    decision = { action: "decline" }
    const declined = await call("write", { path: "other.txt", content: "x" })
    expect(declined.isError).toBe(true)
    expect(text(declined)).toContain(McpServer.DECLINED_IN_CLIENT)
    expect(fs.existsSync(path.join(directory, "other.txt"))).toBe(false)

    decision = { action: "accept", content: { decision: "reject", feedback: "use notes.md instead" } }
    const corrected = await call("write", { path: "third.txt", content: "x" })
    expect(text(corrected)).toBe(
      "The user rejected permission to use this specific tool call with the following feedback: use notes.md instead",
    )
  })
})
