import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Database, Global, PermissionSaved } from "../src/index.js"
import { tempDir } from "./support/location.js"

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const script = path.join(packageDir, "test", "fixtures", "save-approvals.ts")

interface Child {
  readonly process: ChildProcess
  /** Resolves with the first stdout line. */
  readonly line: Promise<string>
  /** Resolves with the exit code (or signal) and all stderr. */
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>
}

const run = (args: ReadonlyArray<string>): Child => {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { cwd: packageDir, stdio: "pipe" })
  let stdout = ""
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  const line = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      const end = stdout.indexOf("\n")
      if (end !== -1) resolve(stdout.slice(0, end))
    })
    child.on("exit", () => reject(new Error(`child exited without output: ${stderr}`)))
  })
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, stderr })),
  )
  line.catch(() => undefined)
  return { process: child, line, exit }
}

/** Kills a child still running when the scope closes (a failed assertion must not leak processes). */
const scopedChild = (args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => run(args)),
    (child) =>
      Effect.sync(
        () => child.process.exitCode === null && child.process.signalCode === null && child.process.kill("SIGKILL"),
      ),
  )

const savedIn = (data: string, projectID: string) =>
  Effect.flatMap(PermissionSaved.Service, (saved) => saved.list({ projectID })).pipe(
    Effect.provide(
      PermissionSaved.layer.pipe(Layer.provideMerge(Database.layer), Layer.provide(Global.layerWith({ data }))),
    ),
  )

describe("saved approvals are durable across processes", () => {
  it.live(
    "a row saved by a process killed with SIGKILL is found by a fresh connection",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const data = yield* tempDir()
          const child = yield* scopedChild([data, "proj", "1", "approved", "hold"])
          const printed = JSON.parse(yield* Effect.promise(() => child.line)) as { rows: Array<PermissionSaved.Info> }
          expect(printed.rows).toHaveLength(1)
          child.process.kill("SIGKILL")
          const exit = yield* Effect.promise(() => child.exit)
          expect(exit.signal).toBe("SIGKILL")
          const rows = yield* savedIn(data, "proj")
          expect(rows).toEqual(printed.rows)
          expect(rows[0]).toMatchObject({ projectID: "proj", action: "bash", resource: "approved-0" })
        }),
      ),
    120_000,
  )

  it.live(
    "two processes saving 500 approvals each at once both succeed and all 1000 rows exist",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const data = yield* tempDir()
          const a = yield* scopedChild([data, "proj", "500", "a", "exit"])
          const b = yield* scopedChild([data, "proj", "500", "b", "exit"])
          const [exitA, exitB] = yield* Effect.promise(() => Promise.all([a.exit, b.exit]))
          expect(exitA.stderr).not.toContain("SQLITE_BUSY")
          expect(exitB.stderr).not.toContain("SQLITE_BUSY")
          expect([exitA.code, exitB.code]).toEqual([0, 0])
          expect(JSON.parse(yield* Effect.promise(() => a.line))).toEqual({ saved: 500 })
          expect(JSON.parse(yield* Effect.promise(() => b.line))).toEqual({ saved: 500 })
          const rows = yield* savedIn(data, "proj")
          expect(rows).toHaveLength(1000)
          expect(new Set(rows.map((r) => r.resource)).size).toBe(1000)
          expect(new Set(rows.map((r) => r.id)).size).toBe(1000)
        }),
      ),
    180_000,
  )
})
