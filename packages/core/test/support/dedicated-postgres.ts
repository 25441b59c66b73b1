/**
 * A Postgres server of a test's own (scripts/postgres.mjs), for tests that stop it or terminate its connections
 * without disturbing the run's shared server. `binaries` says whether it can start (a suite skips with the reason
 * when it cannot); `dedicatedServer` starts one for the scope, with a fresh schema, and `pgCtl` stops, starts or
 * restarts it.
 */
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"

// @ts-expect-error a plain ESM script without declarations
const script = (await import("../../../../scripts/postgres.mjs")) as {
  readonly start: () => Promise<{ readonly url?: string; readonly dir?: string; readonly reason?: string }>
  readonly stop: (dir: string) => void
  readonly findBinaries: () => { readonly bin?: string; readonly reason?: string }
}

/** Where the Postgres binaries are, or why there are none. */
export const binaries = script.findBinaries()

/** A dedicated server for the scope (stopped and removed when it closes): the URL of a fresh schema, and its data. */
export const dedicatedServer = (schema: string) =>
  Effect.acquireRelease(
    Effect.promise(() => script.start()),
    (started) => Effect.sync(() => started.dir !== undefined && script.stop(started.dir)),
  ).pipe(
    Effect.flatMap((started) =>
      started.url === undefined || started.dir === undefined
        ? Effect.die(new Error(`Postgres did not start: ${started.reason}`))
        : Effect.gen(function* () {
            yield* Effect.flatMap(PgClient.PgClient, (sql) => sql.unsafe(`CREATE SCHEMA ${schema}`)).pipe(
              Effect.provide(PgClient.layer({ url: Redacted.make(started.url!), maxConnections: 1 })),
              Effect.orDie,
            )
            const url = `${started.url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`
            return { url, data: path.join(started.dir!, "data") }
          }),
    ),
  )

/**
 * `pg_ctl <command>` on the dedicated server in `data` (as the `postgres` user when we are root), waiting for it.
 * `restart` also starts a stopped server, with the options it was started with (`postmaster.opts`).
 */
export const pgCtl = (data: string, command: "stop" | "restart") =>
  Effect.sync(() => {
    const pgCtlPath = path.join(binaries.bin!, "pg_ctl")
    // A log file keeps the server off our pipes (spawnSync waits for every holder of its stdout to close it).
    const args = [
      "-D",
      data,
      "-l",
      path.join(path.dirname(data), "server.log"),
      "-m",
      "fast",
      "-w",
      "-t",
      "60",
      command,
    ]
    const root = typeof process.getuid === "function" && process.getuid() === 0
    const result = root
      ? spawnSync("runuser", ["-u", "postgres", "--", pgCtlPath, ...args], { encoding: "utf8" })
      : spawnSync(pgCtlPath, args, { encoding: "utf8" })
    if (result.status !== 0) throw new Error(`pg_ctl ${command} failed: ${result.stderr}`)
  })
