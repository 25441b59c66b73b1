/**
 * Check at use (see docs/trust/check-at-use.md): a child process swaps a parent directory and a file of the Location
 * for symlinks to an outside directory in a tight loop, while 600 writes and 600 reads run through the real `write`
 * and `read` tools (real Location, real PermissionV2 with rules that allow edits and reads inside; every ask is
 * rejected). Not one byte may land outside and no result may carry an outside byte.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, type Scope } from "effect"
import { type Config, FileMutation, type ToolRegistry, Tools, WriteTool } from "../../src/index.js"
import { tempDir } from "../support/location.js"
import { caller, realLocation } from "../support/check-at-use.js"

const OUTSIDE_MARK = "OUTSIDE_BYTES_9c41"
const OUTSIDE_NAME = "outside-only-name.txt"
const FILES = ["f0.txt", "f1.txt", "f2.txt", "f3.txt"]
const WRITES = 600
const READS = 600

const config: Config.Info = {
  permissions: [
    { action: "edit", resource: "race/*", effect: "allow" },
    { action: "edit", resource: "victim.txt", effect: "allow" },
    { action: "read", resource: "*", effect: "allow" },
  ],
}

/**
 * The swapper: renames `race` aside and puts a symlink to the outside directory in its place, and does the same
 * with `victim.txt` and an outside file, then swaps both back, as fast as it can until stdin closes. A directory
 * or file a write re-created in a gap is moved aside so the loop keeps going. Prints the number of swaps on exit.
 */
const SWAPPER = `
const fs = require("node:fs"), path = require("node:path")
const [root, outside] = process.argv.slice(1)
const race = path.join(root, "race"), raceReal = path.join(root, "race-real")
const victim = path.join(root, "victim.txt"), victimReal = path.join(root, "victim-real.txt")
let swaps = 0, extra = 0, running = true
const aside = (name) => { try { fs.renameSync(name, path.join(root, "extra-" + extra++)) } catch {} }
const swap = (name, real, target) => {
  try { fs.renameSync(name, real) } catch { return }
  try { fs.symlinkSync(target, name) } catch { aside(name); try { fs.symlinkSync(target, name) } catch {} }
  try { fs.unlinkSync(name) } catch { aside(name) }
  try { fs.renameSync(real, name) } catch { aside(name); try { fs.renameSync(real, name) } catch {} }
  swaps++
}
process.stdin.on("end", () => { running = false })
process.stdin.resume()
console.log("ready")
const loop = () => {
  const until = Date.now() + 20
  while (Date.now() < until) { swap(race, raceReal, outside); swap(victim, victimReal, path.join(outside, "secret.txt")) }
  if (running) setImmediate(loop)
  else { process.stdout.write("swaps " + swaps + "\\n"); process.exit(0) }
}
setImmediate(loop)
`

/** Every file below `dir` (not following links) with its bytes. */
const snapshot = (dir: string): Map<string, string> => {
  const entries = new Map<string, string>()
  const walk = (current: string) => {
    for (const name of fs.readdirSync(current)) {
      const full = path.join(current, name)
      const info = fs.lstatSync(full)
      if (info.isDirectory()) walk(full)
      else
        entries.set(
          path.relative(dir, full),
          info.isSymbolicLink() ? `link:${fs.readlinkSync(full)}` : fs.readFileSync(full, "latin1"),
        )
    }
  }
  walk(dir)
  return entries
}

const startSwapper = (root: string, outside: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly stop: () => Promise<number>; readonly child: ChildProcess }, Error>((resume) => {
      const child = spawn(process.execPath, ["-e", SWAPPER, root, outside], { stdio: ["pipe", "pipe", "inherit"] })
      let output = ""
      const lines: Array<(line: string) => void> = []
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString()
        let end: number
        while ((end = output.indexOf("\n")) !== -1) {
          const line = output.slice(0, end)
          output = output.slice(end + 1)
          lines.shift()?.(line)
        }
      })
      child.on("error", (error) => resume(Effect.fail(error)))
      // The swapper spins; at the lowest priority it still swaps thousands of times without starving the tools.
      if (child.pid !== undefined) os.setPriority(child.pid, 19)
      lines.push(() =>
        resume(
          Effect.succeed({
            stop: () =>
              new Promise<number>((done) => {
                lines.push((line) => done(Number(line.replace("swaps ", ""))))
                child.stdin.end()
              }),
            child,
          }),
        ),
      )
    }),
    ({ child }) =>
      Effect.sync(() => {
        if (child.exitCode === null) child.kill("SIGKILL")
      }),
  )

const text = (settled: ToolRegistry.Settlement) => JSON.stringify(settled)

/** Plants the Location and the outside directory; returns the outside snapshot taken before the race. */
const plant = (root: string, outside: string) => {
  fs.mkdirSync(path.join(root, "race"))
  for (const name of FILES) {
    fs.writeFileSync(path.join(root, "race", name), "inside\n")
    fs.writeFileSync(path.join(outside, name), `${OUTSIDE_MARK} ${name}\n`)
  }
  fs.writeFileSync(path.join(root, "victim.txt"), "inside victim\n")
  fs.writeFileSync(path.join(outside, "secret.txt"), `${OUTSIDE_MARK} secret\n`)
  fs.writeFileSync(path.join(outside, OUTSIDE_NAME), `${OUTSIDE_MARK} name\n`)
  return snapshot(outside)
}

/**
 * Runs `writes` writes (through the tool `writeTool`) and `reads` reads interleaved, six at a time, while the
 * swapper runs; `setup` may register extra tools first.
 */
const race = (
  root: string,
  outside: string,
  options: { readonly writes: number; readonly reads: number; readonly writeTool: string },
  setup: Effect.Effect<void, never, Layer.Layer.Success<ReturnType<typeof realLocation>> | Scope.Scope> = Effect.void,
) =>
  Effect.gen(function* () {
    yield* setup
    const settle = yield* caller
    // Warm the stack before the swapping starts.
    yield* settle("read", { path: "victim.txt" })
    const swapper = yield* startSwapper(root, outside)
    const writes = Array.from({ length: options.writes }, (_, i) =>
      settle(options.writeTool, {
        path: i % 5 === 4 ? "victim.txt" : `race/${FILES[i % FILES.length]}`,
        content: `written ${i}\n`,
      }),
    )
    const reads = Array.from({ length: options.reads }, (_, i) =>
      settle("read", { path: i % 6 === 5 ? "race" : i % 6 === 4 ? "victim.txt" : `race/${FILES[i % 4]}` }),
    )
    const interleaved = writes.flatMap((write, i) => (reads[i] === undefined ? [write] : [write, reads[i]!]))
    const settled = yield* Effect.all(interleaved, { concurrency: 6 })
    const swaps = yield* Effect.promise(() => swapper.stop())
    return { settled, swaps }
  }).pipe(Effect.provide(realLocation(root, config)))

/**
 * Descriptor operations that follow every link and verify nothing (plain path-based opens): what a check made only
 * before use amounts to.
 */
const unchecked: FileMutation.Io = (() => {
  const { O_NOFOLLOW, O_EXCL } = fs.constants
  const attempt = <A>(target: string, run: () => A) =>
    Effect.try({
      try: run,
      catch: (error) => FileMutation.io.systemError("open", target, error as NodeJS.ErrnoException),
    })
  return {
    ...FileMutation.io,
    openDirectory: (dir) => attempt(dir, () => ({ fd: fs.openSync(dir, "r"), path: dir, via: dir })),
    ensureDirectory: (dir) =>
      attempt(dir, () => {
        fs.mkdirSync(dir, { recursive: true })
        return { fd: fs.openSync(dir, "r"), path: dir, via: dir }
      }),
    openIn: (directory, name, flag, mode) => {
      const file = path.join(directory.path, name)
      return attempt(file, () => ({ fd: fs.openSync(file, flag & ~(O_NOFOLLOW | O_EXCL), mode), path: file }))
    },
  }
})()

describe("check at use: a swapping race", () => {
  it.live(
    `${WRITES} writes and ${READS} reads while a child swaps a parent directory and a file for outside symlinks`,
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const root = yield* tempDir()
          const outside = yield* tempDir("toolgate-outside-")
          const before = plant(root, outside)
          const results = yield* race(root, outside, { writes: WRITES, reads: READS, writeTool: "write" })

          // Nothing outside changed: same names, same bytes, no new file.
          expect(snapshot(outside)).toEqual(before)
          // No result carries an outside byte or an outside-only name.
          const leaked = results.settled.filter((settled) => {
            const body = text(settled)
            return body.includes(OUTSIDE_MARK) || body.includes(OUTSIDE_NAME)
          })
          expect(leaked).toEqual([])
          // The race really ran: the swapper swapped, some calls were refused and some went through.
          const failed = results.settled.filter((settled) => settled.result.type === "error").length
          const succeeded = results.settled.length - failed
          console.log(
            `race: ${results.swaps} swaps, ${succeeded} calls succeeded, ${failed} refused (of ${results.settled.length})`,
          )
          expect(results.swaps).toBeGreaterThan(50)
          expect(failed).toBeGreaterThan(0)
          expect(succeeded).toBeGreaterThan(0)
          // Every write that succeeded landed inside.
          const inside = snapshot(root)
          expect([...inside.values()].some((bytes) => bytes.startsWith("written "))).toBe(true)
        }),
      ),
    60_000,
  )

  it.live(
    "the same race lands writes outside when the descriptor checks are left out (meta-test)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const root = yield* tempDir()
          const outside = yield* tempDir("toolgate-outside-")
          const before = plant(root, outside)
          // The shipped write leaf on unchecked descriptor operations, registered as `write_unchecked`.
          const register = Effect.gen(function* () {
            const tool = yield* WriteTool.tool.pipe(
              Effect.provideServiceEffect(FileMutation.Service, FileMutation.makeWith(unchecked)),
            )
            yield* (yield* Tools.Service).register({ write_unchecked: tool })
          }).pipe(Effect.orDie)
          yield* race(root, outside, { writes: 400, reads: 0, writeTool: "write_unchecked" }, register)
          expect(snapshot(outside)).not.toEqual(before)
        }),
      ),
    60_000,
  )
})
