/**
 * The in-process benchmarks of the gate in one process (loading the library once instead of once per benchmark):
 * imports each named benchmark in turn with `--gate` set, then prints one `GATE {"settle": {…}, …}` line.
 *
 * Run: npx tsx bench/gate.ts --gate settle permission pending materialize   (scripts/bench-gate.mjs runs it)
 */
import { collect } from "./gate-report.js"

const figures = collect()
const names = process.argv.slice(2).filter((arg) => !arg.startsWith("--"))
for (const name of names) {
  await import(`./${name}.ts`)
  ;(globalThis as { gc?: () => void }).gc?.()
}
console.log(`GATE ${JSON.stringify(figures)}`)
