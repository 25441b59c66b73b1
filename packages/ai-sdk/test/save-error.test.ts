/**
 * An AI SDK approval "always" whose approval cannot be saved: the user approved the call, so it runs (answered
 * once), nothing is saved, and the call reports why as a preliminary result.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { EventV2, Location, PermissionSaved, PermissionV2, SessionV2, ToolRegistry } from "@toolgate/core"
import { Core } from "@toolgate/core/testing"
import { Context, Effect } from "effect"
import { AiSdkTools } from "../src/index.js"

/** The database client of the test Location (this package does not depend on @effect/sql; the key is its tag's). */
const SqlClient = Context.GenericTag<{ readonly unsafe: (sql: string) => Effect.Effect<unknown, unknown> }>(
  "@effect/sql/SqlClient",
)

describe("AiSdkTools approval: a failed save", () => {
  it.live("approve with always on a database that refuses the save: the call runs once and says so", () =>
    Effect.gen(function* () {
      const location = yield* Location.Service
      const file = path.join(location.directory, "hello.txt")
      fs.writeFileSync(file, "hello\n")
      const sql = yield* Effect.orDie(Effect.serviceOptional(SqlClient))
      yield* sql.unsafe(
        "CREATE TRIGGER refuse_saves BEFORE INSERT ON permission BEGIN SELECT RAISE(ABORT, 'the disk is on fire'); END",
      )
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      const replied: Array<PermissionV2.Reply> = []
      yield* (yield* EventV2.Service).listen(
        (envelope) => void replied.push(envelope.data.reply),
        PermissionV2.Event.Replied,
      )
      const tools = AiSdkTools.toAiSdkTools(
        yield* (yield* ToolRegistry.Service).materialize([]),
        { sessionID: session.id, agent: "build", assistantMessageID: "msg_save" },
        yield* Effect.runtime<never>(),
        { approval: "ai-sdk" },
      )
      const write = tools["write"]!
      const input = { path: "hello.txt", content: "bye\n" }
      const request = yield* Effect.promise(async () => {
        const approval = AiSdkTools.toolApproval(tools)
        return approval({
          toolCall: { type: "tool-call", toolCallId: "c_write", toolName: "write", input },
          tools,
          messages: [],
        } as never)
      })
      expect(request).toMatchObject({ type: "user-approval" })
      const ask = AiSdkTools.pendingAsk(tools, "c_write")!
      const messages = [
        {
          role: "assistant" as const,
          content: [{ type: "tool-approval-request" as const, approvalId: "ap_1", toolCallId: "c_write" }],
        },
        {
          role: "tool" as const,
          content: [{ type: "tool-approval-response" as const, approvalId: "ap_1", approved: true, reason: "always" }],
        },
      ]
      const outputs = yield* Effect.promise(async () => {
        const seen: Array<unknown> = []
        const result = write.execute!(input, { toolCallId: "c_write", messages } as never) as AsyncIterable<unknown>
        for await (const output of result) seen.push(output)
        return seen
      })
      expect(fs.readFileSync(file, "utf8")).toBe("bye\n")
      expect(replied).toEqual(["once"])
      expect(yield* Effect.flatMap(PermissionSaved.Service, (saved) => saved.list())).toEqual([])
      expect(outputs).toContainEqual(
        expect.objectContaining({
          type: "progress",
          message:
            "The approval was not saved to :memory: (Failed to execute statement: SQLITE_CONSTRAINT_TRIGGER: the disk is on fire); this call is allowed once.",
        }),
      )
      expect(ask.action).toBe("edit")
    }).pipe(
      Effect.provide(Core.layerTest({ config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] } })),
      Effect.scoped,
    ),
  )
})
