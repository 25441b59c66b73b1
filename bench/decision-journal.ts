/**
 * What the decision journal adds to `PermissionV2.assert`, in one run, on database files as in production: the same
 * allowed asserts (built-in and configured agents, one configuration document, two resources per call) on a Location
 * with `DecisionJournal.layer` and on one without it, rounds interleaved, medians of process CPU time.
 *   - journal / no journal, whole cost: the asserts and every `evaluated` entry written (the batches the journal
 *     writes while the loop runs, and a final flush inside the timing).
 *   - journal / no journal, the caller's path: the asserts with the batch writes left to after the timing (the
 *     buffer holds them: `FLUSH_BATCH` is reached, but a batch write runs in its own fiber, which the timed loop
 *     does not wait for — so this is the push of references each assert makes plus whatever batch writes interleave).
 * The target is that the caller's path stays within 1.5× and the whole cost within 3×.
 *
 * Run: npx tsx --conditions=@toolgate/source bench/decision-journal.ts
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer, ManagedRuntime } from "effect"
import {
  AgentV2,
  Config,
  Database,
  DecisionJournal,
  EventV2,
  Global,
  Location,
  PermissionSaved,
  PermissionV2,
  SessionV2,
} from "@toolgate/core"

const CALLS = 20_000
const ROUNDS = 7

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[values.length >> 1]!
const cpu = () => {
  const used = process.cpuUsage()
  return (used.user + used.system) / 1000
}

const config: Config.Info = {
  permissions: [
    { action: "read", resource: "*", effect: "allow" },
    { action: "read", resource: "*.env", effect: "deny" },
    { action: "edit", resource: "src/*", effect: "allow" },
  ],
}

/** One Location on its own database file, with or without the journal. */
const runtimeOf = (journal: boolean) => {
  const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-journal-")))
  const process = journal ? Layer.mergeAll(PermissionSaved.layer, DecisionJournal.layer) : PermissionSaved.layer
  return ManagedRuntime.make(
    PermissionV2.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(EventV2.layer, AgentV2.layer, SessionV2.layer)),
      Layer.provideMerge(Location.layer({ directory }).pipe(Layer.orDie)),
      Layer.provideMerge(
        Layer.mergeAll(
          Config.layerFromEntries([{ type: "document", path: path.join(directory, "toolgate.json"), info: config }]),
          Global.layerWith({ data: directory }),
        ),
      ),
      Layer.provideMerge(process),
      Layer.provideMerge(Database.layerFile(path.join(directory, "toolgate.db"))),
    ),
  )
}

const inputs = Array.from({ length: 64 }, (_, i) => ({
  sessionID: "ses_bench",
  agent: "build",
  action: i % 2 === 0 ? "read" : "edit",
  resources: [`src/file-${i}.ts`, `src/dir-${i}/index.ts`],
}))

/** `CALLS` asserts; with `flush`, the journal's buffer written inside the timing. Returns CPU ms. */
const loop = (flush: boolean) =>
  Effect.gen(function* () {
    const permission = yield* PermissionV2.Service
    const journal = yield* Effect.serviceOption(DecisionJournal.Service)
    // Whatever an earlier round left buffered is not this round's cost.
    if (journal._tag === "Some") yield* journal.value.flush
    const start = cpu()
    for (let i = 0; i < CALLS; i++) yield* permission.assert(inputs[i % inputs.length]!)
    if (flush && journal._tag === "Some") yield* journal.value.flush
    const used = cpu() - start
    if (journal._tag === "Some") yield* journal.value.flush
    return used
  })

const main = async () => {
  const plain = runtimeOf(false)
  const journaled = runtimeOf(true)
  try {
    for (const runtime of [plain, journaled]) {
      await runtime.runPromise(
        Effect.flatMap(SessionV2.Service, (sessions) => sessions.create({ id: "ses_bench", agent: "build" })),
      )
      // Warm-up: compile the rulesets, fill the views, let the JIT settle.
      await runtime.runPromise(loop(true))
    }
    const without: Array<number> = []
    const whole: Array<number> = []
    const path_: Array<number> = []
    for (let round = 0; round < ROUNDS; round++) {
      without.push(await plain.runPromise(loop(true)))
      whole.push(await journaled.runPromise(loop(true)))
      path_.push(await journaled.runPromise(loop(false)))
    }
    const entries = await journaled.runPromise(
      Effect.flatMap(DecisionJournal.Service, (journal) => journal.query({ kinds: ["evaluated"], limit: 1 })),
    )
    if (entries.length !== 1 || entries[0]!.kind !== "evaluated") throw new Error("no evaluated entry was written")
    const us = (ms: number) => ((ms * 1000) / CALLS).toFixed(2)
    console.log(`assert, ${CALLS} allowed calls (2 resources each), database files, median of ${ROUNDS} rounds (CPU):`)
    console.log(`  without journal:              ${us(median(without))} µs/assert`)
    console.log(`  with journal, whole cost:     ${us(median(whole))} µs/assert (entries written)`)
    console.log(`  with journal, caller's path:  ${us(median(path_))} µs/assert`)
    console.log(`journal_over_plain_whole: ${(median(whole) / median(without)).toFixed(2)} (target ≤ 3)`)
    console.log(`journal_over_plain_path: ${(median(path_) / median(without)).toFixed(2)} (target ≤ 1.5)`)
  } finally {
    await plain.dispose()
    await journaled.dispose()
  }
}

void main()
