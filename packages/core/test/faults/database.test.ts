/**
 * Faults of the database, with real files: an unwritable WAL, a full disk (a tmpfs the test mounts), a header
 * corrupted at run time, a directory at the database path and an unwritable data directory. Each case asserts the
 * exact text the user or the model gets, that nothing hangs (the test's own deadline), that no partial file stays,
 * and that the next ordinary call works once the fault is gone.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Layer, Option } from "effect"
import { Core, Database, PermissionSaved, PermissionV2, Runner, SessionV2 } from "../../src/index.js"
import { tempDir } from "../support/location.js"
import { chattrWorks, deadline, filesUnder, fill, immutable, oneCallModel, tmpfs } from "../support/faults.js"

const config = {
  permissions: [
    { action: "bash", resource: "*", effect: "allow" as const },
    { action: "todowrite", resource: "*", effect: "allow" as const },
    // The build agent allows reading; these paths ask.
    { action: "read", resource: "fault/*", effect: "ask" as const },
  ],
}

/** A Location with its own process services on `data`, a runner whose model makes one `todowrite` call per run. */
const stack = (data: string, directory: string) =>
  Runner.layer.pipe(
    Layer.provideMerge(
      oneCallModel("todowrite", { todos: [{ content: "write a row", status: "pending", priority: "low" }] }),
    ),
    Layer.provideMerge(Core.layer({ directory, data, discover: false, config })),
  )

/** Starts an `assert` that asks (`read` of `fault/x`) and waits until its request is pending. */
const pendingAsk = (sessionID: string, id: string, save: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const permission = yield* PermissionV2.Service
    const fiber = yield* Effect.fork(
      permission.assert({ id, sessionID, agent: "build", action: "read", resources: ["fault/x"], save }),
    )
    while ((yield* permission.get(id)) === undefined) yield* Effect.sleep("5 millis")
    return fiber
  })

/** `always` fails with SaveError, changes nothing, and `once` still answers the request. */
const alwaysFailsThenOnceWorks = (sessionID: string, id: string, save: ReadonlyArray<string>, expected: string) =>
  Effect.gen(function* () {
    const permission = yield* PermissionV2.Service
    const fiber = yield* pendingAsk(sessionID, id, save)
    const error = yield* Effect.flip(permission.reply({ requestID: id, reply: "always" }))
    expect(error._tag).toBe("PermissionV2.SaveError")
    expect(error.message).toBe(expected)
    expect((yield* permission.list()).map((request) => request.id)).toEqual([id])
    yield* permission.reply({ requestID: id, reply: "once" })
    expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
    expect(yield* permission.list()).toEqual([])
  })

/** One run of the runner: its one call, then the row it wrote. */
const oneRun = (sessionID: string) =>
  Effect.flatMap(Runner.Service, (runner) => runner.run({ sessionID, prompt: "go" }))

const databaseFiles = ["toolgate.db", "toolgate.db-shm", "toolgate.db-wal"]

describe("database faults", () => {
  it.live("an unwritable WAL: always says why and leaves the ask pending; once works; after the fix always saves", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      if (!chattrWorks(data)) {
        console.warn("faults/database: skipped the unwritable WAL, chattr +i does not work here")
        return
      }
      const file = path.join(data, "toolgate.db")
      yield* Effect.gen(function* () {
        const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
        const before = filesUnder(data)
        const undo = yield* immutable(`${file}-wal`)
        yield* alwaysFailsThenOnceWorks(
          session.id,
          "per_wal",
          ["fault/*"],
          `Could not save the approval of permission request per_wal (read) to ${file}: Failed to execute statement: SQLITE_IOERR_WRITE: disk I/O error. The request is still pending: answer it once or reject it.`,
        ).pipe(deadline("the reply on an unwritable WAL"))
        expect(filesUnder(data)).toEqual(before)
        yield* undo

        // The next ordinary calls work: an always saves, a run records and settles its call.
        const permission = yield* PermissionV2.Service
        const fiber = yield* pendingAsk(session.id, "per_wal_fixed", ["fault/*"])
        yield* permission.reply({ requestID: "per_wal_fixed", reply: "always" })
        expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
        const saved = yield* Effect.flatMap(PermissionSaved.Service, (store) => store.list())
        expect(saved.map((row) => `${row.action} ${row.resource}`)).toEqual(["read fault/*"])
        const run = yield* oneRun(session.id).pipe(deadline("the next run"))
        expect(run.stopped).toBeUndefined()
      }).pipe(Effect.provide(stack(data, yield* tempDir())))
    }).pipe(Effect.scoped),
  )

  it.live("a full disk: always says SQLITE_FULL and stays pending; once works; after freeing space always saves", () =>
    Effect.gen(function* () {
      const mounted = yield* tmpfs(8 * 1024 * 1024, "faults/database: the full disk")
      if (Option.isNone(mounted)) return
      const data = mounted.value
      const file = path.join(data, "toolgate.db")
      yield* Effect.gen(function* () {
        const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
        const filler = fill(data)
        const before = filesUnder(data)
        // A large pattern, so the WAL must grow past anything it already holds.
        const big = `fault/${"y".repeat(512 * 1024)}`
        yield* alwaysFailsThenOnceWorks(
          session.id,
          "per_full",
          [big],
          `Could not save the approval of permission request per_full (read) to ${file}: Failed to execute statement: SQLITE_FULL: database or disk is full. The request is still pending: answer it once or reject it.`,
        ).pipe(deadline("the reply on a full disk"))
        expect(filesUnder(data)).toEqual(before)

        fs.rmSync(filler)
        const permission = yield* PermissionV2.Service
        const fiber = yield* pendingAsk(session.id, "per_full_fixed", [big])
        yield* permission.reply({ requestID: "per_full_fixed", reply: "always" })
        expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
        const saved = yield* Effect.flatMap(PermissionSaved.Service, (store) => store.list())
        // The large pattern, and the asked resource exactly (the pattern does not cover it: an answer covers what it saw).
        expect(saved.map((row) => row.resource.length)).toEqual([big.length, "fault/x".length])
        expect((yield* oneRun(session.id).pipe(deadline("the next run"))).stopped).toBeUndefined()
      }).pipe(Effect.provide(stack(data, yield* tempDir())))
    }).pipe(Effect.scoped),
  )

  it.live("a header corrupted at run time: the run fails naming the file and SQLITE_NOTADB; restored, it works", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const file = path.join(data, "toolgate.db")
      yield* Effect.gen(function* () {
        const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
        expect((yield* oneRun(session.id)).stopped).toBeUndefined()
        // Everything committed is in the main file, so a copy of it is the whole database.
        yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe("PRAGMA wal_checkpoint(TRUNCATE)"))
        const good = fs.readFileSync(file)
        const size = good.length
        const shm = fs.statSync(`${file}-shm`).size
        fs.writeFileSync(file, Buffer.alloc(size, 0x41))
        fs.writeFileSync(`${file}-shm`, Buffer.alloc(shm, 0))
        fs.truncateSync(`${file}-wal`, 0)

        const exit = yield* Effect.exit(oneRun(session.id).pipe(deadline("a run on a corrupt database")))
        expect(Exit.isFailure(exit)).toBe(true)
        const failure = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
        expect(failure).toBeInstanceOf(Database.QueryError)
        expect((failure as Database.QueryError).message).toBe(
          `database ${file}: Failed to execute statement: SQLITE_NOTADB: file is not a database`,
        )
        expect(filesUnder(data).filter((name) => name.startsWith("toolgate.db"))).toEqual(databaseFiles)

        fs.writeFileSync(file, good)
        fs.writeFileSync(`${file}-shm`, Buffer.alloc(shm, 0))
        expect((yield* oneRun(session.id).pipe(deadline("the next run"))).stopped).toBeUndefined()
      }).pipe(Effect.provide(stack(data, yield* tempDir())))
    }).pipe(Effect.scoped),
  )

  it.live("a directory at the database path: opening fails naming the file and why; without it, it opens", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const file = path.join(data, "toolgate.db")
      fs.mkdirSync(file)
      const exit = yield* Effect.exit(
        Effect.scoped(Layer.build(Core.layerProcess({ data }))).pipe(deadline("opening a directory")),
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const failure = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      expect(failure).toBeInstanceOf(Database.OpenError)
      expect((failure as Database.OpenError).message).toBe(
        `cannot open ${file}: SQLITE_CANTOPEN: unable to open database file (it is a directory)`,
      )
      expect(Database.describe(failure)).toBe((failure as Database.OpenError).message)
      expect(filesUnder(data)).toEqual(["toolgate.db/"])

      fs.rmdirSync(file)
      yield* Effect.scoped(Layer.build(Core.layerProcess({ data }))).pipe(deadline("opening the database"))
      expect(filesUnder(data).filter((name) => name.startsWith("toolgate.db"))).toContain("toolgate.db")
    }).pipe(Effect.scoped),
  )

  it.live("an unwritable data directory: opening fails naming the file and the directory; writable, it opens", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      if (!chattrWorks(data)) {
        console.warn("faults/database: skipped the unwritable data directory, chattr +i does not work here")
        return
      }
      const file = path.join(data, "toolgate.db")
      const undo = yield* immutable(data)
      const exit = yield* Effect.exit(
        Effect.scoped(Layer.build(Core.layerProcess({ data }))).pipe(deadline("opening in an unwritable directory")),
      )
      const failure = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      expect(failure).toBeInstanceOf(Database.OpenError)
      expect((failure as Database.OpenError).message).toBe(
        `cannot open ${file}: SQLITE_CANTOPEN: unable to open database file (the directory ${data} is not writable: EPERM)`,
      )
      expect(filesUnder(data)).toEqual([])
      yield* undo
      yield* Effect.scoped(Layer.build(Core.layerProcess({ data }))).pipe(deadline("opening the database"))
    }).pipe(Effect.scoped),
  )
})
