/**
 * `Core.layerTest` answers through the one approval protocol: a script may pick any choice the prompt offers, and
 * what it saves records the channel (`test`) and who answered (`Core.layerTest`).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Approvals, PermissionSaved, SessionV2, ToolRegistry } from "../src/index.js"
import { Core } from "../src/entry/testing.js"

const seen: Array<Approvals.Prompt> = []
const testLayer = Core.layerTest({
  config: { permissions: [{ action: "edit", resource: "guarded/*", effect: "ask" }] },
  permission: (request, prompt) => {
    seen.push(prompt)
    return request.resources.some((resource) => resource.includes("wide"))
      ? { reply: "always" }
      : { choice: "always:exact" }
  },
})

const write = (path: string) =>
  Effect.gen(function* () {
    const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
    const turn = yield* (yield* ToolRegistry.Service).materialize([])
    return yield* turn.settle({
      sessionID: session.id,
      agent: "build",
      assistantMessageID: "msg_choices",
      call: { id: `call_${path}`, name: "write", input: { path, content: "x" } },
    })
  })

layer(testLayer)("Core.layerTest on Approvals", (test) => {
  test.effect("a scripted choice saves exactly what it showed, with channel and by; always is the widest", () =>
    Effect.gen(function* () {
      const exact = yield* write("guarded/a.txt")
      expect(exact.result.type).toBe("text")
      const prompt = seen.at(-1)!
      expect(prompt.choices.map((choice) => choice.id)).toContain("always:exact")
      const shown = prompt.choices.find((choice) => choice.id === "always:exact")!
      const store = yield* PermissionSaved.Service
      const rows = yield* store.list()
      expect(rows.map((row) => row.resource)).toEqual(shown.saves.map((entry) => entry.pattern))
      expect(rows[0]).toMatchObject({ action: "edit", channel: "test", by: "Core.layerTest" })

      yield* write("guarded/wide.txt")
      const wide = seen.at(-1)!
      const widest = Approvals.choiceOf(wide, "always")!
      expect(widest.id).toBe("always:pattern")
      expect((yield* store.list()).map((row) => row.resource)).toContain(widest.saves[0]!.pattern)
    }),
  )
})

describe("Approvals.choiceOf", () => {
  const choice = (id: string, lifetime: Approvals.Lifetime, scope?: Approvals.AlwaysScope): Approvals.Choice => ({
    id,
    lifetime,
    ...(scope === undefined ? {} : { scope }),
    label: id,
    action: "edit",
    saves: [],
  })
  it("maps the three replies: always is the widest always offered, none when nothing is saved", () => {
    const all = [
      choice("once", "once"),
      choice("always:exact", "always", "exact"),
      choice("always:directory", "always", "directory"),
      choice("reject", "reject"),
    ]
    expect(Approvals.choiceOf({ choices: all }, "always")?.id).toBe("always:directory")
    expect(Approvals.choiceOf({ choices: all }, "once")?.id).toBe("once")
    expect(Approvals.choiceOf({ choices: all }, "reject")?.id).toBe("reject")
    expect(Approvals.choiceOf({ choices: [all[0]!, all[3]!] }, "always")).toBeUndefined()
  })
})
