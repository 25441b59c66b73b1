/**
 * The call journal is monotonic: a runner paused past its lease (SIGSTOP, a real process) has its call failed by
 * recovery in another process; when it resumes and its call finishes, recovery's failure stays, and the runner's
 * own result says its call was recovered. An input nested 100,000 levels deep is answered with what was wrong.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Core, Runner, SessionV2, ToolCallJournal } from "../../src/index.js"
import * as Children from "../support/children.js"
import { oneCallModel } from "../support/faults.js"
import { tempDir } from "../support/location.js"

describe("a recovered call", () => {
  it.live(
    "stays failed when its paused runner resumes, and the runner's result reports it",
    () =>
      Effect.gen(function* () {
        const data = yield* tempDir()
        const runner = yield* Children.scoped(Children.fixture("paused-runner.ts"), [data, yield* tempDir(), "1000"])
        expect(yield* Children.nextLine(runner)).toBe("running")
        runner.process.kill("SIGSTOP")

        // Another process recovers once the paused runner's lease has run out (the deadline is the test's own).
        const processContext = yield* Layer.build(Core.layerProcess({ data }))
        const sql = Context.get(processContext, SqlClient.SqlClient)
        const recovered = yield* Effect.gen(function* () {
          const journal = yield* ToolCallJournal.Service
          for (;;) {
            const count = yield* journal.recover(Runner.INTERRUPTED)
            if (count > 0) return count
            yield* Effect.sleep("100 millis")
          }
        }).pipe(
          Effect.provide(ToolCallJournal.layer()),
          Effect.provide(processContext),
          Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error("never recovered") }),
        )
        expect(recovered).toBe(1)

        runner.process.kill("SIGCONT")
        runner.send("go")
        const reported = JSON.parse(yield* Children.nextLine(runner)) as { message: unknown; event: unknown }
        expect(reported.message).toEqual({ type: "error", value: Runner.RECOVERED })
        expect(reported.event).toEqual({
          type: "session.next.tool.failed",
          result: { type: "error", value: Runner.RECOVERED },
        })
        expect((yield* Children.exited(runner)).code).toBe(0)
        // The first terminal state won: the late settle wrote nothing.
        expect(yield* sql`SELECT call_id, status, error, result FROM tool_call`).toEqual([
          { call_id: "paused", status: "failed", error: Runner.INTERRUPTED, result: null },
        ])
      }).pipe(Effect.scoped),
    60_000,
  )

  it.live(
    "a tool input nested 100,000 levels deep is told what was wrong, and the run goes on",
    () =>
      Effect.gen(function* () {
        let deep: unknown = "x"
        for (let i = 0; i < 100_000; i++) deep = { a: deep }
        const data = yield* tempDir()
        const layer = Runner.layer.pipe(
          Layer.provideMerge(oneCallModel("bash", { command: deep })),
          Layer.provideMerge(Core.layer({ directory: yield* tempDir(), data, discover: false })),
        )
        yield* Effect.gen(function* () {
          const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
          const result = yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "go" })
          expect(result.steps).toBe(2)
          const tool = result.messages.find((message) => message.role === "tool")
          expect(tool?.role === "tool" ? tool.result : undefined).toEqual({
            type: "error",
            value: "Invalid tool input: command: expected a string, got an object",
          })
          const sql = yield* SqlClient.SqlClient
          expect(yield* sql`SELECT status, input FROM tool_call`).toEqual([
            { status: "failed", input: JSON.stringify({ unstored: "nested too deeply to store as JSON" }) },
          ])
        }).pipe(Effect.provide(layer))
      }).pipe(Effect.scoped),
    60_000,
  )
})
