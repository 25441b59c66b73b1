import * as fs from "node:fs"
import * as path from "node:path"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { LanguageModel } from "@effect/ai"
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { EventV2, Location, Runner, SessionV2, ToolRegistry } from "@toolgate/core"
import { Core } from "@toolgate/core/testing"
import { Effect, Layer, Redacted } from "effect"
import { EffectAiModel, EffectAiToolkit } from "../src/index.js"
import { openAiStrictViolations } from "../../core/test/support/openai-strict.js"
import * as FakeOpenAi from "./support/fake-openai.js"

/** The Runner on the real Core, driven by `@effect/ai-openai` (default config, so `strict: true`) at `url`. */
const runnerLayer = (url: string, options: EffectAiModel.Options = {}, core: Core.TestOptions = {}) =>
  Runner.layer.pipe(
    Layer.provideMerge(EffectAiModel.layerWith(options)),
    Layer.provideMerge(
      OpenAiLanguageModel.layer({ model: "gpt-4.1" }).pipe(
        Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("sk-test"), apiUrl: url })),
        Layer.provide(FetchHttpClient.layer),
      ),
    ),
    Layer.provideMerge(Core.layerTest({ permission: "once", ...core })),
  )

const runIn = (server: FakeOpenAi.Server, prompt: string, options: EffectAiModel.Options = {}) =>
  Effect.gen(function* () {
    const location = yield* Location.Service
    fs.writeFileSync(path.join(location.directory, "hello.txt"), "hello from disk\n")
    fs.writeFileSync(path.join(location.directory, "other.md"), "# other\n")
    const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
    const definitions = (yield* (yield* ToolRegistry.Service).materialize([])).definitions
    const exit = yield* Effect.exit((yield* Runner.Service).run({ sessionID: session.id, prompt }))
    return { exit, definitions }
  }).pipe(Effect.provide(runnerLayer(server.url, options)))

describe("EffectAiModel with @effect/ai-openai (strict by default)", () => {
  it.scoped("runs glob then read through a server that enforces OpenAI's strict schema rules", () =>
    Effect.gen(function* () {
      const sent: Array<Record<string, unknown>> = []
      const call = (body: FakeOpenAi.RequestBody, name: string, given: Record<string, unknown>) => {
        const args = FakeOpenAi.strictArguments(body, name, given)
        sent.push(args)
        return [{ type: "call" as const, name, arguments: args }]
      }
      const server = yield* FakeOpenAi.serve([
        (body) => call(body, "glob", { pattern: "*.txt" }),
        (body) => call(body, "read", { path: "hello.txt" }),
        () => [{ type: "text", text: "hello.txt says hello." }],
      ])
      const { exit, definitions } = yield* runIn(server, "what does the txt file say?")
      if (exit._tag === "Failure") throw new Error(`run failed: ${String(exit.cause)}`)
      const result = exit.value

      expect(server.statuses).toEqual([200, 200, 200])
      expect(server.undecodable).toEqual([])
      expect(result.steps).toBe(3)
      expect(result.messages.at(-1)).toMatchObject({ role: "assistant", text: "hello.txt says hello.", toolCalls: [] })

      // Every built-in went out strict and passes the checker; the strict model sent nulls for omitted options.
      const first = server.requests[0]!
      expect(first.tools?.map((tool) => tool.name).sort()).toEqual(definitions.map((d) => d.name).sort())
      for (const tool of first.tools ?? []) {
        expect(tool.strict).toBe(true)
        expect(openAiStrictViolations(tool.parameters)).toEqual([])
      }
      const globCall = result.messages.find((message) => message.role === "assistant" && message.toolCalls.length > 0)
      expect(globCall).toMatchObject({ toolCalls: [{ name: "glob", input: { pattern: "*.txt" } }] })
      // The strict model filled every optional field with null (glob's path, read's paging)...
      for (const args of sent) expect(Object.values(args)).toContain(null)
      // ...and the nulls were removed before the Runner recorded and settled the calls.
      const recorded = result.messages.flatMap((message) => (message.role === "assistant" ? message.toolCalls : []))
      for (const call of recorded) expect(Object.values(call.input as object)).not.toContain(null)

      // Both calls settled successfully and their results reached the provider.
      const tools = result.messages.filter((message) => message.role === "tool")
      expect(tools.map((message) => [message.name, message.result.type === "error"])).toEqual([
        ["glob", false],
        ["read", false],
      ])
      const globOutput = [...FakeOpenAi.callOutputs(server.requests[1]!).values()][0]!
      expect(globOutput).toContain("hello.txt")
      expect(globOutput).not.toContain("other.md")
      // The adapter hands the provider glob's text as a plain string; @effect/ai-openai 0.41 then JSON-encodes every
      // function_call_output, so the wire carries that string as a JSON literal (a provider limit, see the README).
      const globResult = tools[0]!.role === "tool" ? tools[0]!.result : undefined
      expect(globResult?.type).toBe("text")
      expect(JSON.parse(globOutput)).toBe(globResult?.value)
      const readOutput = FakeOpenAi.callOutputs(server.requests[2]!).get("call_1_0")!
      expect(readOutput).toContain("hello from disk")
    }),
  )

  it.scoped("the unprojected schemas (schemas: standard) are refused with a 400 and the run fails", () =>
    Effect.gen(function* () {
      const server = yield* FakeOpenAi.serve([() => [{ type: "text", text: "never sent" }]])
      const { exit } = yield* runIn(server, "hi", { schemas: "standard" })
      expect(server.statuses).toEqual([400])
      expect(server.refusals[0]!.length).toBeGreaterThan(0)
      expect(server.refusals[0]!.join("\n")).toMatch(/not in required|additionalProperties/)
      expect(exit._tag).toBe("Failure")
      if (exit._tag === "Failure") expect(String(exit.cause)).toContain("Model.ModelError")
    }),
  )

  it.scoped("a tool name the model invents settles as Unknown tool and the run goes on", () =>
    Effect.gen(function* () {
      const server = yield* FakeOpenAi.serve([
        () => [{ type: "call", name: "search_web", arguments: { query: "effect" } }],
        () => [{ type: "text", text: "No such tool, then." }],
      ])
      const { exit } = yield* runIn(server, "search the web")
      if (exit._tag === "Failure") throw new Error(`run failed: ${String(exit.cause)}`)
      expect(exit.value.steps).toBe(2)
      expect(exit.value.messages.at(-1)).toMatchObject({ role: "assistant", text: "No such tool, then." })
      const second = server.requests[1]!
      expect(second.input).toContainEqual(
        expect.objectContaining({ type: "function_call", name: "search_web", call_id: "call_0_0" }),
      )
      expect(FakeOpenAi.callOutputs(second).get("call_0_0")).toContain("Unknown tool: search_web")
    }),
  )

  it.scoped("an image read goes back as an input_image in a user message after the function outputs", () =>
    Effect.gen(function* () {
      const server = yield* FakeOpenAi.serve([
        (body) => [
          { type: "call", name: "read", arguments: FakeOpenAi.strictArguments(body, "read", { path: "dot.png" }) },
        ],
        () => [{ type: "text", text: "A dot." }],
      ])
      const png = Buffer.from(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
        "base64",
      )
      const { exit } = yield* Effect.gen(function* () {
        const location = yield* Location.Service
        fs.writeFileSync(path.join(location.directory, "dot.png"), png)
        const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
        return yield* Effect.exit((yield* Runner.Service).run({ sessionID: session.id, prompt: "look at dot.png" }))
      }).pipe(
        Effect.map((exit) => ({ exit })),
        Effect.provide(runnerLayer(server.url)),
      )
      if (exit._tag === "Failure") throw new Error(`run failed: ${String(exit.cause)}`)
      const input = server.requests[1]!.input
      const outputAt = input.findIndex((item) => item.type === "function_call_output")
      expect(String(input[outputAt]!.output)).toContain("dot.png (image/png) is attached in the next message")
      const media = input[outputAt + 1] as { role?: string; content?: ReadonlyArray<Record<string, unknown>> }
      expect(media.role).toBe("user")
      expect(media.content?.[0]).toMatchObject({ type: "input_image" })
      expect(String(media.content?.[0]?.image_url)).toMatch(/^data:image\/png;base64,/)
      // Not base64 text inside the function output.
      expect(String(input[outputAt]!.output)).not.toContain("base64")
    }),
  )
})

describe("EffectAiModel results for programs", () => {
  it.scoped("a cut bash output: the success event carries outputPaths, the model gets the bounded text", () =>
    Effect.gen(function* () {
      const server = yield* FakeOpenAi.serve([
        (body) => [
          {
            type: "call",
            name: "bash",
            arguments: FakeOpenAi.strictArguments(body, "bash", { command: "seq 1 3000" }),
          },
        ],
        () => [{ type: "text", text: "Counted." }],
      ])
      const layer = runnerLayer(server.url, {}, { config: { tool_output: { max_lines: 50 } } })
      const { exit, saved, contents } = yield* Effect.gen(function* () {
        const saved: Array<ReadonlyArray<string>> = []
        yield* (yield* EventV2.Service).listen((envelope) => {
          if (envelope.data.outputPaths !== undefined) saved.push(envelope.data.outputPaths)
        }, Runner.Event.Success)
        const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
        const exit = yield* Effect.exit((yield* Runner.Service).run({ sessionID: session.id, prompt: "count" }))
        // Read while the Location (and its data directory) is still open.
        const contents = saved.flat().map((file) => fs.readFileSync(file, "utf8"))
        return { exit, saved, contents }
      }).pipe(Effect.provide(layer))
      if (exit._tag === "Failure") throw new Error(`run failed: ${String(exit.cause)}`)
      expect(saved).toHaveLength(1)
      const file = saved[0]![0]!
      const seq = Array.from({ length: 3000 }, (_, i) => i + 1).join("\n")
      expect(contents[0]!.startsWith(`${seq}\n`)).toBe(true)
      const output = JSON.parse(FakeOpenAi.callOutputs(server.requests[1]!).get("call_0_0")!) as string
      expect(output).toContain(file)
      expect(output.split("\n").length).toBeLessThan(200)
    }),
  )
})

describe("EffectAiToolkit with @effect/ai-openai (strict by default)", () => {
  it.scoped("generateText resolves a strict glob call through settle", () =>
    Effect.gen(function* () {
      const server = yield* FakeOpenAi.serve([
        (body) => [
          { type: "call", name: "glob", arguments: FakeOpenAi.strictArguments(body, "glob", { pattern: "*.txt" }) },
        ],
      ])
      const provider = OpenAiLanguageModel.layer({ model: "gpt-4.1" }).pipe(
        Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("sk-test"), apiUrl: server.url })),
        Layer.provide(FetchHttpClient.layer),
      )
      const response = yield* Effect.gen(function* () {
        const location = yield* Location.Service
        fs.writeFileSync(path.join(location.directory, "hello.txt"), "hi\n")
        const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
        const materialization = yield* (yield* ToolRegistry.Service).materialize([])
        const { toolkit, handlers } = EffectAiToolkit.toToolkit(materialization, {
          sessionID: session.id,
          agent: "build",
          assistantMessageID: "msg_toolkit",
        })
        return yield* LanguageModel.generateText({ prompt: "find txt files", toolkit }).pipe(Effect.provide(handlers))
      }).pipe(Effect.provide(Layer.merge(provider, Core.layerTest({ permission: "once" }))))

      expect(server.statuses).toEqual([200])
      for (const tool of server.requests[0]!.tools ?? []) {
        expect(tool.strict).toBe(true)
        expect(openAiStrictViolations(tool.parameters)).toEqual([])
      }
      const [part] = response.toolResults
      expect(part?.isFailure).toBe(false)
      expect(String((part!.result as EffectAiToolkit.Settled).value)).toContain("hello.txt")
    }),
  )
})
