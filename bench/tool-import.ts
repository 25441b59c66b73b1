/**
 * What `@toolgate/core/tool` costs a fresh process: `import("@toolgate/core/tool")` and one settlement, timed from
 * inside the process (import start → settled) and as the wall time of the whole process, against `node -e 0`
 * measured in the same run. Target: ≤ 150 ms wall.
 *
 * A second baseline is the floor any Effect library shares with its user: a process that imports `effect` itself
 * and runs one Schema decode and one Effect. The libraries ship unbundled (an application must share its one copy
 * of effect with them), so on Node 20 that floor is set by loading effect's own modules.
 *
 * Needs the build (`npx -y pnpm@12.21.0 build`). Run: npx tsx bench/tool-import.ts
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { report } from "./gate-report.js"

/** `--gate`: 2 rounds (the fastest of each compared), ending with a `GATE` line for scripts/bench-gate.mjs. */
const gate = process.argv.includes("--gate")
const ROUNDS = gate ? 2 : 9
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
if (!fs.existsSync(path.join(repo, "packages/core/dist/entry/tool.js")))
  throw new Error("packages/core/dist is missing: run `npx -y pnpm@12.21.0 build`")

// Runs from the repository root, where @toolgate/core resolves to the built package like a consumer's would.
const probe = `
const start = performance.now()
const { ApplicationTools, Tool, ToolOutputStore, ToolRegistry } = await import("@toolgate/core/tool")
const { Effect, Layer, Schema } = await import("effect")
const echo = Tool.make({
  description: "Echo",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.String,
  execute: (input) => Effect.succeed(input.text),
})
const settlement = await Effect.gen(function* () {
  const registry = yield* ToolRegistry.Service
  yield* registry.register({ echo })
  const turn = yield* registry.materialize([])
  return yield* turn.settle({ sessionID: "s", agent: "build", assistantMessageID: "m", call: { id: "c", name: "echo", input: { text: "hi" } } })
}).pipe(Effect.scoped, Effect.provide(ToolRegistry.layer.pipe(Layer.provide([ApplicationTools.layer, ToolOutputStore.layerPassthrough]))), Effect.runPromise)
if (settlement.result.value !== "hi") throw new Error("unexpected settlement")
process.stdout.write(String(performance.now() - start))
`

// The floor: effect alone, one Schema decode, one Effect run.
const effectOnly = `
const start = performance.now()
const { Effect, Schema } = await import("effect")
const text = Schema.decodeUnknownSync(Schema.Struct({ text: Schema.String }))({ text: "hi" }).text
if ((await Effect.runPromise(Effect.succeed(text))) !== "hi") throw new Error("unexpected")
process.stdout.write(String(performance.now() - start))
`

/** Preloaded into every measured process: prints the process's own CPU time (user + system) on exit (stderr). */
const CPU = `--import=data:text/javascript,process.on("exit",()=>{const u=process.cpuUsage();process.stderr.write("cpu-ms "+(u.user+u.system)/1000+"\\n")})`

const wall = (args: ReadonlyArray<string>) => {
  const start = performance.now()
  const result = spawnSync(process.execPath, [CPU, ...args], { cwd: repo, encoding: "utf8" })
  const ms = performance.now() - start
  if (result.status !== 0) throw new Error(`node exited ${result.status}: ${result.stderr}`)
  return { ms, stdout: result.stdout, cpu: Number(/cpu-ms ([\d.]+)/.exec(result.stderr)?.[1] ?? NaN) }
}
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

if (!gate) wall(["-e", "0"])
wall(["--input-type=module", "-e", probe])
const bare: Array<number> = []
const bareCpu: Array<number> = []
const whole: Array<number> = []
const wholeCpu: Array<number> = []
const inside: Array<number> = []
const floor: Array<number> = []
const floorInside: Array<number> = []
const floorCpu: Array<number> = []
for (let round = 0; round < ROUNDS; round++) {
  const baseline = wall(["-e", "0"])
  bare.push(baseline.ms)
  bareCpu.push(baseline.cpu)
  const effect = wall(["--input-type=module", "-e", effectOnly])
  floor.push(effect.ms)
  floorInside.push(Number(effect.stdout))
  floorCpu.push(effect.cpu)
  const run = wall(["--input-type=module", "-e", probe])
  whole.push(run.ms)
  wholeCpu.push(run.cpu)
  inside.push(Number(run.stdout))
}
const b = median(bare)
const w = median(whole)
const bc = median(bareCpu)
const wc = median(wholeCpu)
console.log(`medians of ${ROUNDS} rounds`)
console.log(`node -e 0                          : wall ${b.toFixed(0)} ms, cpu ${bc.toFixed(0)} ms`)
console.log(
  `import effect + one decode and run : ${median(floorInside).toFixed(0)} ms inside the process, wall ${median(floor).toFixed(0)} ms`,
)
console.log(`import tool entry + one settlement : ${median(inside).toFixed(0)} ms inside the process`)
console.log(
  `whole process                      : wall ${w.toFixed(0)} ms = ${(w / b).toFixed(1)}x bare, cpu ${wc.toFixed(0)} ms = ${(wc / bc).toFixed(1)}x bare (target ≤ 150 ms wall)`,
)
console.log(
  `over effect alone                  : wall ${(w / median(floor)).toFixed(2)}x, inside ${(median(inside) / median(floorInside)).toFixed(2)}x`,
)
// The gate compares process CPU time (fastest of the rounds), which waiting for a core does not inflate.
if (gate) report("tool-import", { tool_import_over_effect_cpu: Math.min(...wholeCpu) / Math.min(...floorCpu) })
