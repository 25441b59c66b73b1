/**
 * One call through toolgate's MCP tool source (`McpTools.layer`: a registry materialization's settle, the
 * permission gate, the SDK client, `ToolOutputStore.bound`) against the SDK client's own `callTool`, on the same
 * local server program (the fixture MCP server of packages/mcp's tests, over stdio), in the same run. Rounds
 * alternate between the two; the figure is the median over rounds of (toolgate time / SDK time) for the same number
 * of sequential `echo` calls. Then 100 concurrent calls through the tool source must all succeed.
 *
 * Target: median ratio ≤ 1.15.
 *
 * Run: npx tsx --conditions=@toolgate/source bench/mcp-tools.ts (`--gate`: a short run ending with a `GATE` line)
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { SessionV2, ToolRegistry } from "@toolgate/core"
import { Core } from "@toolgate/core/testing"
import { Effect, Layer } from "effect"
import { McpTools } from "../packages/mcp/src/index.js"
import { connectClient } from "../packages/mcp/test/support/fixture-server.js"
import { report } from "./gate-report.js"

const gate = process.argv.includes("--gate")
const CALLS = gate ? 200 : 500
const ROUNDS = gate ? 5 : 9
const CONCURRENT = 100

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const fixture = path.join(repo, "packages/mcp/test/fixtures/mcp-fixture.ts")
const command: readonly [string, ...Array<string>] = [process.execPath, "--import", "tsx", fixture]

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const program = Effect.gen(function* () {
  const mcp = yield* McpTools.Service
  yield* mcp.add("fx", { command, cwd: repo, include: ["echo"] })
  while ((yield* mcp.servers())[0]?.state._tag !== "running") yield* Effect.sleep("20 millis")
  yield* (yield* SessionV2.Service).create({ id: "ses_bench", agent: "build" })
  const materialization = yield* (yield* ToolRegistry.Service).materialize()
  const client = yield* Effect.acquireRelease(
    Effect.promise(() => connectClient(command, repo)),
    (connected) => Effect.promise(() => connected.close()),
  )
  let id = 0
  const settle = () =>
    materialization.settle({
      sessionID: "ses_bench",
      agent: "build",
      assistantMessageID: "msg_bench",
      call: { id: `call_${++id}`, name: "fx_echo", input: { text: "hi" } },
    })
  const ours = Effect.gen(function* () {
    const start = performance.now()
    for (let i = 0; i < CALLS; i++) {
      const settled = yield* settle()
      if (settled.result.type !== "text") throw new Error(`unexpected result: ${JSON.stringify(settled.result)}`)
    }
    return performance.now() - start
  })
  const theirs = Effect.promise(async () => {
    const start = performance.now()
    for (let i = 0; i < CALLS; i++) await client.callTool({ name: "echo", arguments: { text: "hi" } })
    return performance.now() - start
  })
  yield* ours
  yield* theirs
  const ratios: Array<number> = []
  for (let round = 0; round < ROUNDS; round++) {
    const a = round % 2 === 0 ? yield* ours : 0
    const b = yield* theirs
    const c = round % 2 === 0 ? a : yield* ours
    ratios.push(c / b)
    console.log(`round ${round + 1}: toolgate ${(c / CALLS).toFixed(3)} ms/call, SDK ${(b / CALLS).toFixed(3)} ms/call`)
  }
  const results = yield* Effect.all(Array.from({ length: CONCURRENT }, settle), { concurrency: "unbounded" })
  const failed = results.filter((settled) => settled.result.type !== "text").length
  const ratio = median(ratios)
  console.log(`median toolgate / SDK callTool: ${ratio.toFixed(3)} (target ≤ 1.15)`)
  console.log(`${CONCURRENT} concurrent calls: ${CONCURRENT - failed} succeeded, ${failed} failed`)
  report("mcp-tools", { mcp_call_over_sdk: ratio, mcp_concurrent_failures: failed })
})

await Effect.runPromise(
  program.pipe(Effect.provide(McpTools.layer.pipe(Layer.provideMerge(Core.layerTest()))), Effect.scoped),
)
