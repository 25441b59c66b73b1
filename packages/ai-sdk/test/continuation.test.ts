/**
 * Two things a user meets first with the AI SDK adapter. In the default in-process mode an ask that nothing in the
 * process answers fails the call at once (instead of hanging for the 10-minute ask timeout); with a listener that
 * replies, the call waits for it. And a conversation continues after an approval with `result.responseMessages`,
 * which holds the approved call's result; `response.messages` (the final step's messages only) does not.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Core, EventV2, PermissionV2, SessionV2, ToolRegistry } from "@toolgate/core"
import { generateText, type ModelMessage, stepCountIs } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect } from "effect"
import { AiSdkTools } from "../src/index.js"

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}

/** A model that writes hello.txt on its first request and answers `answer <n>` on every later one. */
const writer = () => {
  let step = 0
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const n = step++
      return n === 0
        ? {
            content: [
              {
                type: "tool-call",
                toolCallId: "c1",
                toolName: "write",
                input: '{"path":"hello.txt","content":"bye\\n"}',
              },
            ],
            finishReason: { unified: "tool-calls", raw: undefined },
            usage,
            warnings: [],
          }
        : {
            content: [{ type: "text", text: `answer ${n}` }],
            finishReason: { unified: "stop", raw: undefined },
            usage,
            warnings: [],
          }
    },
  })
}

/** A real Location (Core.layer, nothing answering asks) whose toolgate.json asks for every edit. */
const location = () => {
  const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-ai-sdk-")))
  fs.writeFileSync(
    path.join(directory, "toolgate.json"),
    JSON.stringify({ permissions: [{ action: "edit", resource: "*", effect: "ask" }] }),
  )
  fs.writeFileSync(path.join(directory, "hello.txt"), "hello\n")
  return { directory, layer: Core.layer({ directory, memoryDatabase: true, data: path.join(directory, ".data") }) }
}

const tools = (options: AiSdkTools.Options) =>
  Effect.gen(function* () {
    const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
    const turn = yield* (yield* ToolRegistry.Service).materialize([])
    return AiSdkTools.toAiSdkTools(
      turn,
      { sessionID: session.id, agent: "build", assistantMessageID: "m1" },
      yield* Effect.runtime<never>(),
      options,
    )
  })

describe("AiSdkTools in-process mode", () => {
  it.live("an ask nothing answers fails the call at once, withdraws the ask and writes nothing", () => {
    const { directory, layer } = location()
    return Effect.gen(function* () {
      const set = yield* tools({})
      // Not the 10-minute ask timeout: the call fails as soon as it asks (the test's own timeout would catch a wait).
      const result = yield* Effect.promise(() =>
        generateText({ model: writer(), tools: set, prompt: "overwrite", stopWhen: stepCountIs(2) }),
      )
      const error = result.steps[0]!.content.find((part) => part.type === "tool-error") as { error: Error }
      expect(error.error.message).toMatch(
        /^Permission request per_\w+ \(edit: hello\.txt\) was not put to anyone: nothing in this process answers permission asks, so the tool call was cancelled$/,
      )
      expect(yield* (yield* PermissionV2.Service).list()).toEqual([])
      expect(fs.readFileSync(path.join(directory, "hello.txt"), "utf8")).toBe("hello\n")
    }).pipe(Effect.provide(layer), Effect.scoped)
  })

  it.live("with a listener that replies, the call waits for the reply and writes", () => {
    const { directory, layer } = location()
    return Effect.gen(function* () {
      const permission = yield* PermissionV2.Service
      // A UI that answers a moment later, as a person would.
      yield* (yield* EventV2.Service).listen((envelope) => {
        setTimeout(
          () => void Effect.runFork(Effect.ignore(permission.reply({ requestID: envelope.data.id, reply: "once" }))),
          200,
        )
      }, PermissionV2.Event.Asked)
      const set = yield* tools({})
      const result = yield* Effect.promise(() =>
        generateText({ model: writer(), tools: set, prompt: "overwrite", stopWhen: stepCountIs(2) }),
      )
      expect(result.steps[0]!.content.find((part) => part.type === "tool-result")).toMatchObject({ toolCallId: "c1" })
      expect(fs.readFileSync(path.join(directory, "hello.txt"), "utf8")).toBe("bye\n")
    }).pipe(Effect.provide(layer), Effect.scoped)
  })
})

describe("AiSdkTools: continuing a conversation after an approval", () => {
  const approve = (
    messages: Array<ModelMessage>,
    first: { readonly content: ReadonlyArray<{ readonly type: string }> },
  ) => {
    const request = first.content.find((part) => part.type === "tool-approval-request") as unknown as {
      approvalId: string
    }
    messages.push({
      role: "tool",
      content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }],
    })
  }

  it.live("result.responseMessages carries the approved call's result; the next call goes on", () => {
    const { directory, layer } = location()
    return Effect.gen(function* () {
      const set = yield* tools({ approval: "ai-sdk" })
      const model = writer()
      const run = (messages: Array<ModelMessage>) =>
        Effect.promise(() =>
          generateText({
            model,
            tools: set,
            toolApproval: AiSdkTools.toolApproval(set),
            messages,
            stopWhen: stepCountIs(5),
          }),
        )
      const messages: Array<ModelMessage> = [{ role: "user", content: "overwrite hello.txt" }]
      const first = yield* run(messages)
      messages.push(...first.responseMessages)
      approve(messages, first)
      const second = yield* run(messages)
      expect(fs.readFileSync(path.join(directory, "hello.txt"), "utf8")).toBe("bye\n")
      messages.push(...second.responseMessages)
      expect(
        messages.some(
          (m) => m.role === "tool" && m.content.some((part) => part.type === "tool-result" && part.toolCallId === "c1"),
        ),
      ).toBe(true)
      messages.push({ role: "user", content: "thanks" })
      const third = yield* run(messages)
      expect(third.text).toBe("answer 2")
    }).pipe(Effect.provide(layer), Effect.scoped)
  })

  it.live(
    "response.messages holds only the final step: the approved call's result is missing and the SDK refuses",
    () => {
      const { layer } = location()
      return Effect.gen(function* () {
        const set = yield* tools({ approval: "ai-sdk" })
        const model = writer()
        const run = (messages: Array<ModelMessage>) =>
          Effect.tryPromise(() =>
            generateText({
              model,
              tools: set,
              toolApproval: AiSdkTools.toolApproval(set),
              messages,
              stopWhen: stepCountIs(5),
            }),
          )
        const messages: Array<ModelMessage> = [{ role: "user", content: "overwrite hello.txt" }]
        const first = yield* run(messages)
        messages.push(...first.response.messages)
        approve(messages, first)
        const second = yield* run(messages)
        messages.push(...second.response.messages, { role: "user", content: "thanks" })
        const third = yield* Effect.flip(run(messages))
        expect((third.cause as Error).name).toBe("AI_MissingToolResultsError")
      }).pipe(Effect.provide(layer), Effect.scoped)
    },
  )
})
