/**
 * Processes as /proc shows them, for the tests of the process spawner, the sandbox and the keeper: which are alive,
 * which carry a marker in their command line, and the keeper tests' tree (a shell starting three sleeps, two in the
 * background, one of them under a nested shell, all named by a marker). Every wait is bounded by the test's own
 * deadline, never a speed claim.
 */
import * as fs from "node:fs"
import { expect } from "@effect/vitest"
import { Effect } from "effect"

/** A marker no other run shares. */
export const treeMarker = (): string => `${Date.now()}${Math.floor(Math.random() * 1e6)}`

/** The command: `sleep 10<marker>` sleeps for ages and names the run in /proc. */
export const treeCommand = (marker: string): string =>
  `sleep 10${marker} & sh -c 'sleep 10${marker}; :' & sleep 10${marker}; wait`

/** The state letter of `/proc/<pid>/stat`, or undefined when there is no such process. */
const state = (pid: string | number): string | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
  } catch {
    return undefined
  }
}

/** True while `pid` is a live (non-zombie) process. */
export const alive = (pid: number): boolean => {
  const letter = state(pid)
  return letter !== undefined && letter !== "Z" && letter !== "X"
}

/** Live (non-zombie) processes other than this one whose command line contains `marker`, as `<pid>: <cmdline>`. */
export const liveWithMarker = (marker: string): Array<string> =>
  fs.readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid || !alive(Number(entry))) return []
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ")
      return cmdline.includes(marker) ? [`${entry}: ${cmdline}`] : []
    } catch {
      return []
    }
  })

/** Polls every 20 ms while `holds()` and the deadline allow; returns the last reading. */
export const pollWhile = (holds: () => boolean, deadlineMs: number) =>
  Effect.promise(async () => {
    const deadline = Date.now() + deadlineMs
    while (holds() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    return holds()
  })

/** Polls /proc every 20 ms until `done(found)` or the deadline; returns the last reading. */
export const pollUntil = (marker: string, done: (found: ReadonlyArray<string>) => boolean, deadlineMs: number) =>
  Effect.gen(function* () {
    let found = liveWithMarker(marker)
    yield* pollWhile(() => !done((found = liveWithMarker(marker))), deadlineMs)
    return found
  })

const sleeps = (found: ReadonlyArray<string>): number => found.filter((line) => /: sleep 10/.test(line)).length

/** Waits (up to 30 s) until the tree's three sleeps run; fails the test if they do not. */
export const treeRunning = (marker: string) =>
  Effect.map(
    pollUntil(marker, (found) => sleeps(found) >= 3, 30_000),
    (found) => {
      expect(sleeps(found), `the tree did not start: ${JSON.stringify(found)}`).toBeGreaterThanOrEqual(3)
    },
  )

/** What is left of the tree once it is gone or 10 s have passed (empty when it is gone). */
export const treeLeft = (marker: string) => pollUntil(marker, (found) => found.length === 0, 10_000)
