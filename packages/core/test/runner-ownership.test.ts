import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Duration, Effect, Fiber, Layer, Schedule, Schema, TestClock, TestServices } from "effect"
import { Core, Runner, ScriptedModel, SessionV2, Tool, ToolCallJournal, ToolRegistry } from "../src/index.js"
import * as Children from "./support/children.js"
import { tempDir } from "./support/location.js"

interface Row {
  readonly call_id: string
  readonly status: string
  readonly error: string | null
}

const rows = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<Row>`SELECT call_id, status, error FROM tool_call ORDER BY call_id`,
)

/** A Location with its own runner over an already built process context. */
const location = (
  processContext: Context.Context<Core.ProcessServices>,
  directory: string,
  script: ScriptedModel.Script,
) =>
  Layer.build(
    Runner.layer.pipe(
      Layer.provideMerge(ScriptedModel.layer(script)),
      Layer.provideMerge(Core.layerLocation({ directory, discover: false })),
      Layer.provideMerge(Layer.succeedContext(processContext)),
    ),
  )

/**
 * Re-reads `read` until `done` holds: waits in real time (what is awaited runs in another fiber or process), bounded
 * so a recovery that never comes fails the test instead of hanging it.
 */
const waitFor = <A, E, R>(
  read: Effect.Effect<A, E, R>,
  done: (value: A) => boolean,
  bound: Duration.DurationInput = "30 seconds",
) =>
  TestServices.provideLive(
    Effect.repeat(read, { until: done, schedule: Schedule.spaced("20 millis") }).pipe(
      Effect.timeoutFail({ duration: bound, onTimeout: () => new Error("timed out waiting for recovery") }),
    ),
  )

const hangScript = (ids: ReadonlyArray<string>): ScriptedModel.Script => [
  ids.map((id) => ({ type: "tool-call" as const, id, name: "gate", input: { text: id } })),
  [{ type: "text", text: "done" }],
]

describe("Runner ownership of tool calls", () => {
  it.live(
    "a second runner built while the first has calls in flight fails none of them",
    () =>
      Effect.gen(function* () {
        const data = yield* tempDir()
        const processContext = yield* Layer.build(Core.layerProcess({ data }))
        const first = yield* location(processContext, yield* tempDir(), hangScript(["a1", "a2"]))
        const release = yield* Deferred.make<void>()
        const started = yield* Deferred.make<void>()
        let running = 0
        const gate = Tool.make({
          description: "Waits for the test",
          input: Schema.Struct({ text: Schema.String }),
          output: Schema.String,
          execute: (input) =>
            Effect.zipRight(
              Effect.suspend(() => (++running === 2 ? Deferred.succeed(started, undefined) : Effect.void)),
              Effect.as(Deferred.await(release), input.text),
            ),
        })
        const run = yield* Effect.gen(function* () {
          yield* (yield* ToolRegistry.Service).register({ gate })
          const session = yield* (yield* SessionV2.Service).create()
          return yield* Effect.fork((yield* Runner.Service).run({ sessionID: session.id, prompt: "go" }))
        }).pipe(Effect.provide(first))
        yield* Deferred.await(started)
        expect((yield* rows.pipe(Effect.provide(first))).map((row) => row.status)).toEqual(["running", "running"])

        // Another Location of the same process gets its own runner: building it runs recovery.
        const second = yield* location(processContext, yield* tempDir(), [])
        expect(yield* Effect.flatMap(Runner.Service, (runner) => runner.recover()).pipe(Effect.provide(second))).toBe(0)
        expect((yield* rows.pipe(Effect.provide(second))).map((row) => row.status)).toEqual(["running", "running"])

        yield* Deferred.succeed(release, undefined)
        const result = yield* Fiber.join(run)
        expect(result.steps).toBe(2)
        expect(yield* rows.pipe(Effect.provide(first))).toEqual([
          { call_id: "a1", status: "completed", error: null },
          { call_id: "a2", status: "completed", error: null },
        ])
      }).pipe(Effect.scoped),
    60_000,
  )

  it.effect(
    "a runner process killed with SIGKILL has its calls failed only once its lease has expired, by a live runner's recovery round",
    () =>
      Effect.gen(function* () {
        const data = yield* tempDir()
        const lease = Duration.seconds(20)
        const child = yield* Children.scoped(Children.fixture("runner-child.ts"), [
          data,
          yield* tempDir(),
          String(Duration.toMillis(lease)),
          "2",
        ])
        const printed = JSON.parse(yield* Children.nextLine(child)) as { running: Array<string> }
        expect(printed.running.sort()).toEqual(["child-0", "child-1"])

        const processContext = yield* Layer.build(Core.layerProcess({ data }))
        const sql = Context.get(processContext, SqlClient.SqlClient)
        const [owner] = yield* sql<{
          lease_expires: number
        }>`SELECT lease_expires FROM runner_owner WHERE pid = ${child.process.pid!}`
        const expires = owner!.lease_expires

        // While the child lives, a runner in this process (its Clock at the child's present) leaves its calls.
        yield* TestClock.setTime(expires - Duration.toMillis(lease))
        const runner = yield* location(processContext, yield* tempDir(), [])
        const recover = Effect.flatMap(Runner.Service, (r) => r.recover()).pipe(Effect.provide(runner))
        expect((yield* rows.pipe(Effect.provide(runner))).map((row) => row.status)).toEqual(["running", "running"])

        child.process.kill("SIGKILL")
        expect((yield* Children.exited(child)).signal).toBe("SIGKILL")
        // The child's heartbeat may have renewed its lease since the first read (a loaded machine can take longer
        // than one beat to get here): the lease that counts is the last one the child wrote before it died.
        const [last] = yield* sql<{
          lease_expires: number
        }>`SELECT lease_expires FROM runner_owner WHERE pid = ${child.process.pid!}`
        const final = last!.lease_expires
        expect(final).toBeGreaterThanOrEqual(expires)
        // Dead, but its lease has not run out yet: its calls are still left alone.
        yield* TestClock.setTime(final - 1)
        expect(yield* recover).toBe(0)
        expect((yield* rows.pipe(Effect.provide(runner))).map((row) => row.status)).toEqual(["running", "running"])

        // Once it has run out, the live runner's own recovery round takes the calls over within one interval, with
        // nobody calling `recover`; they are failed once (a later round finds nothing).
        yield* TestClock.setTime(final)
        yield* TestClock.adjust(ToolCallJournal.recoveryInterval(Duration.toMillis(ToolCallJournal.LEASE)))
        yield* waitFor(rows.pipe(Effect.provide(runner)), (all) => all.every((row) => row.status === "failed"))
        expect(yield* rows.pipe(Effect.provide(runner))).toEqual([
          { call_id: "child-0", status: "failed", error: Runner.INTERRUPTED },
          { call_id: "child-1", status: "failed", error: Runner.INTERRUPTED },
        ])
        expect(yield* recover).toBe(0)
      }).pipe(Effect.scoped),
    120_000,
  )
  it.live(
    "two live runner processes: one is killed with SIGKILL, the other fails its calls within a recovery interval",
    () =>
      Effect.gen(function* () {
        const data = yield* tempDir()
        // A short lease, so the survivor's recovery round comes within seconds in real time.
        const lease = 1_500
        const start = Effect.gen(function* () {
          const child = yield* Children.scoped(Children.fixture("runner-child.ts"), [
            data,
            yield* tempDir(),
            String(lease),
            "2",
          ])
          expect((JSON.parse(yield* Children.nextLine(child)) as { running: Array<string> }).running).toHaveLength(2)
          return child
        })
        const doomed = yield* start
        const survivor = yield* start
        const processContext = yield* Layer.build(Core.layerProcess({ data }))
        const sql = Context.get(processContext, SqlClient.SqlClient)
        const ownerOf = (pid: number) =>
          Effect.map(sql<{ id: string }>`SELECT id FROM runner_owner WHERE pid = ${pid}`, (rows) => rows[0]!.id)
        const doomedOwner = yield* ownerOf(doomed.process.pid!)
        const survivorOwner = yield* ownerOf(survivor.process.pid!)
        const callsOf = (owner: string) =>
          sql<{ status: string; error: string | null }>`SELECT status, error FROM tool_call WHERE owner_id = ${owner}`

        doomed.process.kill("SIGKILL")
        expect((yield* Children.exited(doomed)).signal).toBe("SIGKILL")
        // Bounded generously (the machine may be loaded); the survivor's round comes every half lease.
        yield* waitFor(callsOf(doomedOwner), (calls) => calls.every((call) => call.status === "failed"))
        expect(yield* callsOf(doomedOwner)).toEqual([
          { status: "failed", error: Runner.INTERRUPTED },
          { status: "failed", error: Runner.INTERRUPTED },
        ])
        // The survivor's own calls run on.
        expect((yield* callsOf(survivorOwner)).map((call) => call.status)).toEqual(["running", "running"])
      }).pipe(Effect.scoped),
    120_000,
  )
})
