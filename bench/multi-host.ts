/**
 * Shared asks on Postgres: 10,000 asks pending across two processes on one Postgres, all released by one "always" saved
 * from a third (this process), against the same 10,000 asks pending in one process on a SQLite database file,
 * released by one "always" saved on that file — in the same run. Times from the save until every ask has returned
 * (the children print `released`); throughput is asks released per second. Starts its own throwaway Postgres
 * (scripts/postgres.mjs); not part of the CI bench gate (it needs Postgres).
 *
 * Run: npx tsx --conditions=@toolgate/source bench/multi-host.ts [asks]
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { Effect, Layer } from "effect"
import { Database, PermissionSaved } from "@toolgate/core"

// @ts-expect-error a plain ESM script without declarations
const postgres = (await import("../scripts/postgres.mjs")) as {
  readonly start: () => Promise<{ readonly url?: string; readonly dir?: string; readonly reason?: string }>
  readonly stop: (dir: string) => void
}

const ASKS = Number(process.argv[2] ?? 10_000)
const temp = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `toolgate-bench-${name}-`))

interface Child {
  readonly pending: Promise<{ scope: { kind: string; projectID: string; directory: string } }>
  readonly released: Promise<number>
}

const child = (database: string, data: string, directory: string, asks: number): Child => {
  const process_ = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "--conditions=@toolgate/source",
      path.join(import.meta.dirname, "multi-host-child.ts"),
      database,
      data,
      directory,
      String(asks),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  )
  let resolvePending: (value: never) => void = () => {}
  let resolveReleased: (value: number) => void = () => {}
  const pending = new Promise<never>((resolve) => (resolvePending = resolve))
  const released = new Promise<number>((resolve) => (resolveReleased = resolve))
  readline.createInterface({ input: process_.stdout }).on("line", (line) => {
    if (line.startsWith("{")) resolvePending(JSON.parse(line) as never)
    else if (line === "released") resolveReleased(performance.now())
  })
  process_.on("exit", (code) => {
    if (code !== 0) throw new Error(`a bench child exited with ${code}`)
  })
  return { pending, released }
}

const save = (layer: Layer.Layer<Database.Client>, scope: { kind: string; projectID: string; directory: string }) =>
  Effect.runPromise(
    Effect.flatMap(PermissionSaved.Service, (saved) =>
      saved.add({
        projectID: scope.projectID,
        ...(scope.kind === "directory" ? { directory: scope.directory } : {}),
        action: "read",
        resources: ["bench/*"],
      }),
    ).pipe(Effect.provide(PermissionSaved.layer.pipe(Layer.provideMerge(layer)))),
  )

/** Starts the children, waits until every ask is pending, saves, and times until all are released. */
const run = async (children: ReadonlyArray<Child>, layer: Layer.Layer<Database.Client>): Promise<number> => {
  const [first] = await Promise.all(children.map((c) => c.pending))
  const start = performance.now()
  await save(layer, first!.scope)
  const ends = await Promise.all(children.map((c) => c.released))
  return Math.max(...ends) - start
}

const started = await postgres.start()
if (started.url === undefined || started.dir === undefined) {
  console.log(`multi-host bench skipped: ${started.reason}`)
  process.exit(0)
}
try {
  const directory = temp("location")
  const half = Math.floor(ASKS / 2)
  const pgMillis = await run(
    [child(started.url, temp("a"), directory, half), child(started.url, temp("b"), directory, ASKS - half)],
    Database.layerUrl(started.url),
  )
  const data = temp("sqlite")
  const sqliteMillis = await run(
    [child("sqlite", data, temp("location"), ASKS)],
    Database.layerFile(path.join(data, "toolgate.db")),
  )
  const line = (name: string, millis: number) =>
    console.log(
      `${name}: ${ASKS} asks released in ${millis.toFixed(0)} ms (${((ASKS / millis) * 1000).toFixed(0)} asks/s)`,
    )
  line("postgres, 2 asking processes + 1 saving", pgMillis)
  line("sqlite file, 1 asking process + 1 saving", sqliteMillis)
  console.log(`postgres_over_sqlite_time ${(pgMillis / sqliteMillis).toFixed(2)}`)
  console.log(
    `load ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}`,
  )
} finally {
  postgres.stop(started.dir)
}
process.exit(0)
