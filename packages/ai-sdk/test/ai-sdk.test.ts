import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { EventV2, Location, PermissionV2, SessionV2, ToolRegistry } from "@toolgate/core"
import { Core } from "@toolgate/core/testing"
import { generateText, stepCountIs } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect, Queue } from "effect"
import { AiSdkTools } from "../src/index.js"

type GenerateOptions = MockLanguageModelV4["doGenerateCalls"][number]
type Content = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>["content"]

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}

/** A mock model answering request `n` with `turns[n]` (an empty text once the script is exhausted). */
const scripted = (turns: ReadonlyArray<(options: GenerateOptions) => Content>) => {
  let step = 0
  return new MockLanguageModelV4({
    doGenerate: async (options) => {
      const content = turns[step++]?.(options) ?? [{ type: "text", text: "" }]
      const calls = content.some((part) => part.type === "tool-call")
      return { content, finishReason: { unified: calls ? "tool-calls" : "stop", raw: undefined }, usage, warnings: [] }
    },
  })
}

const call = (toolCallId: string, toolName: string, input: unknown) =>
  ({ type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) }) as const

/** The tool results the model was sent in a request, by call id. */
const toolResults = (options: GenerateOptions) =>
  Object.fromEntries(
    options.prompt.flatMap((message) =>
      message.role === "tool"
        ? message.content.flatMap((part) => (part.type === "tool-result" ? [[part.toolCallId, part.output]] : []))
        : [],
    ),
  )

/** Replies to every permission ask with `reply` and records the asks. */
const replyToAsks = (reply: PermissionV2.Reply, asked: Array<PermissionV2.Request>, onAsk: () => void = () => {}) =>
  Effect.gen(function* () {
    const queue = yield* (yield* EventV2.Service).queue(PermissionV2.Event.Asked)
    const permission = yield* PermissionV2.Service
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(queue), (envelope) => {
          const request = envelope.data
          asked.push(request)
          onAsk()
          return Effect.orDie(permission.reply({ requestID: request.id, reply }))
        }),
      ),
    )
  })

const askForEdits = Core.layerTest({ config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] } })

describe("AiSdkTools", () => {
  it.live("generateText reads, edits after an answered ask, and the model sees an invalid input as a tool error", () =>
    Effect.gen(function* () {
      const location = yield* Location.Service
      fs.writeFileSync(path.join(location.directory, "hello.txt"), "hello world\n")
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      const materialization = yield* (yield* ToolRegistry.Service).materialize([])
      const asked: Array<PermissionV2.Request> = []
      const atAsk: Array<string> = []
      // The edit is suspended while the ask is pending: the file is still unchanged when the test answers.
      yield* replyToAsks("once", asked, () =>
        atAsk.push(fs.readFileSync(path.join(location.directory, "hello.txt"), "utf8")),
      )
      const tools = AiSdkTools.toAiSdkTools(
        materialization,
        { sessionID: session.id, agent: "build", assistantMessageID: "msg_ai_sdk" },
        yield* Effect.runtime<never>(),
      )
      const model = scripted([
        () => [call("c_read", "read", { path: "hello.txt" }), call("c_bad", "read", { file: "hello.txt" })],
        () => [call("c_edit", "edit", { path: "hello.txt", oldString: "world", newString: "there" })],
        () => [{ type: "text", text: "Edited." }],
      ])
      const result = yield* Effect.promise(() =>
        generateText({
          model,
          tools,
          prompt: "fix the greeting",
          stopWhen: [stepCountIs(5), AiSdkTools.stoppedByUser],
        }),
      )

      expect(result.text).toBe("Edited.")
      expect(result.steps).toHaveLength(3)
      expect(fs.readFileSync(path.join(location.directory, "hello.txt"), "utf8")).toBe("hello there\n")
      expect(asked.map((request) => [request.action, request.resources])).toEqual([["edit", ["hello.txt"]]])
      expect(atAsk).toEqual(["hello world\n"])

      // The SDK was given our schemas verbatim.
      const advertised = model.doGenerateCalls[0]!.tools ?? []
      expect(advertised.map((candidate) => candidate.name)).toEqual(
        materialization.definitions.map((definition) => definition.name),
      )
      const readDefinition = materialization.definitions.find((definition) => definition.name === "read")!
      expect(advertised.find((candidate) => candidate.name === "read")).toMatchObject({
        type: "function",
        inputSchema: readDefinition.inputSchema,
      })

      // Step one: a successful read and a tool error for the invalid input, which the model sees in the next request.
      const first = result.steps[0]!.content
      expect(first.find((part) => part.type === "tool-result")).toMatchObject({
        toolCallId: "c_read",
        toolName: "read",
      })
      const error = first.find((part) => part.type === "tool-error")
      expect(error).toMatchObject({ toolCallId: "c_bad", toolName: "read" })
      const seen = toolResults(model.doGenerateCalls[1]!)
      // The read result reaches the model (its rendering is the read tool's own: structured JSON or numbered text).
      expect(["json", "text"]).toContain((seen["c_read"] as { type: string }).type)
      expect(JSON.stringify(seen["c_read"])).toContain("hello world")
      expect(seen["c_bad"]).toMatchObject({ type: "error-text" })
      const message = (error as { error: Error }).error.message
      expect(message).toMatch(/^Invalid tool input: /)
      expect(message).toMatch(/^path: missing, expected a string$/m)
      expect(seen["c_bad"]).toEqual({ type: "error-text", value: message })
      expect(toolResults(model.doGenerateCalls[2]!)["c_edit"]).toMatchObject({ type: "text" })
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )

  it.live("a declined permission surfaces as UserStopError and stoppedByUser ends the loop", () =>
    Effect.gen(function* () {
      const location = yield* Location.Service
      fs.writeFileSync(path.join(location.directory, "hello.txt"), "hello\n")
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      const materialization = yield* (yield* ToolRegistry.Service).materialize([])
      yield* replyToAsks("reject", [])
      const tools = AiSdkTools.toAiSdkTools(
        materialization,
        { sessionID: session.id, agent: "build", assistantMessageID: "msg_2" },
        yield* Effect.runtime<never>(),
      )
      const model = scripted([
        () => [call("c_write", "write", { path: "hello.txt", content: "bye\n" })],
        () => [{ type: "text", text: "should not be asked" }],
      ])
      const result = yield* Effect.promise(() =>
        generateText({ model, tools, prompt: "overwrite", stopWhen: [stepCountIs(5), AiSdkTools.stoppedByUser] }),
      )
      expect(result.steps).toHaveLength(1)
      expect(model.doGenerateCalls).toHaveLength(1)
      const error = result.steps[0]!.content.find((part) => part.type === "tool-error")
      expect((error as { error: unknown }).error).toBeInstanceOf(AiSdkTools.UserStopError)
      expect(fs.readFileSync(path.join(location.directory, "hello.txt"), "utf8")).toBe("hello\n")
    }).pipe(Effect.provide(askForEdits), Effect.scoped),
  )

  it.effect("toModelOutput keeps text, JSON and file content", () =>
    Effect.sync(() => {
      expect(AiSdkTools.toModelOutput({ type: "text", value: "ok" })).toEqual({ type: "text", value: "ok" })
      expect(AiSdkTools.toModelOutput({ type: "json", value: { a: 1 } })).toEqual({ type: "json", value: { a: 1 } })
      expect(
        AiSdkTools.toModelOutput({
          type: "content",
          value: [
            { type: "text", text: "Image read" },
            { type: "file", uri: "data:image/png;base64,iVBORw0KGgo=", mime: "image/png", name: "a.png" },
          ],
        }),
      ).toEqual({
        type: "content",
        value: [
          { type: "text", text: "Image read" },
          { type: "file", data: { type: "data", data: "iVBORw0KGgo=" }, mediaType: "image/png", filename: "a.png" },
        ],
      })
    }),
  )
})
