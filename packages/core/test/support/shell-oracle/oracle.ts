/**
 * The shell oracle put together: a workspace, the real gate on it, a pool of sandbox runners, and
 *
 * - `check`: one command through the gate and — unless refused or unresolved — through the sandbox, compared;
 * - `survey`: many commands, several at a time (the gate works on one while the runners run others);
 * - `shrink`: a failing generated command replayed from its seed and index and shrunk by fast-check;
 * - `report`: a failure as text (command, classes, seed, shell, the difference, the gate's asks, the shell's output).
 *
 * The command runs with exactly what the bash tool would have spawned (its shell and arguments, its working
 * directory and environment overrides) over a fixed base environment (PATH, HOME = the fake home, TMPDIR = /tmp).
 */
import * as os from "node:os"
import { Effect, FastCheck as fc, Runtime, type Scope } from "effect"
import type { AppProcess } from "../../../src/index.js"
import * as Compare from "./compare.js"
import * as Fixture from "./fixture.js"
import * as Gate from "./gate.js"
import type { Case } from "./grammar.js"
import * as Sandbox from "./sandbox.js"

/** How long one command may run in the sandbox. */
export const COMMAND_TIMEOUT_MS = 8000

/** Everything a run of the oracle uses. */
export interface Oracle {
  readonly space: Fixture.Workspace
  readonly gate: Gate.Gate
  readonly pool: Sandbox.Pool
}

/** One judged command. */
export interface Result {
  readonly case: Case
  readonly view: Gate.View
  readonly reply?: Sandbox.Reply
  readonly verdict: Compare.Verdict
  /** Milliseconds spent in the gate (with its probes) and waiting for the sandbox. */
  readonly cost: { readonly gate: number; readonly sandbox: number }
}

/** The workspace, the real gate over it, and `runners` sandbox runners. */
export const make = (runners: number): Effect.Effect<Oracle, Sandbox.RunnerError, Scope.Scope> =>
  Effect.gen(function* () {
    const space = yield* Fixture.workspace
    const gate = yield* Gate.real(space)
    Fixture.freeze(space)
    const pool = yield* Sandbox.pool(runners, (index) => ({
      root: space.root,
      template: space.template,
      scratch: space.scratch(index),
    }))
    return { space, gate, pool }
  })

/** The argv the bash tool would have spawned. */
export const argvOf = (command: AppProcess.Command): ReadonlyArray<string> => {
  const args = command.args ?? []
  if (command.shell === undefined || command.shell === false) return [command.command, ...args]
  const shell = command.shell === true ? "/bin/sh" : command.shell
  return [shell, "-c", [command.command, ...args].join(" ")]
}

const environment = (space: Fixture.Workspace, overrides: AppProcess.Command["env"]): Record<string, string> => {
  const env: Record<string, string | undefined> = {
    PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    HOME: space.home,
    TMPDIR: "/tmp",
    LANG: "C",
    USER: os.userInfo().username,
    LOGNAME: os.userInfo().username,
    SHELL: "/bin/sh",
    ...overrides,
  }
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))
}

/** Judges one command with `gate` (the real one unless a test passes another). */
export const check = (oracle: Oracle, item: Case, gate: Gate.Gate = oracle.gate): Effect.Effect<Result> =>
  Effect.gen(function* () {
    const started = Date.now()
    const view = yield* gate.view(item.text)
    const viewed = Date.now()
    const spawned = view.spawned
    if (view.outcome !== "ran" || view.unresolved.length > 0 || spawned === undefined) {
      const empty: Sandbox.Reply = {
        id: 0,
        exit: null,
        signal: null,
        timedOut: false,
        trace: "",
        output: "",
        changes: [],
      }
      const verdict = yield* Compare.compare(oracle.space, gate, item.text, view, empty)
      return { case: item, view, verdict, cost: { gate: Date.now() - started, sandbox: 0 } }
    }
    const reply = yield* oracle.pool
      .run({
        argv: argvOf(spawned),
        cwd: spawned.cwd ?? oracle.space.project,
        env: environment(oracle.space, spawned.env),
        timeoutMs: COMMAND_TIMEOUT_MS,
      })
      .pipe(Effect.either)
    const ran = Date.now()
    if (reply._tag === "Left") {
      const verdict: Compare.Verdict = {
        status: "fail",
        executed: [],
        missingPrograms: [],
        uncovered: [],
        problem: `the sandbox runner died: ${reply.left.reason}`,
      }
      return { case: item, view, verdict, cost: { gate: viewed - started, sandbox: ran - viewed } }
    }
    const verdict = yield* Compare.compare(oracle.space, gate, item.text, view, reply.right)
    const cost = { gate: viewed - started + (Date.now() - ran), sandbox: ran - viewed }
    return { case: item, view, reply: reply.right, verdict, cost }
  })

/** A result without its strace log (thousands of them are kept). */
const slim = (result: Result): Result =>
  result.reply === undefined ? result : { ...result, reply: { ...result.reply, trace: "" } }

/** Judges `items`, `concurrency` at a time, in order. */
export const survey = (oracle: Oracle, items: ReadonlyArray<Case>, concurrency: number) =>
  Effect.forEach(items, (item) => Effect.map(check(oracle, item), slim), { concurrency })

/** The commands fast-check generates for `seed`: run `i` of `fc.check(…, { seed, numRuns })` is element `i`. */
export const generate = (arbitrary: fc.Arbitrary<Case>, seed: number, runs: number): ReadonlyArray<Case> => {
  const out: Array<Case> = []
  fc.check(
    fc.property(arbitrary, (item) => {
      out.push(item)
      return true
    }),
    { seed, numRuns: runs },
  )
  return out
}

/**
 * Replays run `index` of `seed` and lets fast-check shrink it while it still fails and still holds a construct of
 * class `within` (so that each class keeps its own smallest command), for at most `budgetMs`. Returns the smallest
 * failing case found and its result (none when the replay itself passed).
 */
export const shrink = (
  oracle: Oracle,
  arbitrary: fc.Arbitrary<Case>,
  seed: number,
  runs: number,
  index: number,
  within: string,
  budgetMs: number,
) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    let smallest: Result | undefined
    const details = yield* Effect.promise(() =>
      fc.check(
        fc.asyncProperty(arbitrary, async (item) => {
          if (smallest !== undefined && !item.classes.includes(within)) return true
          const result = await Runtime.runPromise(runtime)(check(oracle, item))
          if (result.verdict.status !== "fail") return true
          if (smallest === undefined || item.text.length <= smallest.case.text.length) smallest = result
          return false
        }),
        { seed, numRuns: runs, path: String(index), interruptAfterTimeLimit: budgetMs, markInterruptAsFailure: false },
      ),
    )
    return { smallest, shrinks: details.numShrinks }
  })

const indent = (text: string) => text.replaceAll("\n", "\n    ")

/** A failure, readable. */
export const report = (result: Result, reproduce: string): string => {
  const v = result.verdict
  const shown = JSON.stringify(result.case.text)
  const lines = [
    `command: ${shown.length > 400 ? `${shown.slice(0, 200)} … ${shown.slice(-100)} (${result.case.text.length} characters)` : shown}`,
    `  classes: ${result.case.classes.join(", ")}`,
    `  reproduce: ${reproduce}`,
    ...(result.view.spawned === undefined
      ? []
      : [`  shell: ${JSON.stringify(argvOf(result.view.spawned).slice(0, -1))}`]),
    ...(v.problem === undefined ? [] : [`  problem: ${v.problem}`]),
    ...(v.missingPrograms.length === 0
      ? []
      : [`  executed but not among the gate's programs: ${v.missingPrograms.join(", ")}`]),
    ...v.uncovered.map((u) => `  ${u.kind} ${u.path}: no ${u.needs} resource covers it`),
    `  gate programs: ${result.view.programs.join(", ") || "(none)"}; executed: ${v.executed.join(", ") || "(none)"}`,
    `  gate asks: ${result.view.asks.join(" | ") || "(none)"}`,
    ...(result.reply === undefined || result.reply.output === ""
      ? []
      : [`  shell output: ${indent(result.reply.output.trimEnd().slice(0, 600))}`]),
  ]
  return lines.join("\n")
}
