/**
 * Answering pending asks over HTTP against answering them in process, in one run (fresh asks per round, a database
 * file as in production, the approval server on a loopback port):
 * - 1,000 concurrent pending asks (1,000 fibers suspended in `PermissionV2.assert`), answered one at a time:
 *   p50/p99 latency of one answer, from sending `POST /api/asks/:id/answer` until the suspended call has resumed
 *   (target p99 ≤ 10 ms on loopback), against `Approvals.answer` in process, timed the same way;
 * - throughput: 1,000 pending asks answered by 32 concurrent HTTP clients (answers/s), against in process with the
 *   same concurrency.
 * Prints the figures and the HTTP / in-process ratios.
 *
 * Run: npx tsx --conditions=@toolgate/source bench/approvals.ts
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { NodeHttpClient } from "@effect/platform-node"
import { Deferred, Effect, Fiber, Layer, ManagedRuntime, Redacted } from "effect"
import {
  AgentV2,
  Approvals,
  Database,
  DecisionJournal,
  EventV2,
  Location,
  PermissionSaved,
  PermissionV2,
  SessionV2,
} from "@toolgate/core"
import { ApprovalServer } from "@toolgate/core/server"

const PENDING = 1_000
const ROUNDS = 3
const CONCURRENCY = 32

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!
}
const ms = (value: number) => `${value.toFixed(3)} ms`

const main = async () => {
  const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-")))
  const database = Database.layerFile(path.join(directory, "toolgate.db"))
  const location = Layer.mergeAll(
    Approvals.layer.pipe(Layer.provideMerge(PermissionV2.layer)),
    DecisionJournal.layer,
  ).pipe(
    Layer.provideMerge(Layer.mergeAll(EventV2.layer, AgentV2.layerEmpty, SessionV2.layer, PermissionSaved.layer)),
    Layer.provideMerge(Location.layer({ directory }).pipe(Layer.orDie)),
    Layer.provideMerge(database),
  )
  const runtime = ManagedRuntime.make(
    ApprovalServer.layer().pipe(Layer.provideMerge(location), Layer.provide(NodeHttpClient.layer), Layer.orDie),
  )
  try {
    await runtime.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const agents = yield* AgentV2.Service
          const sessions = yield* SessionV2.Service
          const permission = yield* PermissionV2.Service
          const approvals = yield* Approvals.Service
          const server = yield* ApprovalServer.Service
          const authorization = `Bearer ${Redacted.value(server.token)}`
          yield* agents.transform((draft) => draft.update("test", () => {}))
          yield* sessions.create({ id: "ses_bench", agent: "test" })

          /** PENDING suspended calls; `resumed(i)` completes when call i has resumed. */
          const suspend = (round: number) =>
            Effect.gen(function* () {
              const done = yield* Effect.forEach(Array.from({ length: PENDING }), () => Deferred.make<void>())
              const fibers = yield* Effect.forEach(done, (resumed, i) =>
                Effect.fork(
                  Effect.ensuring(
                    Effect.exit(
                      permission.assert({
                        sessionID: "ses_bench",
                        action: "bench",
                        resources: [`r${round}-${i}`],
                        save: [`r${round}-${i}`],
                      }),
                    ),
                    Deferred.succeed(resumed, undefined),
                  ),
                ),
              )
              let prompts = yield* approvals.pending()
              while (prompts.length < PENDING) {
                yield* Effect.sleep("5 millis")
                prompts = yield* approvals.pending()
              }
              const byResource = new Map(prompts.map((prompt) => [prompt.request.resources[0]!, prompt]))
              const ordered = done.map((_, i) => byResource.get(`r${round}-${i}`)!)
              return { prompts: ordered, done, fibers }
            })

          const overHttp = (prompt: Approvals.Prompt) =>
            Effect.promise(() =>
              fetch(`${server.url}/api/asks/${prompt.request.id}/answer`, {
                method: "POST",
                headers: { authorization, "content-type": "application/json" },
                body: JSON.stringify({ digest: prompt.digest, choice: "once" }),
              }).then(async (reply) => {
                await reply.arrayBuffer()
                if (reply.status !== 204) throw new Error(`answer: HTTP ${reply.status}`)
              }),
            )
          const inProcess = (prompt: Approvals.Prompt) =>
            Effect.orDie(
              approvals.answer({
                requestID: prompt.request.id,
                digest: prompt.digest,
                choice: "once",
                channel: "bench",
              }),
            )

          type Answerer = (prompt: Approvals.Prompt) => Effect.Effect<void>
          const latencies = (answer: Answerer, round: number) =>
            Effect.gen(function* () {
              const { prompts, done, fibers } = yield* suspend(round)
              const times: Array<number> = []
              for (let i = 0; i < PENDING; i++) {
                const start = performance.now()
                yield* answer(prompts[i]!)
                yield* Deferred.await(done[i]!)
                times.push(performance.now() - start)
              }
              yield* Fiber.joinAll(fibers)
              return times
            })
          const throughput = (answer: Answerer, round: number) =>
            Effect.gen(function* () {
              const { prompts, done, fibers } = yield* suspend(round)
              const start = performance.now()
              yield* Effect.forEach(prompts, (prompt, i) => Effect.zipRight(answer(prompt), Deferred.await(done[i]!)), {
                concurrency: CONCURRENCY,
                discard: true,
              })
              const elapsed = performance.now() - start
              yield* Fiber.joinAll(fibers)
              return (PENDING / elapsed) * 1000
            })

          const http = { p50: [] as number[], p99: [] as number[], rate: [] as number[] }
          const local = { p50: [] as number[], p99: [] as number[], rate: [] as number[] }
          let round = 0
          // One warm-up round of each, then ROUNDS measured, interleaved so both see the same machine.
          for (let r = -1; r < ROUNDS; r++) {
            const a = yield* latencies(overHttp, round++)
            const b = yield* latencies(inProcess, round++)
            const c = yield* throughput(overHttp, round++)
            const d = yield* throughput(inProcess, round++)
            if (r < 0) continue
            http.p50.push(percentile(a, 50))
            http.p99.push(percentile(a, 99))
            local.p50.push(percentile(b, 50))
            local.p99.push(percentile(b, 99))
            http.rate.push(c)
            local.rate.push(d)
          }
          const best = (values: ReadonlyArray<number>) => Math.min(...values)
          const most = (values: ReadonlyArray<number>) => Math.max(...values)
          const load = os.loadavg()[0]!.toFixed(1)
          console.log(`approvals bench: ${PENDING} pending asks, best of ${ROUNDS} rounds, load ${load}`)
          console.log(
            `  answer over HTTP     p50 ${ms(best(http.p50))}  p99 ${ms(best(http.p99))}  (target p99 ≤ 10 ms)`,
          )
          console.log(`  answer in process    p50 ${ms(best(local.p50))}  p99 ${ms(best(local.p99))}`)
          console.log(
            `  ratio HTTP/in-process  p50 ${(best(http.p50) / best(local.p50)).toFixed(1)}x  p99 ${(best(http.p99) / best(local.p99)).toFixed(1)}x`,
          )
          console.log(
            `  throughput (${CONCURRENCY} concurrent)  HTTP ${most(http.rate).toFixed(0)}/s  in process ${most(local.rate).toFixed(0)}/s  ratio ${(most(local.rate) / most(http.rate)).toFixed(1)}x`,
          )
          console.log(`  p99 target ${best(http.p99) <= 10 ? "met" : "MISSED"}`)
        }),
      ),
    )
  } finally {
    await runtime.dispose()
    fs.rmSync(directory, { recursive: true, force: true })
  }
}

void main()
