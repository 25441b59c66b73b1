/**
 * The AI SDK approval path shows the truth: the `reason` of a tool-approval request (`AiSdkTools.describeAsk`) shows
 * every C0/C1 control, DEL, escape sequence, bidi override and invisible character as a visible escape. Fed with a
 * synthetic request holding all of them, and with real approval requests of `generateText` (bash commands and a
 * file name that would display as something else).
 */
import { describe, expect, it } from "@effect/vitest"
import { Approvals, PermissionV2, Printable, SessionV2, ToolRegistry, Wildcard } from "@toolgate/core"
import { Core } from "@toolgate/core/testing"
import { generateText, stepCountIs } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect } from "effect"
import * as Hostile from "../../core/test/support/hostile-text.js"
import { AiSdkTools } from "../src/index.js"

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}

describe("AI SDK approval reason", () => {
  it("shows every field of a request escaped, one resource per line", () => {
    const resources = [Hostile.EVERYTHING, ...Hostile.DISGUISED.map((item) => item.raw)]
    const request: PermissionV2.Request = {
      id: PermissionV2.ID.make("per_hostile"),
      sessionID: "ses_hostile",
      action: "bash",
      resources,
      save: resources.map(Wildcard.literal),
      always: {
        action: "bash",
        entries: [
          ...resources.map((text) => ({ pattern: Wildcard.literal(text), text, literal: true })),
          { pattern: `${Hostile.EVERYTHING} *`, text: `${Hostile.EVERYTHING} *`, literal: false },
        ],
        scope: { kind: "directory", projectID: "global", directory: `/tmp/${Hostile.EVERYTHING}` },
      },
      metadata: { diff: `--- a\n+++ b\n@@ -1 +1 @@\n-${Hostile.EVERYTHING}\n+${Hostile.EVERYTHING}\n` },
    }
    const prompt = Approvals.prompt(request, undefined, 0, 1_000)
    expect(prompt.diff).toBeDefined()
    const reason = AiSdkTools.describeAsk(prompt)
    expect(Hostile.rawFound(reason, { newlines: true })).toEqual([])
    const lines = reason.split("\n")
    expect(lines[0]).toBe(`toolgate permission per_hostile: bash on ${resources.length} resources:`)
    expect(lines.slice(1, 1 + resources.length)).toEqual(resources.map((resource) => `  - ${Printable.show(resource)}`))
    // Then the diff, every choice with what it saves (each hostile value escaped), the deadline and how to answer.
    expect(lines).toContain("diff:")
    expect(lines).toContain("choices:")
    for (const line of Approvals.describeChoices(prompt)) expect(lines).toContain(`  ${line}`)
    expect(lines).toContain(`answer by ${new Date(1_000).toISOString()}`)
    expect(lines.at(-1)).toMatch(/^Approve to allow once; approve with the reason "always" to save it/)
  })

  it.live("real approval requests: bash commands and a file name are described as what they are", () =>
    Effect.gen(function* () {
      const name = "notes\u202etxt.hs\x1b[2K"
      const calls = [
        ...Hostile.DISGUISED.map((item, i) => ({ id: `b${i}`, tool: "bash", input: { command: item.raw } })),
        { id: "w", tool: "write", input: { path: name, content: "x" } },
      ]
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      const turn = yield* (yield* ToolRegistry.Service).materialize([])
      const reasons: Array<string> = []
      for (const call of calls) {
        const tools = AiSdkTools.toAiSdkTools(
          turn,
          { sessionID: session.id, agent: "build", assistantMessageID: `msg_${call.id}` },
          yield* Effect.runtime<never>(),
          { approval: "ai-sdk" },
        )
        const model = new MockLanguageModelV4({
          doGenerate: async () => ({
            content: [
              { type: "tool-call", toolCallId: call.id, toolName: call.tool, input: JSON.stringify(call.input) },
            ],
            finishReason: { unified: "tool-calls", raw: undefined },
            usage,
            warnings: [],
          }),
        })
        const result = yield* Effect.promise(() =>
          generateText({
            model,
            tools,
            toolApproval: AiSdkTools.toolApproval(tools),
            prompt: "go",
            stopWhen: stepCountIs(1),
          }),
        )
        const request = result.content.find((part) => part.type === "tool-approval-request") as
          { readonly reason?: string } | undefined
        expect(request?.reason, call.id).toBeTypeOf("string")
        reasons.push(request!.reason!)
      }
      const all = reasons.join("\n")
      expect(Hostile.rawFound(all, { newlines: true })).toEqual([])
      // Every command is shown whole (escaped) above its resources: what the user approves is what the shell runs.
      for (const fragment of Hostile.DISGUISED.map(({ shown }) => `command: ${shown}`)) {
        expect(all, fragment).toContain(fragment)
      }
      expect(reasons.at(-1)).toContain(`: edit ${Printable.show(name)}\n`)
    }).pipe(
      Effect.provide(
        Core.layerTest({
          config: {
            permissions: [
              { action: "bash", resource: "*", effect: "ask" },
              { action: "edit", resource: "*", effect: "ask" },
            ],
          },
        }),
      ),
      Effect.scoped,
    ),
  )
})
