/**
 * Reads an `strace -f -y` log: the programs that really started (each successful `execve`/`execveat`, by the base
 * name of the file executed, with its process) and every attempt to create, change or remove a file by name (the
 * path, resolved against the process's working directory, which is followed through `chdir`, `fchdir` and process
 * creation). An attempt counts when it succeeded or failed only for lack of permission (`EROFS`, `EACCES`, `EPERM`):
 * the sandbox's read-only host root and dropped capabilities refuse writes that the same command would make
 * unsandboxed.
 */
import * as path from "node:path"

/** A program start. */
export interface Exec {
  readonly pid: number
  /** The file executed, as given (a PATH search shows only the successful attempt). */
  readonly file: string
  /** Its base name. */
  readonly program: string
}

/** An attempt to change the file system by name. */
export interface Write {
  readonly pid: number
  readonly call: string
  /** Absolute; the kernel's own path when the call returned a descriptor. */
  readonly path: string
  /** False when the sandbox refused it (it would have happened unsandboxed). */
  readonly succeeded: boolean
}

/** What a log shows. */
export interface Trace {
  /** The first `execve` of the first process (the shell the harness started) is left out. */
  readonly execs: ReadonlyArray<Exec>
  readonly writes: ReadonlyArray<Write>
}

interface Call {
  readonly pid: number
  readonly name: string
  readonly args: string
  readonly result: string
}

const START = /^(\d+)\s+(\w+)\((.*)$/
const RESUMED = /^(\d+)\s+<\.\.\. (\w+) resumed>(.*)$/
const UNFINISHED = " <unfinished ...>"

/** A call's text `ARGS)   = RESULT` (strace pads before `=`), split at the last such `)`. */
const CALL_END = /^(.*)\)\s+= (.*)$/

const split = (rest: string): { readonly args: string; readonly result: string } | undefined => {
  const match = CALL_END.exec(rest)
  return match === null ? undefined : { args: match[1]!, result: match[2]! }
}

/** The calls of a log in the order they started, unfinished/resumed pairs joined. */
const calls = (log: string): ReadonlyArray<Call> => {
  const out: Array<Call | undefined> = []
  const pending = new Map<number, { readonly index: number; readonly name: string; readonly head: string }>()
  for (const line of log.split("\n")) {
    const resumed = RESUMED.exec(line)
    if (resumed !== null) {
      const pid = Number(resumed[1])
      const started = pending.get(pid)
      pending.delete(pid)
      if (started === undefined) continue
      const parts = split(started.head + resumed[3]!)
      if (parts !== undefined) out[started.index] = { pid, name: started.name, ...parts }
      continue
    }
    const start = START.exec(line)
    if (start === null) continue
    const pid = Number(start[1])
    const rest = start[3]!
    if (rest.endsWith(UNFINISHED)) {
      pending.set(pid, { index: out.length, name: start[2]!, head: rest.slice(0, -UNFINISHED.length) })
      out.push(undefined)
      continue
    }
    const parts = split(rest)
    if (parts !== undefined) out.push({ pid, name: start[2]!, ...parts })
  }
  return out.filter((call): call is Call => call !== undefined)
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", v: "\v", f: "\f", '"': '"', "\\": "\\" }

/** One argument: a decoded string, a descriptor with its path (`3</x>`, `AT_FDCWD</x>`), or raw text. */
interface Arg {
  readonly raw: string
  readonly string?: string
  readonly fdPath?: string
}

const decodeString = (text: string, from: number): { readonly value: string; readonly end: number } => {
  let value = ""
  let i = from + 1
  while (i < text.length && text[i] !== '"') {
    const c = text[i]!
    if (c !== "\\") {
      value += c
      i += 1
      continue
    }
    const next = text[i + 1] ?? ""
    if (next === "x") {
      value += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 4), 16))
      i += 4
    } else if (/[0-7]/.test(next)) {
      const digits = /^[0-7]{1,3}/.exec(text.slice(i + 1))![0]
      value += String.fromCharCode(Number.parseInt(digits, 8))
      i += 1 + digits.length
    } else {
      value += ESCAPES[next] ?? next
      i += 2
    }
  }
  return { value, end: i + 1 }
}

/** The top-level arguments of a call. */
const args = (text: string): ReadonlyArray<Arg> => {
  const out: Array<Arg> = []
  let i = 0
  while (i < text.length) {
    while (text[i] === " ") i += 1
    const begin = i
    let string: string | undefined
    let depth = 0
    while (i < text.length) {
      const c = text[i]!
      if (c === '"') {
        const decoded = decodeString(text, i)
        if (string === undefined && depth === 0) string = decoded.value
        i = decoded.end
        continue
      }
      if (c === "<") {
        const close = text.indexOf(">", i)
        i = close < 0 ? text.length : close + 1
        continue
      }
      if (c === "[" || c === "{" || c === "(") depth += 1
      else if (c === "]" || c === "}" || c === ")") depth -= 1
      else if (c === "," && depth === 0) break
      i += 1
    }
    const raw = text.slice(begin, i).trim()
    const fd = /^(?:-?\d+|AT_FDCWD)<(.*)>$/.exec(raw)
    out.push({ raw, ...(string === undefined ? {} : { string }), ...(fd === null ? {} : { fdPath: fd[1]! }) })
    i += 1
  }
  return out
}

const REFUSED = /^-1 (EROFS|EACCES|EPERM)\b/
const FAILED = /^-1 /
const WRITE_FLAGS = /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND/

/**
 * `name` resolved against `base` the way the kernel would for the magic links the oracle meets: `/proc/self` and
 * `/dev/fd` (→ `/proc/PID/fd`), and `/proc/PID/cwd` (→ the process's working directory). Other `..` are lexical.
 */
const resolve = (base: string, name: string, pid: number, cwdOf: (pid: number) => string): string => {
  const parts = (path.isAbsolute(name) ? name : `${base}/${name}`).split("/")
  let current: Array<string> = []
  for (const part of parts) {
    if (part === "" || part === ".") continue
    if (part === "..") current.pop()
    else current.push(part)
    const joined = `/${current.join("/")}`
    if (joined === "/dev/fd") current = ["proc", String(pid), "fd"]
    else if (joined === "/proc/self") current = ["proc", String(pid)]
    else if (/^\/proc\/\d+\/cwd$/.test(joined))
      current = cwdOf(Number(current[1]))
        .split("/")
        .filter((p) => p !== "")
  }
  return `/${current.join("/")}`
}

/** Which arguments of a call name the files it changes: `[dirfd index or -1, path index]` pairs. */
const TARGETS: Record<string, ReadonlyArray<readonly [number, number]>> = {
  creat: [[-1, 0]],
  truncate: [[-1, 0]],
  rename: [
    [-1, 0],
    [-1, 1],
  ],
  renameat: [
    [0, 1],
    [2, 3],
  ],
  renameat2: [
    [0, 1],
    [2, 3],
  ],
  link: [[-1, 1]],
  linkat: [[2, 3]],
  symlink: [[-1, 1]],
  symlinkat: [[1, 2]],
  unlink: [[-1, 0]],
  unlinkat: [[0, 1]],
  mkdir: [[-1, 0]],
  mkdirat: [[0, 1]],
  rmdir: [[-1, 0]],
  mknod: [[-1, 0]],
  mknodat: [[0, 1]],
  chmod: [[-1, 0]],
  fchmodat: [[0, 1]],
  chown: [[-1, 0]],
  lchown: [[-1, 0]],
  fchownat: [[0, 1]],
  utime: [[-1, 0]],
  utimes: [[-1, 0]],
  utimensat: [[0, 1]],
  futimesat: [[0, 1]],
  setxattr: [[-1, 0]],
  lsetxattr: [[-1, 0]],
  removexattr: [[-1, 0]],
  lremovexattr: [[-1, 0]],
}

/** Reads `log`; `cwd` is the working directory of the first process. */
export const read = (log: string, cwd: string): Trace => {
  const all = calls(log)
  const cwds = new Map<number, string>()
  const cwdOf = (pid: number) => cwds.get(pid) ?? cwd
  const execs: Array<Exec> = []
  const writes: Array<Write> = []
  const first = all[0]?.pid
  let skippedShell = false
  for (const call of all) {
    if (!cwds.has(call.pid)) cwds.set(call.pid, cwdOf(first ?? call.pid))
    const failed = FAILED.test(call.result)
    const refused = REFUSED.test(call.result)
    const a = args(call.args)
    const dir = (index: number) => (index < 0 ? cwdOf(call.pid) : (a[index]?.fdPath ?? cwdOf(call.pid)))
    const named = (dirIndex: number, pathIndex: number) => {
      const name = a[pathIndex]?.string
      if (name === undefined || name === "") return a[dirIndex]?.fdPath
      return resolve(dir(dirIndex), name, call.pid, cwdOf)
    }
    switch (call.name) {
      case "clone":
      case "clone3":
      case "fork":
      case "vfork": {
        const child = Number.parseInt(call.result, 10)
        if (child > 0) cwds.set(child, cwdOf(call.pid))
        continue
      }
      case "execve":
      case "execveat": {
        if (failed) continue
        const file = call.name === "execve" ? a[0]?.string : named(0, 1)
        if (file === undefined) continue
        if (!skippedShell && call.pid === first) {
          skippedShell = true
          continue
        }
        execs.push({ pid: call.pid, file, program: path.posix.basename(file) })
        continue
      }
      case "chdir": {
        const target = a[0]?.string
        if (!failed && target !== undefined) cwds.set(call.pid, resolve(cwdOf(call.pid), target, call.pid, cwdOf))
        continue
      }
      case "fchdir": {
        const target = a[0]?.fdPath
        if (!failed && target !== undefined) cwds.set(call.pid, target)
        continue
      }
      case "open":
      case "openat":
      case "openat2": {
        const flags = call.name === "open" ? a[1]?.raw : a[2]?.raw
        if (flags === undefined || !WRITE_FLAGS.test(flags)) continue
        if (failed && !refused) continue
        const opened = /^\d+<(.*)>$/.exec(call.result)
        const target = opened !== null ? opened[1]! : call.name === "open" ? named(-1, 0) : named(0, 1)
        if (target !== undefined) writes.push({ pid: call.pid, call: call.name, path: target, succeeded: !failed })
        continue
      }
      default: {
        const targets = TARGETS[call.name]
        if (targets === undefined || (failed && !refused)) continue
        for (const [dirIndex, pathIndex] of targets) {
          const target = named(dirIndex, pathIndex)
          if (target !== undefined) writes.push({ pid: call.pid, call: call.name, path: target, succeeded: !failed })
        }
      }
    }
  }
  return { execs, writes }
}
