/**
 * Runners killed with SIGKILL mid-command, in rounds, under the stress project's load: every round's command tree
 * (a shell, a nested shell, three sleeps) is gone within the round's own deadline. Each round is a fresh runner
 * (test/fixtures/group-runner.ts, the smallest one, bundled once per run like every fixture); in even rounds the tree is the runner's
 * first command, so its keeper is started for it (the case that once left the tree alive: the keeper was started
 * after the command and the runner was killed before it had told the keeper the group), in odd rounds a second
 * command after one that ended (the keeper already running). The whole runner (Core, Runner, bash) is killed the
 * same way in app-process.test.ts.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Children from "../support/children.js"

const ROUNDS = 12

/** Live (non-zombie) processes other than this one whose command line contains `marker`. */
const liveWithMarker = (marker: string): Array<string> =>
  fs.readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) return []
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
      if (state === "Z" || state === "X") return []
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ")
      return cmdline.includes(marker) ? [`${entry}: ${cmdline}`] : []
    } catch {
      return []
    }
  })

const pollUntil = (marker: string, done: (found: ReadonlyArray<string>) => boolean, ms: number) =>
  Effect.promise(async () => {
    const deadline = Date.now() + ms
    let found = liveWithMarker(marker)
    while (!done(found) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      found = liveWithMarker(marker)
    }
    return found
  })

describe("runners killed with SIGKILL, in rounds", () => {
  it.live(`${ROUNDS} rounds: nothing of the command outlives its runner`, () =>
    Effect.gen(function* () {
      const runnerScript = Children.fixture("group-runner.ts")
      const left: Array<string> = []
      for (let round = 0; round < ROUNDS; round++) {
        yield* Effect.scoped(
          Effect.gen(function* () {
            const marker = `${Date.now()}${round}${Math.floor(Math.random() * 1e6)}`
            const tree = `sleep 10${marker} & sh -c 'sleep 10${marker}; :' & sleep 10${marker}; wait`
            const runner = yield* Children.scoped(runnerScript, round % 2 === 0 ? [tree] : ["echo first", tree])
            if (round % 2 === 1) expect(yield* Children.nextLine(runner)).toBe("first")
            expect(yield* Children.nextLine(runner)).toBe("started")
            const running = yield* pollUntil(
              marker,
              (found) => found.filter((line) => /: sleep 10/.test(line)).length >= 3,
              30_000,
            )
            expect(running.filter((line) => /: sleep 10/.test(line)).length).toBeGreaterThanOrEqual(3)
            runner.process.kill("SIGKILL")
            yield* Children.exited(runner)
            left.push(...(yield* pollUntil(marker, (found) => found.length === 0, 5000)))
          }),
        )
      }
      expect(left).toEqual([])
    }),
  )
})
