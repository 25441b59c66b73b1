/**
 * Start-up of the built bins, as a user meets them: wall time of `toolgate --help` (to exit) and of the MCP
 * server's first `tools/list` answer (spawn → initialize → tools/list), each against `node -e 0` measured in the
 * same run. Targets: CLI usage ≤ 5× bare node; MCP first tools/list ≤ 400 ms.
 *
 * Needs the build (`npx -y pnpm@12.21.0 build`; install runs it). Run: npx tsx bench/startup.ts
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const ROUNDS = 7
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const cliBin = path.join(repo, "packages/cli/bin/toolgate.js")
const mcpBin = path.join(repo, "packages/mcp/bin/toolgate-mcp.js")
for (const built of ["packages/cli/dist/main.js", "packages/mcp/dist/main.js"])
  if (!fs.existsSync(path.join(repo, built))) throw new Error(`${built} is missing: run \`npx -y pnpm@12.21.0 build\``)

const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-startup-")))
const env = { ...process.env, XDG_DATA_HOME: path.join(home, "data"), XDG_CONFIG_HOME: path.join(home, "config") }

const wall = (args: ReadonlyArray<string>): number => {
  const start = performance.now()
  const result = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] })
  const ms = performance.now() - start
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  return ms
}

/** Spawns the MCP server and resolves with the ms until its answer to the first tools/list. */
const firstToolsList = (directory: string): Promise<{ ms: number; tools: number }> =>
  new Promise((resolve, reject) => {
    const start = performance.now()
    const child = spawn(process.execPath, [mcpBin, "--dir", directory, "--data", path.join(home, "data")], {
      env,
      stdio: ["pipe", "pipe", "pipe"],
    })
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`)
    let buffer = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk
      let newline: number
      while ((newline = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + 1)
        const message = JSON.parse(line) as { id?: number; result?: { tools?: ReadonlyArray<unknown> } }
        if (message.id === 1) {
          send({ jsonrpc: "2.0", method: "notifications/initialized" })
          send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })
        } else if (message.id === 2) {
          const ms = performance.now() - start
          child.kill()
          resolve({ ms, tools: message.result?.tools?.length ?? 0 })
        }
      }
    })
    child.on("error", reject)
    child.on("exit", (code) => code !== null && code !== 0 && reject(new Error(`toolgate-mcp exited ${code}`)))
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
    })
  })

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const directory = path.join(home, "project")
fs.mkdirSync(directory)
fs.writeFileSync(path.join(directory, "a.txt"), "alpha\n")

wall(["-e", "0"]) // warm the file-system cache
wall([cliBin, "--help"])
const bare: Array<number> = []
const help: Array<number> = []
const mcp: Array<number> = []
let tools = 0
for (let round = 0; round < ROUNDS; round++) {
  bare.push(wall(["-e", "0"]))
  help.push(wall([cliBin, "--help"]))
  const first = await firstToolsList(directory)
  mcp.push(first.ms)
  tools = first.tools
}
fs.rmSync(home, { recursive: true, force: true })

const b = median(bare)
const h = median(help)
const m = median(mcp)
console.log(`node -e 0               : ${b.toFixed(0)} ms (median of ${ROUNDS})`)
console.log(`toolgate --help         : ${h.toFixed(0)} ms = ${(h / b).toFixed(1)}x bare node (target ≤ 5x)`)
console.log(
  `mcp first tools/list    : ${m.toFixed(0)} ms = ${(m / b).toFixed(1)}x bare node, ${tools} tools (target ≤ 400 ms)`,
)
