/**
 * Bounding cost: `ToolOutputStore.bound` on 1 MB, 10 MB and 100 MB texts against one plain pass over the same text
 * (`Buffer.byteLength` + a newline count), measured in the same run, plus the peak RSS growth during `bound`
 * relative to the input size. Targets: bound ≤ 2× the pass, memory growth ≤ 2× the input. Also the cost of a
 * within-limit call, which must return the output untouched.
 *
 * Run: npx tsx bench/bound.ts
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { Worker } from "node:worker_threads"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Global, type LLM, ToolOutputStore } from "@toolgate/core"

v8.setFlagsFromString("--expose-gc")
const gc = vm.runInNewContext("gc") as () => void

const MB = 1024 * 1024
const { MAX_BYTES, MAX_LINES } = ToolOutputStore
const data = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-"))
const SIZES = [1, 10, 100] as const
const ROUNDS: Record<(typeof SIZES)[number], number> = { 1: 15, 10: 5, 100: 3 }

/** ASCII lines of 100 bytes (99 characters + newline), `megabytes` in all. */
const makeText = (megabytes: number): string => {
  const line = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyz!?\n"
  const buffer = Buffer.alloc(megabytes * MB, line, "latin1")
  return buffer.toString("latin1")
}

/** The baseline: one pass computing what any bounding must know, the byte length and the line count. */
const pass = (text: string): number => {
  let lines = 1
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++
  return Buffer.byteLength(text, "utf8") + lines
}

/** Samples the process RSS from another thread (the main thread is busy inside `bound`) and keeps the maximum. */
const startSampler = async () => {
  const shared = new SharedArrayBuffer(16)
  const worker = new Worker(
    `const { workerData, parentPort } = require("node:worker_threads")
     const max = new Float64Array(workerData, 0, 1), control = new Int32Array(workerData, 8, 1)
     parentPort.postMessage("ready")
     while (Atomics.load(control, 0) === 0) {
       const rss = process.memoryUsage.rss()
       if (rss > max[0]) max[0] = rss
       Atomics.wait(control, 0, 0, 1)
     }`,
    { eval: true, workerData: shared },
  )
  await new Promise((resolve) => worker.once("message", resolve))
  return async () => {
    Atomics.store(new Int32Array(shared, 8, 1), 0, 1)
    Atomics.notify(new Int32Array(shared, 8, 1), 0)
    await worker.terminate()
    return new Float64Array(shared, 0, 1)[0]!
  }
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const time = async (run: () => unknown) => {
  const start = performance.now()
  await run()
  return performance.now() - start
}

/** Mean time of a synchronous step, repeated until at least 20 ms have passed. */
const timeSync = (run: () => unknown) => {
  let runs = 0
  const start = performance.now()
  do {
    run()
    runs++
  } while (performance.now() - start < 20)
  return (performance.now() - start) / runs
}

const main = Effect.gen(function* () {
  const store = yield* ToolOutputStore.Service
  const bound = (output: LLM.ToolOutput) => store.bound({ sessionID: "ses_bench", toolCallID: "call_bench", output })
  const scratch = fs.mkdtempSync(path.join(data, "bare-"))
  console.log("Over the limit (medians; pass = Buffer.byteLength + newline count; write = bare fs.promises.writeFile):")
  console.log(
    "  size   pass ms   write ms   bound ms  bound/pass  bound/(pass+write)  compute/pass  peak RSS growth/input",
  )
  for (const size of SIZES) {
    const text = makeText(size)
    const output: LLM.ToolOutput = { structured: {}, content: [{ type: "text", text }] }
    const marker = ToolOutputStore.marker(path.join(data, "tool-output", "tool_" + "x".repeat(26)))
    const passTimes: Array<number> = []
    const writeTimes: Array<number> = []
    const boundTimes: Array<number> = []
    const computeTimes: Array<number> = []
    let growth = 0
    for (let round = 0; round < ROUNDS[size]; round++) {
      passTimes.push(timeSync(() => pass(text)))
      const bare = path.join(scratch, `bare_${round}`)
      writeTimes.push(yield* Effect.promise(() => time(() => fs.promises.writeFile(bare, text, { flag: "wx" }))))
      fs.rmSync(bare)
      // The in-memory part of bounding: the limit check and the preview.
      computeTimes.push(
        timeSync(
          () =>
            ToolOutputStore.withinLimits(text, MAX_LINES, MAX_BYTES) ||
            ToolOutputStore.boundedPreview(text, marker, MAX_LINES, MAX_BYTES),
        ),
      )

      gc()
      const stop = yield* Effect.promise(startSampler)
      const before = process.memoryUsage.rss()
      const start = performance.now()
      const result = yield* bound(output)
      boundTimes.push(performance.now() - start)
      const peak = yield* Effect.promise(stop)
      growth = Math.max(growth, peak - before)
      if (result.outputPaths.length !== 1) throw new Error("expected a spill")
      fs.rmSync(result.outputPaths[0]!)
    }
    const [p, w, b, c] = [passTimes, writeTimes, boundTimes, computeTimes].map(median) as [
      number,
      number,
      number,
      number,
    ]
    console.log(
      `${String(size).padStart(4)} MB ${p.toFixed(2).padStart(9)} ${w.toFixed(2).padStart(10)} ${b.toFixed(2).padStart(10)}` +
        ` ${(b / p).toFixed(2).padStart(10)}× ${(b / (p + w)).toFixed(2).padStart(18)}× ${(c / p).toFixed(3).padStart(12)}×` +
        ` ${(growth / (size * MB)).toFixed(2).padStart(20)}×`,
    )
  }

  // Within limits: returned as the same object. The baseline is an empty traced `Effect.fn` call, the span every
  // public service method carries.
  const empty = Effect.fn("Bench.empty")(function* () {})
  const calls = 5_000
  console.log("Within the limit (per call):")
  for (const [label, text] of [
    ["200 B", "x".repeat(199) + "\n"],
    ["50 000 B", makeText(1).slice(0, 50_000)],
  ] as const) {
    const output: LLM.ToolOutput = { structured: {}, content: [{ type: "text", text }] }
    const perCall = function* (step: () => Effect.Effect<unknown, ToolOutputStore.StorageError>) {
      const start = performance.now()
      for (let i = 0; i < calls; i++) yield* step()
      return (performance.now() - start) / calls
    }
    let [passPer, emptyPer, boundPer] = [Infinity, Infinity, Infinity]
    for (let round = 0; round < 3; round++) {
      passPer = Math.min(passPer, yield* perCall(() => Effect.sync(() => pass(text))))
      emptyPer = Math.min(emptyPer, yield* perCall(() => empty()))
      boundPer = Math.min(
        boundPer,
        yield* perCall(() =>
          Effect.map(bound(output), (result) => {
            if (result.output !== output || result.outputPaths.length !== 0)
              throw new Error("within-limit output was not returned as is")
          }),
        ),
      )
    }
    console.log(
      `  ${label.padStart(8)}: bound ${(boundPer * 1000).toFixed(2)} µs, empty traced call ${(emptyPer * 1000).toFixed(2)} µs` +
        ` (ratio ${(boundPer / emptyPer).toFixed(2)}×), pass ${(passPer * 1000).toFixed(2)} µs`,
    )
  }
})

const StoreLayer = ToolOutputStore.layerWithoutConfig.pipe(
  Layer.provide(Layer.mergeAll(NodeFileSystem.layer, Global.layerWith({ data, tmp: data }))),
)
Effect.runPromise(Effect.provide(main, StoreLayer)).finally(() => fs.rmSync(data, { recursive: true, force: true }))
