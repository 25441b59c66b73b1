#!/usr/bin/env node
/**
 * The benchmark gate: a short form of each benchmark in bench/ (`--gate`), each figure a ratio (or a bound) measured
 * in the same run, checked against its gate. The gates are generous enough that a loaded 2-core machine does not
 * trip them and tight enough that a 3× regression of what a figure measures does: see docs/performance.md, which
 * lists them with their last figures.
 *
 * In-process figures are process CPU time (user + system), which a busy machine disturbs far less than wall time;
 * the start-up figures are CPU time of fresh processes against `node -e 0`. A benchmark with a figure past its gate
 * is run once more, and the gate fails only when the figure is past it in both runs: a real regression is, a
 * scheduling accident is not.
 *
 * The benchmarks run against the built packages (`dist/` and the bins' bundles, as a user gets them; installing
 * the repository builds them). `--source` runs them on the TypeScript sources instead (slower to load).
 *
 * Usage: node scripts/bench-gate.mjs [--source] [--only settle,permission,…] [--json FILE]
 * Exits 1 when a gate fails, 2 when the build is missing (a build older than the sources is named, not refused).
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const args = process.argv.slice(2)
const source = args.includes("--source")
const only = args.includes("--only") ? args[args.indexOf("--only") + 1].split(",") : undefined
const jsonOut = args.includes("--json") ? args[args.indexOf("--json") + 1] : undefined

/**
 * The gates, per benchmark: `max` or `min` for each figure the benchmark prints on its `GATE` line;
 * docs/performance.md lists each gate with its last figures.
 */
export const GATES = {
  settle: {
    settle_over_ai_sdk_await: { max: 8, what: "settle / AI SDK await safeParseAsync + await execute" },
    handle_over_settle: { min: 10, what: "@effect/ai Toolkit.handle / settle (how many times faster)" },
    async_settle_over_sync: { max: 3, what: "settle with an Effect.fnUntraced executor / with Effect.succeed" },
    async_overhead_over_sync: { max: 3, what: "settlement overhead, async executor / sync executor" },
  },
  permission: {
    evaluate_1000_speedup: { min: 50, what: "evaluate 1,000 rules: reference / ours" },
    backslash_1mb_ms: { max: 50, what: "1 MB resource, 50 % backslashes, 100 rules (CPU ms)" },
    wildcard_worst_over_regexp: { max: 1.8, what: "worst adversarial 1 MB wildcard case / cached RegExp" },
    stars_10kb_ms: { max: 1, what: "*a*a*a*a*a*a*b against 10 KB of a (CPU ms)" },
  },
  pending: {
    pending_queue_cpu_us: { max: 80, what: "queue one pending ask on a database file, 10,000 asks (CPU µs)" },
    pending_memory_queue_cpu_us: {
      max: 80,
      what: "queue one pending ask on the in-memory database, 10,000 asks (CPU µs)",
    },
    pending_queue_speedup: { min: 6, what: "queue one pending ask: a per-ask baseline that reads everything again / ours" },
    release_speedup: { min: 10, what: "release of the pending asks: naive / ours" },
  },
  materialize: {
    materialize_unchanged_speedup: { min: 5, what: "materialize, nothing changed: full rebuild / ours" },
    materialize_register_speedup: { min: 0.3, what: "materialize, first after a register: full rebuild / ours" },
  },
  bound: {
    spill_10mb_over_scan_write: { max: 2, what: "spill 10 MB / (scan + one bare write)" },
    spill_10mb_peak_rss_over_input: { max: 0.3, what: "peak RSS growth during a 10 MB spill / input" },
  },
  startup: {
    cli_over_node_cpu: { max: 9, what: "toolgate --help / node -e 0 (CPU)" },
    mcp_first_list_over_node_cpu: { max: 15, what: "MCP spawn → first tools/list / node -e 0 (CPU)" },
  },
  shell: {
    typical_plan_over_parse: { max: 400, what: "plan a typical command / its bare tree-sitter parse (CPU)" },
    nesting_3000_over_parse: { max: 16, what: "plan 3,000 nested ( ) / their parse (CPU)" },
    linearity_100kb_over_1kb: { max: 4, what: "planning cost per KB, 100 KB command / 1 KB command" },
    pipeline_1000_ms: { max: 200, what: "plan a 1,000-stage pipeline (CPU ms)" },
  },
  "tool-import": {
    tool_import_over_effect_cpu: {
      max: 2,
      what: "process importing @toolgate/core/tool + one settle / importing effect + one decode (CPU)",
    },
  },
}

/** Fails with exit 2 when the built core is missing; says so when it is older than its sources. */
const checkBuild = () => {
  const dist = path.join(repo, "packages/core/dist/index.js")
  if (!fs.existsSync(dist)) {
    console.error("bench-gate: packages/core/dist is missing: run `npx -y pnpm@12.21.0 build` (or pass --source)")
    process.exit(2)
  }
  const built = fs.statSync(dist).mtimeMs
  const newest = (directory) =>
    fs.readdirSync(directory, { withFileTypes: true }).reduce((latest, entry) => {
      const file = path.join(directory, entry.name)
      return Math.max(latest, entry.isDirectory() ? newest(file) : fs.statSync(file).mtimeMs)
    }, 0)
  if (newest(path.join(repo, "packages/core/src")) > built)
    console.log("bench-gate: note: packages/core/dist is older than its sources; the figures are the build's")
}

/**
 * Benchmarks that share a Node process (bench/gate.ts runs them one after another: loading the library is paid once
 * per group, not per benchmark). Two groups, so that no one process is the long pole of the gate.
 */
const GROUPS = [
  ["settle", "materialize"],
  ["permission", "pending"],
]

/** Runs `bench/<file>.ts --gate …extra` and answers its `GATE` line (parsed) and its wall time. */
const run = (file, extra = []) =>
  new Promise((resolve) => {
    const start = performance.now()
    const child = spawn(
      process.execPath,
      [
        "--expose-gc",
        "--import",
        "tsx",
        ...(source ? ["--conditions=@toolgate/source"] : []),
        path.join(repo, "bench", `${file}.ts`),
        "--gate",
        ...extra,
      ],
      { cwd: repo, stdio: ["ignore", "pipe", "pipe"] },
    )
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)))
    // A guard against a hung benchmark, not a time limit: at a load average of 15 a group takes about three minutes.
    const timer = setTimeout(() => child.kill("SIGKILL"), 600_000)
    const done = (why) => {
      clearTimeout(timer)
      const seconds = (performance.now() - start) / 1000
      const line = stdout.split("\n").find((text) => text.startsWith("GATE "))
      if (why !== undefined || line === undefined)
        resolve({ seconds, error: `${why ?? "no GATE line"}\n${stderr.slice(-2000)}${stdout.slice(-2000)}` })
      else resolve({ seconds, figures: JSON.parse(line.slice("GATE ".length)) })
    }
    child.on("error", (error) => done(error.message))
    child.on("close", (status, signal) => done(status === 0 ? undefined : `exit ${status}${signal ? ` (${signal})` : ""}`))
  })

const verdict = (gate, value) =>
  typeof value === "number" &&
  Number.isFinite(value) &&
  (gate.max === undefined || value <= gate.max) &&
  (gate.min === undefined || value >= gate.min)

if (!source) checkBuild()
const started = performance.now()
const chosen = Object.keys(GATES).filter((name) => only === undefined || only.includes(name))
/** Each benchmark's runs: figures (or an error) and seconds. */
const attempts = Object.fromEntries(chosen.map((name) => [name, []]))
const groups = GROUPS.map((group) => group.filter((name) => chosen.includes(name))).filter((group) => group.length > 0)
const alone = chosen.filter((name) => !GROUPS.flat().includes(name))
// The benchmarks run side by side: their figures are CPU time, which a process waiting for a core does not accrue,
// so on a busy machine running them at once shortens the gate without moving its figures much.
await Promise.all([
  ...groups.map((group) =>
    run("gate", group).then((result) => {
      console.log(`bench/gate.ts (${group.join(", ")}): ${result.seconds.toFixed(1)} s`)
      if (result.error !== undefined) console.log(`--- bench/gate.ts failed: ${result.error}`)
      for (const name of group)
        attempts[name].push(
          result.figures?.[name] === undefined ? { error: "no figures" } : { figures: result.figures[name] },
        )
    }),
  ),
  ...alone.map((name) =>
    run(name).then((single) => {
      console.log(`bench/${name}.ts: ${single.seconds.toFixed(1)} s`)
      attempts[name].push(single)
    }),
  ),
])
// A benchmark with a figure past its gate runs once more, on its own.
const passes = (name, attempt) =>
  attempt.figures !== undefined &&
  Object.entries(GATES[name]).every(([figure, gate]) => verdict(gate, attempt.figures[figure]))
for (const name of chosen) {
  if (passes(name, attempts[name][0])) continue
  const again = await run(name)
  console.log(`bench/${name}.ts: ${again.seconds.toFixed(1)} s (run again: a figure was past its gate)`)
  attempts[name].push(again)
}

const rows = []
let failed = 0
for (const name of chosen) {
  for (const attempt of attempts[name])
    if (attempt.error !== undefined) console.log(`--- bench/${name}.ts failed: ${attempt.error}`)
  for (const [figure, gate] of Object.entries(GATES[name])) {
    const values = attempts[name].map((attempt) => attempt.figures?.[figure])
    // A figure fails only when it is past its gate (or missing) in every run.
    const ok = values.some((value) => verdict(gate, value))
    if (!ok) failed++
    rows.push({ bench: name, figure, values, gate, ok })
  }
}

const show = (value) =>
  typeof value === "number" ? (Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(2)) : "—"
console.log("")
console.log(`${"figure".padEnd(34)} ${"value".padStart(14)}  ${"gate".padEnd(8)}  what`)
for (const row of rows) {
  const limit = row.gate.max !== undefined ? `≤ ${row.gate.max}` : `≥ ${row.gate.min}`
  console.log(
    `${row.figure.padEnd(34)} ${row.values.map(show).join(" / ").padStart(14)}  ${limit.padEnd(8)}  ${row.ok ? "ok  " : "FAIL"} ${row.gate.what}`,
  )
}
const seconds = (performance.now() - started) / 1000
if (jsonOut !== undefined) fs.writeFileSync(jsonOut, JSON.stringify({ seconds, rows }, null, 2))
console.log(
  failed === 0
    ? `bench-gate: ${rows.length} figures within their gates (${seconds.toFixed(0)} s)`
    : `bench-gate: ${failed} of ${rows.length} figures past their gates (${seconds.toFixed(0)} s)`,
)
process.exit(failed === 0 ? 0 : 1)
