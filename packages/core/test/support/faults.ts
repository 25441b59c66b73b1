/**
 * Fault injection with real resources for test/faults: a size-limited tmpfs (root only), immutable files
 * (`chattr +i`, which stops root too), a disk filled to the last byte, a model that asks for one tool call, and a
 * deadline for "nothing hangs". Every fault is undone when its scope closes.
 */
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, Layer, Option, Stream } from "effect"
import { Model } from "../../src/index.js"

/** Fails with `hung: <what>` if `effect` has not finished within `ms` (the test's own deadline, not a speed claim). */
export const deadline =
  (what: string, ms = 15_000) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.timeoutFail(effect, { duration: ms, onTimeout: () => new Error(`hung: ${what}`) })

const isRoot = typeof process.getuid === "function" && process.getuid() === 0

/**
 * A tmpfs of `bytes` mounted on a fresh directory for the scope; `None` (with the reason printed) when not root or
 * the mount fails.
 */
export const tmpfs = (bytes: number, label: string) =>
  Effect.acquireRelease(
    Effect.sync((): Option.Option<string> => {
      if (!isRoot) {
        console.warn(`${label}: skipped, mounting a tmpfs needs root`)
        return Option.none()
      }
      const mountpoint = fs.mkdtempSync("/tmp/toolgate-full-")
      const mounted = ChildProcess.spawnSync("mount", ["-t", "tmpfs", "-o", `size=${bytes}`, "tmpfs", mountpoint], {
        encoding: "utf8",
      })
      if (mounted.status !== 0) {
        console.warn(`${label}: skipped, mount -t tmpfs failed: ${(mounted.stderr || mounted.error?.message) ?? ""}`)
        fs.rmdirSync(mountpoint)
        return Option.none()
      }
      return Option.some(mountpoint)
    }),
    (mountpoint) =>
      Effect.sync(() => {
        if (Option.isNone(mountpoint)) return
        ChildProcess.spawnSync("umount", ["-l", mountpoint.value])
        fs.rmSync(mountpoint.value, { recursive: true, force: true })
      }),
  )

/** Whether `chattr +i` works on files under `directory` (it needs the ext2/3/4, xfs or btrfs flags and root). */
export const chattrWorks = (directory: string): boolean => {
  const probe = path.join(directory, `.chattr-probe-${process.pid}`)
  fs.writeFileSync(probe, "")
  const set = ChildProcess.spawnSync("chattr", ["+i", probe], { stdio: "ignore" })
  ChildProcess.spawnSync("chattr", ["-i", probe], { stdio: "ignore" })
  fs.rmSync(probe, { force: true })
  return set.status === 0
}

/** Makes `file` immutable (nobody, root included, may write it) until the scope closes or `undo` runs. */
export const immutable = (file: string) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => {
        const set = ChildProcess.spawnSync("chattr", ["+i", file], { encoding: "utf8" })
        if (set.status !== 0) throw new Error(`chattr +i ${file}: ${set.stderr}`)
      }),
      () => Effect.sync(() => void ChildProcess.spawnSync("chattr", ["-i", file])),
    ),
    () => Effect.sync(() => void ChildProcess.spawnSync("chattr", ["-i", file])),
  )

/** Fills the file system of `directory` to the last byte with one file, and returns it (remove it to free the disk). */
export const fill = (directory: string): string => {
  const filler = path.join(directory, "filler")
  const fd = fs.openSync(filler, "w")
  const chunk = Buffer.alloc(64 * 1024, 1)
  try {
    for (let size = chunk.length; size >= 1; size = Math.floor(size / 2)) {
      for (;;) {
        try {
          fs.writeSync(fd, chunk, 0, size)
        } catch {
          break
        }
      }
    }
  } finally {
    fs.closeSync(fd)
  }
  return filler
}

/** Every file under `directory` (relative paths, sorted), directories included with a trailing `/`. */
export const filesUnder = (directory: string): Array<string> => {
  const out: Array<string> = []
  const walk = (relative: string) => {
    for (const entry of fs.readdirSync(path.join(directory, relative), { withFileTypes: true })) {
      const name = path.join(relative, entry.name)
      if (entry.isDirectory()) {
        out.push(`${name}/`)
        walk(name)
      } else out.push(name)
    }
  }
  walk("")
  return out.sort()
}

/**
 * A model that answers a run's first request with one `name` call of `input` and the next with a closing text:
 * every run makes exactly one tool call.
 */
export const oneCallModel = (name: string, input: unknown): Layer.Layer<Model.Service> => {
  let calls = 0
  return Layer.succeed(
    Model.Service,
    Model.Service.of({
      stream: (request) => {
        const last = request.messages[request.messages.length - 1]
        const events: Array<Model.Event> =
          last?.role === "user"
            ? [
                { type: "tool-call", id: `call_${++calls}`, name, input },
                { type: "finish", reason: "tool-calls" },
              ]
            : [
                { type: "text", text: "done" },
                { type: "finish", reason: "stop" },
              ]
        return Stream.fromIterable(events)
      },
    }),
  )
}
