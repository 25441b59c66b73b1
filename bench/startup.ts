/**
 * Start-up of the built bins, as a user meets them: wall time of `toolgate --help` (to exit) and of the MCP
 * server's first `tools/list` answer (spawn → initialize → tools/list), each against `node -e 0` measured in the
 * same run. Targets: CLI usage ≤ 5× bare node; MCP first tools/list ≤ 400 ms. Each process also reports its own
 * CPU time (user + system): on a busy machine wall time mostly measures the wait for a core.
 *
 * Needs the build (`npx -y pnpm@12.21.0 build`; install runs it). Run: npx tsx bench/startup.ts [--gate]
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { report } from "./gate-report.js"

/** `--gate`: 3 rounds, ending with a `GATE` line (CPU-time ratios against bare node) for scripts/bench-gate.mjs. */
const gate = process.argv.includes("--gate")
const ROUNDS = gate ? 3 : 7
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const cliBin = path.join(repo, "packages/cli/bin/toolgate.js")
const mcpBin = path.join(repo, "packages/mcp/bin/toolgate-mcp.js")
for (const built of ["packages/cli/bundle/toolgate.js", "packages/mcp/bundle/toolgate-mcp.js"])
  if (!fs.existsSync(path.join(repo, built))) throw new Error(`${built} is missing: run \`npx -y pnpm@12.21.0 build\``)

const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-startup-")))
const env = { ...process.env, XDG_DATA_HOME: path.join(home, "data"), XDG_CONFIG_HOME: path.join(home, "config") }

/** Preloaded into every measured process: prints the process's own CPU time on exit (stderr). */
const CPU = `--import=data:text/javascript,process.on("exit",()=>{const u=process.cpuUsage();process.stderr.write("\\ncpu-ms "+(u.user+u.system)/1000+"\\n")})`
const cpuOf = (stderr: string): number => Number(/cpu-ms ([\d.]+)/.exec(stderr)?.[1] ?? NaN)

interface Sample {
  readonly ms: number
  readonly cpu: number
}

const wall = (args: ReadonlyArray<string>): Sample => {
  const start = performance.now()
  const result = spawnSync(process.execPath, [CPU, ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
  })
  const ms = performance.now() - start
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  return { ms, cpu: cpuOf(result.stderr) }
}

/** Spawns the MCP server; resolves with the ms until its answer to the first tools/list, and its CPU time. */
const firstToolsList = (directory: string): Promise<Sample & { readonly tools: number }> =>
  new Promise((resolve, reject) => {
    const start = performance.now()
    const child = spawn(process.execPath, [CPU, mcpBin, "--dir", directory, "--data", path.join(home, "data")], {
      env,
      stdio: ["pipe", "pipe", "pipe"],
    })
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`)
    let buffer = ""
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
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
          const tools = message.result?.tools?.length ?? 0
          // Closing stdin ends the server; its exit hook then reports the CPU spent (shutdown included).
          child.on("close", () => resolve({ ms, tools, cpu: cpuOf(stderr) }))
          child.stdin.end()
          setTimeout(() => child.kill(), 10_000).unref()
        }
      }
    })
    child.on("error", reject)
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
const bare: Array<Sample> = []
const help: Array<Sample> = []
const mcp: Array<Sample> = []
let tools = 0
for (let round = 0; round < ROUNDS; round++) {
  bare.push(wall(["-e", "0"]))
  help.push(wall([cliBin, "--help"]))
  const first = await firstToolsList(directory)
  mcp.push(first)
  tools = first.tools
}
fs.rmSync(home, { recursive: true, force: true })

const row = (name: string, samples: ReadonlyArray<Sample>, target: string) => {
  const ms = median(samples.map((s) => s.ms))
  const cpu = median(samples.map((s) => s.cpu))
  const b = median(bare.map((s) => s.ms))
  const bc = median(bare.map((s) => s.cpu))
  console.log(
    `${name.padEnd(22)} wall ${ms.toFixed(0).padStart(5)} ms = ${(ms / b).toFixed(1).padStart(4)}x bare` +
      `   cpu ${cpu.toFixed(0).padStart(5)} ms = ${(cpu / bc).toFixed(1).padStart(4)}x bare   ${target}`,
  )
}
console.log(`medians of ${ROUNDS} rounds`)
row("node -e 0", bare, "")
row("toolgate --help", help, "(target: ≤ 5x bare node)")
row("mcp first tools/list", mcp, `(target: ≤ 400 ms wall; ${tools} tools; cpu includes shutdown)`)
if (gate) {
  // The fastest of the rounds: what waiting for a core or a cold cache adds only ever makes a round slower.
  const cpu = (samples: ReadonlyArray<Sample>) => Math.min(...samples.map((sample) => sample.cpu))
  report("startup", { cli_over_node_cpu: cpu(help) / cpu(bare), mcp_first_list_over_node_cpu: cpu(mcp) / cpu(bare) })
}
