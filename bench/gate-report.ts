/**
 * How a benchmark hands its gate figures to scripts/bench-gate.mjs: run on its own with `--gate` it prints them as
 * one `GATE {…}` line; run by bench/gate.ts (several benchmarks in one process, so that loading the library is paid
 * once) they are collected and printed together, keyed by benchmark.
 */
const collected: Record<string, Record<string, number>> = {}
let collecting = false

/** Called by bench/gate.ts before it imports the benchmarks. */
export const collect = (): Record<string, Record<string, number>> => {
  collecting = true
  return collected
}

/** Reports the gate figures of `bench`. */
export const report = (bench: string, figures: Record<string, number>): void => {
  if (collecting) collected[bench] = figures
  else console.log(`GATE ${JSON.stringify(figures)}`)
}
