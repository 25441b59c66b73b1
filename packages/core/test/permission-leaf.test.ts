import { describe, expect, it } from "@effect/vitest"
import { LLM, PermissionV2 } from "../src/index.js"

describe("PermissionV2 leaf helpers", () => {
  const generic = PermissionV2.leafFailure((error) => new LLM.ToolFailure({ message: "Unable to act", error }))

  it("leafFailure maps permission errors first, passes ToolFailure through, and wraps the rest", () => {
    const blocked = new PermissionV2.BlockedError({ rules: [], action: "read", resources: ["a", "b"] })
    expect(generic(blocked).message).toBe("Permission denied by configured rules for read: a, b")
    const corrected = new PermissionV2.CorrectedError({ feedback: "use src/" })
    expect(generic(corrected).message).toBe(
      "The user rejected permission to use this specific tool call with the following feedback: use src/",
    )
    const failure = new LLM.ToolFailure({ message: "specific" })
    expect(generic(failure)).toBe(failure)
    const other = new Error("disk")
    expect(generic(other)).toMatchObject({ message: "Unable to act", error: other })
  })

  it("fromToolCall gives the caller fields of an assert", () => {
    expect(
      PermissionV2.fromToolCall({
        sessionID: "ses_1",
        agent: "build",
        assistantMessageID: "msg_1",
        toolCallID: "call_1",
      }),
    ).toEqual({ sessionID: "ses_1", agent: "build", source: { type: "tool", messageID: "msg_1", callID: "call_1" } })
  })

  it("fromToolCall with the call and the definition keeps the source to the ids (the prompt shows the call)", () => {
    const input = { path: "a.txt", content: "secret body" }
    const { source } = PermissionV2.fromToolCall({
      sessionID: "ses_1",
      agent: "build",
      assistantMessageID: "msg_1",
      toolCallID: "call_1",
      call: { id: "call_1", name: "write", input },
      definition: { name: "write", description: "Write a file", inputSchema: { type: "object" } },
    })
    expect(source).toEqual({ type: "tool", messageID: "msg_1", callID: "call_1" })
    expect(Object.keys(source)).toEqual(["type", "messageID", "callID"])
    expect(JSON.stringify(source)).toBe('{"type":"tool","messageID":"msg_1","callID":"call_1"}')
    expect({ ...source }).toEqual({ type: "tool", messageID: "msg_1", callID: "call_1" })
  })
})
