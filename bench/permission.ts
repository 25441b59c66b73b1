/**
 * Permission figures, each against a baseline measured in the same run:
 *   1. evaluate: 1,000 rules × 100k queries, ours vs the reference algorithm (a new RegExp per match). Target ≥ 10×.
 *      The reference is timed on a sample of the queries (it is far too slow for all of them) and extrapolated.
 *   2. pathological pattern `*a*a*a*a*a*a*b` against 10 KB of `a`: ours ≤ 1 ms; the reference regex runs in a worker
 *      thread that is terminated after 2 s.
 *   3. 10,000 pending asks released by one `always` reply (target ≤ 1 s), vs the per-entry lookups a naive
 *      auto-resolve would make (timed on a sample and extrapolated).
 *
 * Run: npx tsx bench/permission.ts            (or with figure numbers, e.g. `... permission.ts 3`)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Worker } from "node:worker_threads"
import { Effect, Layer, ManagedRuntime } from "effect"
import {
  AgentV2,
  Database,
  EventV2,
  Location,
  PermissionSaved,
  PermissionV2,
  SessionV2,
  Wildcard,
} from "@toolgate/core"

type Rule = PermissionV2.Rule

// ---------------------------------------------------------------------------------------------------------------
// The reference algorithm (02 §2, §3.1), written out as the baseline.

function referenceMatch(input: string, pattern: string, win32: boolean): boolean {
  const text = input.replaceAll("\\", "/")
  let source = pattern
    .replaceAll("\\", "/")
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".")
  if (source.endsWith(" .*")) source = source.slice(0, -3) + "( .*)?"
  return new RegExp("^" + source + "$", win32 ? "si" : "s").test(text)
}
/** The same function as source text, for the worker thread. */
const referenceSource = referenceMatch.toString()

const win32 = process.platform === "win32"
const referenceEvaluate = (action: string, resource: string, rules: ReadonlyArray<Rule>): Rule => {
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!
    if (referenceMatch(action, rule.action, win32) && referenceMatch(resource, rule.resource, win32)) return rule
  }
  return { action, resource: "*", effect: "ask" }
}

// ---------------------------------------------------------------------------------------------------------------

/** CPU milliseconds (user + system) of this process since `start`; the machine is shared, so CPU time is printed too. */
const cpuSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}

let seed = 42
const random = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}
const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!

const ACTIONS = [
  "read",
  "edit",
  "bash",
  "glob",
  "grep",
  "webfetch",
  "websearch",
  "todowrite",
  "skill",
  "question",
  "external_directory",
  "mcp_github_search",
  "mcp_github_issue",
  "mcp_slack_post",
  "task",
  "plan_enter",
  "plan_exit",
  "lsp",
  "codesearch",
  "list",
]
const ACTION_PATTERNS = [...ACTIONS, "*", "mcp_*", "mcp_github_*"]
const WORDS = ["src", "lib", "test", "docs", "packages", "core", "index", "util", "main", "config", "git", "npm"]
const resourcePattern = () => {
  const parts = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(WORDS))
  const tail = pick(["/*", "/*.ts", "*", " *", "/**/*.md", "?.ts", ""])
  return parts.join("/") + tail
}
const resource = () =>
  Array.from({ length: 2 + Math.floor(random() * 4) }, () => pick(WORDS)).join("/") +
  pick([".ts", ".md", "", " --flag"])

const figure1 = () => {
  const rules: Array<Rule> = Array.from({ length: 1000 }, () => ({
    action: pick(ACTION_PATTERNS),
    resource: resourcePattern(),
    effect: pick(["allow", "deny", "ask"] as const),
  }))
  const QUERIES = 100_000
  const queries = Array.from({ length: QUERIES }, () => [pick(ACTIONS), resource()] as const)

  // Agreement on a sample first: the benchmark compares equal work.
  for (const [action, res] of queries.slice(0, 2000)) {
    const ours = PermissionV2.evaluate(action, res, rules)
    const theirs = referenceEvaluate(action, res, rules)
    if (ours.effect !== theirs.effect || ours.resource !== theirs.resource)
      throw new Error(`disagree on ${action} ${res}`)
  }

  let sink = 0
  const oursCpu = process.cpuUsage()
  const oursStart = performance.now()
  for (const [action, res] of queries) sink += PermissionV2.evaluate(action, res, rules).effect.length
  const ours = performance.now() - oursStart
  const oursCpuMs = cpuSince(oursCpu)

  const SAMPLE = 2_000
  const refCpu = process.cpuUsage()
  const refStart = performance.now()
  for (const [action, res] of queries.slice(0, SAMPLE)) sink += referenceEvaluate(action, res, rules).effect.length
  const refSample = performance.now() - refStart
  const reference = (refSample / SAMPLE) * QUERIES
  const referenceCpu = (cpuSince(refCpu) / SAMPLE) * QUERIES

  console.log("1. evaluate, 1,000 rules × 100,000 queries")
  console.log(
    `   ours       ${ours.toFixed(0)} ms wall, ${oursCpuMs.toFixed(0)} ms CPU (${((ours / QUERIES) * 1000).toFixed(2)} µs/query)`,
  )
  console.log(
    `   reference  ${reference.toFixed(0)} ms wall, ${referenceCpu.toFixed(0)} ms CPU, extrapolated from ${SAMPLE} queries (${((refSample / SAMPLE) * 1000).toFixed(2)} µs/query)`,
  )
  console.log(
    `   ratio      ${(reference / ours).toFixed(1)}× wall, ${(referenceCpu / oursCpuMs).toFixed(1)}× CPU (target ≥ 10×)   [sink ${sink % 7}]`,
  )
}

const figure2 = async () => {
  const pattern = "*a*a*a*a*a*a*b"
  const input = "a".repeat(10 * 1024)
  Wildcard.match(input, pattern)
  const runs = 20
  const start = performance.now()
  let result = false
  for (let i = 0; i < runs; i++) result = Wildcard.match(input, pattern) || result
  const ours = (performance.now() - start) / runs

  const CAP = 2000
  const worker = new Worker(
    `${referenceSource}
     const { parentPort } = require("node:worker_threads")
     const start = performance.now()
     const result = referenceMatch(${JSON.stringify(input)}, ${JSON.stringify(pattern)}, false)
     parentPort.postMessage({ result, ms: performance.now() - start })`,
    { eval: true },
  )
  const reference = await new Promise<string>((resolve) => {
    const timer = setTimeout(() => {
      void worker.terminate()
      resolve(`> ${CAP} ms (terminated)`)
    }, CAP)
    worker.once("message", (message: { result: boolean; ms: number }) => {
      clearTimeout(timer)
      void worker.terminate()
      resolve(`${message.ms.toFixed(1)} ms (result ${message.result})`)
    })
  })
  // The anchored tail `b` rejects the input above at once; with a trailing `*` the middle pieces must be searched.
  const searched = "*a*a*a*a*a*a*b*"
  Wildcard.match(input, searched)
  const searchStart = performance.now()
  for (let i = 0; i < runs; i++) result = Wildcard.match(input, searched) || result
  const oursSearched = (performance.now() - searchStart) / runs
  console.log("2. pattern *a*a*a*a*a*a*b against 10 KB of a")
  console.log(
    `   ours       ${ours.toFixed(4)} ms per match (target ≤ 1 ms); ${searched}: ${oursSearched.toFixed(4)} ms (result ${result})`,
  )
  console.log(`   reference  ${reference}`)
  if (reference.startsWith(">")) console.log(`   ratio      > ${(CAP / ours).toFixed(0)}×`)
}

const figure3 = async () => {
  const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-")))
  const runtime = ManagedRuntime.make(
    PermissionV2.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(EventV2.layer, AgentV2.layerEmpty, SessionV2.layer, PermissionSaved.layer)),
      Layer.provideMerge(Location.layer({ directory }).pipe(Layer.orDie)),
      Layer.provideMerge(Database.layerMemory),
    ),
  )
  const PENDING = 10_000
  try {
    await runtime.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const agents = yield* AgentV2.Service
          const sessions = yield* SessionV2.Service
          const saved = yield* PermissionSaved.Service
          const permission = yield* PermissionV2.Service
          yield* agents.transform((draft) => draft.update("test", () => {}))
          yield* sessions.create({ id: "ses_bench", agent: "test" })
          yield* sessions.create({ id: "ses_other", agent: "test" })
          const setupStart = performance.now()
          for (let i = 0; i < PENDING; i++) {
            yield* permission.ask({
              sessionID: i % 2 === 0 ? "ses_bench" : "ses_other",
              action: "read",
              resources: [`src/file${i}.ts`],
              save: ["*"],
            })
          }
          const setup = performance.now() - setupStart
          const trigger = yield* permission.ask({
            sessionID: "ses_bench",
            action: "read",
            resources: ["src/x.ts"],
            save: ["src/*"],
          })
          const cpu = process.cpuUsage()
          const start = performance.now()
          yield* permission.reply({ requestID: trigger.id, reply: "always" })
          const release = performance.now() - start
          const releaseCpu = cpuSince(cpu)
          const left = (yield* permission.list()).length

          // Naive baseline: a session lookup and a saved-row read per pending entry.
          const SAMPLE = 1000
          const naiveCpuStart = process.cpuUsage()
          const naiveStart = performance.now()
          for (let i = 0; i < SAMPLE; i++) {
            yield* sessions.get("ses_bench")
            yield* saved.list({ projectID: "global" })
          }
          const naive = ((performance.now() - naiveStart) / SAMPLE) * PENDING
          const naiveCpu = (cpuSince(naiveCpuStart) / SAMPLE) * PENDING

          console.log(`3. ${PENDING.toLocaleString("en")} pending asks released by one always (2 sessions)`)
          console.log(`   setup      ${setup.toFixed(0)} ms to queue them`)
          console.log(
            `   ours       ${release.toFixed(0)} ms wall, ${releaseCpu.toFixed(0)} ms CPU (target ≤ 1000 ms); still pending: ${left}`,
          )
          console.log(
            `   naive      ${naive.toFixed(0)} ms wall, ${naiveCpu.toFixed(0)} ms CPU, extrapolated (per-entry session + saved-row reads only)`,
          )
          console.log(`   ratio      ${(naive / release).toFixed(1)}× wall, ${(naiveCpu / releaseCpu).toFixed(1)}× CPU`)
        }),
      ),
    )
  } finally {
    await runtime.dispose()
    fs.rmSync(directory, { recursive: true, force: true })
  }
}

/** `npx tsx bench/permission.ts [1] [2] [3]` runs only the chosen figures (all by default). */
const main = async () => {
  const chosen = process.argv.slice(2)
  const wants = (n: string) => chosen.length === 0 || chosen.includes(n)
  if (wants("1")) figure1()
  if (wants("2")) await figure2()
  if (wants("3")) await figure3()
}

void main()
