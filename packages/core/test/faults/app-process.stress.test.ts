/**
 * Runners killed with SIGKILL mid-command, in rounds, under the stress project's load: every round's command tree
 * (a shell, a nested shell, three sleeps) is gone within the round's own deadline. Each round is a fresh runner
 * (test/fixtures/group-runner.ts, the smallest one, bundled once per run like every fixture); in even rounds the tree is the runner's
 * first command, so its keeper is started for it (the case that once left the tree alive: the keeper was started
 * after the command and the runner was killed before it had told the keeper the group), in odd rounds a second
 * command after one that ended (the keeper already running). The whole runner (Core, Runner, bash) is killed the
 * same way in app-process.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Children from "../support/children.js"
import { treeCommand, treeMarker, treeRunning, treeLeft } from "../support/process-tree.js"

const ROUNDS = 12

describe("runners killed with SIGKILL, in rounds", () => {
  it.live(`${ROUNDS} rounds: nothing of the command outlives its runner`, () =>
    Effect.gen(function* () {
      const runnerScript = Children.fixture("group-runner.ts")
      const left: Array<string> = []
      for (let round = 0; round < ROUNDS; round++) {
        yield* Effect.scoped(
          Effect.gen(function* () {
            const marker = treeMarker()
            const tree = treeCommand(marker)
            const runner = yield* Children.scoped(runnerScript, round % 2 === 0 ? [tree] : ["echo first", tree])
            if (round % 2 === 1) expect(yield* Children.nextLine(runner)).toBe("first")
            expect(yield* Children.nextLine(runner)).toBe("started")
            yield* treeRunning(marker)
            runner.process.kill("SIGKILL")
            yield* Children.exited(runner)
            left.push(...(yield* treeLeft(marker)))
          }),
        )
      }
      expect(left).toEqual([])
    }),
  )
})
