import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Fiber, Layer, Option, Scope } from "effect"
import { Database, EventV2, PermissionSaved, PermissionV2, SessionV2 } from "../src/index.js"
import { tempDir } from "./support/location.js"
import { agentControl, buildStack } from "./support/permission-stack.js"

/** A small seeded PRNG (mulberry32) so a failing run can be replayed. */
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const ASSERTS = 1000
const SESSIONS = 20
const ACTIONS = ["read", "edit", "bash"] as const

type Outcome = "ok" | "corrected" | "declined" | "interrupted" | "other"

const classify = (exit: Exit.Exit<void, unknown>): Outcome => {
  if (Exit.isSuccess(exit)) return "ok"
  if (Cause.isInterruptedOnly(exit.cause)) return "interrupted"
  if (PermissionV2.isDeclined(exit.cause)) return "declined"
  const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
  if (failure instanceof PermissionV2.CorrectedError) return "corrected"
  return "other"
}

describe("PermissionV2 chaos", () => {
  it.live(
    "1,000 concurrent asserts across 20 sessions with random replies, interruptions and a final scope close",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const seed = Date.now() % 1_000_000
          const random = prng(seed)
          const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!
          const dir = yield* tempDir()
          const database = Layer.succeedContext(yield* Layer.build(Database.layerMemory))
          const scope = yield* Scope.make()
          const context = yield* buildStack(dir, database).pipe(Scope.extend(scope))
          const permission = Context.get(context, PermissionV2.Service)
          const sessions = Context.get(context, SessionV2.Service)
          const events = Context.get(context, EventV2.Service)
          const saved = Context.get(context, PermissionSaved.Service)
          const sql = Context.get(context, SqlClient.SqlClient)
          yield* Effect.provide(agentControl, context).pipe(Scope.extend(scope))
          for (let s = 0; s < SESSIONS; s++) yield* sessions.create({ id: `ses_c${s}`, agent: "test" })

          const asked = new Map<string, PermissionV2.Request>()
          const replied = new Map<string, Array<string>>()
          yield* events
            .listen(
              (envelope) => {
                if (envelope.type === "permission.v2.asked") {
                  const request = envelope.data
                  expect(asked.has(request.id)).toBe(false)
                  asked.set(request.id, request)
                } else if (envelope.type === "permission.v2.replied") {
                  const data = envelope.data
                  replied.set(data.requestID, [...(replied.get(data.requestID) ?? []), data.reply])
                }
              },
              ...PermissionV2.Event.Definitions,
            )
            .pipe(Scope.extend(scope))

          // Fork every assert at once; resources and save patterns overlap so cascades and auto-resolves happen.
          const inputs = Array.from({ length: ASSERTS }, (_, i) => {
            const resource = `f${Math.floor(random() * 60)}`
            const save = random() < 0.8 ? [resource] : undefined
            return {
              id: `per_c${i}`,
              sessionID: `ses_c${i % SESSIONS}`,
              action: pick(ACTIONS),
              resources: random() < 0.2 ? [resource, `f${Math.floor(random() * 60)}`] : [resource],
              ...(save === undefined ? {} : { save }),
            } satisfies PermissionV2.AssertInput
          })
          const waiters = new Map<string, Fiber.RuntimeFiber<void, unknown>>()
          let forking = true

          // Drive: decide once per request seen pending; act concurrently, while asserts are still arriving.
          const decided = new Set<string>()
          const leftover = new Set<string>()
          const interruptedByUs = new Set<string>()
          const alwaysAccepted: Array<{ action: string; save: ReadonlyArray<string> }> = []
          const actions: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
          const done = () =>
            !forking && Array.from(waiters).every(([id, fiber]) => leftover.has(id) || fiber.unsafePoll() !== null)
          let rounds = 0
          const driver = Effect.gen(function* () {
            while (!done()) {
              rounds++
              for (const request of yield* permission.list()) {
                if (decided.has(request.id)) continue
                decided.add(request.id)
                const roll = random()
                if (roll < 0.03) {
                  leftover.add(request.id)
                  continue
                }
                let action: Effect.Effect<unknown, unknown>
                if (roll < 0.12) {
                  interruptedByUs.add(request.id)
                  action = Fiber.interrupt(waiters.get(request.id)!)
                } else {
                  const reply = roll < 0.45 ? "once" : roll < 0.75 ? "always" : "reject"
                  const message = reply === "reject" && random() < 0.5 ? "try another file" : undefined
                  action = permission
                    .reply({ requestID: request.id, reply, ...(message === undefined ? {} : { message }) })
                    .pipe(
                      Effect.tap(() =>
                        Effect.sync(() => {
                          if (reply === "always" && request.save !== undefined && request.save.length > 0) {
                            alwaysAccepted.push({ action: request.action, save: request.save })
                          }
                        }),
                      ),
                      Effect.catchTag("PermissionV2.NotFoundError", () => Effect.void),
                    )
                }
                // Not a child of the driver: a child would be interrupted when the driver finishes first.
                actions.push(yield* Effect.forkIn(action, scope))
                if (random() < 0.3) yield* Effect.yieldNow()
              }
              yield* Effect.yieldNow()
            }
          })
          const driving = yield* Effect.fork(driver)

          // Fork every assert; resources and save patterns overlap so cascades and auto-resolves happen.
          for (const input of inputs) {
            waiters.set(input.id, yield* Effect.fork(permission.assert(input)))
            if (random() < 0.2) yield* Effect.yieldNow()
          }
          forking = false
          yield* Fiber.join(driving)
          for (const fiber of actions) expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)

          const stillPending = (yield* permission.list()).map((request) => request.id)
          expect(stillPending.every((id) => leftover.has(id))).toBe(true)
          yield* Scope.close(scope, Exit.void)

          // Every waiter ends (quickly), nothing stays pending.
          const exits = yield* Effect.forEach(Array.from(waiters), ([id, fiber]) =>
            Effect.map(Fiber.await(fiber), (exit) => [id, exit] as const),
          ).pipe(
            Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error(`waiters hung (seed ${seed})`) }),
          )
          expect(yield* permission.list()).toEqual([])

          // Event accounting: at most one Replied per Asked; none means an interruption or the final close.
          for (const id of replied.keys()) expect(asked.has(id)).toBe(true)
          const outcomes = new Map(exits.map(([id, exit]) => [id, classify(exit)]))
          for (const [id, outcome] of outcomes) {
            expect(outcome, `${id} (seed ${seed})`).not.toBe("other")
            const replies = replied.get(id) ?? []
            expect(replies.length, `${id} replies (seed ${seed})`).toBeLessThanOrEqual(1)
            if (!asked.has(id)) {
              expect(outcome, `${id} allowed without asking`).toBe("ok")
              continue
            }
            if (replies.length === 0) {
              expect(interruptedByUs.has(id) || stillPending.includes(id), `${id} (seed ${seed})`).toBe(true)
              expect(outcome === "interrupted" || (outcome === "declined" && stillPending.includes(id))).toBe(true)
            } else if (outcome !== "interrupted") {
              const reply = replies[0]
              if (outcome === "ok") expect(["once", "always"]).toContain(reply)
              else expect(reply).toBe("reject")
            }
          }
          expect(Array.from(outcomes.values()).filter((outcome) => outcome === "declined").length).toBeGreaterThan(0)
          expect(Array.from(replied.values()).filter((replies) => replies[0] === "always").length).toBeGreaterThan(0)

          // Saved rows are exactly the save patterns of the accepted `always` replies.
          const expected = new Set(alwaysAccepted.flatMap(({ action, save }) => save.map((s) => `${action}\u0000${s}`)))
          const rows = yield* saved.list({ projectID: "global" })
          expect(new Set(rows.map((row) => `${row.action}\u0000${row.resource}`))).toEqual(expected)
          expect(rows.length).toBe(expected.size)
          yield* sql`SELECT 1`
        }),
      ),
    60_000,
  )
})
