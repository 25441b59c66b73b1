/**
 * The AI SDK approval answers on the one approval protocol: a reason naming a choice id picks that choice, and what
 * it saves is exactly what the prompt showed, recorded with the channel `ai-sdk`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Location, PermissionSaved, SessionV2, ToolRegistry } from "@toolgate/core"
import { Core } from "@toolgate/core/testing"
import { Effect } from "effect"
import { AiSdkTools } from "../src/index.js"

const approve = (reason: string) => [
  {
    role: "assistant" as const,
    content: [{ type: "tool-approval-request" as const, approvalId: "ap_1", toolCallId: "c_write" }],
  },
  {
    role: "tool" as const,
    content: [{ type: "tool-approval-response" as const, approvalId: "ap_1", approved: true, reason }],
  },
]

describe("AiSdkTools approval: choices", () => {
  it.live('approved with the reason "always:exact": saves exactly the shown resource, channel ai-sdk', () =>
    Effect.gen(function* () {
      const location = yield* Location.Service
      const file = path.join(location.directory, "src", "hello.txt")
      fs.mkdirSync(path.dirname(file))
      fs.writeFileSync(file, "hello\n")
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      const tools = AiSdkTools.toAiSdkTools(
        yield* (yield* ToolRegistry.Service).materialize([]),
        { sessionID: session.id, agent: "build", assistantMessageID: "msg_choice" },
        yield* Effect.runtime<never>(),
        { approval: "ai-sdk" },
      )
      const input = { path: "src/hello.txt", content: "bye\n" }
      const status = yield* Effect.promise(async () =>
        AiSdkTools.toolApproval(tools)({
          toolCall: { type: "tool-call", toolCallId: "c_write", toolName: "write", input },
          tools,
          messages: [],
        } as never),
      )
      expect(status).toMatchObject({ type: "user-approval" })
      const prompt = AiSdkTools.pendingPrompt(tools, "c_write")!
      const shown = prompt.choices.find((choice) => choice.id === "always:exact")!
      const asked = AiSdkTools.describeAsk(prompt)
      expect(asked).toContain("or with a choice's id as the reason: always:exact, always:directory, session")
      // The same labels as every other channel: narrowest first, each naming what it grants.
      expect(asked).toContain(
        [
          "choices:",
          "  once — Allow once (this call only)",
          '  always:exact — Always allow exactly this: saved, grants edit "src/hello.txt" exactly',
        ].join("\n"),
      )
      expect(asked).toContain("  always:directory — Always allow in this directory: saved, grants edit src/*\n")
      expect(asked).toContain(
        "  session — Allow for this session: grants edit * until the session ends, nothing saved\n",
      )
      expect(asked).toContain("  always:pattern — Always allow this pattern: saved, grants edit *\n")
      yield* Effect.promise(async () => {
        const run = tools["write"]!.execute!(input, {
          toolCallId: "c_write",
          messages: approve(" Always:Exact "),
        } as never) as AsyncIterable<unknown>
        for await (const _ of run);
      })
      expect(fs.readFileSync(file, "utf8")).toBe("bye\n")
      const rows = yield* Effect.flatMap(PermissionSaved.Service, (saved) => saved.list())
      expect(rows.map((row) => row.resource)).toEqual(shown.saves.map((entry) => entry.pattern))
      expect(rows[0]).toMatchObject({ action: "edit", channel: "ai-sdk" })
    }).pipe(
      Effect.provide(Core.layerTest({ config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] } })),
      Effect.scoped,
    ),
  )
})
