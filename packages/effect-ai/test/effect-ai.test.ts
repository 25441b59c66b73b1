import * as fs from "node:fs"
import * as path from "node:path"
import { AiError, LanguageModel, Prompt, type Response, Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import {
  EventV2,
  type LLM,
  Location,
  type Model,
  PermissionV2,
  ProviderSchema,
  Runner,
  SessionV2,
  ToolRegistry,
} from "@toolgate/core"
import { Core } from "@toolgate/core/testing"
import { Effect, FastCheck, Layer, Stream } from "effect"
import { EffectAiModel, EffectAiToolkit } from "../src/index.js"

const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 }
const finish = (reason: "stop" | "tool-calls"): Response.StreamPartEncoded => ({ type: "finish", reason, usage })

/** A provider turn: the parts it streams, computed from what it was sent. */
type Turn = (options: LanguageModel.ProviderOptions) => ReadonlyArray<Response.StreamPartEncoded>

/** A mock `LanguageModel` replaying `turns` (one per request) and recording every request. */
const mockLanguageModel = (turns: ReadonlyArray<Turn>, requests: Array<LanguageModel.ProviderOptions>) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.sync(() => {
          const turn = turns[requests.length]
          requests.push(options)
          return (turn?.(options) ?? [finish("stop")]) as Array<Response.PartEncoded>
        }),
      streamText: (options) =>
        Stream.suspend(() => {
          const turn = turns[requests.length]
          requests.push(options)
          return Stream.fromIterable(turn?.(options) ?? [finish("stop")])
        }),
    }),
  )

/** The tool results of the last tool message of a prompt. */
const lastToolResults = (prompt: Prompt.Prompt): ReadonlyArray<Prompt.ToolResultPart> => {
  const message = [...prompt.content].reverse().find((candidate) => candidate.role === "tool")
  return message?.role === "tool" ? message.content : []
}

describe("EffectAiModel", () => {
  it.live("drives the Runner through read then write with a permission ask answered once", () => {
    const requests: Array<LanguageModel.ProviderOptions> = []
    const turns: ReadonlyArray<Turn> = [
      () => [
        { type: "text-delta", id: "t1", delta: "Reading." },
        { type: "tool-call", id: "call_read", name: "read", params: { path: "hello.txt" } },
        finish("tool-calls"),
      ],
      (options) => {
        const [read] = lastToolResults(options.prompt)
        // The read page arrives as numbered text: the file's lines are the `<n>: ` lines.
        const content = String(read?.result)
          .split("\n")
          .flatMap((line) => /^\d+: (.*)$/.exec(line)?.slice(1) ?? [])
          .map((line) => `${line}\n`)
          .join("")
        return [
          {
            type: "tool-call",
            id: "call_write",
            name: "write",
            params: { path: "out.txt", content: content.toUpperCase() },
          },
          finish("tool-calls"),
        ]
      },
      () => [
        { type: "text-start", id: "t3" },
        { type: "text-delta", id: "t3", delta: "Done" },
        { type: "text-end", id: "t3" },
        finish("stop"),
      ],
    ]
    const layer = Runner.layer.pipe(
      Layer.provideMerge(EffectAiModel.layer),
      Layer.provideMerge(mockLanguageModel(turns, requests)),
      Layer.provideMerge(
        Core.layerTest({
          permission: "once",
          config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
        }),
      ),
    )
    return Effect.gen(function* () {
      const location = yield* Location.Service
      fs.writeFileSync(path.join(location.directory, "hello.txt"), "hello\n")
      const asked: Array<PermissionV2.Request> = []
      yield* (yield* EventV2.Service).listen((envelope) => void asked.push(envelope.data), PermissionV2.Event.Asked)
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      const result = yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "copy hello.txt in capitals" })

      expect(result.steps).toBe(3)
      expect(result.stopped).toBeUndefined()
      expect(fs.readFileSync(path.join(location.directory, "out.txt"), "utf8")).toBe("HELLO\n")
      expect(asked.map((request) => request.action)).toEqual(["edit"])
      expect(result.messages.at(-1)).toMatchObject({ role: "assistant", text: "Done", toolCalls: [] })
      expect(result.messages[1]).toMatchObject({
        role: "assistant",
        text: "Reading.",
        toolCalls: [{ id: "call_read", name: "read" }],
      })

      // The provider saw every built-in tool with the strict projection of our JSON Schema (the default), and the
      // history as @effect/ai messages.
      const definitions = (yield* (yield* ToolRegistry.Service).materialize([])).definitions
      const advertised = requests[0]!.tools
      expect(advertised.map((tool) => tool.name)).toEqual(definitions.map((definition) => definition.name))
      for (const tool of advertised) {
        const definition = definitions.find((candidate) => candidate.name === tool.name)!
        expect(Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast)).toEqual(
          ProviderSchema.toStrict(definition.inputSchema),
        )
        expect(tool.description).toBe(definition.description)
      }
      const third = requests[2]!.prompt.content
      expect(third.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant", "tool"])
      expect(third[4]).toMatchObject({
        role: "tool",
        content: [{ type: "tool-result", id: "call_write", name: "write", isFailure: false }],
      })
    }).pipe(Effect.provide(layer), Effect.scoped)
  })

  it.effect("maps a tool error result to a failed tool-result part and groups consecutive results", () =>
    Effect.sync(() => {
      const messages = EffectAiModel.toPromptMessages({
        sessionID: "ses",
        agent: "build",
        system: "be brief",
        tools: [],
        messages: [
          { role: "user", content: "go" },
          {
            role: "assistant",
            id: "msg_1",
            text: "",
            toolCalls: [
              { id: "a", name: "read", input: { path: "x" } },
              { id: "b", name: "glob", input: { pattern: "*" } },
            ],
          },
          {
            role: "tool",
            assistantMessageID: "msg_1",
            callID: "a",
            name: "read",
            result: { type: "error", value: "File not found: x" },
          },
          {
            role: "tool",
            assistantMessageID: "msg_1",
            callID: "b",
            name: "glob",
            result: { type: "text", value: "a.txt" },
          },
        ],
      })
      expect(messages).toEqual([
        { role: "system", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "go" }] },
        {
          role: "assistant",
          content: [
            { type: "tool-call", id: "a", name: "read", params: { path: "x" }, providerExecuted: false },
            { type: "tool-call", id: "b", name: "glob", params: { pattern: "*" }, providerExecuted: false },
          ],
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              id: "a",
              name: "read",
              providerExecuted: false,
              result: "File not found: x",
              isFailure: true,
            },
            { type: "tool-result", id: "b", name: "glob", providerExecuted: false, result: "a.txt", isFailure: false },
          ],
        },
      ])
    }),
  )

  it.live("a streamed call to a tool the model invented settles as Unknown tool and the run goes on", () => {
    const requests: Array<LanguageModel.ProviderOptions> = []
    const turns: ReadonlyArray<Turn> = [
      () => [
        { type: "text-delta", id: "t1", delta: "Looking." },
        { type: "tool-call", id: "call_glob", name: "glob", params: { pattern: "*.txt" } },
        { type: "tool-call", id: "call_made_up", name: "find_everything", params: { where: "/" } },
        finish("tool-calls"),
      ],
      () => [{ type: "text-delta", id: "t2", delta: "Used glob instead." }, finish("stop")],
    ]
    const layer = Runner.layer.pipe(
      Layer.provideMerge(EffectAiModel.layer),
      Layer.provideMerge(mockLanguageModel(turns, requests)),
      Layer.provideMerge(Core.layerTest({})),
    )
    return Effect.gen(function* () {
      const location = yield* Location.Service
      fs.writeFileSync(path.join(location.directory, "a.txt"), "a\n")
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      const result = yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "find things" })

      expect(result.steps).toBe(2)
      expect(result.messages.at(-1)).toMatchObject({ role: "assistant", text: "Used glob instead." })
      expect(result.messages[1]).toMatchObject({
        role: "assistant",
        text: "Looking.",
        toolCalls: [
          { id: "call_glob", name: "glob" },
          { id: "call_made_up", name: "find_everything", input: { where: "/" } },
        ],
      })
      // The next request shows the model both results: glob's files and the unknown tool's error.
      const results = lastToolResults(requests[1]!.prompt)
      expect(results.map((part) => [part.id, part.isFailure])).toEqual([
        ["call_glob", false],
        ["call_made_up", true],
      ])
      expect(results[0]!.result).toContain("a.txt")
      expect(results[1]!.result).toBe("Unknown tool: find_everything")
    }).pipe(Effect.provide(layer), Effect.scoped)
  })

  it.live("with no tools advertised, a call the model makes anyway still reaches the Runner as a call", () => {
    const layer = mockLanguageModel(
      [() => [{ type: "tool-call", id: "x", name: "glob", params: { pattern: "*" } }, finish("tool-calls")]],
      [],
    )
    return Effect.gen(function* () {
      const model = yield* EffectAiModel.make
      const events = yield* model
        .stream({ sessionID: "s", agent: "build", messages: [{ role: "user", content: "hi" }], tools: [] })
        .pipe(Stream.runCollect)
      expect(Array.from(events)).toEqual([
        { type: "tool-call", id: "x", name: "glob", input: { pattern: "*" } },
        { type: "finish", reason: "tool-calls" },
      ])
    }).pipe(Effect.provide(layer))
  })

  it.live("a malformed chunk without an unknown tool call still fails as Model.ModelError", () => {
    const layer = mockLanguageModel(
      [() => [{ type: "tool-call", id: "x", name: "glob", params: { pattern: "*" } }, { type: "bogus" } as never]],
      [],
    )
    return Effect.gen(function* () {
      const model = yield* EffectAiModel.make
      const definition = { name: "glob", description: "Find files", inputSchema: { type: "object", properties: {} } }
      const error = yield* model
        .stream({ sessionID: "s", agent: "build", messages: [{ role: "user", content: "hi" }], tools: [definition] })
        .pipe(Stream.runDrain, Effect.flip)
      expect(error._tag).toBe("Model.ModelError")
      // A short message naming what was refused; the full decoding error stays in the cause.
      expect(error.message).toBe(
        "LanguageModel.streamText: the provider streamed a part @effect/ai cannot decode: bogus",
      )
      expect(error.cause).toBeDefined()
    }).pipe(Effect.provide(layer))
  })

  it.effect("text results go back as plain text and media as file parts of a following user message", () =>
    Effect.sync(() => {
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString("base64")
      const messages = EffectAiModel.toPromptMessages({
        sessionID: "ses",
        agent: "build",
        tools: [],
        messages: [
          { role: "user", content: "go" },
          {
            role: "assistant",
            id: "msg_1",
            text: "",
            toolCalls: [
              { id: "a", name: "bash", input: { command: "printf 'a\\nb'" } },
              { id: "b", name: "read", input: { path: "logo.png" } },
            ],
          },
          {
            role: "tool",
            assistantMessageID: "msg_1",
            callID: "a",
            name: "bash",
            result: { type: "text", value: "a\nb" },
          },
          {
            role: "tool",
            assistantMessageID: "msg_1",
            callID: "b",
            name: "read",
            result: {
              type: "content",
              value: [
                { type: "text", text: "Image read successfully" },
                { type: "file", uri: `data:image/png;base64,${png}`, mime: "image/png", name: "logo.png" },
              ],
            },
          },
          { role: "user", content: "thanks" },
        ],
      })
      expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user", "user"])
      const tool = messages[2] as Prompt.ToolMessageEncoded
      expect(tool.content[0]!.result).toBe("a\nb")
      expect(tool.content[1]!.result).toBe(
        "Image read successfully\n[logo.png (image/png) is attached in the next message]",
      )
      const media = messages[3] as Prompt.UserMessageEncoded
      expect(media.content).toEqual([
        { type: "file", mediaType: "image/png", fileName: "logo.png", data: new Uint8Array([0x89, 0x50, 0x4e, 0x47]) },
      ])
      // And @effect/ai accepts the messages as a Prompt.
      expect(Prompt.make(messages).content).toHaveLength(5)
    }),
  )

  it.effect("every media part of a result group reaches the next user message once, with its bytes (property)", () =>
    Effect.sync(() => {
      const content = FastCheck.array(
        FastCheck.oneof(
          FastCheck.record({ type: FastCheck.constant("text" as const), text: FastCheck.string() }),
          FastCheck.record({
            type: FastCheck.constant("file" as const),
            bytes: FastCheck.uint8Array({ maxLength: 64 }),
            mime: FastCheck.constantFrom("image/png", "image/jpeg", "application/pdf"),
          }),
        ),
        { maxLength: 5 },
      )
      FastCheck.assert(
        FastCheck.property(FastCheck.array(content, { minLength: 1, maxLength: 4 }), (groups) => {
          const toContent = (part: (typeof groups)[number][number]): LLM.ToolContent =>
            part.type === "text"
              ? part
              : {
                  type: "file",
                  mime: part.mime,
                  uri: `data:${part.mime};base64,${Buffer.from(part.bytes).toString("base64")}`,
                }
          const messages = EffectAiModel.toPromptMessages({
            sessionID: "ses",
            agent: "build",
            tools: [],
            messages: [
              { role: "user", content: "go" },
              {
                role: "assistant",
                id: "msg",
                text: "",
                toolCalls: groups.map((_, i) => ({ id: `c${i}`, name: "read", input: {} })),
              },
              ...groups.map((group, i): Model.Message => ({
                role: "tool",
                assistantMessageID: "msg",
                callID: `c${i}`,
                name: "read",
                result: { type: "content", value: group.map(toContent) },
              })),
            ],
          })
          const files = groups.flat().filter((part) => part.type === "file")
          const tool = messages[2] as Prompt.ToolMessageEncoded
          expect(tool.content.map((part) => part.id)).toEqual(groups.map((_, i) => `c${i}`))
          groups.forEach((group, i) => {
            expect(tool.content[i]!.result).toBe(
              group
                .map((part) =>
                  part.type === "text" ? part.text : `[file (${part.mime}) is attached in the next message]`,
                )
                .join("\n"),
            )
          })
          if (files.length === 0) expect(messages).toHaveLength(3)
          else {
            expect(messages).toHaveLength(4)
            const media = (messages[3] as Prompt.UserMessageEncoded).content as ReadonlyArray<Prompt.FilePartEncoded>
            expect(media.map((part) => [part.mediaType, Array.from(part.data as Uint8Array)])).toEqual(
              files.map((file) => [file.mime, Array.from(file.bytes)]),
            )
          }
          expect(Prompt.make(messages).content).toHaveLength(messages.length)
        }),
      )
    }),
  )

  it.live("a provider failure becomes Model.ModelError", () => {
    const failing = Layer.effect(
      LanguageModel.LanguageModel,
      LanguageModel.make({
        generateText: () =>
          Effect.fail(new AiError.UnknownError({ module: "Mock", method: "generateText", description: "boom" })),
        streamText: () =>
          Stream.fail(new AiError.UnknownError({ module: "Mock", method: "streamText", description: "rate limited" })),
      }),
    )
    return Effect.gen(function* () {
      const model = yield* EffectAiModel.make
      const error = yield* model
        .stream({ sessionID: "s", agent: "build", messages: [{ role: "user", content: "hi" }], tools: [] })
        .pipe(Stream.runDrain, Effect.flip)
      expect(error._tag).toBe("Model.ModelError")
      expect(error.message).toContain("rate limited")
    }).pipe(Effect.provide(failing))
  })
})

describe("EffectAiToolkit", () => {
  it.live("LanguageModel.generateText resolves calls through settle: results, model-visible errors, permission", () => {
    const requests: Array<LanguageModel.ProviderOptions> = []
    const turns: ReadonlyArray<Turn> = [
      () => [
        { type: "tool-call", id: "p1", name: "read", params: { path: "hello.txt" } },
        { type: "tool-call", id: "p2", name: "read", params: { file: "hello.txt" } },
        { type: "tool-call", id: "p3", name: "write", params: { path: "denied.txt", content: "x" } },
        finish("tool-calls"),
      ],
    ]
    const layer = mockLanguageModel(turns, requests).pipe(
      Layer.provideMerge(
        Core.layerTest({
          permission: () => ({ reply: "reject", message: "not this file" }),
          config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
        }),
      ),
    )
    return Effect.gen(function* () {
      const location = yield* Location.Service
      fs.writeFileSync(path.join(location.directory, "hello.txt"), "hello\n")
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      const materialization = yield* (yield* ToolRegistry.Service).materialize([])
      const { toolkit, handlers } = EffectAiToolkit.toToolkit(materialization, {
        sessionID: session.id,
        agent: "build",
        assistantMessageID: "msg_toolkit",
      })
      expect(Object.keys(toolkit.tools)).toEqual(materialization.definitions.map((definition) => definition.name))
      const response = yield* LanguageModel.generateText({ prompt: "read it", toolkit }).pipe(Effect.provide(handlers))
      const results = response.toolResults.map((part) => ({
        id: part.id,
        isFailure: part.isFailure,
        result: part.isFailure ? part.result : (part.result as EffectAiToolkit.Settled).value,
      }))
      // A success is a Settled for the program; the model-facing value is its encoded form.
      expect(results[0]).toMatchObject({
        id: "p1",
        isFailure: false,
        result: "1: hello\n\n(lines 1-1 shown; end of file)",
      })
      expect(response.toolResults[0]!.encodedResult).toEqual(results[0]!.result)
      expect(results[1]).toMatchObject({ id: "p2", isFailure: true })
      expect(String(results[1]!.result)).toMatch(/path/)
      expect(results[2]).toEqual({
        id: "p3",
        isFailure: true,
        result:
          "The user rejected permission to use this specific tool call with the following feedback: not this file",
      })
      expect(fs.existsSync(path.join(location.directory, "denied.txt"))).toBe(false)
    }).pipe(Effect.provide(layer), Effect.scoped)
  })

  it.live(
    "strict nulls are removed before settling; a cut output's outputPaths reach the program, not the model",
    () => {
      const requests: Array<LanguageModel.ProviderOptions> = []
      /** What a strict provider sends: `given`, and null for every other advertised property. */
      const strictCall = (options: LanguageModel.ProviderOptions, name: string, given: Record<string, unknown>) => {
        const tool = options.tools.find((candidate) => candidate.name === name)!
        const schema = Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast) as { properties: object }
        return Object.fromEntries(Object.keys(schema.properties).map((key) => [key, key in given ? given[key] : null]))
      }
      const sent: Array<Record<string, unknown>> = []
      const turns: ReadonlyArray<Turn> = [
        (options) => {
          const params = strictCall(options, "bash", { command: "seq 1 3000" })
          sent.push(params)
          return [{ type: "tool-call", id: "p1", name: "bash", params }, finish("tool-calls")]
        },
      ]
      const layer = mockLanguageModel(turns, requests).pipe(
        Layer.provideMerge(Core.layerTest({ permission: "once", config: { tool_output: { max_lines: 50 } } })),
      )
      return Effect.gen(function* () {
        const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
        const materialization = yield* (yield* ToolRegistry.Service).materialize([])
        const { toolkit, handlers } = EffectAiToolkit.toToolkit(materialization, {
          sessionID: session.id,
          agent: "build",
          assistantMessageID: "msg_toolkit",
        })
        const response = yield* LanguageModel.generateText({ prompt: "count", toolkit }).pipe(Effect.provide(handlers))

        expect(Object.values(sent[0]!)).toContain(null)
        const [part] = response.toolResults
        expect(part).toMatchObject({ id: "p1", isFailure: false })
        const settled = part!.result as EffectAiToolkit.Settled
        expect(settled.outputPaths).toHaveLength(1)
        const full = fs.readFileSync(settled.outputPaths![0]!, "utf8")
        const seq = Array.from({ length: 3000 }, (_, i) => String(i + 1)).join("\n")
        expect(full.startsWith(`${seq}\n`)).toBe(true)
        expect(typeof settled.value).toBe("string")
        expect(String(settled.value)).toContain(settled.outputPaths![0]!)
        // The next prompt (built by @effect/ai from the response) carries only the model-facing text.
        const next = Prompt.fromResponseParts(response.content)
        const toolMessage = next.content.find((message) => message.role === "tool")
        expect(toolMessage?.role === "tool" ? toolMessage.content[0]!.result : undefined).toBe(settled.value)
      }).pipe(Effect.provide(layer), Effect.scoped)
    },
  )
})
