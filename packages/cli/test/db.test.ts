import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { Effect } from "effect"
import { expect, it } from "vitest"
import * as Engines from "../../core/test/support/engines.js"
// The ProvidedContext of the run's Postgres server (engines.ts injects it).
import type {} from "../../core/test/support/postgres-setup.js"
import { Database } from "@toolgate/core"
import { BIN, type Run, tempDir } from "./support.js"

/** The migrations this version knows, in id order (what `db migrate` must apply to a fresh database). */
const KNOWN = Object.keys(Database.migrations).sort()
const LATEST = KNOWN.at(-1)!

/**
 * `toolgate ...args` as a child process with its own XDG directories under `home` and `env` on top (the database
 * URL); `TOOLGATE_DATABASE_URL` of the test process is never inherited.
 */
const toolgate = (
  args: ReadonlyArray<string>,
  options: { readonly home: string; readonly env?: Readonly<Record<string, string>> },
): Promise<Run> =>
  new Promise((resolve, reject) => {
    const { TOOLGATE_DATABASE_URL: _inherited, ...env } = process.env
    const child = spawn(process.execPath, [...BIN, ...args], {
      env: {
        ...env,
        XDG_DATA_HOME: path.join(options.home, "data"),
        XDG_CONFIG_HOME: path.join(options.home, "config"),
        NO_COLOR: "1",
        ...options.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** A port on 127.0.0.1 nothing listens on: bound, read, closed. */
const closedPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const writeConfig = (home: string, text: string): string => {
  const file = path.join(home, "config", "toolgate", "toolgate.json")
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  return file
}

const oneLine = (stderr: string): string => {
  const lines = stderr.trimEnd().split("\n")
  expect(lines).toHaveLength(1)
  return lines[0]!
}

Engines.describeEach("toolgate db", (engine) => {
  /**
   * A home whose database is a fresh, unmigrated one of this engine: a SQLite data directory (`--data`), or a
   * Postgres schema named by TOOLGATE_DATABASE_URL (`via: "env"`) or by database.url of the user's file.
   */
  const setUp = async (via: "env" | "file" = "env") => {
    const home = tempDir()
    const data = path.join(home, "data", "toolgate")
    fs.mkdirSync(data, { recursive: true })
    const shared = await Effect.runPromise(engine.shared(data))
    if (engine.name === "sqlite") return { home, env: {}, args: ["--data", data], shown: shared }
    const shown = shared // the test server trusts loopback: no password to hide
    if (via === "file") {
      writeConfig(home, JSON.stringify({ database: { url: shared, pool: { max_connections: 2 } } }))
      return { home, env: {}, args: [], shown }
    }
    return { home, env: { TOOLGATE_DATABASE_URL: shared }, args: [], shown }
  }

  it("check on an unmigrated database: exit 1, one line; migrate applies every migration; check is healthy", async () => {
    const { home, env, args } = await setUp()
    if (engine.name === "sqlite") fs.writeFileSync(path.join(args[1]!, "toolgate.db"), "") // an empty database

    const before = await toolgate(["db", "check", ...args], { home, env })
    expect(before.code).toBe(1)
    expect(before.stdout).toContain(`engine: ${engine.name}`)
    expect(before.stdout).toContain("reachable: yes")
    expect(before.stdout).toContain("latest applied: none")
    expect(before.stdout).toContain(`expected: ${LATEST}`)
    expect(oneLine(before.stderr)).toMatch(/^toolgate: db check: .* is not migrated .*: run toolgate db migrate$/)

    const migrated = await toolgate(["db", "migrate", ...args], { home, env })
    expect(migrated.stderr).toBe("")
    expect(migrated.code).toBe(0)
    expect(migrated.stdout).toContain(`engine: ${engine.name}`)
    expect(migrated.stdout).toContain(`applied ${KNOWN.length} migrations:\n${KNOWN.map((n) => `  ${n}`).join("\n")}`)
    expect(migrated.stdout).toContain(`latest: ${LATEST}`)

    const again = await toolgate(["db", "migrate", ...args], { home, env })
    expect(again.code).toBe(0)
    expect(again.stdout).toContain(`nothing to apply: up to date at ${LATEST}`)

    const after = await toolgate(["db", "check", "--json", ...args], { home, env })
    expect(after.stderr).toBe("")
    expect(after.code).toBe(0)
    expect(JSON.parse(after.stdout)).toMatchObject({
      engine: engine.name,
      reachable: true,
      latestApplied: LATEST,
      expected: LATEST,
      missing: [],
      healthy: true,
      source: engine.name === "sqlite" ? "default" : "TOOLGATE_DATABASE_URL",
    })
  })

  it("check --json on an unmigrated database: the report on stdout, exit 1", async () => {
    const { home, env, args } = await setUp()
    if (engine.name === "sqlite") fs.writeFileSync(path.join(args[1]!, "toolgate.db"), "")
    const run = await toolgate(["db", "check", "--json", ...args], { home, env })
    expect(run.code).toBe(1)
    const report = JSON.parse(run.stdout)
    expect(report).toMatchObject({ reachable: true, healthy: false, latestApplied: null, missing: KNOWN })
    expect(report.cause).toContain("is not migrated")
  })

  if (engine.name === "postgres") {
    it("database.url of the user's configuration file is used when TOOLGATE_DATABASE_URL is unset", async () => {
      const { home, env, args, shown } = await setUp("file")
      const migrated = await toolgate(["db", "migrate", ...args], { home, env })
      expect(migrated.code).toBe(0)
      expect(migrated.stdout).toContain(
        `database: ${new URL(shown).toString()} (from ${path.join(home, "config", "toolgate", "toolgate.json")})`,
      )
      const check = await toolgate(["db", "check", ...args], { home, env })
      expect(check.code).toBe(0)
      expect(check.stdout).toContain("status: healthy")
    })

    it("toolgate serve without --dir serves the database of database.url when TOOLGATE_DATABASE_URL is unset", async () => {
      const { home } = await setUp("file")
      const { TOOLGATE_DATABASE_URL: _inherited, ...env } = process.env
      const child = spawn(process.execPath, [...BIN, "serve", "--port", "0"], {
        env: {
          ...env,
          XDG_DATA_HOME: path.join(home, "data"),
          XDG_CONFIG_HOME: path.join(home, "config"),
          NO_COLOR: "1",
        },
        stdio: ["ignore", "pipe", "pipe"],
      })
      let stdout = ""
      let stderr = ""
      const started = await new Promise<boolean>((resolve) => {
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk
          if (stdout.includes("Press Ctrl-C to stop.")) resolve(true)
        })
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
        child.on("close", () => resolve(false))
      })
      if (child.exitCode === null && child.signalCode === null) {
        const closed = new Promise((resolve) => child.once("close", resolve))
        child.kill("SIGTERM")
        await closed
      }
      expect(stderr).toBe("")
      expect(started).toBe(true)
      expect(stdout).toContain("toolgate serve: approvals of every process on the database at http://127.0.0.1:")
    })

    it("TOOLGATE_DATABASE_URL wins over database.url", async () => {
      const { home, env } = await setUp("env")
      const port = await closedPort()
      writeConfig(home, JSON.stringify({ database: { url: `postgres://u:pw@127.0.0.1:${port}/nowhere` } }))
      const migrated = await toolgate(["db", "migrate"], { home, env })
      expect(migrated.code).toBe(0)
      expect(migrated.stdout).toContain("(from TOOLGATE_DATABASE_URL)")
    })
  }
})

it("db check on a Postgres URL whose port is closed: exit 1, one line with the cause, the password hidden", async () => {
  const home = tempDir()
  const port = await closedPort()
  const url = `postgres://toolgate:hunter2@127.0.0.1:${port}/toolgate`
  const run = await toolgate(["db", "check"], { home, env: { TOOLGATE_DATABASE_URL: url } })
  expect(run.code).toBe(1)
  expect(run.stdout).toContain("reachable: no")
  const line = oneLine(run.stderr)
  expect(line).toMatch(
    new RegExp(
      `^toolgate: db check: cannot reach postgres://toolgate:\\*\\*\\*@127\\.0\\.0\\.1:${port}/toolgate: .*ECONNREFUSED`,
    ),
  )
  expect(run.stdout + run.stderr).not.toContain("hunter2")
})

it("db check on a data directory without a database: exit 1, one line, and no file is created", async () => {
  const home = tempDir()
  const data = path.join(home, "nothing-here")
  const run = await toolgate(["db", "check", "--data", data], { home })
  expect(run.code).toBe(1)
  expect(oneLine(run.stderr)).toContain("there is no database file")
  expect(fs.existsSync(data)).toBe(false)
})

it("a bad database.pool value fails closed before connecting: exit 1, one line naming the file and the field", async () => {
  const home = tempDir()
  const file = writeConfig(home, `{ "database": { "pool": { "max_connections": 0 } } }`)
  for (const command of ["check", "migrate"]) {
    const run = await toolgate(["db", command], { home, env: { TOOLGATE_DATABASE_URL: "postgres://127.0.0.1:1/x" } })
    expect(run.code).toBe(1)
    expect(oneLine(run.stderr)).toBe(
      `toolgate: Invalid config in ${file} at database.pool.max_connections: Expected a positive number, actual 0`,
    )
  }
})

it("toolgate db without a subcommand is a usage error (exit 2)", async () => {
  const run = await toolgate(["db"], { home: tempDir() })
  expect(run.code).toBe(2)
  expect(run.stderr).toContain("db needs a subcommand: migrate or check")
})
