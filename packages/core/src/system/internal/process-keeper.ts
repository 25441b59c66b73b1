/**
 * The keeper that makes children die with their runner: one process per runner process (a small `/bin/sh` script
 * in its own session) holds the read end of a pipe whose write end only this process has, and is told the process
 * group of every run while it runs. When this process dies in any way — `kill -9` included — the kernel closes the
 * pipe, the keeper reads end of file and kills every group still registered with SIGKILL. See docs/shell.md.
 *
 * The keeper is running before a command is spawned (`spawnGuarded`), never started after it: starting it is a fork
 * and exec of this whole process, which under load takes long enough for the command to start its own children,
 * and a runner killed during it leaves a keeper that was never told the command's group.
 *
 * @since 0.3.0
 */
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import type * as net from "node:net"

/**
 * True on the platforms with process groups.
 *
 * @since 0.3.0
 * @category platform
 */
export const isPosix = process.platform !== "win32"

/**
 * The fields of `/proc/<pid>/stat` after the parenthesised command name (state, ppid, pgrp, …), or undefined when the
 * process is gone.
 */
const statFields = (pid: string | number): Array<string> | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

/** True for a state letter of a live process: a zombie (Z) or a dead one (X) is gone. */
const liveState = (state: string | undefined): boolean => state !== undefined && state !== "Z" && state !== "X"

/**
 * True while a non-zombie process of group `pgid` exists. Zombies are dead: an init that never reaps keeps them.
 *
 * @since 0.3.0
 * @category keeper
 */
export const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch {
    return false
  }
  if (process.platform !== "linux") return true
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return true
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    const fields = statFields(entry)
    if (fields !== undefined && Number(fields[2]) === pgid && liveState(fields[0])) return true
  }
  return false
}

/**
 * Sends `signal` to the child's whole process group (the child alone off POSIX); a group already gone is fine.
 *
 * @since 0.3.0
 * @category keeper
 */
export const signalGroup = (child: ChildProcess.ChildProcess, signal: NodeJS.Signals): void => {
  if (child.pid === undefined) return
  try {
    if (isPosix) process.kill(-child.pid, signal)
    else child.kill(signal)
  } catch {
    // The group is already gone.
  }
}

/**
 * The keeper's script. It reads `+<pgid>` (a run started) and `-<pgid>` (a run's group is gone or left alone) lines
 * until end of file — which comes only when every copy of the write end is closed, that is when the process that
 * started it is gone (the pipe is close-on-exec, so no other child holds it) — and then kills every group still
 * registered. Only digits are accepted as a group id.
 */
const KEEPER_SCRIPT = `live=" "
while IFS= read -r line; do
  case $line in
    +*) g=\${line#+} ;;
    -*) g=\${line#-} ;;
    *) continue ;;
  esac
  case $g in ""|*[!0-9]*) continue ;; esac
  case $line in
    +*) case $live in *" $g "*) ;; *) live="$live$g " ;; esac ;;
    *) case $live in *" $g "*) live="\${live%% $g *} \${live#* $g }" ;; esac ;;
  esac
done
for g in $live; do kill -s KILL -- "-$g" 2>/dev/null; done`

/** The process groups of the runs in progress, told to the keeper (again to a new one, if it had to restart). */
const guarded = new Set<number>()
let keeper: ChildProcess.ChildProcess | undefined
/** Set when the keeper could not be started at all (no `/bin/sh`): runs then go on without it. */
let keeperUnavailable = false

const tellKeeper = (line: string): void => {
  const stdin = keeper?.stdin
  if (stdin === null || stdin === undefined || stdin.destroyed) return
  stdin.write(line)
}

/**
 * True while `child` (a keeper) is a live process. A keeper that was killed is a zombie until this process reaps it,
 * and its exit is reported only then, in a later turn of the event loop: without this check, a command spawned in
 * between would be registered with a keeper that is already dead.
 */
const running = (child: ChildProcess.ChildProcess): boolean => {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null || child.stdin?.destroyed)
    return false
  return process.platform !== "linux" || liveState(statFields(child.pid)?.[0])
}

/** The running keeper, started on first use; neither it nor its pipe keeps this process alive. */
const ensureKeeper = (): void => {
  if (keeperUnavailable || !isPosix) return
  if (keeper !== undefined && running(keeper)) return
  keeper = undefined
  const started = ChildProcess.spawn("/bin/sh", ["-c", KEEPER_SCRIPT], {
    stdio: ["pipe", "ignore", "ignore"],
    detached: true,
  })
  if (started.pid === undefined) {
    started.once("error", () => {})
    keeperUnavailable = true
    return
  }
  keeper = started
  started.once("error", () => {})
  started.stdin?.on("error", () => {})
  // A keeper that dies (someone killed it) while runs are in flight is replaced at once and told every group still
  // running: a runner killed before its next spawn would otherwise leave those runs to nobody. With nothing in
  // flight it is replaced before the next spawn.
  started.once("exit", () => {
    if (keeper !== started) return
    keeper = undefined
    if (guarded.size > 0) ensureKeeper()
  })
  started.unref()
  ;(started.stdin as net.Socket | null)?.unref()
  for (const pgid of guarded) tellKeeper(`+${pgid}\n`)
}

/**
 * Spawns a child in its own process group (POSIX) that dies with this process: the keeper is started (or restarted)
 * first, and the child's group is registered with it as soon as the spawn returns, before any other code runs. The
 * only uncovered moment is this process being killed inside the spawn call itself, after the child's exec and
 * before the call returns.
 *
 * @since 0.3.0
 * @category keeper
 */
export const spawnGuarded = (
  file: string,
  args: ReadonlyArray<string>,
  options: Omit<ChildProcess.SpawnOptions, "detached">,
): ChildProcess.ChildProcess => {
  ensureKeeper()
  const child = ChildProcess.spawn(file, args, { ...options, detached: isPosix })
  if (child.pid !== undefined && isPosix) {
    guarded.add(child.pid)
    tellKeeper(`+${child.pid}\n`)
  }
  return child
}

/**
 * Forgets a group: it is gone, or it finished normally and its background processes are left alone.
 *
 * @since 0.3.0
 * @category keeper
 */
export const unguard = (pgid: number): void => {
  if (!guarded.delete(pgid)) return
  ensureKeeper()
  tellKeeper(`-${pgid}\n`)
}
