/**
 * The fixture MCP server of the tool-source tests, on the official SDK (`McpServer`): the same tools over stdio
 * (test/fixtures/mcp-fixture.ts, a child process) and over streamable HTTP on 127.0.0.1 (`serveHttp`, in the test's
 * process). What it saw is appended to `log` as lines (`start <pid>`, `cancelled <tool>`), so a test can assert that
 * the server received a cancellation or was started again.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { z } from "zod"

/** Builds the fixture server; `log` is a file the server appends what it saw to (optional). */
export const build = (log?: string): McpServer => {
  const note = (line: string) => {
    if (log !== undefined) fs.appendFileSync(log, `${line}\n`)
  }
  const server = new McpServer({ name: "fixture", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } })
  const echo = server.registerTool(
    "echo",
    {
      description: "Echoes its text",
      inputSchema: { text: z.string() },
      annotations: { readOnlyHint: true },
    },
    ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }),
  )
  server.registerTool(
    "delete_all",
    { description: "Deletes everything", inputSchema: {}, annotations: { destructiveHint: true } },
    () => ({ content: [{ type: "text", text: "deleted" }] }),
  )
  server.registerTool(
    "rich",
    { description: "Returns an image, an embedded resource and structured content", inputSchema: {} },
    () => ({
      content: [
        { type: "text", text: "three parts" },
        { type: "image", data: Buffer.from("png-bytes").toString("base64"), mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///notes.txt", text: "note body", mimeType: "text/plain" } },
      ],
      structuredContent: { count: 3 },
    }),
  )
  server.registerTool("fail", { description: "Fails", inputSchema: {} }, () => ({
    content: [{ type: "text", text: "the fixture failed on purpose" }],
    isError: true,
  }))
  server.registerTool("big", { description: "Returns 50 MB of text", inputSchema: {} }, () => ({
    content: [{ type: "text", text: "x".repeat(50 * 1024 * 1024) }],
  }))
  server.registerTool("hang", { description: "Never answers", inputSchema: {} }, (_args, extra) => {
    return new Promise((resolve) => {
      extra.signal.addEventListener("abort", () => {
        note("cancelled hang")
        resolve({ content: [{ type: "text", text: "cancelled" }] })
      })
    })
  })
  server.registerTool("crash", { description: "Exits the server process", inputSchema: {} }, () => {
    note("crash")
    setTimeout(() => process.exit(3), 10)
    return new Promise(() => {})
  })
  server.registerTool("progress", { description: "Reports progress twice", inputSchema: {} }, async (_args, extra) => {
    const token = extra._meta?.progressToken
    if (token !== undefined) {
      for (const progress of [1, 2])
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress, total: 4, message: `step ${progress}` },
        })
    }
    // The SDK client handles a notification a microtask later than a response that arrives in the same read, and
    // drops progress for a request that was answered: answer in a later read.
    await new Promise((resolve) => setTimeout(resolve, 100))
    return { content: [{ type: "text", text: "done" }] }
  })
  server.registerTool("rewrite", { description: "Changes echo's description", inputSchema: {} }, () => {
    echo.update({ description: "Echoes its text, and now something else" })
    return { content: [{ type: "text", text: "rewritten" }] }
  })
  server.registerTool("confirm", { description: "Asks the user through elicitation", inputSchema: {} }, async () => {
    const answer = await server.server.elicitInput({
      message: "Really go on?",
      requestedSchema: { type: "object", properties: { go: { type: "boolean", default: true } } },
    })
    return { content: [{ type: "text", text: `elicitation: ${answer.action}` }] }
  })
  note(`start ${process.pid}`)
  return server
}

/** Serves a fresh fixture server per session over streamable HTTP on 127.0.0.1 (a free port); close it after. */
export const serveHttp = async (
  log?: string,
): Promise<{ readonly url: string; readonly close: () => Promise<void> }> => {
  const transports = new Map<string, StreamableHTTPServerTransport>()
  const httpServer = http.createServer(async (request, response) => {
    const id = request.headers["mcp-session-id"]
    let transport = typeof id === "string" ? transports.get(id) : undefined
    if (transport === undefined) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (session) => {
          transports.set(session, transport!)
        },
      })
      await build(log).connect(transport)
    }
    await transport.handleRequest(request, response)
  })
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve))
  const { port } = httpServer.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      for (const transport of transports.values()) await transport.close()
      httpServer.closeAllConnections()
      await new Promise<void>((resolve) => httpServer.close(() => resolve()))
    },
  }
}

/** The SDK's own client connected over stdio to `command` (for the benchmark's baseline). */
export const connectClient = async (command: ReadonlyArray<string>, cwd: string): Promise<Client> => {
  const client = new Client({ name: "baseline", version: "1.0.0" })
  await client.connect(
    new StdioClientTransport({ command: command[0]!, args: command.slice(1), cwd, stderr: "ignore" }),
  )
  return client
}
