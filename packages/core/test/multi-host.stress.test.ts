/**
 * Issue 27, "What must be shown": two runner processes and one approval-server process on one Postgres. 200 sessions
 * raise asks at once across the two runners (real `Runner.run` calls whose tool asserts a permission); the answers
 * arrive at the server process (`ApprovalServer.layerDatabase`, no Location) over its loopback HTTP API with the
 * bearer token, which claims the rows; the owning runner applies them. One runner is killed with SIGKILL half-way and the Postgres server is restarted in
 * the middle. Every call settles exactly once, no ask is lost or left hanging, the decision journal holds one
 * `answered` entry per decision, and the killed runner's calls are failed only once its lease has expired while the
 * other runner's calls complete.
 *
 * The test starts its own throwaway Postgres server (scripts/postgres.mjs), so restarting it disturbs no other
 * suite; without the Postgres binaries it is skipped and says why. A revoke committed by one process and honoured by
 * the very next ask of another is shown on both engines in permission-change-stamp.test.ts ("a revoke committed by
 * another process (PermissionSaved.remove) is honoured by the very next ask").
 */
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Queue, Redacted, Schedule } from "effect"
import { Database, Runner } from "../src/index.js"
import * as Children from "./support/children.js"
import { tempDir } from "./support/location.js"

// @ts-expect-error a plain ESM script without declarations
const script = (await import("../../../scripts/postgres.mjs")) as {
  readonly start: () => Promise<{ readonly url?: string; readonly dir?: string; readonly reason?: string }>
  readonly stop: (dir: string) => void
  readonly findBinaries: () => { readonly bin?: string; readonly reason?: string }
}

const SESSIONS = Number(process.env.MULTI_HOST_SESSIONS ?? 100) // per runner
const LEASE_MS = 6_000
const TOKEN = "multi-host-test-token-0123456789"
/** A bound on every wait for a child: generous, the machine is loaded; reaching it means an ask hung. */
const WAIT = "90 seconds"

const binaries = script.findBinaries()

interface Pending {
  readonly id: string
  readonly sessionID: string
  readonly callID: string
  readonly digest: string
}
type Message =
  | { readonly pid: number; readonly pending: ReadonlyArray<Pending> }
  | { readonly settled: string; readonly callID?: string; readonly stopped?: string | null; readonly error?: string }
  | { readonly answered: number }
  | { readonly recovered: number }
  | { readonly url: string }

/** A child's JSON lines as a queue (log lines, which share stdout, are skipped). */
const messages = (child: Children.Child) =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Message>()
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Children.nextLine(child), (line) =>
          line.startsWith("{") ? Queue.offer(queue, JSON.parse(line) as Message) : Effect.void,
        ),
      ),
    )
    return queue
  })

/** Takes messages until `done` says so; fails (an ask hung) when the bound passes first. */
const takeUntil = <A>(queue: Queue.Queue<Message>, what: string, step: (message: Message) => A | undefined) =>
  Effect.gen(function* () {
    for (;;) {
      const result = step(yield* Queue.take(queue))
      if (result !== undefined) return result
    }
  }).pipe(Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error(`timed out waiting for ${what}`) }))

/** Collects `settled` messages until `count` sessions have settled; a second settle of one session is recorded. */
const settles = (queue: Queue.Queue<Message>, count: number, into: Map<string, number>, what: string) => {
  let seen = 0
  return takeUntil(queue, what, (message) => {
    if (!("settled" in message)) return undefined
    into.set(message.settled, (into.get(message.settled) ?? 0) + 1)
    return ++seen === count ? true : undefined
  })
}

/** A dedicated Postgres server for this file (stopped when the scope closes) and a fresh schema on it. */
const dedicatedServer = Effect.acquireRelease(
  Effect.promise(() => script.start()),
  (started) => Effect.sync(() => started.dir !== undefined && script.stop(started.dir)),
).pipe(
  Effect.flatMap((started) =>
    started.url === undefined || started.dir === undefined
      ? Effect.die(new Error(`Postgres did not start: ${started.reason}`))
      : Effect.gen(function* () {
          const schema = "multi_host"
          yield* Effect.flatMap(PgClient.PgClient, (sql) => sql.unsafe(`CREATE SCHEMA ${schema}`)).pipe(
            Effect.provide(PgClient.layer({ url: Redacted.make(started.url!), maxConnections: 1 })),
            Effect.orDie,
          )
          const url = `${started.url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`
          return { url, data: path.join(started.dir!, "data") }
        }),
  ),
)

/** `pg_ctl restart` of the dedicated server (as the `postgres` user when we are root), waiting until it is up. */
const restart = (data: string) =>
  Effect.sync(() => {
    const pgCtl = path.join(binaries.bin!, "pg_ctl")
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
      "restart",
    ]
    const root = typeof process.getuid === "function" && process.getuid() === 0
    const result = root
      ? spawnSync("runuser", ["-u", "postgres", "--", pgCtl, ...args], { encoding: "utf8" })
      : spawnSync(pgCtl, args, { encoding: "utf8" })
    expect(result.status, result.stderr).toBe(0)
  })

/** Runs `query` on its own connection pool (opened after a restart, so no connection of before is reused). */
const onDatabase = <A>(url: string, query: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  query.pipe(Effect.provide(Database.layerUrl(url, { maxConnections: 1 })), Effect.orDie)

interface CallRow {
  readonly session_id: string
  readonly call_id: string
  readonly status: string
  readonly error: string | null
}

describe.skipIf(binaries.bin === undefined)(
  `two runners and an approval server on one Postgres${binaries.bin === undefined ? ` (skipped: ${binaries.reason})` : ""}`,
  () => {
    it.live(
      `${SESSIONS * 2} sessions ask at once across two runners; one runner is killed, Postgres restarts; every call settles once`,
      () =>
        Effect.gen(function* () {
          const { url, data } = yield* dedicatedServer
          const directory = yield* tempDir()
          const runner = (name: string) =>
            Effect.gen(function* () {
              const child = yield* Children.scoped(Children.fixture("multi-host-runner.ts"), [
                url,
                yield* tempDir(),
                directory,
                String(LEASE_MS),
                String(SESSIONS),
                name,
              ])
              return { name, child, queue: yield* messages(child) }
            })
          const [a, b] = yield* Effect.all([runner("runner-a"), runner("runner-b")], { concurrency: "unbounded" })
          const serverChild = yield* Children.scoped(Children.fixture("multi-host-server.ts"), [url, TOKEN])
          const server = yield* Effect.flatMap(messages(serverChild), (queue) =>
            takeUntil(queue, "the approval server", (message) => ("url" in message ? message : undefined)),
          )
          const pendingOf = (r: typeof a) =>
            takeUntil(r.queue, `${r.name}'s asks`, (message) => ("pending" in message ? message.pending : undefined))
          const [askedA, askedB] = yield* Effect.all([pendingOf(a), pendingOf(b)], { concurrency: "unbounded" })
          expect(askedA).toHaveLength(SESSIONS)
          expect(askedB).toHaveLength(SESSIONS)
          expect(new Set([...askedA, ...askedB].map((ask) => ask.id)).size).toBe(SESSIONS * 2)

          // Half of each runner's asks are answered (every other one rejected), the rest stay pending.
          const choiceOf = (index: number) => (index % 2 === 0 ? "once" : "reject")
          const half = SESSIONS / 2
          // Answers go to the approval server over its loopback HTTP API, as a person's browser would send them.
          const post = (ask: Pending, choice: string) =>
            Effect.tryPromise(() =>
              fetch(`${server.url}/api/asks/${ask.id}/answer`, {
                method: "POST",
                headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
                body: JSON.stringify({ digest: ask.digest, choice }),
              }),
            ).pipe(
              // A connection refused or a 5xx while the database is away is retried; any other answer is final.
              Effect.filterOrFail(
                (response) => response.status < 500,
                (response) => new Error(`HTTP ${response.status}`),
              ),
              Effect.retry(Schedule.spaced("500 millis").pipe(Schedule.intersect(Schedule.recurs(20)))),
              Effect.map((response) => response.status),
            )
          const answer = (_r: typeof a, asks: ReadonlyArray<Pending>, offset: number) =>
            Effect.forEach(asks, (ask, i) => post(ask, choiceOf(offset + i)), { concurrency: 8 }).pipe(
              Effect.map((statuses) => expect(statuses.every((status) => status === 204)).toBe(true)),
            )
          const settledA = new Map<string, number>()
          const settledB = new Map<string, number>()
          yield* answer(a, askedA.slice(0, half), 0)
          yield* answer(b, askedB.slice(0, half), 0)
          yield* Effect.all(
            [
              settles(a.queue, half, settledA, "runner-a's first half"),
              settles(b.queue, half, settledB, "runner-b's first half"),
            ],
            { concurrency: "unbounded" },
          )

          // Postgres restarts while runner-a has 50 asks and runner-b 50 asks pending.
          yield* restart(data)

          // runner-b dies without closing; its 50 unanswered calls stay `running`.
          b.child.process.kill("SIGKILL")
          expect((yield* Children.exited(b.child)).signal).toBe("SIGKILL")

          // runner-a's other half is answered after the restart; nothing was lost.
          yield* answer(a, askedA.slice(half), half)
          yield* settles(a.queue, half, settledA, "runner-a's second half")

          // Lease: runner-b's calls are left alone until its last lease has run out, then failed.
          const owners = onDatabase(
            url,
            Effect.flatMap(
              SqlClient.SqlClient,
              (sql) =>
                sql<{
                  instance: string
                  lease_expires: number
                }>`SELECT instance, lease_expires FROM runner_owner WHERE instance IN ('runner-a', 'runner-b')`,
            ),
          )
          const final = (yield* owners).find((row) => row.instance === "runner-b")!.lease_expires
          // runner-a renews its lease every third of it: wait for a renewal after runner-b's death.
          yield* owners.pipe(
            Effect.repeat({
              schedule: Schedule.spaced("200 millis"),
              until: (rows) => (rows.find((row) => row.instance === "runner-a")?.lease_expires ?? 0) > final,
            }),
            Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error("runner-a never renewed its lease") }),
          )
          const recover = (at: number) =>
            Effect.zipRight(
              Effect.sync(() => a.child.send(JSON.stringify({ recover: at }))),
              takeUntil(a.queue, "a recovery", (message) => ("recovered" in message ? message.recovered : undefined)),
            )
          expect(yield* recover(final - 1)).toBe(0)
          expect(yield* recover(final)).toBe(half)

          serverChild.process.stdin?.end()
          expect((yield* Children.exited(serverChild)).code).toBe(0)
          // runner-a closes cleanly (its journal buffer is written, its owner row removed).
          a.child.process.stdin?.end()
          expect((yield* Children.exited(a.child)).code).toBe(0)

          // Every session of runner-a settled exactly once, runner-b's answered half exactly once, the rest never.
          expect([...settledA.values()].every((n) => n === 1)).toBe(true)
          expect([...settledB.values()].every((n) => n === 1)).toBe(true)
          expect(new Set(settledA.keys())).toEqual(new Set(askedA.map((ask) => ask.sessionID)))
          expect(new Set(settledB.keys())).toEqual(new Set(askedB.slice(0, half).map((ask) => ask.sessionID)))

          const calls = yield* onDatabase(
            url,
            Effect.flatMap(
              SqlClient.SqlClient,
              (sql) => sql<CallRow>`SELECT session_id, call_id, status, error FROM tool_call`,
            ),
          )
          expect(calls).toHaveLength(SESSIONS * 2)
          const callOf = new Map(calls.map((row) => [row.session_id, row]))
          const expectCall = (ask: Pending, status: string, error: string | null) =>
            expect({ ...callOf.get(ask.sessionID), session_id: ask.sessionID }).toEqual({
              session_id: ask.sessionID,
              call_id: ask.callID,
              status,
              error,
            })
          askedA.forEach((ask, i) =>
            choiceOf(i) === "once"
              ? expectCall(ask, "completed", null)
              : expectCall(ask, "failed", Runner.USER_REJECTED),
          )
          askedB
            .slice(0, half)
            .forEach((ask, i) =>
              choiceOf(i) === "once"
                ? expectCall(ask, "completed", null)
                : expectCall(ask, "failed", Runner.USER_REJECTED),
            )
          askedB.slice(half).forEach((ask) => expectCall(ask, "failed", Runner.INTERRUPTED))

          // The journal: one `asked` entry per ask, one `answered` entry per decision, none for what nobody answered.
          const journal = yield* onDatabase(
            url,
            Effect.flatMap(
              SqlClient.SqlClient,
              (sql) =>
                sql<{
                  request_id: string
                  kind: string
                }>`SELECT request_id, kind FROM decision WHERE kind IN ('asked', 'answered')`,
            ),
          )
          const entries = (kind: string) => journal.filter((row) => row.kind === kind).map((row) => row.request_id)
          const answeredIDs = [...askedA, ...askedB.slice(0, half)].map((ask) => ask.id)
          expect(entries("answered").sort()).toEqual([...answeredIDs].sort())
          expect(entries("asked").sort()).toEqual([...askedA, ...askedB].map((ask) => ask.id).sort())

          // Every answered ask's row is settled; runner-b's unanswered ones stay with their dead owner.
          const rows = yield* onDatabase(
            url,
            Effect.flatMap(
              SqlClient.SqlClient,
              (sql) => sql<{ id: string; status: string }>`SELECT id, status FROM pending_ask`,
            ),
          )
          const statusOf = new Map(rows.map((row) => [row.id, row.status]))
          expect(answeredIDs.every((id) => statusOf.get(id) === "settled")).toBe(true)
          expect(askedB.slice(half).every((ask) => statusOf.get(ask.id) === "pending")).toBe(true)
        }).pipe(Effect.scoped),
      240_000,
    )
  },
)
