/**
 * Pending asks, in one run (best of ROUNDS, each round on fresh resources), on a database file as in production:
 * - queue: 10,000 `ask`s that stay pending (µs per ask, target ≤ 10 µs), against a per-ask baseline that reads
 *   everything again for each ask (a traced span, a session read, the agent, a saved-row read, a Deferred and one publish),
 *   and split into the change-stamp read and the agent lookup (`ask` itself is untraced), each timed alone (the
 *   stamp also on an in-memory database, where it is the shared connection's `total_changes()`), next to
 *   `AgentV2.resolve` traced, and the traced span an `Effect.fn` would add;
 * - the same queue on the in-memory database `Core.layerTest` uses (process CPU µs per ask, target ≤ 15 µs);
 * - memory: heap per pending ask (needs NODE_OPTIONS=--expose-gc);
 * - release: one `always` reply releasing all 10,000 (target ≤ 100 ms), against a naive per-entry release (a session
 *   read, a saved-row read, one publish and one Deferred per entry), timed on a sample and extrapolated.
 *
 * Run: NODE_OPTIONS=--expose-gc npx tsx --conditions=@toolgate/source bench/pending.ts   (`--gate`: 3 rounds, small
 * baseline samples, ending with a `GATE` line for scripts/bench-gate.mjs)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Context, Deferred, Effect, Layer, ManagedRuntime } from "effect"
import { AgentV2, Database, EventV2, Location, PermissionSaved, PermissionV2, SessionV2 } from "@toolgate/core"
import { report } from "./gate-report.js"

/** `--gate`: a short run (fewer asks and rounds) that ends with a `GATE` line for scripts/bench-gate.mjs. */
const gate = process.argv.includes("--gate")
const PENDING = 10_000
const ROUNDS = gate ? 3 : 5
const QUEUE_SAMPLE = gate ? 1_000 : 2_000
const RELEASE_SAMPLE = gate ? 100 : 1_000
const BASELINE_SAMPLE = gate ? 200 : 2_000
const gc = (globalThis as { gc?: () => void }).gc

const min = (values: ReadonlyArray<number>) => Math.min(...values)
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[values.length >> 1]!

const main = async () => {
  const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-")))
  const runtime = ManagedRuntime.make(
    PermissionV2.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(EventV2.layer, AgentV2.layerEmpty, SessionV2.layer, PermissionSaved.layer)),
      Layer.provideMerge(Location.layer({ directory }).pipe(Layer.orDie)),
      Layer.provideMerge(Database.layerFile(path.join(directory, "toolgate.db"))),
    ),
  )
  try {
    await runtime.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const agents = yield* AgentV2.Service
          const sessions = yield* SessionV2.Service
          const saved = yield* PermissionSaved.Service
          // The same stack on the in-memory database `Core.layerTest` uses (its stamp: the connection's total_changes()).
          const inMemory = yield* Layer.build(
            PermissionV2.layer.pipe(
              Layer.provideMerge(
                Layer.mergeAll(EventV2.layer, AgentV2.layerEmpty, SessionV2.layer, PermissionSaved.layer),
              ),
              Layer.provideMerge(Location.layer({ directory }).pipe(Layer.orDie)),
              Layer.provideMerge(Database.layerMemory),
            ),
          )
          const queried = Context.get(inMemory, PermissionSaved.Service)
          const memoryPermission = Context.get(inMemory, PermissionV2.Service)
          yield* Context.get(inMemory, AgentV2.Service).transform((draft) => draft.update("test", () => {}))
          yield* Context.get(inMemory, SessionV2.Service).create({ id: "ses_bench", agent: "test" })
          yield* Context.get(inMemory, SessionV2.Service).create({ id: "ses_other", agent: "test" })
          yield* Context.get(inMemory, EventV2.Service).listen(() => void seen++, ...PermissionV2.Event.Definitions)
          const events = yield* EventV2.Service
          let seen = 0
          const location = yield* Location.Service
          const permission = yield* PermissionV2.Service
          const scope = { projectID: location.project.id, directory: location.directory }
          yield* agents.transform((draft) => draft.update("test", () => {}))
          yield* sessions.create({ id: "ses_bench", agent: "test" })
          yield* sessions.create({ id: "ses_other", agent: "test" })
          // A subscriber, as a client would have one.
          yield* events.listen(() => void seen++, ...PermissionV2.Event.Definitions)

          const floor = Effect.fn("Bench.floor")(function* () {})
          const sessionOf = (i: number) => (i % 2 === 0 ? "ses_bench" : "ses_other")

          // What one ask did before: its span, a session read, the agent, a saved-row read, a Deferred, a publish.
          const baselineAsk = Effect.fn("Bench.baselineAsk")(function* (i: number) {
            const session = yield* sessions.get(sessionOf(i))
            yield* Effect.withSpan(agents.resolve(session?.agent), "AgentV2.resolve")
            yield* saved.list(scope)
            yield* Deferred.make<void>()
            yield* events.publish(PermissionV2.Event.Replied, {
              sessionID: sessionOf(i),
              requestID: "per_x",
              reply: "once",
            })
          })
          // What a naive release did per entry: a session read, a saved-row read, one publish, one Deferred.
          const naiveEntry = (i: number, deferred: Deferred.Deferred<void>) =>
            Effect.gen(function* () {
              yield* sessions.get(sessionOf(i))
              yield* saved.list(scope)
              yield* events.publish(PermissionV2.Event.Replied, {
                sessionID: sessionOf(i),
                requestID: "per_x",
                reply: "always",
              })
              yield* Deferred.succeed(deferred, undefined)
            })

          const figures = {
            floor: [] as number[],
            queue: [] as number[],
            queueCpu: [] as number[],
            memoryCpu: [] as number[],
            baseline: [] as number[],
            heap: [] as number[],
            release: [] as number[],
            after: [] as number[],
            stamp: [] as number[],
            query: [] as number[],
            agent: [] as number[],
            traced: [] as number[],
            naive: [] as number[],
          }
          let left = 0
          for (let round = 0; round < ROUNDS; round++) {
            let start = performance.now()
            for (let i = 0; i < QUEUE_SAMPLE; i++) yield* floor()
            figures.floor.push(((performance.now() - start) / QUEUE_SAMPLE) * 1000)

            start = performance.now()
            for (let i = 0; i < QUEUE_SAMPLE; i++) yield* saved.changeStamp
            figures.stamp.push(((performance.now() - start) / QUEUE_SAMPLE) * 1000)

            start = performance.now()
            for (let i = 0; i < QUEUE_SAMPLE; i++) yield* queried.changeStamp
            figures.query.push(((performance.now() - start) / QUEUE_SAMPLE) * 1000)

            start = performance.now()
            for (let i = 0; i < QUEUE_SAMPLE; i++) yield* agents.resolve("test")
            figures.agent.push(((performance.now() - start) / QUEUE_SAMPLE) * 1000)

            start = performance.now()
            for (let i = 0; i < QUEUE_SAMPLE; i++) yield* Effect.withSpan(agents.resolve("test"), "AgentV2.resolve")
            figures.traced.push(((performance.now() - start) / QUEUE_SAMPLE) * 1000)

            start = performance.now()
            for (let i = 0; i < BASELINE_SAMPLE; i++) yield* baselineAsk(i)
            figures.baseline.push(((performance.now() - start) / BASELINE_SAMPLE) * 1000)

            gc?.()
            const heapBefore = process.memoryUsage().heapUsed
            start = performance.now()
            const cpu = process.cpuUsage()
            for (let i = 0; i < PENDING; i++) {
              yield* permission.ask({
                sessionID: sessionOf(i),
                action: "read",
                resources: [`r${round}/file${i}.ts`],
                save: ["*"],
              })
            }
            figures.queue.push(((performance.now() - start) / PENDING) * 1000)
            const used = process.cpuUsage(cpu)
            figures.queueCpu.push((used.user + used.system) / PENDING)
            gc?.()
            figures.heap.push((process.memoryUsage().heapUsed - heapBefore) / PENDING)

            const trigger = yield* permission.ask({
              sessionID: "ses_bench",
              action: "read",
              resources: [`r${round}/x.ts`],
              save: [`r${round}/*`],
            })
            start = performance.now()
            yield* permission.reply({ requestID: trigger.id, reply: "always" })
            figures.release.push(performance.now() - start)
            left += (yield* permission.list()).length
            gc?.()
            figures.after.push((process.memoryUsage().heapUsed - heapBefore) / PENDING)

            // The same 10,000 asks on the in-memory database, then released the same way.
            const memoryStart = process.cpuUsage()
            for (let i = 0; i < PENDING; i++) {
              yield* memoryPermission.ask({
                sessionID: sessionOf(i),
                action: "read",
                resources: [`r${round}/file${i}.ts`],
                save: ["*"],
              })
            }
            const memoryUsed = process.cpuUsage(memoryStart)
            figures.memoryCpu.push((memoryUsed.user + memoryUsed.system) / PENDING)
            const memoryTrigger = yield* memoryPermission.ask({
              sessionID: "ses_bench",
              action: "read",
              resources: [`r${round}/x.ts`],
              save: [`r${round}/*`],
            })
            yield* memoryPermission.reply({ requestID: memoryTrigger.id, reply: "always" })
            left += (yield* memoryPermission.list()).length

            const deferreds = yield* Effect.forEach(Array.from({ length: RELEASE_SAMPLE }), () => Deferred.make<void>())
            start = performance.now()
            for (let i = 0; i < RELEASE_SAMPLE; i++) yield* naiveEntry(i, deferreds[i]!)
            figures.naive.push(((performance.now() - start) / RELEASE_SAMPLE) * PENDING)
          }

          const floorUs = min(figures.floor)
          const queueUs = min(figures.queue)
          const baselineUs = min(figures.baseline)
          const releaseMs = min(figures.release)
          const naiveMs = min(figures.naive)
          const verdict = (ok: boolean) => (ok ? "PASS" : "MISS")
          console.log(
            `machine  load average ${os
              .loadavg()
              .map((load) => load.toFixed(1))
              .join(" ")} on ${os.cpus().length} CPUs; best of ${ROUNDS} rounds`,
          )
          console.log(
            `queue    ${queueUs.toFixed(1)} µs per ask (target ≤ 10 µs) ${verdict(queueUs <= 10)}; baseline ${baselineUs.toFixed(1)} µs: ${(baselineUs / queueUs).toFixed(1)}× faster`,
          )
          console.log(`         process CPU time per ask ${min(figures.queueCpu).toFixed(1)} µs`)
          console.log(
            `         in memory (Core.layerTest's database): process CPU time per ask ${min(figures.memoryCpu).toFixed(1)} µs (target ≤ 15 µs) ${verdict(min(figures.memoryCpu) <= 15)}`,
          )
          if (gate)
            report("pending", {
              pending_queue_us: queueUs,
              pending_queue_over_span: queueUs / floorUs,
              pending_queue_speedup: baselineUs / queueUs,
              pending_queue_cpu_us: min(figures.queueCpu),
              pending_memory_queue_cpu_us: min(figures.memoryCpu),
              release_speedup: naiveMs / releaseMs,
            })
          const stampUs = min(figures.stamp)
          const agentUs = min(figures.agent)
          console.log(
            `         of which: the change-stamp read ${stampUs.toFixed(1)} µs (in memory ${min(figures.query).toFixed(1)} µs); the agent ${agentUs.toFixed(1)} µs (traced: ${min(figures.traced).toFixed(1)} µs); the rest ${Math.max(0, queueUs - stampUs - agentUs).toFixed(1)} µs; not paid: a traced span ${floorUs.toFixed(1)} µs (empty Effect.fn)`,
          )
          console.log(
            `memory   ${gc === undefined ? "(run with NODE_OPTIONS=--expose-gc)" : `${(median(figures.heap) / 1024).toFixed(2)} KiB heap per pending ask (median of rounds); ${median(figures.after).toFixed(0)} B per ask still held after the release`}`,
          )
          console.log(
            `release  ${releaseMs.toFixed(1)} ms for ${PENDING} (target ≤ 100 ms) ${verdict(releaseMs <= 100)}; naive ${naiveMs.toFixed(0)} ms extrapolated: ${(naiveMs / releaseMs).toFixed(1)}× faster; still pending after the rounds: ${left}`,
          )
          console.log(
            `rounds   queue µs ${figures.queue.map((v) => v.toFixed(1)).join(" / ")}, in memory (CPU) ${figures.memoryCpu.map((v) => v.toFixed(1)).join(" / ")} (baseline ${figures.baseline.map((v) => v.toFixed(1)).join(" / ")}); release ms ${figures.release.map((v) => v.toFixed(1)).join(" / ")}; events seen ${seen}`,
          )
        }),
      ),
    )
  } finally {
    await runtime.dispose()
    fs.rmSync(directory, { recursive: true, force: true })
  }
}

await main()
