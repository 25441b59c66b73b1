/**
 * `SettleInput`: the one builder of settle inputs keeps the provider's call id and the identity, makes a fresh call id
 * only for a call without one, and is what the tool's context is made of. (`settle-input.test.ts` is how the registry
 * reads an input however it was built.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, Schema } from "effect"
import { Identifier, SettleInput, Tool, ToolRegistry } from "../src/index.js"
import { registryLayer } from "./support/registry.js"

const identity: SettleInput.Identity = { sessionID: "ses_1", agent: "build", assistantMessageID: "msg_1" }

describe("SettleInput", () => {
  it("keeps the provider's call id and the identity, whatever they are", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.record({
          sessionID: FastCheck.string(),
          agent: FastCheck.string(),
          assistantMessageID: FastCheck.string(),
        }),
        FastCheck.string(),
        FastCheck.string(),
        FastCheck.anything(),
        (who, id, name, input) => {
          const settled = SettleInput.make(who, { id, name, input })
          expect(settled).toStrictEqual({ ...who, call: { id, name, input } })
        },
      ),
    )
  })

  it("gives a call without an id a fresh call id, one per call", () => {
    const first = SettleInput.make(identity, { name: "read", input: {} })
    const second = SettleInput.make(identity, { name: "read", input: {} })
    expect(first.call.id).toMatch(/^call_[0-9a-f]{12}[0-9A-Za-z]{14}$/)
    expect(second.call.id).toMatch(/^call_/)
    expect(first.call.id).not.toBe(second.call.id)
  })

  it("passes progress only when given", () => {
    const reports: Array<Tool.Progress> = []
    expect("progress" in SettleInput.make(identity, { id: "c", name: "t", input: 1 })).toBe(false)
    const settled = SettleInput.make(identity, { id: "c", name: "t", input: 1 }, (update) => reports.push(update))
    settled.progress?.({ message: "half" })
    expect(reports).toStrictEqual([{ message: "half" }])
  })

  it("makes an assistant message id unless one is given", () => {
    const made = SettleInput.identity({ sessionID: "ses_1", agent: "build" })
    expect(made.assistantMessageID).toMatch(/^msg_/)
    expect(made).toStrictEqual({ sessionID: "ses_1", agent: "build", assistantMessageID: made.assistantMessageID })
    expect(SettleInput.identity({ ...identity })).toStrictEqual(identity)
    expect(SettleInput.identity({ sessionID: "s", agent: "a" }).assistantMessageID).not.toBe(made.assistantMessageID)
    expect(Identifier.create("msg")).not.toBe(made.assistantMessageID)
  })

  it.effect("is what the tool's context is made of when a materialization settles it", () =>
    Effect.gen(function* () {
      const seen: Array<Tool.Context> = []
      const registry = yield* ToolRegistry.Service
      yield* registry.register({
        who: Tool.make({
          description: "Reports its context",
          input: Schema.Struct({}),
          output: Schema.String,
          execute: (_input, context) => Effect.sync(() => (seen.push(context), "ok")),
          toModelOutput: ({ output }) => [{ type: "text", text: output }],
        }),
      })
      const turn = yield* registry.materialize()
      yield* turn.settle(SettleInput.make(identity, { id: "call_provider", name: "who", input: {} }))
      yield* turn.settle(SettleInput.make(identity, { name: "who", input: {} }))
      expect(
        seen.map(({ sessionID, agent, assistantMessageID }) => ({ sessionID, agent, assistantMessageID })),
      ).toStrictEqual([identity, identity])
      expect(seen[0]?.toolCallID).toBe("call_provider")
      expect(seen[1]?.toolCallID).toMatch(/^call_/)
      expect(seen[1]?.toolCallID).not.toBe("call_provider")
    }).pipe(Effect.scoped, Effect.provide(registryLayer)),
  )
})
