/**
 * Shell gate figures, each against a baseline measured in the same run (process CPU time, which a loaded machine
 * disturbs far less than wall time):
 *   1. a typical command (`git status && npm test -- --watch`) planned as the bash leaf plans it — parse, segments,
 *      verdicts, `ShellPlan.plan` over a real Location on disk — target ≤ 1 ms; against the bare tree-sitter parse of
 *      the same text, and the whole command matched once as one `bash` resource (what the reference does).
 *   2. a 20-segment command (planned, parse + verdicts) and a 10 KB command (parse + verdicts).
 *   3. adversarial inputs (parse + verdicts): 200 nested subshells, 3,000 nested subshells (past the bound: one
 *      unresolved segment), a 1,000-stage pipeline, 100 here-documents, 8 nested `bash -c` levels, 100 KB.
 *   4. linearity: 1 KB, 10 KB and 100 KB commands, time per KB.
 *   5. the oracle's generator (test/support/shell-oracle/grammar.ts): µs per generated command.
 *
 * Run: npx tsx --conditions=@toolgate/source bench/shell.ts   (`--gate`: a short run ending with a `GATE` line)
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { Context, Effect, FastCheck as fc, Layer } from "effect"
import {
  BashArity,
  BashTool,
  Config,
  Database,
  Global,
  Location,
  LocationMutation,
  PermissionV2,
  ShellCommand,
  ShellPlan,
} from "@toolgate/core"
import * as Grammar from "../packages/core/test/support/shell-oracle/grammar.js"

const gate = process.argv.includes("--gate")
const ROUNDS = gate ? 3 : 5

const RULES: PermissionV2.Ruleset = [
  { action: "*", resource: "*", effect: "allow" },
  { action: "bash", resource: "*", effect: "ask" },
  ...["ls", "cat", "grep", "git status", "git log", "git diff", "echo", "pwd", "head", "tail", "wc", "npm test"].map(
    (command): PermissionV2.Rule => ({ action: "bash", resource: `${command} *`, effect: "allow" }),
  ),
  { action: "bash", resource: "rm *", effect: "deny" },
  { action: "bash", resource: "git push *", effect: "deny" },
]

const PIECES = [
  "git status",
  "ls -la src",
  "grep -rn 'TODO' packages | head -20",
  'echo "done: $(date +%s)"',
  "npm test -- --watch=false",
  "cat package.json | wc -l",
  "LC_ALL=C nohup node build.js > out.log 2>&1",
  "find . -name '*.ts' -exec wc -l {} \\;",
  "cd packages && ls",
  "bash -c 'echo inner; pwd'",
]

const TYPICAL = "git status && npm test -- --watch"
const join = (count: number) => Array.from({ length: count }, (_, i) => PIECES[i % PIECES.length]).join(" && ")
const ofSize = (bytes: number) => {
  let out = ""
  for (let i = 0; out.length < bytes; i++) out += (i === 0 ? "" : "; ") + PIECES[i % PIECES.length]
  return out
}
const nested = (depth: number) => `${"( ".repeat(depth)}ls${" )".repeat(depth)}`
const shells = (depth: number) => {
  let inner = "rm -rf x"
  for (let i = 0; i < depth; i++) inner = `bash -c ${Grammar.quote(inner)}`
  return inner
}
const ADVERSARIAL: ReadonlyArray<readonly [string, string]> = [
  ["200 nested ( )", nested(200)],
  ["3,000 nested ( ) (bound)", nested(3000)],
  [
    "1,000-stage pipeline",
    Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? "cat notes.txt" : "wc -l")).join(" | "),
  ],
  [
    "100 here-documents",
    Array.from({ length: 100 }, (_, i) => `cat <<'E${i}' > f${i}.txt\nline ${i}\nE${i}`).join("\n"),
  ],
  ["8 nested bash -c", shells(8)],
  ["100 KB", ofSize(100_000)],
]

/** CPU µs per call of `f`: the best of ROUNDS rounds of `n` calls. */
const time = (f: () => unknown, n: number) => {
  for (let i = 0; i < Math.min(n, 20); i++) f()
  let best = Infinity
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage()
    for (let i = 0; i < n; i++) f()
    const used = process.cpuUsage(start)
    best = Math.min(best, (used.user + used.system) / n)
  }
  return best
}
/** The same for an Effect, each call run to completion (the planner reads the disk through FileSystem). */
const timeEffect = <A, E>(f: () => Effect.Effect<A, E>, n: number) =>
  Effect.promise(async () => {
    for (let i = 0; i < Math.min(n, 20); i++) await Effect.runPromise(f())
    let best = Infinity
    for (let round = 0; round < ROUNDS; round++) {
      const start = process.cpuUsage()
      for (let i = 0; i < n; i++) await Effect.runPromise(f())
      const used = process.cpuUsage(start)
      best = Math.min(best, (used.user + used.system) / n)
    }
    return best
  })

const us = (value: number) => `${value.toFixed(1).padStart(9)} µs`

const main = Effect.scoped(
  Effect.gen(function* () {
    const language = yield* ShellCommand.loadLanguage
    const parse = ShellCommand.makeParser(language)
    // The bare tree-sitter parse: web-tree-sitter as core resolves it (its own instance, initialised here).
    const require = createRequire(path.resolve("packages/core/package.json"))
    const { Parser, Language } = (yield* Effect.promise(() => import(require.resolve("web-tree-sitter")))) as {
      Language: { load: (file: string) => Promise<unknown> }
      Parser: { init: () => Promise<void> } & (new () => {
        setLanguage: (l: unknown) => void
        parse: (t: string) => { delete: () => void } | null
      })
    }
    yield* Effect.promise(() => Parser.init())
    const bare = new Parser()
    bare.setLanguage(
      yield* Effect.promise(() => Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"))),
    )

    // A real Location on disk (the planner inspects paths and resolves them through LocationMutation).
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-shell-"))
    const project = path.join(root, "project")
    for (const dir of ["src", "packages/core", "sub"]) fs.mkdirSync(path.join(project, dir), { recursive: true })
    for (const file of ["package.json", "notes.txt", "src/main.ts"]) fs.writeFileSync(path.join(project, file), "x\n")
    const place = Layer.mergeAll(
      Location.layer({ directory: project }).pipe(Layer.orDie),
      Global.layerWith({
        data: path.join(root, "data"),
        config: path.join(root, "config"),
        tmp: path.join(root, "tmp"),
      }),
      Config.layerEmpty,
      NodeContext.layer,
    ).pipe(Layer.provideMerge(Database.layerMemory))
    const context = yield* Layer.build(
      BashTool.layerPlan.pipe(Layer.provide(LocationMutation.layer), Layer.provide(place)),
    ).pipe(Effect.orDie)
    const setting = Context.get(context, ShellPlan.Service)
    const grammar = ShellCommand.grammarOf(setting.shell) ?? "bash"

    const verdicts = (command: string) =>
      ShellCommand.evaluate(
        parse(command, grammar),
        (resource) => PermissionV2.evaluate("bash", resource, RULES).effect,
        (argv) => BashArity.pattern(argv),
      )
    const planned = (command: string) =>
      ShellPlan.plan(
        { command, workdir: setting.root, parsed: parse(command, grammar) },
        {
          places: setting.places,
          table: BashArity.DEFAULT,
          sandboxed: false,
          autoAllow: false,
          check: (action, resources) =>
            Effect.succeed(new Map(resources.map((r) => [r, PermissionV2.evaluate(action, r, RULES).effect] as const))),
        },
      )
    const parseOnly = (command: string) => bare.parse(command)?.delete()
    const whole = (command: string) => PermissionV2.evaluate("bash", command, RULES).effect

    console.log(
      `load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(
          " ",
        )} on ${os.cpus().length} CPUs; shell ${setting.shell} (${grammar} grammar); CPU time, best of ${ROUNDS}`,
    )

    console.log("\n1. a typical command, planned as the leaf plans it")
    const n = gate ? 300 : 1000
    const typicalPlan = yield* timeEffect(() => planned(TYPICAL), n)
    const typicalVerdicts = time(() => verdicts(TYPICAL), n)
    const typicalParse = time(() => parseOnly(TYPICAL), n)
    const typicalWhole = time(() => whole(TYPICAL), n * 10)
    console.log(`   planned (parse, segments, verdicts, ShellPlan.plan) ${us(typicalPlan)}`)
    console.log(`   parse + verdicts                                    ${us(typicalVerdicts)}`)
    console.log(`   bare tree-sitter parse                              ${us(typicalParse)}`)
    console.log(`   whole string as one bash resource                   ${us(typicalWhole)}`)
    console.log(
      `   planned / bare parse ${(typicalPlan / typicalParse).toFixed(1)}×, planned / whole string ${(
        typicalPlan / typicalWhole
      ).toFixed(0)}×; target ≤ 1000 µs: ${typicalPlan <= 1000 ? "met" : "NOT met"}`,
    )

    console.log("\n2. larger commands: planned and parse + verdicts, against the bare parse")
    for (const [label, command, count, plan] of [
      ["20 segments", join(20), gate ? 10 : 30, true],
      ["10 KB", ofSize(10_000), gate ? 3 : 10, false],
    ] as const) {
      const a = plan ? yield* timeEffect(() => planned(command), count) : undefined
      const b = time(() => verdicts(command), count)
      const c = time(() => parseOnly(command), count)
      console.log(
        `   ${label.padEnd(12)} ${String(command.length).padStart(6)} B ${String(parse(command).segments.length).padStart(4)} segments  planned ${a === undefined ? "(not run)".padStart(12) : us(a)}  verdicts ${us(b)}  bare parse ${us(c)}  verdicts/parse ${(b / c).toFixed(1)}×`,
      )
    }

    console.log("\n3. adversarial inputs: parse + verdicts, against the bare parse")
    const adversarial: Record<string, number> = {}
    for (const [label, command] of ADVERSARIAL) {
      const count = command.length > 20_000 ? (gate ? 2 : 3) : gate ? 5 : 20
      const a = time(() => verdicts(command), count)
      const c = time(() => parseOnly(command), count)
      const parsed = parse(command)
      const unresolved = parsed.segments.filter((s) => s.unresolved !== undefined).length
      adversarial[label] = a
      console.log(
        `   ${label.padEnd(26)} ${String(command.length).padStart(7)} B ${String(parsed.segments.length).padStart(5)} segments (${unresolved} unresolved)  ${(a / 1000).toFixed(2).padStart(8)} ms  bare parse ${(c / 1000).toFixed(2).padStart(7)} ms  ratio ${(a / c).toFixed(1)}×`,
      )
    }

    console.log("\n4. linearity (parse + verdicts)")
    const perKB: Array<number> = []
    for (const size of [1_000, 10_000, 100_000]) {
      const command = ofSize(size)
      const t = time(() => verdicts(command), size >= 100_000 ? 2 : gate ? 5 : 20)
      perKB.push(t / (command.length / 1000))
      console.log(
        `   ${String(size).padStart(7)} B  ${(t / 1000).toFixed(2).padStart(8)} ms  ${perKB.at(-1)!.toFixed(1)} µs/KB`,
      )
    }
    const linearity = perKB[2]! / perKB[0]!
    console.log(`   µs per KB, 100 KB vs 1 KB: ${linearity.toFixed(2)}× (1.0 = linear)`)

    console.log("\n5. the oracle's generator")
    const space = { base: root, root, project, outside: path.join(root, "outside"), home: path.join(root, "home") }
    const arbitrary = Grammar.cases(space as unknown as Parameters<typeof Grammar.cases>[0])
    const samples = gate ? 500 : 3000
    const start = process.cpuUsage()
    const generated = fc.sample(arbitrary, { numRuns: samples, seed: 42 })
    const used = process.cpuUsage(start)
    const perCase = (used.user + used.system) / samples
    const lengths = generated.map((c) => c.text.length)
    const planCases = generated.slice(0, gate ? 50 : 200)
    const planStart = process.cpuUsage()
    for (const item of planCases) yield* planned(item.text)
    const planUsed = process.cpuUsage(planStart)
    const perPlan = (planUsed.user + planUsed.system) / planCases.length
    console.log(
      `   ${samples} commands: ${us(perCase)} per command (mean ${(lengths.reduce((a, b) => a + b, 0) / samples).toFixed(0)} B); planning one costs ${us(perPlan)}, generating / planning ${(perCase / perPlan).toFixed(2)}×`,
    )

    fs.rmSync(root, { recursive: true, force: true })
    if (gate) {
      console.log(
        `GATE ${JSON.stringify({
          typical_plan_cpu_us: Number(typicalPlan.toFixed(1)),
          typical_plan_over_parse: Number((typicalPlan / typicalParse).toFixed(2)),
          nesting_3000_over_parse: Number(
            (adversarial["3,000 nested ( ) (bound)"]! / time(() => parseOnly(nested(3000)), 3)).toFixed(2),
          ),
          pipeline_1000_ms: Number((adversarial["1,000-stage pipeline"]! / 1000).toFixed(2)),
          linearity_100kb_over_1kb: Number(linearity.toFixed(2)),
        })}`,
      )
    }
  }),
)

Effect.runPromise(main).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
