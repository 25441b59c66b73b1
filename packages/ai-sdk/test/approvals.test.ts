import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { createOpenAI } from "@ai-sdk/openai"
import { describe, expect, it } from "@effect/vitest"
import { Approvals, EventV2, Location, PermissionV2, SessionV2, Tool, ToolRegistry } from "@toolgate/core"
import { Core } from "@toolgate/core/testing"
import { generateText, type LanguageModel, type ModelMessage, stepCountIs, streamText, type ToolSet } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect, FastCheck, Schedule, Schema } from "effect"
import { AiSdkTools } from "../src/index.js"

type CallOptions = MockLanguageModelV4["doGenerateCalls"][number]
type Content = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>["content"]

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}

/**
 * A mock model answering request `n` with `turns[n]` (an empty text once the script is exhausted), through
 * `doGenerate` and `doStream` alike. `prompts` records every request's prompt.
 */
const scripted = (turns: ReadonlyArray<(options: CallOptions) => Content>) => {
  let step = 0
  const next = (options: CallOptions) => {
    const content = turns[step++]?.(options) ?? [{ type: "text", text: "" }]
    const calls = content.some((part) => part.type === "tool-call")
    return { content, finishReason: { unified: calls ? ("tool-calls" as const) : ("stop" as const), raw: undefined } }
  }
  return new MockLanguageModelV4({
    doGenerate: async (options) => ({ ...next(options), usage, warnings: [] }),
    doStream: async (options) => {
      const { content, finishReason } = next(options)
      const parts: Array<unknown> = [{ type: "stream-start", warnings: [] }]
      content.forEach((part, index) => {
        if (part.type === "text") {
          parts.push({ type: "text-start", id: `t${index}` })
          parts.push({ type: "text-delta", id: `t${index}`, delta: part.text })
          parts.push({ type: "text-end", id: `t${index}` })
        } else parts.push(part)
      })
      parts.push({ type: "finish", finishReason, usage })
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part as never)
            controller.close()
          },
        }),
      }
    },
  })
}

const call = (toolCallId: string, toolName: string, input: unknown) =>
  ({ type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) }) as const

/** The tool results the model was sent in a request, by call id. */
const toolResults = (options: CallOptions) =>
  Object.fromEntries(
    options.prompt.flatMap((message) =>
      message.role === "tool"
        ? message.content.flatMap((part) => (part.type === "tool-result" ? [[part.toolCallId, part.output]] : []))
        : [],
    ),
  )

const askForEdits = Core.layerTest({ config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] } })

/** A session, this turn's tools in `ai-sdk` approval mode, and a record of every ask and reply. */
const setup = (options: AiSdkTools.Options = { approval: "ai-sdk" }) =>
  Effect.gen(function* () {
    const location = yield* Location.Service
    const file = path.join(location.directory, "hello.txt")
    fs.writeFileSync(file, "hello\n")
    const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
    const materialization = yield* (yield* ToolRegistry.Service).materialize([])
    const asked: Array<PermissionV2.Request> = []
    const replied: Array<PermissionV2.Reply> = []
    yield* (yield* EventV2.Service).listen(
      (envelope) => {
        if (envelope.type === "permission.v2.asked") asked.push(envelope.data)
        else replied.push(envelope.data.reply)
      },
      PermissionV2.Event.Asked,
      PermissionV2.Event.Replied,
    )
    const tools = AiSdkTools.toAiSdkTools(
      materialization,
      { sessionID: session.id, agent: "build", assistantMessageID: "msg_approvals" },
      yield* Effect.runtime<never>(),
      options,
    )
    return { file, session, tools, asked, replied, permission: yield* PermissionV2.Service }
  })

/** The messages of the follow-up request: the history so far, then one tool message answering the approval. */
const answer = (
  history: ReadonlyArray<ModelMessage>,
  approvalId: string,
  approved: boolean,
  reason?: string,
): Array<ModelMessage> => [
  ...history,
  {
    role: "tool",
    content: [{ type: "tool-approval-response", approvalId, approved, ...(reason === undefined ? {} : { reason }) }],
  },
]

type ApprovalRequest = {
  readonly approvalId: string
  readonly reason?: string
  readonly toolCall: { toolCallId: string }
}

const generate = (model: LanguageModel, tools: ToolSet, messages: Array<ModelMessage>) =>
  Effect.promise(() =>
    generateText({
      model,
      tools,
      toolApproval: AiSdkTools.toolApproval(tools),
      messages,
      stopWhen: [stepCountIs(5), AiSdkTools.stoppedByUser],
    }),
  )

/** One streamText round: every part of the full stream, and the response messages. */
const stream = (model: LanguageModel, tools: ToolSet, messages: Array<ModelMessage>) =>
  Effect.promise(async () => {
    const result = streamText({
      model,
      tools,
      toolApproval: AiSdkTools.toolApproval(tools),
      messages,
      stopWhen: [stepCountIs(5), AiSdkTools.stoppedByUser],
    })
    const parts: Array<{ readonly type: string; readonly [key: string]: unknown }> = []
    for await (const part of result.fullStream) parts.push(part as never)
    return { parts, messages: (await result.response).messages, text: await result.text }
  })

const prompt: Array<ModelMessage> = [{ role: "user", content: "overwrite hello.txt" }]

/** The request's reason describes the pending prompt: the ask, then every choice with what it saves. */
const expectDescribed = (request: ApprovalRequest, ask: PermissionV2.Request, tools: ToolSet) => {
  const prompt = AiSdkTools.pendingPrompt(tools, request.toolCall.toolCallId)!
  expect(prompt.request).toEqual(ask)
  expect(request.reason).toBe(AiSdkTools.describeAsk(prompt))
  expect(request.reason).toContain(`toolgate permission ${ask.id}: edit hello.txt`)
  expect(prompt.choices.map((choice) => choice.id)).toContain("always:exact")
  for (const line of Approvals.describeChoices(prompt)) expect(request.reason).toContain(line)
}

describe("AiSdkTools approval: ai-sdk", () => {
  it.live("generateText: an ask becomes a tool-approval-request; approving it settles the call and writes", () =>
    Effect.gen(function* () {
      const { file, tools, asked, replied, permission } = yield* setup()
      const model = scripted([() => [call("c_write", "write", { path: "hello.txt", content: "bye\n" })]])
      const first = yield* generate(model, tools, prompt)

      const request = first.content.find((part) => part.type === "tool-approval-request") as ApprovalRequest
      expect(request.toolCall.toolCallId).toBe("c_write")
      expect(asked).toHaveLength(1)
      expectDescribed(request, asked[0]!, tools)
      expect(AiSdkTools.pendingAsk(tools, "c_write")).toEqual(asked[0])
      // The write is suspended on our ask, not run: the file is unchanged and the ask is pending.
      expect(fs.readFileSync(file, "utf8")).toBe("hello\n")
      expect((yield* permission.list()).map((pending) => pending.id)).toEqual([asked[0]!.id])

      const second = yield* generate(
        model,
        tools,
        answer([...prompt, ...first.response.messages], request.approvalId, true),
      )
      expect(replied).toEqual(["once"])
      expect(fs.readFileSync(file, "utf8")).toBe("bye\n")
      expect(yield* permission.list()).toEqual([])
      expect(toolResults(model.doGenerateCalls[1]!)["c_write"]).toMatchObject({ type: "text" })
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )

  it.live("generateText: a denial with a reason rejects our ask, writes nothing, and the model reads the reason", () =>
    Effect.gen(function* () {
      const { file, tools, asked, replied, permission } = yield* setup()
      const model = scripted([
        () => [call("c_write", "write", { path: "hello.txt", content: "bye\n" })],
        () => [{ type: "text", text: "Understood." }],
      ])
      const first = yield* generate(model, tools, prompt)
      const request = first.content.find((part) => part.type === "tool-approval-request") as ApprovalRequest
      const messages = answer([...prompt, ...first.response.messages], request.approvalId, false, "keep the file")

      yield* Effect.promise(() => AiSdkTools.applyApprovals(tools, messages))
      expect(replied).toEqual(["reject"])
      expect(yield* permission.get(asked[0]!.id)).toBeUndefined()
      expect(AiSdkTools.pendingAsk(tools, "c_write")).toBeUndefined()

      const second = yield* generate(model, tools, messages)
      expect(second.text).toBe("Understood.")
      expect(toolResults(model.doGenerateCalls[1]!)["c_write"]).toEqual({
        type: "execution-denied",
        reason: "keep the file",
      })
      expect(fs.readFileSync(file, "utf8")).toBe("hello\n")
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )

  it.live("streamText: approval request and response parts; approving with the reason always saves the rule", () =>
    Effect.gen(function* () {
      const { file, session, tools, asked, replied, permission } = yield* setup()
      const model = scripted([
        () => [call("c_write", "write", { path: "hello.txt", content: "bye\n" })],
        () => [{ type: "text", text: "Written." }],
      ])
      const first = yield* stream(model, tools, prompt)
      const request = first.parts.find((part) => part.type === "tool-approval-request") as unknown as ApprovalRequest
      expectDescribed(request, asked[0]!, tools)
      expect(fs.readFileSync(file, "utf8")).toBe("hello\n")

      const second = yield* stream(
        model,
        tools,
        answer([...prompt, ...first.messages], request.approvalId, true, "always"),
      )
      expect(replied).toEqual(["always"])
      expect(second.parts.find((part) => part.type === "tool-result")).toMatchObject({ toolCallId: "c_write" })
      expect(second.text).toBe("Written.")
      expect(fs.readFileSync(file, "utf8")).toBe("bye\n")
      // "always" saved the edit of hello.txt: it no longer asks.
      expect(
        yield* permission.check({ sessionID: session.id, action: "edit", resources: asked[0]!.resources }),
      ).toEqual(["allow"])
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )

  it.live("streamText: a denial with a reason reaches the model; nothing is written", () =>
    Effect.gen(function* () {
      const { file, tools, replied } = yield* setup()
      const model = scripted([
        () => [call("c_write", "write", { path: "hello.txt", content: "bye\n" })],
        () => [{ type: "text", text: "Understood." }],
      ])
      const first = yield* stream(model, tools, prompt)
      const request = first.parts.find((part) => part.type === "tool-approval-request") as unknown as ApprovalRequest
      const messages = answer([...prompt, ...first.messages], request.approvalId, false, "not today")
      yield* Effect.promise(() => AiSdkTools.applyApprovals(tools, messages))
      const second = yield* stream(model, tools, messages)
      expect(replied).toEqual(["reject"])
      expect(second.text).toBe("Understood.")
      expect(toolResults(model.doStreamCalls[1]!)["c_write"]).toEqual({ type: "execution-denied", reason: "not today" })
      expect(fs.readFileSync(file, "utf8")).toBe("hello\n")
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )

  it.live("one approved and one denied call in the same response: the denial does not take the approval down", () =>
    Effect.gen(function* () {
      const { file, tools, asked, replied } = yield* setup()
      const other = path.join(path.dirname(file), "other.txt")
      fs.writeFileSync(other, "other\n")
      const model = scripted([
        () => [
          call("c_keep", "write", { path: "other.txt", content: "kept\n" }),
          call("c_deny", "write", { path: "hello.txt", content: "bye\n" }),
        ],
        () => [{ type: "text", text: "One of two." }],
      ])
      const first = yield* generate(model, tools, prompt)
      const requests = first.content.filter((part) => part.type === "tool-approval-request") as Array<ApprovalRequest>
      expect(requests.map((request) => request.toolCall.toolCallId)).toEqual(["c_keep", "c_deny"])
      expect(asked.map((request) => request.resources)).toEqual([["other.txt"], ["hello.txt"]])
      const byCall = Object.fromEntries(requests.map((request) => [request.toolCall.toolCallId, request.approvalId]))
      // No applyApprovals here: the SDK's own approval check hands the bridge these messages.
      const second = yield* generate(model, tools, [
        ...prompt,
        ...first.response.messages,
        {
          role: "tool",
          content: [
            { type: "tool-approval-response", approvalId: byCall["c_deny"]!, approved: false, reason: "not that one" },
            { type: "tool-approval-response", approvalId: byCall["c_keep"]!, approved: true },
          ],
        },
      ])
      expect(replied).toEqual(["once", "reject"])
      expect(fs.readFileSync(other, "utf8")).toBe("kept\n")
      expect(fs.readFileSync(file, "utf8")).toBe("hello\n")
      expect(second.text).toBe("One of two.")
      const seen = toolResults(model.doGenerateCalls[1]!)
      expect(seen["c_keep"]).toMatchObject({ type: "text" })
      expect(seen["c_deny"]).toEqual({ type: "execution-denied", reason: "not that one" })
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )

  it.live("a result that bounding kept in a managed file carries outputPaths; the model reads the bounded text", () =>
    Effect.gen(function* () {
      yield* (yield* ToolRegistry.Service).register({ lines })
      const { tools } = yield* setup({ approval: "in-process" })
      const model = scripted([() => [call("c_lines", "lines", { count: 5000 })], () => [{ type: "text", text: "ok" }]])
      const result = yield* Effect.promise(() => generateText({ model, tools, prompt, stopWhen: stepCountIs(3) }))
      const part = result.steps[0]!.content.find((entry) => entry.type === "tool-result") as {
        output: AiSdkTools.Result
      }
      const paths = part.output.outputPaths ?? []
      expect(paths).toHaveLength(1)
      expect(fs.readFileSync(paths[0]!, "utf8")).toBe(Array.from({ length: 5000 }, (_, i) => `line ${i}`).join("\n"))
      const seen = toolResults(model.doGenerateCalls[1]!)["c_lines"] as { type: string; value: string }
      expect(seen.type).toBe("text")
      expect(seen.value.length).toBeLessThan(60 * 1024)
      expect(seen.value).not.toContain("line 4999\n")
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )

  it.live("without the toolApproval setting the tools' needsApproval still raises the request (with no reason)", () =>
    Effect.gen(function* () {
      const { file, tools, replied } = yield* setup()
      const model = scripted([() => [call("c_write", "write", { path: "hello.txt", content: "bye\n" })]])
      const run = (messages: Array<ModelMessage>) =>
        Effect.promise(() => generateText({ model, tools, messages, stopWhen: stepCountIs(3) }))
      const first = yield* run(prompt)
      const request = first.content.find((part) => part.type === "tool-approval-request") as ApprovalRequest
      expect(request.reason).toBeUndefined()
      expect(AiSdkTools.pendingAsk(tools, "c_write")?.resources).toEqual(["hello.txt"])
      yield* run(answer([...prompt, ...first.response.messages], request.approvalId, true))
      expect(replied).toEqual(["once"])
      expect(fs.readFileSync(file, "utf8")).toBe("bye\n")
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )

  it.effect("refuses a runtime without toolgate's services", () =>
    Effect.gen(function* () {
      const materialization = { definitions: [], settle: () => Effect.die("unused") }
      const identity = { sessionID: "ses_x", agent: "build", assistantMessageID: "msg_x" }
      expect(() => AiSdkTools.toAiSdkTools(materialization, identity, undefined, { approval: "ai-sdk" })).toThrow(
        /approval "ai-sdk" needs a runtime that provides toolgate's EventV2 and Approvals services/,
      )
      expect(AiSdkTools.toAiSdkTools(materialization, identity)).toEqual({})
    }),
  )

  it.live("an answer reaching a fresh ToolSet (a restart) runs the call again and answers its new ask", () =>
    Effect.gen(function* () {
      const before = yield* setup()
      const model = scripted([() => [call("c_write", "write", { path: "hello.txt", content: "bye\n" })]])
      const first = yield* generate(model, before.tools, prompt)
      const request = first.content.find((part) => part.type === "tool-approval-request") as ApprovalRequest
      const after = yield* setup()
      yield* generate(model, after.tools, answer([...prompt, ...first.response.messages], request.approvalId, true))
      expect(after.asked).toHaveLength(1)
      expect(after.asked[0]!.id).not.toBe(before.asked[0]!.id)
      expect(after.replied).toEqual(["once"])
      expect(fs.readFileSync(after.file, "utf8")).toBe("bye\n")
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )

  it.live("a call that needs no ask is not an approval request and settles in the same round", () =>
    Effect.gen(function* () {
      const { tools, asked } = yield* setup()
      const model = scripted([
        () => [call("c_read", "read", { path: "hello.txt" })],
        () => [{ type: "text", text: "Read." }],
      ])
      const result = yield* generate(model, tools, prompt)
      expect(result.text).toBe("Read.")
      expect(result.content.some((part) => part.type === "tool-approval-request")).toBe(false)
      expect(result.steps[0]!.content.find((part) => part.type === "tool-result")).toMatchObject({
        toolCallId: "c_read",
      })
      expect(asked).toEqual([])
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )
})

/** A loopback server speaking the OpenAI Chat Completions API: a tool call first, then text naming what it read. */
const chatServer = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly bodies: Array<any>; readonly server: http.Server }>((resume) => {
    const bodies: Array<any> = []
    const server = http.createServer((request, response) => {
      let raw = ""
      request.on("data", (chunk) => (raw += chunk))
      request.on("end", () => {
        const body = JSON.parse(raw)
        bodies.push(body)
        const last = body.messages.at(-1)
        const message =
          last.role === "tool"
            ? { role: "assistant", content: `The tool said: ${last.content}` }
            : {
                role: "assistant",
                content: null,
                tool_calls: [
                  {
                    id: "call_write",
                    type: "function",
                    function: { name: "write", arguments: JSON.stringify({ path: "hello.txt", content: "bye\n" }) },
                  },
                ],
              }
        const finish = last.role === "tool" ? "stop" : "tool_calls"
        if (body.stream === true) {
          // Server-sent chunks: the message as one delta (tool calls carry their index), then the finish and usage.
          const chunk = (choice: object, extra: object = {}) =>
            `data: ${JSON.stringify({ id: `chatcmpl-${bodies.length}`, object: "chat.completion.chunk", created: 0, model: "gpt-loopback", choices: [choice], ...extra })}\n\n`
          const delta =
            message.content === null
              ? { role: "assistant", tool_calls: message.tool_calls!.map((entry, index) => ({ index, ...entry })) }
              : { role: "assistant", content: message.content }
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.write(chunk({ index: 0, delta, finish_reason: null }))
          response.write(
            chunk(
              { index: 0, delta: {}, finish_reason: finish },
              { usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
            ),
          )
          response.end("data: [DONE]\n\n")
          return
        }
        response.writeHead(200, { "content-type": "application/json" })
        response.end(
          JSON.stringify({
            id: `chatcmpl-${bodies.length}`,
            object: "chat.completion",
            created: 0,
            model: "gpt-loopback",
            choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        )
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}/v1`, bodies, server }))
    })
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void))),
)

describe("AiSdkTools approval: ai-sdk over @ai-sdk/openai (loopback Chat Completions)", () => {
  it.live("approved: the call settles and the model reads the result; denied: the model reads the reason", () =>
    Effect.gen(function* () {
      const { file, tools, asked, replied } = yield* setup()
      const { url, bodies } = yield* chatServer
      const model = createOpenAI({ baseURL: url, apiKey: "loopback" }).chat("gpt-loopback")

      const first = yield* generate(model, tools, prompt)
      const request = first.content.find((part) => part.type === "tool-approval-request") as ApprovalRequest
      expect(request.toolCall.toolCallId).toBe("call_write")
      expectDescribed(request, asked[0]!, tools)
      expect(bodies[0].tools.map((entry: any) => entry.function.name)).toContain("write")

      const second = yield* generate(
        model,
        tools,
        answer([...prompt, ...first.response.messages], request.approvalId, true),
      )
      expect(replied).toEqual(["once"])
      expect(fs.readFileSync(file, "utf8")).toBe("bye\n")
      expect(bodies[1].messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_write" })
      expect(second.text).toMatch(/^The tool said: /)

      // A fresh call of the same tool in a new turn, denied with a reason.
      fs.writeFileSync(file, "hello\n")
      const again = yield* setup()
      const third = yield* generate(model, again.tools, prompt)
      const next = third.content.find((part) => part.type === "tool-approval-request") as ApprovalRequest
      const messages = answer([...prompt, ...third.response.messages], next.approvalId, false, "leave it alone")
      yield* Effect.promise(() => AiSdkTools.applyApprovals(again.tools, messages))
      const fourth = yield* generate(model, again.tools, messages)
      expect(again.replied).toEqual(["reject"])
      expect(bodies.at(-1).messages.at(-1)).toEqual({
        role: "tool",
        tool_call_id: "call_write",
        content: "leave it alone",
      })
      expect(fourth.text).toBe("The tool said: leave it alone")
      expect(fs.readFileSync(file, "utf8")).toBe("hello\n")
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )

  it.live("streamText over server-sent chunks: approved writes, denied with a reason does not", () =>
    Effect.gen(function* () {
      const { file, tools, asked, replied } = yield* setup()
      const { url, bodies } = yield* chatServer
      const model = createOpenAI({ baseURL: url, apiKey: "loopback" }).chat("gpt-loopback")

      const first = yield* stream(model, tools, prompt)
      expect(bodies[0].stream).toBe(true)
      const request = first.parts.find((part) => part.type === "tool-approval-request") as unknown as ApprovalRequest
      expect(request.toolCall.toolCallId).toBe("call_write")
      expectDescribed(request, asked[0]!, tools)
      expect(fs.readFileSync(file, "utf8")).toBe("hello\n")

      const second = yield* stream(model, tools, answer([...prompt, ...first.messages], request.approvalId, true))
      expect(replied).toEqual(["once"])
      expect(fs.readFileSync(file, "utf8")).toBe("bye\n")
      expect(second.text).toMatch(/^The tool said: /)

      fs.writeFileSync(file, "hello\n")
      const again = yield* setup()
      const third = yield* stream(model, again.tools, prompt)
      const next = third.parts.find((part) => part.type === "tool-approval-request") as unknown as ApprovalRequest
      const messages = answer([...prompt, ...third.messages], next.approvalId, false, "leave it alone")
      yield* Effect.promise(() => AiSdkTools.applyApprovals(again.tools, messages))
      const fourth = yield* stream(model, again.tools, messages)
      expect(again.replied).toEqual(["reject"])
      expect(fourth.text).toBe("The tool said: leave it alone")
      expect(fs.readFileSync(file, "utf8")).toBe("hello\n")
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )
})

const Ticks = Schema.Struct({ count: Schema.Number })

/** Returns `count` numbered lines: more than bounding lets through for large counts. */
const lines = Tool.make({
  description: "Prints count numbered lines",
  input: Schema.Struct({ count: Schema.Number }),
  output: Schema.String,
  execute: (input) => Effect.succeed(Array.from({ length: input.count }, (_, i) => `line ${i}`).join("\n")),
})

/** Reports one output line every 400 ms (the shape of `for i in 1 2 3; do echo $i; sleep 0.4; done`). */
const ticker = Tool.make({
  description: "Prints 1..count, one line every 400 ms",
  input: Ticks,
  output: Schema.String,
  execute: (input, context) =>
    Effect.gen(function* () {
      let printed = ""
      for (let i = 1; i <= input.count; i++) {
        printed += `${i}\n`
        context.progress?.({ message: `line ${i}`, progress: i, total: input.count, output: `${i}\n` })
        yield* Effect.sleep("400 millis")
      }
      return printed
    }),
})

describe("AiSdkTools progress", () => {
  for (const approval of ["in-process", "ai-sdk"] as const) {
    it.live(`streamText shows preliminary results while the call runs (approval: ${approval})`, () =>
      Effect.gen(function* () {
        yield* (yield* ToolRegistry.Service).register({ ticker })
        const { tools } = yield* setup({ approval })
        const model = scripted([() => [call("c_tick", "ticker", { count: 3 })], () => [{ type: "text", text: "ok" }]])
        const result = streamText({
          model,
          tools,
          ...(approval === "ai-sdk" ? { toolApproval: AiSdkTools.toolApproval(tools) } : {}),
          prompt: "tick",
          stopWhen: stepCountIs(3),
        })
        const seen: Array<{ readonly at: number; readonly part: any }> = []
        yield* Effect.promise(async () => {
          for await (const part of result.fullStream) {
            if (part.type === "tool-result") seen.push({ at: Date.now(), part })
          }
        })
        const preliminary = seen.filter((entry) => entry.part.preliminary === true)
        expect(preliminary.map((entry) => entry.part.output)).toEqual([
          { type: "progress", message: "line 1", progress: 1, total: 3, output: "1\n" },
          { type: "progress", message: "line 2", progress: 2, total: 3, output: "1\n2\n" },
          { type: "progress", message: "line 3", progress: 3, total: 3, output: "1\n2\n3\n" },
          // The SDK emits every yielded value as preliminary, the last one also as the final result.
          { type: "text", value: "1\n2\n3\n" },
        ])
        const final = seen.at(-1)!
        expect(final.part.preliminary).not.toBe(true)
        expect(final.part.output).toEqual({ type: "text", value: "1\n2\n3\n" })
        // Each report arrived as it was made, not buffered until the end: the first one came well before the result.
        expect(final.at - preliminary[0]!.at).toBeGreaterThanOrEqual(1000)
        // The model sees only the final result.
        expect(toolResults(model.doStreamCalls[1]!)["c_tick"]).toEqual({ type: "text", value: "1\n2\n3\n" })
      }).pipe(Effect.provide(askForEdits), Effect.scoped),
    )
  }
})

const allowBash = Core.layerTest({ config: { permissions: [{ action: "bash", resource: "*", effect: "allow" }] } })

describe("AiSdkTools progress from bash", () => {
  it.live("streamText shows the output of a long bash command while it runs", () =>
    Effect.gen(function* () {
      const { tools } = yield* setup({ approval: "ai-sdk" })
      const command = "for i in 1 2 3; do echo $i; sleep 0.4; done"
      const model = scripted([() => [call("c_bash", "bash", { command })]])
      const result = streamText({
        model,
        tools,
        toolApproval: AiSdkTools.toolApproval(tools),
        prompt: "count",
        stopWhen: stepCountIs(3),
      })
      const seen: Array<{ readonly at: number; readonly part: any }> = []
      yield* Effect.promise(async () => {
        for await (const part of result.fullStream) {
          if (part.type === "tool-result") seen.push({ at: Date.now(), part })
          if (part.type === "tool-error") throw part.error
        }
      })
      const progress = seen.filter((entry) => entry.part.preliminary === true && entry.part.output.type === "progress")
      const final = seen.at(-1)!
      expect(final.part.preliminary).not.toBe(true)
      // Reports arrived while the command ran: the first one carries "1" and came long before the result.
      expect(progress.length).toBeGreaterThanOrEqual(2)
      expect(progress[0]!.part.output.output).toMatch(/^1\n/)
      expect(progress.at(-1)!.part.output.output).toBe("1\n2\n3\n")
      expect(final.at - progress[0]!.at).toBeGreaterThanOrEqual(500)
    }).pipe(Effect.provide(allowBash), Effect.scoped),
  )
})

/** `permission.ask_timeout` bounds every ask, whichever channel would answer it (the adapter has no timer of its own). */
const timedEdits = Core.layerTest({
  config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }], permission: { ask_timeout: 300 } },
})

const TIMED_OUT = "Approval timed out: nobody answered the permission request for edit within 300 ms."

describe("AiSdkTools ask timeout (permission.ask_timeout)", () => {
  it.live("in-process: an ask nobody answers ends the call with a clear error and withdraws the ask", () =>
    Effect.gen(function* () {
      const { file, tools, permission } = yield* setup({ approval: "in-process" })
      const model = scripted([() => [call("c_write", "write", { path: "hello.txt", content: "bye\n" })]])
      const result = yield* Effect.promise(() => generateText({ model, tools, prompt, stopWhen: stepCountIs(2) }))
      const error = result.steps[0]!.content.find((part) => part.type === "tool-error") as { error: Error }
      expect(error.error.message).toBe(TIMED_OUT)
      expect(yield* permission.list()).toEqual([])
      expect(toolResults(model.doGenerateCalls[1]!)["c_write"]).toEqual({ type: "error-text", value: TIMED_OUT })
      expect(fs.readFileSync(file, "utf8")).toBe("hello\n")
    }).pipe(Effect.provide(timedEdits), Effect.scoped),
  )

  it.live("ai-sdk: an approval answered after the timeout finds the call timed out; the model reads why", () =>
    Effect.gen(function* () {
      const { file, tools, asked, permission } = yield* setup({ approval: "ai-sdk" })
      const model = scripted([() => [call("c_write", "write", { path: "hello.txt", content: "bye\n" })]])
      const first = yield* generate(model, tools, prompt)
      const request = first.content.find((part) => part.type === "tool-approval-request") as ApprovalRequest
      expect(AiSdkTools.pendingPrompt(tools, "c_write")?.deadline).toBeTypeOf("number")
      // Wait for the timeout to expire the ask.
      yield* permission
        .get(asked[0]!.id)
        .pipe(Effect.repeat({ until: (pending) => pending === undefined, schedule: Schedule.spaced("20 millis") }))
      yield* generate(model, tools, answer([...prompt, ...first.response.messages], request.approvalId, true))
      expect(toolResults(model.doGenerateCalls[1]!)["c_write"]).toEqual({ type: "error-text", value: TIMED_OUT })
      expect(fs.readFileSync(file, "utf8")).toBe("hello\n")
    }).pipe(Effect.provide(timedEdits), Effect.scoped),
  )
})

describe("AiSdkTools.decisionFor", () => {
  it("maps any approval response of the call to our reply, and ignores responses to other calls", () => {
    const reason = FastCheck.oneof(
      FastCheck.constant(undefined),
      FastCheck.string(),
      FastCheck.constantFrom(
        "always",
        " Always ",
        "ALWAYS\n",
        "",
        "  ",
        "session",
        " Always:Exact ",
        "always:directory",
      ),
    )
    FastCheck.assert(
      FastCheck.property(FastCheck.boolean(), reason, FastCheck.boolean(), (approved, text, otherFirst) => {
        const response = (approvalId: string, answer: boolean, why: string | undefined) => ({
          type: "tool-approval-response" as const,
          approvalId,
          approved: answer,
          ...(why === undefined ? {} : { reason: why }),
        })
        const ours = response("a_mine", approved, text)
        const theirs = response("a_other", !approved, "other")
        const messages: Array<ModelMessage> = [
          {
            role: "assistant",
            content: [
              { type: "tool-call", toolCallId: "c_mine", toolName: "write", input: {} },
              { type: "tool-approval-request", approvalId: "a_mine", toolCallId: "c_mine" },
              { type: "tool-call", toolCallId: "c_other", toolName: "write", input: {} },
              { type: "tool-approval-request", approvalId: "a_other", toolCallId: "c_other" },
            ],
          },
          { role: "tool", content: otherFirst ? [theirs, ours] : [ours, theirs] },
        ]
        const trimmed = text?.trim() ?? ""
        const word = trimmed.toLowerCase()
        const named = ["session", "always:exact", "always:directory", "always:pattern"].includes(word)
        const expected = approved
          ? named
            ? { reply: word.startsWith("always") ? "always" : "once", choice: word }
            : { reply: word === "always" ? "always" : "once" }
          : trimmed === ""
            ? { reply: "reject" }
            : { reply: "reject", message: trimmed }
        expect(AiSdkTools.decisionFor(messages, "c_mine")).toEqual(expected)
        expect(AiSdkTools.decisionFor(messages.slice(0, 1), "c_mine")).toBeUndefined()
        expect(AiSdkTools.decisionFor(messages, "c_unknown")).toBeUndefined()
      }),
    )
  })
})
