/**
 * The oracle's runner inside bubblewrap: a long-lived process that reads one JSON request per stdin line, and for
 * each one brings the temporary root (on the sandbox's tmpfs `/tmp`) back to the read-only template — undoing the
 * last command's changes and checking the result against the template's picture, or copying it whole — empties
 * the rest of `/tmp` and `/dev/shm`, runs the command under strace (stdin /dev/null, its output to a scratch file,
 * a timeout), pictures the root after it, kills whatever of the command is still alive, and writes one JSON reply
 * per stdout line. Started by `sandbox.ts` as
 * `node --import tsx runner-main.ts ROOT TEMPLATE SCRATCH`; plain Node, no Effect, so it starts fast.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as readline from "node:readline"
import * as Snapshot from "./snapshot.js"

/** One command to run. */
export interface Request {
  readonly id: number
  /** What the shell process is: `[shell, "-c", command]` or whatever the bash tool would spawn. */
  readonly argv: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMs: number
  /** strace's `-e trace=` list. */
  readonly syscalls: string
}

/** What happened. */
export interface Reply {
  readonly id: number
  readonly exit: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  /** A failure of the runner itself (restore, spawn), when there was one. */
  readonly error?: string
  readonly trace: string
  /** The first bytes of the command's combined output. */
  readonly output: string
  readonly changes: ReadonlyArray<Snapshot.Change>
  /** Milliseconds spent restoring, running and picturing (for the harness's own cost). */
  readonly timings?: { readonly restore: number; readonly run: number; readonly picture: number }
}

const OUTPUT_HEAD = 2048

const [root, template, scratch] = process.argv.slice(2) as [string, string, string]
const traceFile = path.join(scratch, "trace")
const outputFile = path.join(scratch, "output")

/** Pids alive when the runner is ready (this process, the namespace's init, any loader helper): never killed. */
const keep = new Set<number>()

const pids = (): ReadonlyArray<number> =>
  fs
    .readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)

const killStrays = () => {
  for (const pid of pids()) {
    if (keep.has(pid)) continue
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Already gone.
    }
  }
}

/** Makes every directory below `at` searchable and writable again, so a command's `chmod 000` cannot block cleanup. */
const unlock = (at: string) => {
  try {
    const stat = fs.lstatSync(at)
    if (!stat.isDirectory()) return
    fs.chmodSync(at, 0o755)
    for (const name of fs.readdirSync(at)) unlock(path.join(at, name))
  } catch {
    // Best effort: the removal below reports what is still in the way.
  }
}

const remove = (entry: string) => {
  try {
    fs.rmSync(entry, { recursive: true, force: true })
  } catch {
    unlock(entry)
    fs.rmSync(entry, { recursive: true, force: true })
  }
}

const copy = (relative: string) =>
  fs.cpSync(path.join(template, relative), path.join(root, relative), {
    recursive: true,
    preserveTimestamps: true,
    verbatimSymlinks: true,
  })

const fullRestore = () => {
  fs.mkdirSync(root, { recursive: true })
  fs.chmodSync(root, 0o755)
  for (const name of fs.readdirSync(root)) remove(path.join(root, name))
  for (const name of fs.readdirSync(template)) copy(name)
}

/** Undoes `changes` (the last command's): removes what it created, copies back what it changed or removed. */
const undo = (changes: ReadonlyArray<Snapshot.Change>) => {
  const done: Array<string> = []
  const covered = (relative: string) => done.some((d) => relative === d || relative.startsWith(`${d}/`))
  for (const change of changes) {
    if (change.kind === "removed" || covered(change.path)) continue
    remove(path.join(root, change.path))
    if (change.kind === "changed") copy(change.path)
    done.push(change.path)
  }
  for (const change of changes) {
    if (change.kind !== "removed" || covered(change.path)) continue
    copy(change.path)
    done.push(change.path)
  }
}

/** Folders outside the root that commands may write to (tmpfs in the sandbox): emptied between commands. */
const SCRATCH_FOLDERS = ["/tmp", "/dev/shm"]

/** Removes everything below `folder` except the runner's own paths and the folders on the way to them. */
const sweep = (folder: string, keep: ReadonlyArray<string>) => {
  let names: Array<string>
  try {
    names = fs.readdirSync(folder)
  } catch {
    return
  }
  for (const name of names) {
    const entry = path.join(folder, name)
    if (keep.some((k) => entry === k || entry.startsWith(`${k}/`))) continue
    if (keep.some((k) => k.startsWith(`${entry}/`))) sweep(entry, keep)
    else remove(entry)
  }
}

/** The sandbox's mount points (the template, the scratch folder, a checkout below `/tmp`): never swept. */
const mounts: ReadonlyArray<string> = fs
  .readFileSync("/proc/self/mountinfo", "utf8")
  .split("\n")
  .map((line) => line.split(" ")[4])
  .filter((point): point is string => point !== undefined && point !== "")
  .map((point) => point.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8))))
  .filter((point) => !SCRATCH_FOLDERS.includes(point))

let pristine: Snapshot.Picture | undefined
let last: ReadonlyArray<Snapshot.Change> | undefined

/** Brings the root back to the template and returns its picture. */
const restore = (): Snapshot.Picture => {
  for (const folder of SCRATCH_FOLDERS) sweep(folder, [root, ...mounts])
  if (pristine !== undefined && last !== undefined) {
    try {
      undo(last)
      const picture = Snapshot.take(root)
      if (Snapshot.equal(picture, pristine)) return picture
    } catch {
      // Whatever the command left that undoing cannot fix, the full restore below does.
    }
  }
  fullRestore()
  const picture = Snapshot.take(root)
  pristine ??= picture
  return picture
}

const head = (file: string): string => {
  try {
    const fd = fs.openSync(file, "r")
    try {
      const buffer = Buffer.alloc(OUTPUT_HEAD)
      const read = fs.readSync(fd, buffer, 0, OUTPUT_HEAD, 0)
      return buffer.subarray(0, read).toString("utf8")
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return ""
  }
}

const run = (request: Request): Reply => {
  let before: Snapshot.Picture = {}
  try {
    const t0 = performance.now()
    before = restore()
    last = undefined
    const t1 = performance.now()
    const t2 = t1
    fs.rmSync(traceFile, { force: true })
    const output = fs.openSync(outputFile, "w")
    let result: ReturnType<typeof spawnSync>
    try {
      result = spawnSync(
        "strace",
        [
          "-f",
          "-qq",
          "--seccomp-bpf",
          "-y",
          "-s",
          "256",
          "-e",
          "signal=none",
          "-e",
          `trace=${request.syscalls}`,
          "-o",
          traceFile,
          "--",
          ...request.argv,
        ],
        {
          cwd: request.cwd,
          env: request.env,
          stdio: ["ignore", output, output],
          timeout: request.timeoutMs,
          killSignal: "SIGKILL",
        },
      )
    } finally {
      fs.closeSync(output)
    }
    const t3 = performance.now()
    killStrays()
    const after = Snapshot.take(root)
    const changes = Snapshot.diff(before, after)
    last = changes
    const t4 = performance.now()
    const timedOut = result.error !== undefined && (result.error as NodeJS.ErrnoException).code === "ETIMEDOUT"
    return {
      id: request.id,
      exit: result.status,
      signal: result.signal,
      timedOut,
      ...(result.error !== undefined && !timedOut ? { error: String(result.error) } : {}),
      trace: fs.existsSync(traceFile) ? fs.readFileSync(traceFile, "utf8") : "",
      output: head(outputFile),
      changes,
      timings: { restore: t1 - t0, run: t3 - t2, picture: t4 - t3 },
    }
  } catch (error) {
    last = undefined
    killStrays()
    return {
      id: request.id,
      exit: null,
      signal: null,
      timedOut: false,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      trace: "",
      output: "",
      changes: [],
    }
  }
}

for (const pid of pids()) keep.add(pid)
const lines = readline.createInterface({ input: process.stdin })
lines.on("line", (line) => {
  if (line.trim() === "") return
  const reply = run(JSON.parse(line) as Request)
  process.stdout.write(`${JSON.stringify(reply)}\n`)
})
process.stdout.write(`${JSON.stringify({ ready: true })}\n`)
