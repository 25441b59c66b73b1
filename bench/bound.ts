/**
 * Bounding cost over the limit: `ToolOutputStore.bound` on 1 MB, 10 MB and 100 MB texts (each size in a fresh child
 * process) against a baseline measured in the same process: one scan pass over the text (`Buffer.byteLength` + a
 * newline count) plus one bare `fs.promises.writeFile` of the same text. Also the peak growth of RSS and of
 * `arrayBuffers` during `bound` (and, for reference, during the bare write) relative to the input size.
 * Targets at 100 MB: bound ≤ 1.1× (pass + write), peak RSS growth ≤ 0.1× the input.
 * Then, in this process, the cost of a within-limit call, which must return the output untouched.
 *
 * Run: npx tsx --conditions=@toolgate/source bench/bound.ts     (one size only: ... bench/bound.ts child 100; `--gate`:
 * 10 MB only, in this process, 3 rounds, ending with a `GATE` line for scripts/bench-gate.mjs)
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { Worker } from "node:worker_threads"
import { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Global, type LLM, ToolOutputStore } from "@toolgate/core"
import { report } from "./gate-report.js"

const MB = 1024 * 1024
const { MAX_BYTES, MAX_LINES } = ToolOutputStore
/** `--gate`: the 10 MB size only, 3 rounds, ending with a `GATE` line for scripts/bench-gate.mjs. */
const gate = process.argv.includes("--gate")
const SIZES: ReadonlyArray<number> = gate ? [10] : [1, 10, 100]
const ROUNDS: Record<number, number> = gate ? { 10: 3 } : { 1: 21, 10: 9, 100: 5 }

/** ASCII lines of 100 bytes (99 characters + newline), `megabytes` in all. */
const makeText = (megabytes: number): string => {
  const line = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyz!?\n"
  return Buffer.alloc(megabytes * MB, line, "latin1").toString("latin1")
}

/** The scan any bounding must make at least once: the byte length and the line count. */
const pass = (text: string): number => {
  let lines = 1
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++
  return Buffer.byteLength(text, "utf8") + lines
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const storeLayer = (data: string) =>
  ToolOutputStore.layerWithoutConfig.pipe(
    Layer.provide(Layer.mergeAll(NodeFileSystem.layer, Global.layerWith({ data, tmp: data }))),
  )

// ---------------------------------------------------------------------------------------------------------------
// Child: one size, fresh process.

/** What a child reports. */
interface SizeResult {
  readonly size: number
  readonly passMs: number
  readonly writeMs: number
  readonly previousMs: number
  readonly boundMs: number
  /** Median over rounds of bound / (pass + write) within each round. */
  readonly ratio: number
  /** Median over rounds of bound / previous within each round. */
  readonly previousRatio: number
  readonly boundRss: number
  readonly boundArrayBuffers: number
  readonly writeRss: number
  readonly writeArrayBuffers: number
}

/**
 * Samples the peak RSS from another thread (the main thread may be busy encoding) and the peak `arrayBuffers` of
 * the main isolate from a 1 ms timer (the spill yields between chunks). Started before the baseline is read.
 */
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
  // Let the worker's own start-up settle before the baseline is taken.
  await new Promise((resolve) => setTimeout(resolve, 50))
  const rssBefore = process.memoryUsage.rss()
  const maxRss = new Float64Array(shared, 0, 1)
  maxRss[0] = rssBefore
  const buffersBefore = process.memoryUsage().arrayBuffers
  let buffersPeak = buffersBefore
  const timer = setInterval(() => {
    const now = process.memoryUsage().arrayBuffers
    if (now > buffersPeak) buffersPeak = now
  }, 1)
  return async () => {
    clearInterval(timer)
    const buffersEnd = process.memoryUsage().arrayBuffers
    if (buffersEnd > buffersPeak) buffersPeak = buffersEnd
    Atomics.store(new Int32Array(shared, 8, 1), 0, 1)
    Atomics.notify(new Int32Array(shared, 8, 1), 0)
    await worker.terminate()
    return { rss: maxRss[0]! - rssBefore, arrayBuffers: buffersPeak - buffersBefore }
  }
}

const child = (size: number) =>
  Effect.gen(function* () {
    v8.setFlagsFromString("--expose-gc")
    const gc = vm.runInNewContext("gc") as () => void
    const data = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-"))
    try {
      const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data))
      // Each step leaves its file behind; `clean` removes it outside the timed part.
      let left: string | undefined
      const clean = () => {
        if (left !== undefined) fs.rmSync(left)
        left = undefined
      }
      const bound = (text: string) =>
        Effect.map(
          store.bound({
            sessionID: "ses_bench",
            toolCallID: "call_bench",
            output: { structured: {}, content: [{ type: "text", text }] },
          }),
          (result) => {
            if (result.outputPaths.length !== 1) throw new Error("expected a spill")
            left = result.outputPaths[0]!
          },
        )
      // A spill without chunks, for reference: the preview, then the whole text encoded and written at once.
      const files = yield* Effect.provide(FileSystem.FileSystem, NodeFileSystem.layer)
      const previous = (text: string) =>
        Effect.gen(function* () {
          const file = path.join(data, "tool-output", "previous")
          ToolOutputStore.boundedPreview(text, ToolOutputStore.marker(file), MAX_LINES, MAX_BYTES)
          yield* files.makeDirectory(path.dirname(file), { recursive: true })
          yield* files.writeFileString(file, text, { flag: "wx" })
          left = file
        })
      const bare = path.join(data, "bare")
      const bareWrite = (text: string) =>
        Effect.promise(async () => {
          await fs.promises.writeFile(bare, text, { flag: "wx" })
          left = bare
        })
      const timed = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.gen(function* () {
          const start = performance.now()
          yield* effect
          const elapsed = performance.now() - start
          clean()
          return elapsed
        })

      // Warm both paths up on a small over-limit text.
      const small = makeText(1).slice(0, 200_000)
      for (let i = 0; i < 5; i++) {
        yield* timed(bound(small))
        yield* timed(bareWrite(small))
        yield* timed(previous(small))
      }
      const text = makeText(size)
      pass(text)

      // Memory first, on a quiet heap: bound, then the bare write for reference.
      const memory = function* (effect: Effect.Effect<unknown, unknown>) {
        gc()
        const stop = yield* Effect.promise(startSampler)
        yield* Effect.orDie(effect)
        const growth = yield* Effect.promise(stop)
        clean()
        return growth
      }
      const boundMemory = yield* memory(bound(text))
      const writeMemory = yield* memory(bareWrite(text))

      const passTimes: Array<number> = []
      const writeTimes: Array<number> = []
      const boundTimes: Array<number> = []
      const ratios: Array<number> = []
      const previousTimes: Array<number> = []
      const previousRatios: Array<number> = []
      for (let round = 0; round < ROUNDS[size]!; round++) {
        gc()
        // Alternate the order so neither side always runs on a warmer page cache.
        let p = 0
        let w = 0
        let b = 0
        let o = 0
        if (round % 2 === 0) {
          b = yield* timed(bound(text))
          p = yield* timed(Effect.sync(() => pass(text)))
          w = yield* timed(bareWrite(text))
          o = yield* timed(previous(text))
        } else {
          o = yield* timed(previous(text))
          p = yield* timed(Effect.sync(() => pass(text)))
          w = yield* timed(bareWrite(text))
          b = yield* timed(bound(text))
        }
        previousTimes.push(o)
        previousRatios.push(b / o)
        passTimes.push(p)
        writeTimes.push(w)
        boundTimes.push(b)
        ratios.push(b / (p + w))
      }
      const result: SizeResult = {
        size,
        passMs: median(passTimes),
        writeMs: median(writeTimes),
        boundMs: median(boundTimes),
        ratio: median(ratios),
        previousMs: median(previousTimes),
        previousRatio: median(previousRatios),
        boundRss: boundMemory.rss,
        boundArrayBuffers: boundMemory.arrayBuffers,
        writeRss: writeMemory.rss,
        writeArrayBuffers: writeMemory.arrayBuffers,
      }
      return result
    } finally {
      fs.rmSync(data, { recursive: true, force: true })
    }
  })

// ---------------------------------------------------------------------------------------------------------------
// Parent: one child per size, then the within-limit figures.

const parent = Effect.gen(function* () {
  const self = fileURLToPath(import.meta.url)
  const results: Array<SizeResult> = []
  // The gate measures its one size in this process: a fresh one would load the library again.
  if (gate) results.push(yield* child(10))
  else
    for (const size of SIZES) {
      const run = spawnSync(process.execPath, [...process.execArgv, self, "child", String(size)], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
        maxBuffer: 16 * MB,
      })
      if (run.status !== 0) throw new Error(`child for ${size} MB failed (${run.status})`)
      results.push(JSON.parse(run.stdout.trim().split("\n").at(-1)!) as SizeResult)
    }
  const x = (value: number, digits = 2) => `${value.toFixed(digits)}×`
  console.log(
    "Over the limit (fresh process per size; medians; pass = Buffer.byteLength + newline count; write = bare" +
      " fs.promises.writeFile of the text; previous = the spill before chunking: preview + one writeFileString):",
  )
  console.log(
    "  size   pass ms  write ms  bound ms  bound/(pass+write)  previous ms  bound/previous   peak growth / input during bound: RSS  arrayBuffers" +
      "   | bare write: RSS  arrayBuffers",
  )
  for (const r of results) {
    const input = r.size * MB
    console.log(
      `${String(r.size).padStart(4)} MB ${r.passMs.toFixed(1).padStart(9)} ${r.writeMs.toFixed(1).padStart(9)}` +
        ` ${r.boundMs.toFixed(1).padStart(9)} ${x(r.ratio).padStart(19)}` +
        ` ${r.previousMs.toFixed(1).padStart(12)} ${x(r.previousRatio).padStart(15)}` +
        ` ${x(r.boundRss / input, 3).padStart(39)} ${x(r.boundArrayBuffers / input, 3).padStart(13)}` +
        `   | ${x(r.writeRss / input, 3).padStart(15)} ${x(r.writeArrayBuffers / input, 3).padStart(13)}`,
    )
  }
  if (gate) {
    const r = results[0]!
    report("bound", {
      spill_10mb_over_scan_write: r.ratio,
      spill_10mb_peak_rss_over_input: r.boundRss / (r.size * MB),
    })
    return
  }
  const big = results.find((r) => r.size === 100)!
  console.log(
    `Targets at 100 MB: time ${x(big.ratio)} (≤ 1.10×: ${big.ratio <= 1.1 ? "met" : "NOT met"}),` +
      ` peak RSS growth ${x(big.boundRss / (100 * MB), 3)} (≤ 0.100×: ${big.boundRss <= 0.1 * 100 * MB ? "met" : "NOT met"})`,
  )

  // Within limits: returned as the same object. The baseline is an empty traced `Effect.fn` call, the span every
  // public service method carries.
  const data = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-"))
  try {
    const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data))
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
            Effect.map(store.bound({ sessionID: "ses_bench", toolCallID: "call_bench", output }), (result) => {
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
  } finally {
    fs.rmSync(data, { recursive: true, force: true })
  }
})

const [mode, size] = process.argv.slice(2)
const program =
  mode === "child" ? Effect.map(child(Number(size)), (result) => console.log(JSON.stringify(result))) : parent
Effect.runPromise(program).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
