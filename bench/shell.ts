/**
 * Shell command figures: parse (tree-sitter bash, WASM) + per-segment evaluation, against today's baseline in the
 * same run — the whole command string matched once as one `bash` resource.
 *   1. a typical command (`git status && npm test -- --watch`): target ≤ 1 ms.
 *   2. a 20-segment command.
 *   3. a 10 KB command (≈ 700 segments).
 *   4. linearity: 1 KB, 10 KB and 100 KB commands, time per KB.
 * Each figure prints µs per command for ours and for the baseline, and the ratio.
 *
 * Run: npx tsx bench/shell.ts
 */
import * as os from "node:os"
import { Effect } from "effect"
import { BashArity, PermissionV2, ShellCommand } from "@toolgate/core"

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
  "X=1 nohup node build.js > out.log 2>&1",
  "find . -name '*.ts' -exec wc -l {} \\;",
  "cd packages && ls",
  "bash -c 'echo inner; pwd'",
]

const join = (count: number) => Array.from({ length: count }, (_, i) => PIECES[i % PIECES.length]).join(" && ")
const ofSize = (bytes: number) => {
  let out = ""
  for (let i = 0; out.length < bytes; i++) out += (i === 0 ? "" : "; ") + PIECES[i % PIECES.length]
  return out
}

const main = Effect.gen(function* () {
  const parse = ShellCommand.makeParser(yield* ShellCommand.loadLanguage)

  const ours = (command: string) => {
    const verdicts = ShellCommand.evaluate(
      parse(command),
      (resource) => PermissionV2.evaluate("bash", resource, RULES).effect,
      (argv) => BashArity.pattern(argv),
    )
    let effect = "allow"
    for (const verdict of verdicts)
      if (verdict.effect !== "allow") effect = verdict.effect === "deny" ? "deny" : effect === "deny" ? "deny" : "ask"
    return effect
  }
  const baseline = (command: string) => PermissionV2.evaluate("bash", command, RULES).effect

  /** µs per call: the best of 5 rounds of `n` calls. */
  const time = (f: (command: string) => unknown, command: string, n: number) => {
    for (let i = 0; i < Math.min(n, 50); i++) f(command)
    let best = Infinity
    for (let round = 0; round < 5; round++) {
      const start = process.hrtime.bigint()
      for (let i = 0; i < n; i++) f(command)
      best = Math.min(best, Number(process.hrtime.bigint() - start) / 1000 / n)
    }
    return best
  }

  const row = (label: string, command: string, n: number) => {
    const a = time(ours, command, n)
    const b = time(baseline, command, n * 10)
    const segments = parse(command).segments.length
    console.log(
      `${label.padEnd(28)} ${String(command.length).padStart(7)} B ${String(segments).padStart(5)} segments  ` +
        `ours ${a.toFixed(1).padStart(9)} µs  whole-string ${b.toFixed(2).padStart(8)} µs  ratio ${(a / b).toFixed(0)}×`,
    )
    return a
  }

  // The machine may be shared: absolute times scale with its load, the ratios much less.
  console.log(
    `load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")} on ${os.cpus().length} CPUs`,
  )
  console.log("1-3. parse + per-segment evaluation vs one whole-string evaluation (best of 5)")
  const typical = row("typical", "git status && npm test -- --watch", 2000)
  row("20 segments", join(20), 300)
  row("10 KB", ofSize(10_000), 30)
  console.log(`typical command: ${typical.toFixed(1)} µs (target ≤ 1000 µs): ${typical <= 1000 ? "met" : "NOT met"}`)

  console.log("\n4. linearity")
  const perKB: Array<number> = []
  for (const size of [1_000, 10_000, 100_000]) {
    const command = ofSize(size)
    const us = time(ours, command, size >= 100_000 ? 3 : 20)
    perKB.push(us / (command.length / 1000))
    console.log(
      `${String(size).padStart(7)} B  ${(us / 1000).toFixed(2).padStart(8)} ms  ${(us / (command.length / 1000)).toFixed(1)} µs/KB`,
    )
  }
  console.log(`µs per KB, 100 KB vs 1 KB: ${(perKB[2]! / perKB[0]!).toFixed(2)}× (1.0 = linear)`)
})

Effect.runPromise(main).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
