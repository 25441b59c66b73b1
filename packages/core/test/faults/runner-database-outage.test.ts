/**
 * A call's result survives a database outage: on a Postgres server of the test's own, a tool call ends while the
 * server is stopped. The result still reaches the model (the scripted model's next request holds it), the run goes
 * on, and the call's row is written once the server is back. When the database stays away past
 * `ToolCallJournal.RESULT_WRITE_BOUND` (driven with TestClock), the run fails with the typed
 * `ToolCallJournal.RecordError` — not a defect.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Duration, Effect, Exit, Fiber, Layer, Option, Schema, TestClock, TestServices } from "effect"
import { Core, Runner, ScriptedModel, SessionV2, Tool, ToolCallJournal, ToolRegistry } from "../../src/index.js"
import { binaries, dedicatedServer, pgCtl } from "../support/dedicated-postgres.js"
import { tempDir } from "../support/location.js"

const script: ScriptedModel.Script = [
  [{ type: "tool-call", id: "call-outage", name: "outage", input: { text: "x" } }],
  [{ type: "text", text: "done" }],
]

/** Re-reads `read` in real time until `done` holds, bounded (a hang guard, not a timing assertion). */
const waitFor = <A, E, R>(read: Effect.Effect<A, E, R>, done: (value: A) => boolean) => {
  const loop: Effect.Effect<A, E, R> = Effect.flatMap(read, (value) =>
    done(value) ? Effect.succeed(value) : Effect.zipRight(Effect.sleep("20 millis"), loop),
  )
  return TestServices.provideLive(
    loop.pipe(Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error("timed out") })),
  )
}

/** A Location on the dedicated server with a tool `outage` that stops the server and then returns its result. */
const setup = Effect.gen(function* () {
  const server = yield* dedicatedServer("outage")
  const location = yield* Layer.build(
    Runner.layer.pipe(
      Layer.provideMerge(ScriptedModel.layer(script)),
      Layer.provideMerge(
        Core.layer({ directory: yield* tempDir(), data: yield* tempDir(), discover: false, databaseUrl: server.url }),
      ),
    ),
  )
  const outage = Tool.make({
    description: "Stops the database, then returns",
    input: Schema.Struct({ text: Schema.String }),
    output: Schema.String,
    execute: () => Effect.as(pgCtl(server.data, "stop"), "the result"),
  })
  const run = yield* Effect.gen(function* () {
    yield* (yield* ToolRegistry.Service).register({ outage })
    const session = yield* (yield* SessionV2.Service).create()
    return yield* Effect.fork((yield* Runner.Service).run({ sessionID: session.id, prompt: "go" }))
  }).pipe(Effect.provide(location))
  const requests = Effect.provide(ScriptedModel.Requests, location)
  // The model's second request carries the tool's result: the run went on while the database was down.
  const secondRequest = Effect.flatMap(
    waitFor(
      Effect.flatMap(requests, (all) => all.get),
      (all) => all.length >= 2,
    ),
    (all) => Effect.succeed(all[1]!),
  )
  return { server, location, run, secondRequest }
})

describe.skipIf(binaries.bin === undefined)(
  `a call's result and a database outage${binaries.bin === undefined ? ` (skipped: ${binaries.reason})` : ""}`,
  () => {
    it.live(
      "Postgres stopped while a call ends: the result reaches the model, the row is written once Postgres is back",
      () =>
        Effect.gen(function* () {
          const { server, location, run, secondRequest } = yield* setup
          const request = yield* secondRequest
          expect(request.messages).toContainEqual(
            expect.objectContaining({
              role: "tool",
              callID: "call-outage",
              result: { type: "text", value: "the result" },
            }),
          )
          yield* pgCtl(server.data, "restart")
          const result = yield* Fiber.join(run)
          expect(result.steps).toBe(2)
          const rows = yield* Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql<{
                status: string
                result: string
              }>`SELECT status, result FROM tool_call WHERE call_id = 'call-outage'`,
          ).pipe(Effect.provide(location))
          expect(rows.map((row) => row.status)).toEqual(["completed"])
          expect(JSON.parse(rows[0]!.result)).toEqual({ type: "text", value: "the result" })
        }).pipe(Effect.scoped),
      120_000,
    )

    it.effect(
      "a database still down past RESULT_WRITE_BOUND fails the run with ToolCallJournal.RecordError",
      () =>
        Effect.gen(function* () {
          const { server, run, secondRequest } = yield* setup
          yield* secondRequest
          // Each retry waits on the TestClock; every attempt fails at once against the stopped server.
          const bound = Duration.toMillis(ToolCallJournal.RESULT_WRITE_BOUND)
          let exit = run.unsafePoll()
          for (let moved = 0; exit === null; moved += 1000) {
            if (moved > bound * 4) throw new Error("the run did not give up past the bound")
            yield* TestClock.adjust("1 second")
            yield* TestServices.provideLive(Effect.sleep("20 millis"))
            exit = run.unsafePoll()
          }
          // Back up before the scope closes: the runner's owner row is removed then.
          yield* pgCtl(server.data, "restart")
          expect(Exit.isFailure(exit)).toBe(true)
          const error = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
          expect(Option.getOrUndefined(error)).toBeInstanceOf(ToolCallJournal.RecordError)
          expect(Option.getOrThrow(error).message).toMatch(/^The result of tool call call-outage could not be recorded/)
        }).pipe(Effect.scoped),
      120_000,
    )
  },
)
