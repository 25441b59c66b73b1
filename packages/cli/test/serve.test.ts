/**
 * `toolgate serve` as a real child process: it prints the page's address with a generated token, the API refuses
 * a request without it and answers one with it, `TOOLGATE_SERVE_TOKEN` replaces the generated token (and is not
 * printed), and bad options are usage errors (exit 2), as is no `--dir` without a Postgres database; on Postgres,
 * without `--dir`, it serves every process's asks.
 */
import { spawn } from "node:child_process"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { describe, expect, it } from "vitest"
import * as Engines from "../../core/test/support/engines.js"
// The ProvidedContext of the run's Postgres server (engines.ts injects it).
import type {} from "../../core/test/support/postgres-setup.js"
import * as Serve from "../src/serve.js"
import { BIN, tempDir, toolgate } from "./support.js"

/** Starts `toolgate serve` and resolves with its first three output lines once it is listening; `stop` ends it. */
const serve = (env: Record<string, string> = {}, args: ReadonlyArray<string> = ["--dir", tempDir()]) =>
  new Promise<{ lines: ReadonlyArray<string>; stop: () => void }>((resolve, reject) => {
    const home = tempDir()
    const child = spawn(process.execPath, [...BIN, "serve", ...args, "--port", "0"], {
      env: {
        ...process.env,
        HOME: home,
        XDG_DATA_HOME: path.join(home, "data"),
        XDG_CONFIG_HOME: path.join(home, "config"),
        XDG_CACHE_HOME: path.join(home, "cache"),
        XDG_STATE_HOME: path.join(home, "state"),
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      if (stdout.includes("Ctrl-C")) resolve({ lines: stdout.split("\n"), stop: () => child.kill("SIGTERM") })
    })
    child.on("error", reject)
    child.on("close", (code) => reject(new Error(`toolgate serve exited ${code}: ${stderr}`)))
  })

describe("toolgate serve", () => {
  it("prints the page address with a generated token; the API needs it", async () => {
    const server = await serve()
    try {
      const url = /at (http:\/\/127\.0\.0\.1:\d+)$/.exec(server.lines[0]!)?.[1]
      expect(url).toBeDefined()
      const token = /#token=([A-Za-z0-9_-]{43})$/.exec(server.lines[1]!)?.[1]
      expect(token).toBeDefined()
      expect((await fetch(`${url}/api/asks`)).status).toBe(401)
      const listed = await fetch(`${url}/api/asks`, { headers: { authorization: `Bearer ${token}` } })
      expect(listed.status).toBe(200)
      expect(await listed.json()).toEqual([])
      expect((await fetch(`${url}/`)).status).toBe(200)
    } finally {
      server.stop()
    }
  }, 120_000)

  it("takes the token from TOOLGATE_SERVE_TOKEN and does not print it", async () => {
    const token = "configured-token-0123456789"
    const server = await serve({ TOOLGATE_SERVE_TOKEN: token })
    try {
      const url = /at (http:\/\/127\.0\.0\.1:\d+)$/.exec(server.lines[0]!)![1]!
      expect(server.lines[2]).toContain("TOOLGATE_SERVE_TOKEN")
      expect(server.lines[2]).not.toContain(token)
      const reply = await fetch(`${url}/api/saved`, { headers: { authorization: `Bearer ${token}` } })
      expect(reply.status).toBe(200)
    } finally {
      server.stop()
    }
  }, 120_000)

  it("a bad port or a webhook without its secret is a usage error", async () => {
    const port = await toolgate(["serve", "--dir", tempDir(), "--port", "99999"], { home: tempDir() })
    expect(port.code).toBe(2)
    expect(port.stderr).toContain("--port must be a port number")
    const webhook = await toolgate(["serve", "--dir", tempDir(), "--webhook", "http://127.0.0.1:9/hook"], {
      home: tempDir(),
    })
    expect(webhook.code).toBe(2)
    expect(webhook.stderr).toContain("TOOLGATE_WEBHOOK_SECRET")
  }, 120_000)

  it("without --dir and without a Postgres database it is a usage error naming TOOLGATE_DATABASE_URL", async () => {
    const saved = process.env.TOOLGATE_DATABASE_URL
    delete process.env.TOOLGATE_DATABASE_URL
    try {
      const exit = await Effect.runPromiseExit(
        Serve.run({
          directory: undefined,
          port: Option.some("0"),
          host: Option.none(),
          webhook: Option.none(),
          data: Option.some(tempDir()),
        }),
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
      expect(error).toMatchObject({ _tag: "Cli.UsageError" })
      expect(String((error as { message?: string } | undefined)?.message)).toContain("TOOLGATE_DATABASE_URL")
    } finally {
      if (saved !== undefined) process.env.TOOLGATE_DATABASE_URL = saved
    }
  })
})

Engines.describeEach(
  "toolgate serve without --dir",
  (engine) => {
    it("serves every process's asks on the Postgres database in TOOLGATE_DATABASE_URL", async () => {
      const url = await Effect.runPromise(engine.shared(""))
      const token = "remote-serve-token-0123456789"
      const server = await serve({ TOOLGATE_DATABASE_URL: url, TOOLGATE_SERVE_TOKEN: token }, [])
      try {
        expect(server.lines[0]).toContain("every process on the database")
        const base = /at (http:\/\/127\.0\.0\.1:\d+)$/.exec(server.lines[0]!)![1]!
        const listed = await fetch(`${base}/api/asks`, { headers: { authorization: `Bearer ${token}` } })
        expect(listed.status).toBe(200)
        expect(await listed.json()).toEqual([])
        const missing = await fetch(`${base}/api/asks/per_nope`, { headers: { authorization: `Bearer ${token}` } })
        expect(missing.status).toBe(404)
        expect((await fetch(`${base}/api/saved`)).status).toBe(401)
      } finally {
        server.stop()
      }
    }, 120_000)
  },
  Engines.postgresOnly,
)
