/**
 * Faults of the process spawner: a runner killed with SIGKILL mid-command takes the command's whole process tree with
 * it (through the keeper, see docs/shell.md), sandboxed or not. Real runner processes, real shells, /proc.
 */
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Children from "../support/children.js"
import { alive, pollWhile, treeCommand, treeLeft, treeMarker, treeRunning } from "../support/process-tree.js"
import { tempDir } from "../support/location.js"

const bwrapWorks =
  ChildProcess.spawnSync(
    "bwrap",
    ["--die-with-parent", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"],
    { stdio: "ignore" },
  ).status === 0
if (!bwrapWorks)
  console.warn("faults/app-process: bubblewrap cannot create namespaces here; the sandboxed case is skipped")

/**
 * Starts a runner whose bash call runs a shell with three descendants (two background sleeps, one of them under a
 * nested shell, and a foreground sleep), waits until all of them run, kills the runner with SIGKILL and returns
 * what is left of the command (`treeLeft`).
 */
const killRunnerMidSleep = (mode: "none" | "bubblewrap") =>
  Effect.scoped(
    Effect.gen(function* () {
      const marker = treeMarker()
      const runner = yield* Children.scoped(Children.fixture("bash-runner.ts"), [
        yield* tempDir(),
        yield* tempDir(),
        mode,
        treeCommand(marker),
      ])
      expect(yield* Children.nextLine(runner)).toBe("started")
      // The shell, the nested shell and the three sleeps (bwrap's own processes carry the marker too).
      yield* treeRunning(marker)

      runner.process.kill("SIGKILL")
      expect((yield* Children.exited(runner)).signal).toBe("SIGKILL")
      return yield* treeLeft(marker)
    }),
  )

describe("a runner killed with SIGKILL mid-command", () => {
  it.live(
    "takes the command's shell and every descendant with it",
    () =>
      Effect.gen(function* () {
        expect(yield* killRunnerMidSleep("none")).toEqual([])
      }),
    60_000,
  )

  it.live.skipIf(!bwrapWorks)(
    "takes a sandboxed command with it too",
    () =>
      Effect.gen(function* () {
        expect(yield* killRunnerMidSleep("bubblewrap")).toEqual([])
      }),
    60_000,
  )
})

/**
 * The runner's children as its first command sees them the moment it starts: `keeper <pid>` for a sibling that is
 * already the keeper's `/bin/sh` (its NUL-separated command line read by the shell's own `read`, no fork in
 * between), then `end`. A keeper started after the command would not be there yet, or still be a fork of node.
 */
const SEE_KEEPER = `read -r kids < /proc/$PPID/task/$PPID/children
for k in $kids; do
  [ "$k" = "$$" ] && continue
  { read -r c < "/proc/$k/cmdline"; } 2>/dev/null || continue
  case $c in '/bin/sh-clive='*) echo "keeper $k" ;; esac
done
echo end`

/** SEE_KEEPER, and the keeper it found killed with SIGKILL (as someone else might). */
const KILL_KEEPER = SEE_KEEPER.replace('echo "keeper $k"', 'echo "keeper $k"; kill -s KILL "$k"')

/** The live keepers among `pid`'s children (a keeper's command line begins `/bin/sh -c live=`). */
const keepersOf = (pid: number): Array<number> => {
  let kids: Array<string>
  try {
    kids = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ").filter(Boolean)
  } catch {
    return []
  }
  return kids
    .map(Number)
    .filter((kid) => alive(kid))
    .filter((kid) => {
      try {
        return fs.readFileSync(`/proc/${kid}/cmdline`, "utf8").startsWith("/bin/sh\0-c\0live=")
      } catch {
        return false
      }
    })
}

const childrenListed = fs.existsSync(`/proc/${process.pid}/task/${process.pid}/children`)
if (!childrenListed)
  console.warn(
    "faults/app-process: this kernel has no /proc/<pid>/task/<tid>/children; the keeper-order case is skipped",
  )

describe("the keeper", () => {
  it.live.skipIf(!childrenListed)(
    "is running before a fresh runner's first command starts, and ends with the runner",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const runner = yield* Children.scoped(Children.fixture("group-runner.ts"), [SEE_KEEPER])
          expect(yield* Children.nextLine(runner)).toBe("started")
          const seen = [yield* Children.nextLine(runner)]
          while (seen[seen.length - 1] !== "end") seen.push(yield* Children.nextLine(runner))
          expect(seen).toHaveLength(2)
          expect(seen[0]).toMatch(/^keeper \d+$/)
          const keeper = Number(seen[0]!.slice("keeper ".length))
          expect(fs.readFileSync(`/proc/${keeper}/cmdline`, "utf8")).toContain("while IFS= read -r line")
          runner.process.kill("SIGKILL")
          yield* Children.exited(runner)
          // End of file on its pipe: it kills what is registered (nothing here) and exits.
          expect(yield* pollWhile(() => alive(keeper), 5000)).toBe(false)
        }),
      ),
    60_000,
  )

  it.live.skipIf(!childrenListed)(
    "killed by someone, is replaced before the next command, which still dies with its runner",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const marker = treeMarker()
          const tree = treeCommand(marker)
          const runner = yield* Children.scoped(Children.fixture("group-runner.ts"), [KILL_KEEPER, tree])
          const first = yield* Children.nextLine(runner)
          expect(first).toMatch(/^keeper \d+$/)
          expect(yield* Children.nextLine(runner)).toBe("end")
          expect(yield* Children.nextLine(runner)).toBe("started")
          expect(alive(Number(first.slice("keeper ".length)))).toBe(false)
          yield* treeRunning(marker)
          runner.process.kill("SIGKILL")
          yield* Children.exited(runner)
          expect(yield* treeLeft(marker)).toEqual([])
        }),
      ),
    60_000,
  )

  it.live.skipIf(!childrenListed)(
    "killed during a run, is replaced at once and told the run's group, which still dies with its runner",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const marker = treeMarker()
          const tree = treeCommand(marker)
          const runner = yield* Children.scoped(Children.fixture("group-runner.ts"), [tree])
          expect(yield* Children.nextLine(runner)).toBe("started")
          yield* treeRunning(marker)
          const pid = runner.process.pid!
          const [first] = keepersOf(pid)
          expect(first).toBeDefined()
          process.kill(first!, "SIGKILL")
          // No further spawn comes: the runner replaces the keeper when it learns the first one is gone.
          expect(yield* pollWhile(() => keepersOf(pid).filter((keeper) => keeper !== first).length === 0, 10_000)).toBe(
            false,
          )
          runner.process.kill("SIGKILL")
          yield* Children.exited(runner)
          expect(yield* treeLeft(marker)).toEqual([])
        }),
      ),
    60_000,
  )
})
