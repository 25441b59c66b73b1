#!/usr/bin/env node
/**
 * A throwaway Postgres server for tests and CI: `initdb` into a temporary directory, a free port on 127.0.0.1, trust
 * authentication on loopback only, no Unix socket. Postgres refuses to run as root, so as root the server runs as
 * the `postgres` user (`runuser -u postgres --`) and the directory is handed to that user.
 *
 *   node scripts/postgres.mjs start [--dir DIR]   prints the URL (stdout) and the data directory (stderr)
 *   node scripts/postgres.mjs stop --dir DIR      stops the server and removes DIR
 *
 * Without the binaries (`/usr/lib/postgresql/<v>/bin`, `pg_config --bindir`, or `initdb` on PATH) `start` exits 3
 * and prints why on stderr. The module also exports `start`, `stop` and `findBinaries` for the vitest globalSetup.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const USER = "toolgate"
const DATABASE = "toolgate"

/** The directory holding `initdb`, `pg_ctl` and `psql`, or a reason why there is none. */
export const findBinaries = () => {
  const candidates = []
  const root = "/usr/lib/postgresql"
  if (fs.existsSync(root)) {
    for (const version of fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)))
      candidates.push(path.join(root, version, "bin"))
  }
  const config = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" })
  if (config.status === 0) candidates.push(config.stdout.trim())
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) if (dir !== "") candidates.push(dir)
  const found = candidates.find((dir) => ["initdb", "pg_ctl", "psql"].every((b) => fs.existsSync(path.join(dir, b))))
  return found === undefined
    ? { reason: "no Postgres binaries (initdb, pg_ctl, psql) in /usr/lib/postgresql/*/bin, pg_config --bindir or PATH" }
    : { bin: found }
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0

/** Runs a Postgres binary, as the `postgres` user when we are root. */
const run = (bin, name, args) => {
  const command = isRoot() ? "runuser" : path.join(bin, name)
  const argv = isRoot() ? ["-u", "postgres", "--", path.join(bin, name), ...args] : args
  const result = spawnSync(command, argv, { encoding: "utf8", cwd: os.tmpdir() })
  if (result.status !== 0) {
    throw new Error(`${name} ${args.join(" ")} failed (${result.status}): ${result.stderr || result.stdout}`)
  }
  return result.stdout
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(address.port))
    })
  })

/**
 * Starts a server in `dir` (a fresh temporary directory by default). Resolves `{ url, dir }`, or `{ reason }` when
 * the binaries are missing. The server listens on 127.0.0.1 only.
 */
export const start = async (options = {}) => {
  const found = findBinaries()
  if (found.bin === undefined) return { reason: found.reason }
  const dir = options.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-pg-"))
  fs.mkdirSync(dir, { recursive: true })
  const data = path.join(dir, "data")
  if (isRoot()) execFileSync("chown", ["-R", "postgres:", dir])
  run(found.bin, "initdb", ["-D", data, "-U", USER, "--auth=trust", "--encoding=UTF8", "--no-sync"])
  // A port found free can be taken before the server binds it: try a few.
  let lastError
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort()
    const settings = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c fsync=off -c max_connections=200`
    try {
      run(found.bin, "pg_ctl", ["-D", data, "-l", path.join(dir, "server.log"), "-o", settings, "-w", "-t", "60", "start"])
    } catch (error) {
      lastError = error
      continue
    }
    const psql = ["-h", "127.0.0.1", "-p", String(port), "-U", USER, "-d", "postgres", "-v", "ON_ERROR_STOP=1"]
    run(found.bin, "psql", [...psql, "-c", `CREATE DATABASE ${DATABASE}`])
    const url = `postgres://${USER}@127.0.0.1:${port}/${DATABASE}`
    fs.writeFileSync(path.join(dir, "url"), `${url}\n`)
    return { url, dir }
  }
  throw lastError
}

/** Stops the server started in `dir` (fast shutdown) and removes the directory. */
export const stop = (dir) => {
  const found = findBinaries()
  const data = path.join(dir, "data")
  if (found.bin !== undefined && fs.existsSync(path.join(data, "postmaster.pid"))) {
    run(found.bin, "pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"])
  }
  fs.rmSync(dir, { recursive: true, force: true })
}

const main = async () => {
  const [command, ...rest] = process.argv.slice(2)
  const dirFlag = rest.indexOf("--dir")
  const dir = dirFlag >= 0 ? rest[dirFlag + 1] : undefined
  if (command === "start") {
    const started = await start(dir === undefined ? {} : { dir })
    if (started.reason !== undefined) {
      process.stderr.write(`postgres: not started: ${started.reason}\n`)
      process.exit(3)
    }
    process.stdout.write(`${started.url}\n`)
    process.stderr.write(`postgres: data directory ${started.dir}\n`)
  } else if (command === "stop" && dir !== undefined) {
    stop(dir)
  } else {
    process.stderr.write("usage: postgres.mjs start [--dir DIR] | stop --dir DIR\n")
    process.exit(2)
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    process.stderr.write(`postgres: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  })
}
