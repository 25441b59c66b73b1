/**
 * The differential oracle of the shell gate (docs/shell.md): fast-check generates commands from a grammar of shell
 * constructs (`support/shell-oracle/grammar.ts`), the real bash tool judges each one (every action asks, every ask
 * answered once), and each command the gate neither refused nor left unresolved runs for real in bubblewrap under
 * strace, in a throwaway copy of a fixture project next to a throwaway outside folder. Every program the shell
 * executed must be among the gate's programs, and every file it created, changed or removed must be covered by the
 * gate's write resources. No allow-list: a hole fails the run.
 *
 * `TOOLGATE_ORACLE_SEED` (default: random, printed) and `TOOLGATE_ORACLE_RUNS` (default 2000) reproduce a run;
 * a failure prints the shrunk command, the seed and index that replay it, and the difference.
 * `TOOLGATE_ORACLE_DUMP=FILE` also writes every failing command with its verdict and the gate's view as JSON.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Grammar from "./support/shell-oracle/grammar.js"
import * as Oracle from "./support/shell-oracle/oracle.js"
import * as Sandbox from "./support/shell-oracle/sandbox.js"

const SEED =
  process.env.TOOLGATE_ORACLE_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.TOOLGATE_ORACLE_SEED)
const RUNS = Number(process.env.TOOLGATE_ORACLE_RUNS ?? 2000)
/** Two runners and the gate working on a third command meanwhile: what a loaded 2-core machine sustains. */
const RUNNERS = Number(process.env.TOOLGATE_ORACLE_RUNNERS ?? 2)
const CONCURRENCY = RUNNERS + 1
/** At most this many failures (the first of each class) are shrunk, each for at most this long. */
const SHRUNK = 6
const SHRINK_BUDGET_MS = 30_000

const unavailable = process.platform === "linux" ? Sandbox.unavailable() : "the oracle needs Linux"
if (unavailable !== undefined) console.warn(`shell-oracle stress: skipped: ${unavailable}`)

const mean = (values: ReadonlyArray<number>): string =>
  values.length === 0 ? "-" : (values.reduce((a, b) => a + b, 0) / values.length).toFixed(0)

const primary = (item: Grammar.Case): string => item.classes.find((c) => c !== "benign") ?? "benign"

describe.skipIf(unavailable !== undefined)("the shell gate against what the shell really does", () => {
  it.live(
    `${RUNS} generated commands: every program executed and every file changed is among what the gate asked`,
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const oracle = yield* Effect.orDie(Oracle.make(RUNNERS))
          const arbitrary = Grammar.cases(oracle.space)
          const cases = Oracle.generate(arbitrary, SEED, RUNS)
          const started = Date.now()
          const results = yield* Oracle.survey(oracle, cases, CONCURRENCY)
          const elapsed = (Date.now() - started) / 1000

          const count = (status: string) => results.filter((r) => r.verdict.status === status).length
          const failures = results.map((r, index) => ({ r, index })).filter(({ r }) => r.verdict.status === "fail")
          const byClass = new Map<string, number>()
          for (const { r } of failures) {
            for (const c of r.case.classes) byClass.set(c, (byClass.get(c) ?? 0) + 1)
          }
          console.log(
            [
              `shell oracle: seed ${SEED}, ${RUNS} commands in ${elapsed.toFixed(1)} s` +
                ` (${((elapsed * 1000) / RUNS).toFixed(0)} ms per command, ${RUNNERS} runners)`,
              `  pass ${count("pass")}, refused ${count("refused")}, unresolved ${count("unresolved")}, fail ${failures.length}` +
                `; ${results.filter((r) => r.reply?.timedOut === true).length} timed out`,
              `  mean per command: gate ${mean(results.map((r) => r.cost.gate))} ms, sandbox ${mean(
                results.filter((r) => r.reply !== undefined).map((r) => r.cost.sandbox),
              )} ms (of which the command under strace ${mean(
                results.flatMap((r) => (r.reply?.timings === undefined ? [] : [r.reply.timings.run])),
              )} ms)`,
              ...(failures.length === 0
                ? []
                : [
                    `  failing commands per class: ${[...byClass]
                      .sort((a, b) => b[1] - a[1])
                      .map(([c, n]) => `${c} ${n}`)
                      .join(", ")}`,
                  ]),
            ].join("\n"),
          )
          const dump = process.env.TOOLGATE_ORACLE_DUMP
          if (dump !== undefined) {
            fs.writeFileSync(
              dump,
              JSON.stringify(
                failures.map(({ r, index }) => ({ index, case: r.case, verdict: r.verdict, view: r.view })),
                null,
                1,
              ),
            )
          }
          if (failures.length === 0) return

          const firsts = new Map<string, { r: Oracle.Result; index: number }>()
          for (const failure of failures) {
            const c = primary(failure.r.case)
            if (!firsts.has(c)) firsts.set(c, failure)
          }
          const reports: Array<string> = []
          for (const [within, { r, index }] of [...firsts].slice(0, SHRUNK)) {
            const shrunk = yield* Oracle.shrink(oracle, arbitrary, SEED, RUNS, index, within, SHRINK_BUDGET_MS)
            const reproduce = `TOOLGATE_ORACLE_SEED=${SEED} TOOLGATE_ORACLE_RUNS=${RUNS} (run ${index}, ${shrunk.shrinks} shrinks)`
            reports.push(Oracle.report(shrunk.smallest ?? r, reproduce))
          }
          const message = [
            `${failures.length} of ${RUNS} commands did something the gate did not list (seed ${SEED}).`,
            `The first failure of ${reports.length} classes, shrunk:`,
            ...reports,
          ].join("\n\n")
          console.log(message)
          expect(failures.length, message).toBe(0)
        }),
      ),
    { timeout: 1_800_000 },
  )
})
