/**
 * What the decision journal adds to `PermissionV2.assert`, in one run, on database files as in production: the same
 * allowed asserts (built-in and configured agents, one configuration document, two resources per call) on three
 * Locations, rounds interleaved, medians of process CPU time:
 *   - plain: no `DecisionJournal` (the baseline);
 *   - caller's path: a journal whose `record` only keeps the thunk it is given (what an assert pays itself: the
 *     references captured and the push; nothing is built or written);
 *   - whole cost: `DecisionJournal.layer` on the same file — the asserts, every `evaluated` entry built, encoded and
 *     written in the batches it writes while the loop runs, and a final flush inside the timing.
 * Prints `journal_path_over_plain` and `journal_whole_over_plain`.
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

/** What the record-only journal was given (cleared by its `flush`). */
let kept: Array<unknown> = []

/** A journal that only keeps what `record` is given: the caller's path alone. */
const recordOnly = Layer.succeed(
  DecisionJournal.Service,
  DecisionJournal.Service.of({
    record: (draft) => Effect.sync(() => void kept.push(draft)),
    append: () => Effect.void,
    appendInTransaction: () => Effect.void,
    transaction: (effect) => effect as never,
    flush: Effect.sync(() => void (kept = [])),
    query: () => Effect.succeed([]),
    prune: () => Effect.succeed(0),
  }),
)

/** One Location on its own database file: without a journal, with the record-only one, or with the real one. */
const runtimeOf = (journal: "none" | "record-only" | "real") => {
  const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-journal-")))
  const process =
    journal === "real"
      ? Layer.mergeAll(PermissionSaved.layer, DecisionJournal.layer)
      : journal === "record-only"
        ? Layer.mergeAll(PermissionSaved.layer, recordOnly)
        : PermissionSaved.layer
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

/** `CALLS` asserts, then the journal's buffer written, inside the timing. Returns CPU ms. */
const loop = Effect.gen(function* () {
  const permission = yield* PermissionV2.Service
  const journal = yield* Effect.serviceOption(DecisionJournal.Service)
  // Whatever an earlier round left buffered is not this round's cost.
  if (journal._tag === "Some") yield* journal.value.flush
  const start = cpu()
  for (let i = 0; i < CALLS; i++) yield* permission.assert(inputs[i % inputs.length]!)
  if (journal._tag === "Some") yield* journal.value.flush
  return cpu() - start
})

const main = async () => {
  const plain = runtimeOf("none")
  const recording = runtimeOf("record-only")
  const journaled = runtimeOf("real")
  try {
    for (const runtime of [plain, recording, journaled]) {
      await runtime.runPromise(
        Effect.flatMap(SessionV2.Service, (sessions) => sessions.create({ id: "ses_bench", agent: "build" })),
      )
      // Warm-up: compile the rulesets, fill the views, let the JIT settle.
      await runtime.runPromise(loop)
    }
    const without: Array<number> = []
    const path_: Array<number> = []
    const whole: Array<number> = []
    for (let round = 0; round < ROUNDS; round++) {
      without.push(await plain.runPromise(loop))
      path_.push(await recording.runPromise(loop))
      whole.push(await journaled.runPromise(loop))
    }
    const entries = await journaled.runPromise(
      Effect.flatMap(Effect.serviceOption(DecisionJournal.Service), (journal) =>
        journal._tag === "Some"
          ? Effect.map(journal.value.query({ kinds: ["evaluated"], limit: 1 }), (found) =>
              found.map((entry) => entry.kind),
            )
          : Effect.succeed([] as ReadonlyArray<string>),
      ),
    )
    if (entries.length !== 1 || entries[0] !== "evaluated") throw new Error("no evaluated entry was written")
    const us = (ms: number) => ((ms * 1000) / CALLS).toFixed(2)
    console.log(`assert, ${CALLS} allowed calls (2 resources each), database files, median of ${ROUNDS} rounds (CPU):`)
    console.log(`  plain (no journal):            ${us(median(without))} µs/assert`)
    console.log(`  caller's path (record only):   ${us(median(path_))} µs/assert`)
    console.log(`  whole cost (entries written):  ${us(median(whole))} µs/assert`)
    console.log(`journal_path_over_plain: ${(median(path_) / median(without)).toFixed(2)}`)
    console.log(`journal_whole_over_plain: ${(median(whole) / median(without)).toFixed(2)}`)
  } finally {
    await plain.dispose()
    await recording.dispose()
    await journaled.dispose()
  }
}

void main()
