/** The README's embedder test, verbatim apart from the import path, so the README stays true. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SessionV2, ToolRegistry } from "../src/index.js"
import { Core } from "../src/entry/testing.js"

layer(
  Core.layerTest({ config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] }, permission: "once" }),
)("my tools", (it) => {
  it.effect("writes after a one-time approval", () =>
    Effect.gen(function* () {
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      const turn = yield* (yield* ToolRegistry.Service).materialize([])
      const settlement = yield* turn.settle({
        sessionID: session.id,
        agent: "build",
        assistantMessageID: "msg_1",
        call: { id: "call_1", name: "write", input: { path: "notes.txt", content: "hi" } },
      })
      expect(settlement.result).toEqual({ type: "text", value: "Created file successfully: notes.txt" })
    }),
  )
})
