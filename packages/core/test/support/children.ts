/**
 * Child processes for the multi-process tests: the fixtures under test/fixtures (bundled once per run, see
 * `fixture`), read line by line, killed with SIGKILL when the scope closes if still running.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { inject } from "vitest"

/** The core package directory (children run with it as cwd). */
export const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")

/**
 * A fixture script's absolute path: `name` (`"pending-ask.ts"`) as bundled from the sources once per run by
 * bundle-setup.ts, which starts much faster than the TypeScript file through tsx.
 */
export const fixture = (name: string): string =>
  path.join(inject("toolgateChildBundle"), `${path.basename(name, ".ts")}.js`)

/** A running child. */
export interface Child {
  readonly process: ChildProcess
  /** The next stdout line not yet taken (rejects if the child exits first). */
  readonly nextLine: () => Promise<string>
  /** Writes one line to the child's stdin. */
  readonly send: (line: string) => void
  /** Resolves with the exit code (or signal) and all stderr. */
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>
  /** stderr so far. */
  readonly stderr: () => string
}

/** Starts `node --import tsx <script> ...args` (plain `node` for a bundled `.js` script, which starts faster). */
export const start = (script: string, args: ReadonlyArray<string>): Child => {
  const loader = script.endsWith(".js") ? [] : ["--import", "tsx"]
  const child = spawn(process.execPath, [...loader, script, ...args], { cwd: packageDir, stdio: "pipe" })
  let buffer = ""
  let stderr = ""
  let exited = false
  const lines: Array<string> = []
  const waiting: Array<{ resolve: (line: string) => void; reject: (error: Error) => void }> = []
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString()
    let end = buffer.indexOf("\n")
    while (end !== -1) {
      const line = buffer.slice(0, end)
      buffer = buffer.slice(end + 1)
      const waiter = waiting.shift()
      if (waiter === undefined) lines.push(line)
      else waiter.resolve(line)
      end = buffer.indexOf("\n")
    }
  })
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on("exit", (code, signal) => {
      exited = true
      // stderr may still be draining when "exit" fires; "close" comes after all streams ended.
      child.on("close", () => {
        for (const waiter of waiting.splice(0)) waiter.reject(new Error(`child exited (${code ?? signal}): ${stderr}`))
        resolve({ code, signal, stderr })
      })
    }),
  )
  return {
    process: child,
    nextLine: () => {
      const line = lines.shift()
      if (line !== undefined) return Promise.resolve(line)
      if (exited) return Promise.reject(new Error(`child exited: ${stderr}`))
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }))
    },
    send: (line) => void child.stdin.write(line + "\n"),
    exit,
    stderr: () => stderr,
  }
}

/** `start` in a scope: a child still running when the scope closes is killed (a failed assertion leaks nothing). */
export const scoped = (script: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => start(script, args)),
    (child) =>
      Effect.promise(async () => {
        if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL")
        await child.exit
      }),
  )

/** The next stdout line, as an Effect. */
export const nextLine = (child: Child) => Effect.promise(() => child.nextLine())

/** Waits for the child to exit. */
export const exited = (child: Child) => Effect.promise(() => child.exit)
