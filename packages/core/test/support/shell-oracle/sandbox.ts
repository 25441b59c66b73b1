/**
 * The reality side of the oracle: long-lived runners (`runner-main.ts`) inside bubblewrap, each over a read-only host
 * root where only the temporary root, its own scratch folder and a tmpfs `/tmp` are writable, with no network (a
 * fresh network namespace), only the capabilities listed below, a pid namespace that dies with the test, and stdin
 * `/dev/null` for the commands.
 *
 * The temporary root appears inside every sandbox at the same absolute path the gate sees on the host (`root`, below
 * the system temp folder), but there it lies on the sandbox's own tmpfs `/tmp`, filled by the runner from the
 * read-only template: the host's `root` stays pristine for the gate while every runner changes its own copy at the
 * same path. A command's `rm -rf` or write outside therefore touches a tmpfs that dies with the sandbox, or fails on
 * the read-only host (an attempt the strace log still shows).
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { Data, Deferred, Effect, ExecutionStrategy, Exit, Queue, Scope } from "effect"
import { SOURCE_NODE_ARGS } from "../../../../../vitest.shared.js"
import type { Reply, Request } from "./runner-main.js"

export type { Reply, Request }

const here = path.dirname(fileURLToPath(import.meta.url))
const RUNNER = path.join(here, "runner-main.ts")
/** The package folder: tsx and the sources resolve from here. */
const PACKAGE = path.resolve(here, "../../..")
/** The checkout, bound read-only into the sandbox again in case it lies below `/tmp` (hidden by the tmpfs). */
const CHECKOUT = path.resolve(PACKAGE, "../..")

/**
 * Every system call strace records: program starts, process creation and `chdir` (to follow the working directory
 * of the relative, non-`*at` calls), and every call that creates, changes or removes a file by name.
 */
export const SYSCALLS = [
  "execve",
  "execveat",
  "clone",
  "clone3",
  "fork",
  "vfork",
  "chdir",
  "fchdir",
  "open",
  "openat",
  "openat2",
  "creat",
  "truncate",
  "rename",
  "renameat",
  "renameat2",
  "link",
  "linkat",
  "symlink",
  "symlinkat",
  "unlink",
  "unlinkat",
  "mkdir",
  "mkdirat",
  "rmdir",
  "mknod",
  "mknodat",
  "chmod",
  "fchmodat",
  "chown",
  "lchown",
  "fchownat",
  "utime",
  "utimes",
  "utimensat",
  "futimesat",
  "setxattr",
  "lsetxattr",
  "removexattr",
  "lremovexattr",
].join(",")

/** The runner died or answered something unreadable. */
export class RunnerError extends Data.TaggedError("ShellOracle.RunnerError")<{ readonly reason: string }> {
  override get message(): string {
    return `shell oracle runner: ${this.reason}`
  }
}

/**
 * Capabilities a root command keeps, so that what root may do unsandboxed mostly works here too (`su -c`,
 * `runuser`, `chrt`, writing a 0444 file): none lets it mount, make device nodes, load modules or reach outside
 * the mount namespace (`CAP_SYS_ADMIN`, `CAP_MKNOD`, `CAP_DAC_READ_SEARCH`, … stay dropped). bwrap 0.8 leaves every
 * capability in place when `CAP_SYS_RESOURCE` is among the added ones, so that one is left out.
 */
const ROOT_CAPABILITIES = [
  "CAP_SETUID",
  "CAP_SETGID",
  "CAP_CHOWN",
  "CAP_FOWNER",
  "CAP_DAC_OVERRIDE",
  "CAP_AUDIT_WRITE",
  "CAP_SYS_NICE",
]

const baseArgs = (): ReadonlyArray<string> => [
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--tmpfs",
  "/tmp",
  "--die-with-parent",
  "--new-session",
  ...(process.getuid?.() === 0
    ? [
        // As root without a user namespace, so that the kept capabilities are real ones (`su` needs setgroups).
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--cap-drop",
        "ALL",
        ...ROOT_CAPABILITIES.flatMap((capability) => ["--cap-add", capability]),
      ]
    : ["--unshare-all", "--cap-drop", "ALL"]),
]

/**
 * Why the oracle cannot run here (bwrap or strace missing, or not working in this environment), or `undefined`.
 */
export const unavailable = (): string | undefined => {
  for (const tool of ["bwrap", "strace"]) {
    const found = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" })
    if (found.status !== 0) return `${tool} is not installed`
  }
  const probe = spawnSync(
    "bwrap",
    [...baseArgs(), "--", "strace", "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null", "-e", "trace=execve", "true"],
    { encoding: "utf8", timeout: 30_000 },
  )
  if (probe.status !== 0) {
    return `bwrap + strace cannot run here (exit ${probe.status}): ${(probe.stderr ?? "").trim() || String(probe.error)}`
  }
  return undefined
}

/** One runner: `run` sends a request and waits for its reply; one request at a time. */
export interface Runner {
  readonly run: (request: Omit<Request, "id" | "syscalls">) => Effect.Effect<Reply, RunnerError>
}

/** Where a runner works: the shared `root` path (below `/tmp`), the read-only `template`, and its own `scratch`. */
export interface Place {
  readonly root: string
  readonly template: string
  readonly scratch: string
}

/** Starts a runner for `place`; it is killed when the scope closes. */
export const start = (place: Place): Effect.Effect<Runner, RunnerError, Scope.Scope> =>
  Effect.gen(function* () {
    if (!place.root.startsWith("/tmp/")) return yield* new RunnerError({ reason: `${place.root} is not below /tmp` })
    fs.mkdirSync(place.scratch, { recursive: true })
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(
          "bwrap",
          [
            ...baseArgs(),
            "--ro-bind",
            CHECKOUT,
            CHECKOUT,
            "--ro-bind",
            place.template,
            place.template,
            "--bind",
            place.scratch,
            place.scratch,
            "--chdir",
            PACKAGE,
            "--",
            process.execPath,
            ...SOURCE_NODE_ARGS,
            RUNNER,
            place.root,
            place.template,
            place.scratch,
          ],
          { cwd: PACKAGE, stdio: ["pipe", "pipe", "pipe"] },
        ),
      ),
      (child) => Effect.sync(() => child.kill("SIGKILL")),
    )
    const replies = yield* Queue.unbounded<string>()
    const stderr: Array<string> = []
    const lines = readline.createInterface({ input: child.stdout })
    lines.on("line", (line) => Queue.unsafeOffer(replies, line))
    child.stderr.on("data", (chunk: Buffer) => {
      stderr.push(chunk.toString("utf8"))
      if (stderr.length > 50) stderr.shift()
    })
    const exited = yield* Deferred.make<string>()
    child.once("exit", (code, signal) =>
      Deferred.unsafeDone(exited, Effect.succeed(`runner exited (code ${code}, signal ${signal}): ${stderr.join("")}`)),
    )
    const next = Effect.raceFirst(
      Queue.take(replies),
      Effect.flatMap(Deferred.await(exited), (reason) => Effect.fail(new RunnerError({ reason }))),
    )
    const ready = yield* next
    if (!ready.includes('"ready"')) return yield* new RunnerError({ reason: `unexpected first line: ${ready}` })
    let id = 0
    const lock = yield* Effect.makeSemaphore(1)
    return {
      run: (request) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            id += 1
            const full: Request = { ...request, id, syscalls: SYSCALLS }
            child.stdin.write(`${JSON.stringify(full)}\n`)
            const line = yield* next
            const reply = yield* Effect.try({
              try: () => JSON.parse(line) as Reply,
              catch: () => new RunnerError({ reason: `unreadable reply: ${line.slice(0, 200)}` }),
            })
            if (reply.id !== id) return yield* new RunnerError({ reason: `reply ${reply.id} for request ${id}` })
            return reply
          }),
        ),
    } satisfies Runner
  })

/** Runners sharing one request queue; a runner that dies is replaced (the request it was running fails). */
export interface Pool {
  readonly run: (request: Omit<Request, "id" | "syscalls">) => Effect.Effect<Reply, RunnerError>
}

/** Starts `size` runners over `places(i)`; they stop when the scope closes. */
export const pool = (size: number, places: (index: number) => Place): Effect.Effect<Pool, RunnerError, Scope.Scope> =>
  Effect.gen(function* () {
    const outer = yield* Effect.scope
    const launch = (index: number) =>
      Effect.gen(function* () {
        const scope = yield* Scope.fork(outer, ExecutionStrategy.sequential)
        const runner = yield* Scope.extend(start(places(index)), scope)
        return { index, runner, scope }
      })
    const free = yield* Queue.unbounded<Effect.Effect.Success<ReturnType<typeof launch>>>()
    for (let i = 0; i < size; i++) yield* Queue.offer(free, yield* launch(i))
    return {
      run: (request) =>
        Effect.acquireUseRelease(
          Queue.take(free),
          (slot) => slot.runner.run(request),
          (slot, exit) =>
            Exit.isSuccess(exit)
              ? Queue.offer(free, slot)
              : Effect.flatMap(Scope.close(slot.scope, Exit.void), () =>
                  launch(slot.index).pipe(
                    Effect.flatMap((fresh) => Queue.offer(free, fresh)),
                    Effect.orDie,
                  ),
                ),
        ),
    } satisfies Pool
  })
