import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Global } from "../src/index.js"
import * as DatabaseHealth from "../src/system/database-health.js"
import * as Engines from "./support/engines.js"
import { tempDir } from "./support/location.js"

const globalAt = (root: string): Global.Interface => ({
  data: path.join(root, "data"),
  config: path.join(root, "config"),
  tmp: path.join(root, "tmp"),
  home: root,
})

/** A port on 127.0.0.1 nothing listens on: bound, read, closed. */
const closedPort = Effect.promise(
  () =>
    new Promise<number>((resolve, reject) => {
      const server = net.createServer()
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as net.AddressInfo
        server.close(() => resolve(port))
      })
    }),
)

const LATEST = DatabaseHealth.KNOWN.at(-1)!

Engines.describeEach("DatabaseHealth", (engine) => {
  /** A fresh unmigrated database of this engine and the choice naming it. */
  const fresh = Effect.gen(function* () {
    const root = yield* tempDir()
    const global = globalAt(root)
    fs.mkdirSync(global.data, { recursive: true })
    const shared = yield* engine.shared(global.data)
    return {
      global,
      choice: { url: engine.name === "postgres" ? shared : undefined, pool: {}, source: undefined },
    }
  })

  it.scoped("check does not migrate; migrate applies every migration once; check is then healthy", () =>
    Effect.gen(function* () {
      const { global, choice } = yield* fresh
      if (engine.name === "sqlite") fs.writeFileSync(path.join(global.data, "toolgate.db"), "") // an empty database
      const before = yield* DatabaseHealth.check(global, choice)
      expect(before).toMatchObject({
        engine: engine.name,
        reachable: true,
        latestApplied: null,
        expected: LATEST,
        missing: DatabaseHealth.KNOWN,
        healthy: false,
      })
      expect(before.cause).toContain("is not migrated")
      // Checking twice finds the same: the check itself created nothing.
      expect((yield* DatabaseHealth.check(global, choice)).latestApplied).toBe(null)

      const migrated = yield* DatabaseHealth.migrate(global, choice)
      expect(migrated.applied).toEqual(DatabaseHealth.KNOWN)
      expect(migrated.latest).toBe(LATEST)

      const after = yield* DatabaseHealth.check(global, choice)
      expect(after).toMatchObject({ reachable: true, latestApplied: LATEST, missing: [], healthy: true })
      expect(after.cause).toBeUndefined()

      expect((yield* DatabaseHealth.migrate(global, choice)).applied).toEqual([])
    }),
  )
})

describe("DatabaseHealth: unreachable", () => {
  it.scoped("a SQLite data directory without a database file is not reachable, and check creates none", () =>
    Effect.gen(function* () {
      const global = globalAt(yield* tempDir())
      const report = yield* DatabaseHealth.check(global, { url: undefined, pool: {}, source: undefined })
      expect(report).toMatchObject({ engine: "sqlite", reachable: false, healthy: false, latestApplied: null })
      expect(report.cause).toContain("there is no database file")
      expect(fs.existsSync(path.join(global.data, "toolgate.db"))).toBe(false)
    }),
  )

  it.scoped("a file that is not a database is not reachable, with SQLite's code", () =>
    Effect.gen(function* () {
      const global = globalAt(yield* tempDir())
      fs.mkdirSync(global.data, { recursive: true })
      fs.writeFileSync(path.join(global.data, "toolgate.db"), "this is not a database, just some text".repeat(50))
      const report = yield* DatabaseHealth.check(global, { url: undefined, pool: {}, source: undefined })
      expect(report).toMatchObject({ reachable: false, healthy: false })
      expect(report.cause).toContain("SQLITE_NOTADB")
    }),
  )

  it.scoped("a Postgres URL on a closed port is not reachable; the cause is one line with the password hidden", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      const report = yield* DatabaseHealth.check(globalAt(yield* tempDir()), {
        url: `postgres://u:hunter2@127.0.0.1:${port}/db`,
        pool: { connectTimeout: 2000 },
        source: "TOOLGATE_DATABASE_URL",
      })
      expect(report).toMatchObject({
        engine: "postgres",
        database: `postgres://u:***@127.0.0.1:${port}/db`,
        source: "TOOLGATE_DATABASE_URL",
        reachable: false,
        healthy: false,
      })
      expect(report.cause).toContain("ECONNREFUSED")
      expect(report.cause).not.toContain("hunter2")
      expect(report.cause!.split("\n")).toHaveLength(1)
    }),
  )
})
