/**
 * The official MCP SDK client connected over stdio to a real server child process: either the test entry
 * (`McpServer.serve` on a Location with an `echo` registration trigger) or the real command line (`src/main.ts`,
 * `McpServer.run` with configuration watching).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitRequest,
  type ElicitResult,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js"
import { afterEach } from "@effect/vitest"

export const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")
/** The bundles of the test server entry and the command line, built once per run by test/global-setup.ts. */
const entries = {
  serve: path.join(packageDir, "test-bundle", "serve.js"),
  run: path.join(packageDir, "test-bundle", "toolgate-mcp.js"),
}

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A fresh temp directory, removed after the test. */
export const tempDir = (prefix: string) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Node arguments that run one of the server entries (bundled from the sources). */
export const serverArgs = (entry: keyof typeof entries): ReadonlyArray<string> => [entries[entry]]

export interface ConnectOptions {
  readonly elicit?: (request: ElicitRequest["params"]) => ElicitResult | Promise<ElicitResult>
  readonly config?: unknown
  /** Which server to start (default `serve`, the test entry). */
  readonly entry?: keyof typeof entries
  /** More command-line arguments of the `run` entry. */
  readonly args?: ReadonlyArray<string>
}

/** Starts the server as a child process over stdio and connects the official SDK client to it. */
export const connect = async (options: ConnectOptions = {}) => {
  const directory = tempDir("toolgate-mcp-dir-")
  const data = tempDir("toolgate-mcp-data-")
  fs.writeFileSync(path.join(directory, "a.txt"), "alpha\n")
  fs.writeFileSync(path.join(directory, "b.md"), "beta\n")
  if (options.config !== undefined)
    fs.writeFileSync(path.join(directory, "toolgate.json"), JSON.stringify(options.config))
  const entry = options.entry ?? "serve"
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      ...serverArgs(entry),
      ...(entry === "run" ? ["--dir", directory, "--data", data, ...(options.args ?? [])] : []),
    ],
    cwd: packageDir,
    env: {
      ...(process.env as Record<string, string>),
      TOOLGATE_MCP_DIR: directory,
      TOOLGATE_MCP_DATA: data,
      XDG_CONFIG_HOME: path.join(data, "config-home"),
    },
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
    client.setRequestHandler(ElicitRequestSchema, async (request) => elicit(request.params))
  }
  let stderr = ""
  transport.stderr?.on("data", (chunk: Buffer) => void (stderr += chunk.toString("utf8")))
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
  return { client, directory, data, changes, listChanged, call, stderr: () => stderr }
}

/** The text of a result's content. */
export const text = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n")
