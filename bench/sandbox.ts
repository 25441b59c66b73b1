/**
 * Cost of the bubblewrap sandbox per bash call, against the unsandboxed run in the same process: `true` and a
 * 1,000-line output command, each run through `Sandbox.prepare` + `AppProcess.run` in mode `none` and in mode
 * `bubblewrap` (user namespace, dropped capabilities, seccomp program on fd 4, hidden secrets, placeholders for the
 * missing protected paths), interleaved. Then the call-time search for `.env` files on a tree of 20,000 source
 * files with a 100,000-file `node_modules` beside them (skipped), against reading the same tree in full.
 * Also bare `bwrap` with the first sandbox's arguments, to separate what bubblewrap costs from what the hardening and
 * the per-call plan add. Targets: ≤ +30 ms per call; the search ≤ 25 ms on that tree.
 *
 * Run: npx tsx --conditions=@toolgate/source bench/sandbox.ts
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Context, Effect, Layer } from "effect"
import { AppProcess, Config, EventV2, Global, Location } from "@toolgate/core"
import { Sandbox } from "@toolgate/core/sandbox"
import * as Secrets from "../packages/core/src/world/sandbox/internal/secrets.js"

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

/** Time spent in `prepare` of the bubblewrap calls (the plan: searches, placeholders, arguments). */
const preparing: Array<number> = []

/** One call as the bash tool makes it: prepare (timed), run, release. */
const once = (service: Sandbox.Interface, command: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const start = performance.now()
      const prepared = yield* service.prepare({ command, cwd: root, shell: "/bin/sh" })
      if (service.mode === "bubblewrap") preparing.push(performance.now() - start)
      const result = yield* (yield* AppProcess.Service).run(prepared, { combineOutput: true })
      if (result.exitCode !== 0) throw new Error(`${command} exited ${result.exitCode}`)
      return performance.now() - start
    }),
  )

/** `bwrap` with the arguments of the first sandbox (no hardening, no hiding): what bubblewrap itself costs. */
const bareBwrap = (command: string) =>
  Effect.gen(function* () {
    const start = performance.now()
    const args = ["--die-with-parent", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    args.push("--tmpfs", "/tmp", "--bind", root, root, "--chdir", root, "--", "/bin/sh", "-c", command)
    const result = yield* (yield* AppProcess.Service).run({ command: "bwrap", args }, { combineOutput: true })
    if (result.exitCode !== 0) throw new Error(`bare bwrap exited ${result.exitCode}`)
    return performance.now() - start
  })

const tree = (base: string, files: number, width: number) => {
  for (let i = 0; i < files; i++) {
    const directory = path.join(base, `d${Math.floor(i / width) % 50}`, `e${Math.floor(i / width)}`)
    fs.mkdirSync(directory, { recursive: true })
    fs.writeFileSync(path.join(directory, `f${i}.ts`), "")
  }
}

const fullWalk = (directory: string): number => {
  let count = 0
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    count += 1
    if (entry.isDirectory()) count += fullWalk(path.join(directory, entry.name))
  }
  return count
}

const serviceOf = (mode: "none" | "bubblewrap") =>
  Effect.map(Layer.build(sandbox(mode)), (context) => Context.get(context, Sandbox.Service))

const main = Effect.gen(function* () {
  const none = yield* serviceOf("none")
  const bwrap = yield* serviceOf("bubblewrap")
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
    const bare: Array<number> = []
    for (let i = 0; i < RUNS; i++) bare.push(yield* bareBwrap(command))
    const a = median(plain)
    const b = median(boxed)
    const c = median(bare)
    console.log(
      `${label.padEnd(12)} bare bwrap (the 0.2 arguments: no user namespace option, seccomp or hiding) ${c.toFixed(2)} ms: the full sandbox is ${(b / c).toFixed(2)}× that (+${(b - c).toFixed(2)} ms)`,
    )
    console.log(
      `${label.padEnd(12)} none ${a.toFixed(2)} ms, bubblewrap ${b.toFixed(2)} ms: ${(b / a).toFixed(2)}× (+${(b - a).toFixed(2)} ms per call; target ≤ +30 ms) ${b - a <= 30 ? "ok" : "MISSED"}`,
    )
  }

  console.log(`prepare      bubblewrap plan per call (median): ${median(preparing).toFixed(2)} ms`)

  const big = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-secrets-"))
  try {
    tree(path.join(big, "src"), 20_000, 40)
    tree(path.join(big, "node_modules"), 100_000, 40)
    fs.writeFileSync(path.join(big, "src", ".env"), "X=1\n")
    const search: Array<number> = []
    const cached: Array<number> = []
    const walk: Array<number> = []
    // The listings are trusted once their directories are older than the settle time.
    const past = new Date(Date.now() - 60_000)
    const age = (directory: string): void => {
      for (const entry of fs.readdirSync(directory, { withFileTypes: true }))
        if (entry.isDirectory()) age(path.join(directory, entry.name))
      fs.utimesSync(directory, past, past)
    }
    age(big)
    const cache: Secrets.SearchCache = new Map()
    Secrets.findSecretFiles(big, Secrets.SEARCH_LIMIT, cache, 0n)
    for (let i = 0; i < 7; i++) {
      let start = performance.now()
      const found = Secrets.findSecretFiles(big)
      search.push(performance.now() - start)
      if (found?.length !== 1) throw new Error(`expected one secret file, found ${found?.length}`)
      start = performance.now()
      if (Secrets.findSecretFiles(big, Secrets.SEARCH_LIMIT, cache, 0n)?.length !== 1) throw new Error("cache missed")
      cached.push(performance.now() - start)
      start = performance.now()
      fullWalk(big)
      walk.push(performance.now() - start)
    }
    const s = median(search)
    const c = median(cached)
    const w = median(walk)
    console.log(
      `.env search  20k files + 100k in node_modules: first ${s.toFixed(1)} ms (full walk ${w.toFixed(1)} ms, ${(s / w).toFixed(2)}×), with the Location's listing cache ${c.toFixed(1)} ms (${(c / s).toFixed(2)}× the first; target ≤ 25 ms) ${c <= 25 ? "ok" : "MISSED"}`,
    )
  } finally {
    fs.rmSync(big, { recursive: true, force: true })
  }
}).pipe(Effect.scoped, Effect.provide(AppProcess.layer))

Effect.runPromise(main).finally(() => fs.rmSync(root, { recursive: true, force: true }))
