import * as fs from "node:fs"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { Database, Global, PermissionSaved } from "../src/index.js"
import * as Children from "./support/children.js"
import { tempDir } from "./support/location.js"

const ROUNDS = 20
const PROCESSES = 6
const APPROVALS = 10

const rowsIn = (data: string, projectID: string) =>
  Effect.flatMap(PermissionSaved.Service, (saved) => saved.list({ projectID })).pipe(
    Effect.provide(
      PermissionSaved.layer.pipe(Layer.provideMerge(Database.layer), Layer.provide(Global.layerWith({ data }))),
    ),
  )

describe("several processes on one new database", () => {
  it.live(
    "a process opening a new database while another is migrating it waits for the migration and finds every table",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const data = yield* tempDir()
          const file = path.join(data, "toolgate.db")
          const migrator = yield* Children.scoped(Children.fixture("slow-migrator.ts"), [file, "1000"])
          expect(yield* Children.nextLine(migrator)).toBe("migrating")
          // The other process holds the write lock with its migrations recorded but not yet applied.
          const opened = yield* Effect.exit(
            Effect.flatMap(SqlClient.SqlClient, (sql) =>
              Effect.all([
                sql<{ count: number }>`SELECT COUNT(*) AS count FROM project`,
                sql<{ name: string }>`SELECT name FROM effect_sql_migrations ORDER BY migration_id`,
              ]),
            ).pipe(Effect.provide(Database.layerFile(file))),
          )
          expect(Exit.isSuccess(opened)).toBe(true)
          if (Exit.isSuccess(opened)) {
            const [[projects], names] = opened.value
            expect(projects?.count).toBe(0)
            expect(names.map((row) => row.name)).toEqual(Object.keys(Database.migrations).map((key) => key.slice(15)))
          }
          expect(yield* Children.nextLine(migrator)).toBe("done")
          expect((yield* Children.exited(migrator)).code).toBe(0)
        }),
      ),
    120_000,
  )

  it.live(
    `${ROUNDS} rounds × ${PROCESSES} processes each building Core.layer on a fresh data directory at once all succeed`,
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const root = yield* tempDir()
          const workers = yield* Effect.forEach(
            Array.from({ length: PROCESSES }, (_, i) => i),
            () => Children.scoped(Children.fixture("core-worker.ts"), []),
          )
          // Every worker has loaded its modules before the first round starts.
          for (const worker of workers) expect(yield* Children.nextLine(worker)).toBe("ready")
          const failures: Array<string> = []
          for (let round = 0; round < ROUNDS; round++) {
            const data = path.join(root, `round-${round}`)
            fs.mkdirSync(data)
            // The barrier: every worker is idle and waiting on stdin; the jobs are written back to back.
            workers.forEach((worker, i) =>
              worker.send(JSON.stringify({ data, projectID: "proj", count: APPROVALS, prefix: `w${i}` })),
            )
            // A worker's log lines (a warning of the journal's retention prune racing the other starts) share its
            // stdout with the reply; the reply is its next JSON line.
            const replyOf = (worker: (typeof workers)[number]) =>
              Effect.gen(function* () {
                for (;;) {
                  const line = yield* Children.nextLine(worker)
                  if (line.startsWith("{")) return line
                }
              })
            const replies = yield* Effect.forEach(workers, replyOf, {
              concurrency: "unbounded",
            })
            replies.forEach((reply, i) => {
              const parsed = JSON.parse(reply) as { saved?: number; error?: string }
              if (parsed.saved !== APPROVALS) failures.push(`round ${round} worker ${i}: ${reply}`)
            })
            expect(failures).toEqual([])
            const rows = yield* rowsIn(data, "proj")
            expect(rows).toHaveLength(PROCESSES * APPROVALS)
            expect(new Set(rows.map((row) => row.resource)).size).toBe(PROCESSES * APPROVALS)
          }
          expect(failures).toEqual([])
          for (const worker of workers) worker.process.stdin?.end()
          const exits = yield* Effect.forEach(workers, Children.exited, { concurrency: "unbounded" })
          for (const exit of exits) {
            expect(exit.stderr).not.toContain("SQLITE_BUSY")
            expect(exit.code).toBe(0)
          }
        }),
      ),
    600_000,
  )
})
