/**
 * Pending asks: queue 10,000 asks (µs per ask, target ≤ 10 µs; heap per pending ask reported), then release them all
 * with one `always` reply (target ≤ 100 ms), against the per-entry session + saved-row reads a naive auto-resolve
 * would make (timed on a sample in the same run and extrapolated).
 *
 * Run: npx tsx --conditions=@toolgate/source bench/pending.ts   (add --expose-gc via NODE_OPTIONS for heap figures)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer, ManagedRuntime } from "effect"
import { AgentV2, Database, EventV2, Location, PermissionSaved, PermissionV2, SessionV2 } from "@toolgate/core"

const PENDING = 10_000
const gc = (globalThis as { gc?: () => void }).gc

const main = async () => {
  const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-")))
  const runtime = ManagedRuntime.make(
    PermissionV2.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(EventV2.layer, AgentV2.layerEmpty, SessionV2.layer, PermissionSaved.layer)),
      Layer.provideMerge(Location.layer({ directory }).pipe(Layer.orDie)),
      Layer.provideMerge(Database.layerMemory),
    ),
  )
  try {
    await runtime.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const agents = yield* AgentV2.Service
          const sessions = yield* SessionV2.Service
          const saved = yield* PermissionSaved.Service
          const permission = yield* PermissionV2.Service
          yield* agents.transform((draft) => draft.update("test", () => {}))
          yield* sessions.create({ id: "ses_bench", agent: "test" })
          yield* sessions.create({ id: "ses_other", agent: "test" })
          gc?.()
          const heapBefore = process.memoryUsage().heapUsed
          const queueStart = performance.now()
          for (let i = 0; i < PENDING; i++) {
            yield* permission.ask({
              sessionID: i % 2 === 0 ? "ses_bench" : "ses_other",
              action: "read",
              resources: [`src/file${i}.ts`],
              save: ["*"],
            })
          }
          const queue = performance.now() - queueStart
          gc?.()
          const heapPerAsk = (process.memoryUsage().heapUsed - heapBefore) / PENDING
          const trigger = yield* permission.ask({
            sessionID: "ses_bench",
            action: "read",
            resources: ["src/x.ts"],
            save: ["src/*"],
          })
          const start = performance.now()
          yield* permission.reply({ requestID: trigger.id, reply: "always" })
          const release = performance.now() - start
          const left = (yield* permission.list()).length

          const SAMPLE = 1000
          const naiveStart = performance.now()
          for (let i = 0; i < SAMPLE; i++) {
            yield* sessions.get("ses_bench")
            yield* saved.list({ projectID: "global" })
          }
          const naive = ((performance.now() - naiveStart) / SAMPLE) * PENDING

          const perAsk = (queue / PENDING) * 1000
          console.log(`queue    ${perAsk.toFixed(1)} µs per ask (target ≤ 10 µs) ${perAsk <= 10 ? "PASS" : "MISS"}`)
          console.log(
            `memory   ${gc === undefined ? "(run with NODE_OPTIONS=--expose-gc)" : `${(heapPerAsk / 1024).toFixed(2)} KiB heap per pending ask`}`,
          )
          console.log(
            `release  ${release.toFixed(0)} ms for ${PENDING} (target ≤ 100 ms) ${release <= 100 ? "PASS" : "MISS"}; still pending: ${left}`,
          )
          console.log(`naive    ${naive.toFixed(0)} ms extrapolated (per-entry session + saved-row reads only)`)
          console.log(`ratio    ${(naive / release).toFixed(1)}× the naive release`)
        }),
      ),
    )
  } finally {
    await runtime.dispose()
    fs.rmSync(directory, { recursive: true, force: true })
  }
}

void main()
