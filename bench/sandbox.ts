/**
 * Cost of the bubblewrap sandbox per bash call: `true` and a 1,000-line output command, each run through
 * `Sandbox.prepare` + `AppProcess.run` in mode `none` and in mode `bubblewrap`, interleaved in the same run.
 * Prints the median of each, the ratio and the milliseconds the sandbox adds. Target: ≤ 30 ms added per call.
 *
 * Run: npx tsx bench/sandbox.ts
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer } from "effect"
import { AppProcess, Config, EventV2, Global, Location, Sandbox } from "@toolgate/core"

const RUNS = 40

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-sandbox-")))
const location = Location.layerWith({ directory: root, project: { id: "global", directory: "/" } })

const sandbox = (mode: "none" | "bubblewrap") =>
  Sandbox.layer.pipe(
    Layer.provide(
      Layer.mergeAll(
        location,
        EventV2.layer.pipe(Layer.provide(location)),
        Global.layerWith({ tmp: path.join(root, ".tmp") }),
        Config.layerFromEntries([{ type: "document", info: { bash: { sandbox: { mode }, env: "inherit" } } }]),
        AppProcess.layer,
      ),
    ),
  )

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const once = (service: Sandbox.Interface, command: string) =>
  Effect.gen(function* () {
    const prepared = yield* service.prepare({ command, cwd: root, shell: "/bin/sh" })
    const start = performance.now()
    const result = yield* (yield* AppProcess.Service).run(prepared, { combineOutput: true })
    if (result.exitCode !== 0) throw new Error(`${command} exited ${result.exitCode}`)
    return performance.now() - start
  })

const main = Effect.gen(function* () {
  const none = yield* Effect.provide(Sandbox.Service, sandbox("none"))
  const bwrap = yield* Effect.provide(Sandbox.Service, sandbox("bubblewrap"))
  for (const [label, command] of [
    ["true", "true"],
    ["seq 1 1000", "seq 1 1000"],
  ] as const) {
    const plain: Array<number> = []
    const boxed: Array<number> = []
    for (let i = 0; i < 3; i++) {
      yield* once(none, command)
      yield* once(bwrap, command)
    }
    for (let i = 0; i < RUNS; i++) {
      plain.push(yield* once(none, command))
      boxed.push(yield* once(bwrap, command))
    }
    const a = median(plain)
    const b = median(boxed)
    console.log(
      `${label.padEnd(12)} none ${a.toFixed(2)} ms, bubblewrap ${b.toFixed(2)} ms: ${(b / a).toFixed(2)}× (+${(b - a).toFixed(2)} ms per call; target ≤ +30 ms) ${b - a <= 30 ? "ok" : "MISSED"}`,
    )
  }
}).pipe(Effect.provide(AppProcess.layer))

Effect.runPromise(main).finally(() => fs.rmSync(root, { recursive: true, force: true }))
