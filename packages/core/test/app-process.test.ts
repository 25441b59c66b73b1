import * as fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, FastCheck } from "effect"
import { AppProcess } from "../src/index.js"
import { liveWithMarker } from "./support/process-tree.js"

const run = (command: AppProcess.Command, options?: AppProcess.RunOptions) =>
  Effect.flatMap(AppProcess.Service, (service) => service.run(command, options)).pipe(Effect.provide(AppProcess.layer))

const sh = (script: string): AppProcess.Command => ({ command: script, shell: "/bin/sh" })

const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString("utf8")

/** Live (non-zombie) processes whose process group is `pgid`, read from /proc. */
const liveInGroup = (pgid: number): Array<string> => {
  const found: Array<string> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") found.push(`${entry} ${stat}`)
  }
  return found
}

/** Waits until `path` holds "<pid>\nready": the shell's `$$`, which is also its process group id. */
const readPid = (path: string) =>
  Effect.promise(async () => {
    for (let i = 0; i < 400; i++) {
      const lines = fs.existsSync(path) ? fs.readFileSync(path, "utf8").trim().split("\n") : []
      if (lines[1] === "ready") return Number(lines[0])
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    throw new Error(`no pid in ${path}`)
  })

/** A shell that records its pid, forks two long-lived grandchildren and waits for them. */
const forking = (pidFile: string, marker: string) =>
  `echo $$ > ${pidFile}; sleep 10${marker} & sleep 10${marker} & echo ready >> ${pidFile}; wait`

const tmpFile = (name: string) => `${fs.mkdtempSync("/tmp/toolgate-process-")}/${name}`

const uniqueMarker = () => `${Date.now()}${Math.floor(Math.random() * 1e6)}`

describe("AppProcess", () => {
  it.live("truncates stdout when maxOutputBytes is set", () =>
    Effect.gen(function* () {
      const result = yield* run(sh("printf 0123456789"), { maxOutputBytes: 5 })
      expect(text(result.stdout)).toBe("01234")
      expect(result.stdout.length).toBe(5)
      expect(result.stdoutTruncated).toBe(true)
      expect(result.stderrTruncated).toBe(false)
      expect(result.exitCode).toBe(0)
      expect(result.output).toBeUndefined()
    }),
  )

  it.live("truncates stderr when maxErrorBytes is set", () =>
    Effect.gen(function* () {
      const result = yield* run(sh("printf 0123456789 >&2"), { maxErrorBytes: 5 })
      expect(text(result.stderr)).toBe("01234")
      expect(result.stderr.length).toBe(5)
      expect(result.stderrTruncated).toBe(true)
      expect(result.stdoutTruncated).toBe(false)
    }),
  )

  it.live("output of exactly max bytes is not truncated", () =>
    Effect.gen(function* () {
      const result = yield* run(sh("printf 01234"), { maxOutputBytes: 5 })
      expect(text(result.stdout)).toBe("01234")
      expect(result.stdoutTruncated).toBe(false)
    }),
  )

  it.live("captures stdout and stderr in emission order", () =>
    Effect.gen(function* () {
      const result = yield* run(
        sh("printf 'out 1\\n'; sleep 0.2; printf 'err 1\\n' >&2; sleep 0.2; printf 'out 2\\n'"),
        {
          combineOutput: true,
        },
      )
      expect(text(result.output)).toBe("out 1\nerr 1\nout 2\n")
      expect(result.stdout.length).toBe(0)
      expect(result.stderr.length).toBe(0)
      expect(result.outputTruncated).toBe(false)
      expect(result.stdoutTruncated).toBe(false)
      expect(result.stderrTruncated).toBe(false)
    }),
  )

  it.live("runs argv commands without a shell and reports exit codes, cwd and env", () =>
    Effect.gen(function* () {
      const dir = fs.realpathSync(fs.mkdtempSync("/tmp/toolgate-process-"))
      const result = yield* run({
        command: "/bin/sh",
        args: ["-c", 'printf "%s|%s" "$PWD" "$TOOLGATE_X"; exit 3'],
        cwd: dir,
        env: { TOOLGATE_X: "y" },
      })
      expect(result.exitCode).toBe(3)
      expect(text(result.stdout)).toBe(`${dir}|y`)
      expect(result.command).toBe('/bin/sh -c printf "%s|%s" "$PWD" "$TOOLGATE_X"; exit 3')
    }),
  )

  it.live("an undefined env value removes the variable", () =>
    Effect.gen(function* () {
      process.env.TOOLGATE_PROCESS_TEST = "inherited"
      const inherited = yield* run(sh('printf "[%s]" "$TOOLGATE_PROCESS_TEST"'))
      const removed = yield* run({
        ...sh('printf "[%s]" "$TOOLGATE_PROCESS_TEST"'),
        env: { TOOLGATE_PROCESS_TEST: undefined },
      })
      delete process.env.TOOLGATE_PROCESS_TEST
      expect(text(inherited.stdout)).toBe("[inherited]")
      expect(text(removed.stdout)).toBe("[]")
    }),
  )

  it.live("a child killed by a signal reports 128 + the signal number", () =>
    Effect.gen(function* () {
      const result = yield* run(sh("kill -9 $$"))
      expect(result.exitCode).toBe(137)
    }),
  )

  it.live("stdin is ignored unless input is given", () =>
    Effect.gen(function* () {
      const ignored = yield* run(sh("cat; echo done"))
      expect(text(ignored.stdout)).toBe("done\n")
      const fed = yield* run(sh("cat"), { stdin: "fed" })
      expect(text(fed.stdout)).toBe("fed")
    }),
  )

  it.live("a spawn failure is an AppProcessError naming the command", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(run({ command: "/nonexistent/toolgate-binary" }))
      expect(error._tag).toBe("AppProcess.AppProcessError")
      expect(error.message).toMatch(/^Command failed: \/nonexistent\/toolgate-binary: .*ENOENT/)
    }),
  )

  it.live("requireSuccess message", () =>
    Effect.gen(function* () {
      const result = yield* run(sh("echo boom >&2; exit 1"))
      const error = yield* Effect.flip(AppProcess.requireSuccess(result))
      expect(error.message).toContain("Command failed (exit 1)")
      expect(error.message).toBe("Command failed (exit 1): echo boom >&2; exit 1: boom")
      expect(error.exitCode).toBe(1)
      const ok = yield* run(sh("true"))
      expect(yield* AppProcess.requireSuccess(ok)).toBe(ok)
    }),
  )

  it("formats AppProcessError messages", () => {
    expect(new AppProcess.AppProcessError({ command: "ls" }).message).toBe("Command failed: ls")
    expect(new AppProcess.AppProcessError({ command: "ls", exitCode: 2 }).message).toBe("Command failed (exit 2): ls")
    expect(new AppProcess.AppProcessError({ command: "ls", cause: new Error("Timed out") }).message).toBe(
      "Command failed: ls: Timed out",
    )
    expect(new AppProcess.AppProcessError({ command: "ls", exitCode: 1, stderr: "  \n", cause: "x" }).message).toBe(
      "Command failed (exit 1): ls: x",
    )
  })

  it.live("timeout cleans up the child process, including grandchildren", () =>
    Effect.gen(function* () {
      const marker = uniqueMarker()
      const pidFile = tmpFile("pid")
      const fiber = yield* Effect.fork(
        Effect.flip(run(sh(forking(pidFile, marker)), { timeout: Duration.millis(800) })),
      )
      const pgid = yield* readPid(pidFile)
      expect(liveInGroup(pgid).length).toBeGreaterThanOrEqual(3)
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("AppProcess.TimeoutError")
      expect(error.message).toBe(`Command timed out after 800 ms: ${forking(pidFile, marker)}`)
      // The run returns only once the whole group is gone.
      expect(liveInGroup(pgid)).toEqual([])
      expect(liveWithMarker(`sleep 10${marker}`)).toEqual([])
    }),
  )

  it.live("interruption cleans up the child process", () =>
    Effect.gen(function* () {
      const marker = uniqueMarker()
      const pidFile = tmpFile("pid")
      const fiber = yield* Effect.fork(run(sh(forking(pidFile, marker))))
      const pgid = yield* readPid(pidFile)
      expect(liveInGroup(pgid).length).toBeGreaterThanOrEqual(3)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      // Fiber.interrupt waits for the finalizer, which waits for the group.
      expect(liveInGroup(pgid)).toEqual([])
      expect(liveWithMarker(`sleep 10${marker}`)).toEqual([])
    }),
  )

  it.live("an abort signal fails the run and cleans up the group", () =>
    Effect.gen(function* () {
      const marker = uniqueMarker()
      const pidFile = tmpFile("pid")
      const controller = new AbortController()
      const fiber = yield* Effect.fork(Effect.flip(run(sh(forking(pidFile, marker)), { signal: controller.signal })))
      const pgid = yield* readPid(pidFile)
      controller.abort(new Error("stop now"))
      const error = yield* Fiber.join(fiber)
      expect(error.message).toBe(`Command failed: ${forking(pidFile, marker)}: stop now`)
      expect(liveInGroup(pgid)).toEqual([])
    }),
  )

  it.live("a group that ignores SIGTERM is killed with SIGKILL after the grace period", () =>
    Effect.gen(function* () {
      const marker = uniqueMarker()
      const pidFile = tmpFile("pid")
      const terms = tmpFile("terms")
      // The shell notes each SIGTERM and waits on: only a SIGKILL ends it.
      const script = `trap 'echo term >> ${terms}' TERM; echo $$ > ${pidFile}; sh -c "trap '' TERM; sleep 10${marker}" & echo ready >> ${pidFile}; while :; do wait; done`
      const fiber = yield* Effect.fork(Effect.flip(run(sh(script), { timeout: Duration.millis(300) })))
      const pgid = yield* readPid(pidFile)
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("AppProcess.TimeoutError")
      // SIGTERM came first and was survived (the trap ran), so the SIGKILL that followed the grace ended the group.
      expect(fs.readFileSync(terms, "utf8")).toBe("term\n")
      expect(liveInGroup(pgid)).toEqual([])
      expect(liveWithMarker(`sleep 10${marker}`)).toEqual([])
    }),
  )

  it.live("a command printing 50 MB keeps draining and captures exactly 1 MiB", () =>
    Effect.gen(function* () {
      const max = 1024 * 1024
      const result = yield* run(sh("head -c 52428800 /dev/zero | tr '\\0' x; echo tail >&2"), {
        combineOutput: true,
        maxOutputBytes: max,
        timeout: Duration.seconds(60),
      })
      expect(result.exitCode).toBe(0)
      expect(result.output?.length).toBe(max)
      expect(result.outputTruncated).toBe(true)
      expect(text(result.output).replace(/x/g, "")).toBe("")
    }),
  )

  it.live(
    "50 concurrent runs leave no children behind",
    () =>
      Effect.gen(function* () {
        const marker = uniqueMarker()
        const results = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          (i) => run(sh(`echo ${i}; : ${marker}`)),
          { concurrency: "unbounded" },
        )
        expect(results.map((result) => text(result.stdout))).toEqual(Array.from({ length: 50 }, (_, i) => `${i}\n`))
        expect(liveWithMarker(marker)).toEqual([])
        // Interrupted and timed-out runs in bulk leave nothing behind either.
        const timedOut = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          () => Effect.flip(run(sh(`sleep 10${marker} & sleep 10${marker} & wait`), { timeout: Duration.millis(500) })),
          { concurrency: "unbounded" },
        )
        expect(timedOut.every((error) => error._tag === "AppProcess.TimeoutError")).toBe(true)
        expect(liveWithMarker(`sleep 10${marker}`)).toEqual([])
      }),
    { timeout: 60_000 },
  )

  it("collector keeps at most max bytes, slices the crossing chunk and flags loss only past max", () =>
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.uint8Array({ maxLength: 64 }), { maxLength: 20 }),
        FastCheck.option(FastCheck.nat(300), { nil: undefined }),
        (chunks, max) => {
          const collect = AppProcess.collector(max)
          for (const chunk of chunks) collect.push(chunk)
          const all = Buffer.concat(chunks)
          const result = collect.result()
          expect(result.total).toBe(all.length)
          expect(result.buffer.equals(max === undefined ? all : all.subarray(0, max))).toBe(true)
          expect(result.truncated).toBe(max !== undefined && all.length > max)
        },
      ),
    ))
})
