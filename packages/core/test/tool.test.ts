import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Schema } from "effect"
import { ToolTest } from "../src/entry/testing.js"
import { LLM, Tool } from "../src/index.js"

const settle = (tool: Tool.AnyTool, input: unknown) => ToolTest.settle(tool, input)

describe("Tool", () => {
  it("make returns an opaque frozen value", () => {
    const tool = Tool.make({
      description: "d",
      input: Schema.Struct({}),
      output: Schema.String,
      execute: () => Effect.succeed("x"),
    })
    expect(Object.keys(tool)).toEqual([])
    expect(Object.isFrozen(tool)).toBe(true)
    expect(Object.getOwnPropertySymbols(tool)).toEqual([])
  })

  it.effect("ToolTest.settle gives the executor the call as sent and the definition it advertises, as a materialization does", () =>
    Effect.gen(function* () {
      const tool = Tool.make({
        description: "echoes what its context says",
        input: Schema.Struct({ n: Schema.NumberFromString }),
        output: Schema.Unknown,
        execute: (_input, context) => Effect.succeed({ call: context.call, definition: context.definition }),
      })
      const seen = (yield* ToolTest.settle(tool, { n: "7" }, { name: "echo" })).structured as {
        readonly call: LLM.ToolCall
        readonly definition: LLM.ToolDefinition
      }
      expect(seen.call).toEqual({ id: ToolTest.context.toolCallID, name: "echo", input: { n: "7" } })
      expect(seen.definition).toEqual(Tool.definition("echo", tool))
    }),
  )

  it("module functions throw a TypeError for a foreign value", () => {
    const foreign = Object.freeze({}) as Tool.AnyTool
    expect(() => Tool.withPermission(foreign, "edit")).toThrow(new TypeError("Invalid Core Tool value"))
    expect(() => Tool.definition("x", foreign)).toThrow(TypeError)
    expect(() => Tool.permission(foreign, "x")).toThrow(TypeError)
    const exit = Effect.runSyncExit(ToolTest.settle(foreign, {}))
    expect(Exit.isFailure(exit) && Cause.dieOption(exit.cause)).toEqual(
      Option.some(new TypeError("Invalid Core Tool value")),
    )
  })

  it("withPermission returns a new tool and leaves the original untouched", () => {
    const tool = Tool.make({
      description: "d",
      input: Schema.Struct({}),
      output: Schema.String,
      execute: () => Effect.succeed("x"),
    })
    const decorated = Tool.withPermission(tool, "edit")
    expect(decorated).not.toBe(tool)
    expect(Object.keys(decorated)).toEqual([])
    expect(Tool.permission(tool, "write")).toBe("write")
    expect(Tool.permission(decorated, "write")).toBe("edit")
    expect(Tool.definition("write", decorated)).toBe(Tool.definition("write", tool))
  })

  it("definitions carry self-contained JSON Schemas (no $schema, references inlined) cached per (tool, name)", () => {
    const Inner = Schema.Struct({ value: Schema.Number }).annotations({ identifier: "Inner" })
    const tool = Tool.make({
      description: "Schemas",
      input: Schema.Struct({ inner: Inner, list: Schema.Array(Inner) }),
      output: Schema.String,
      execute: () => Effect.succeed("ok"),
    })
    const definition = Tool.definition("schemas", tool)
    expect(definition.name).toBe("schemas")
    expect(definition.description).toBe("Schemas")
    expect("$schema" in definition.inputSchema).toBe(false)
    // Provider-ready: the identifier-annotated struct is inlined instead of referenced from $defs.
    expect("$defs" in definition.inputSchema).toBe(false)
    expect(definition.inputSchema.properties).toEqual({
      inner: {
        type: "object",
        required: ["value"],
        properties: { value: { type: "number" } },
        additionalProperties: false,
      },
      list: {
        type: "array",
        items: {
          type: "object",
          required: ["value"],
          properties: { value: { type: "number" } },
          additionalProperties: false,
        },
      },
    })
    expect(definition.outputSchema).toEqual({ type: "string" })
    expect(Tool.definition("schemas", tool)).toBe(definition)
    expect(Tool.definition("other", tool)).not.toBe(definition)
    const plain = Tool.make({
      description: "p",
      input: Schema.Struct({ a: Schema.String }),
      output: Schema.Number,
      execute: () => Effect.succeed(1),
    })
    expect("$defs" in Tool.definition("plain", plain).inputSchema).toBe(false)
  })

  it("validateName accepts 1 to 64 characters starting with a letter", () => {
    const ok = (name: string) => Exit.isSuccess(Effect.runSyncExit(Tool.validateName(name)))
    expect(ok("a")).toBe(true)
    expect(ok("a".repeat(64))).toBe(true)
    expect(ok("a".repeat(65))).toBe(false)
    expect(ok("mcp__server__tool-1")).toBe(true)
    expect(ok("1tool")).toBe(false)
    expect(ok("")).toBe(false)
    expect(ok("has space")).toBe(false)
    const error = Effect.runSync(Effect.flip(Tool.validateName("a.b")))
    expect(error).toMatchObject({ _tag: "Tool.RegistrationError", name: "a.b", message: "Invalid tool name: a.b" })
  })

  it("sanitizeName and registrationEntries replace characters outside [a-zA-Z0-9_-]", () => {
    expect(Tool.sanitizeName("a.b c")).toBe("a_b_c")
    expect(Tool.sanitizeName("9é")).toBe("9_")
    const tool = Tool.make({
      description: "d",
      input: Schema.Struct({}),
      output: Schema.String,
      execute: () => Effect.succeed("x"),
    })
    expect(Tool.registrationEntries({ "srv.tool one": tool })).toEqual([["srv_tool_one", tool]])
  })

  it.effect("settlement runs decode → execute → encode → project, and invalid input never executes", () =>
    Effect.gen(function* () {
      const order: Array<string> = []
      const Traced = Schema.transform(Schema.String, Schema.String, {
        strict: true,
        decode: (value) => (order.push(`decode:${value}`), value),
        encode: (value) => (order.push(`encode:${value}`), value),
      })
      const tool = Tool.make({
        description: "traced",
        input: Schema.Struct({ text: Traced }),
        output: Traced,
        execute: (input) => Effect.sync(() => (order.push("execute"), input.text)),
        toModelOutput: ({ output }) => (order.push("project"), [{ type: "text", text: output }]),
      })
      expect(yield* settle(tool, { text: "a" })).toEqual({ structured: "a", content: [{ type: "text", text: "a" }] })
      expect(order).toEqual(["decode:a", "execute", "encode:a", "project"])
      const failure = yield* Effect.flip(settle(tool, { text: 1 }))
      expect(failure).toBeInstanceOf(LLM.ToolFailure)
      expect(failure.message.startsWith("Invalid tool input: ")).toBe(true)
      expect(order).toEqual(["decode:a", "execute", "encode:a", "project"])
    }),
  )

  it.effect("result type selection: string → text, object → json, file part → content", () =>
    Effect.gen(function* () {
      const text = Tool.make({
        description: "t",
        input: Schema.Struct({}),
        output: Schema.String,
        execute: () => Effect.succeed("hi"),
      })
      const json = Tool.make({
        description: "j",
        input: Schema.Struct({}),
        output: Schema.Struct({ n: Schema.Number }),
        execute: () => Effect.succeed({ n: 1 }),
      })
      const media = Tool.make({
        description: "m",
        input: Schema.Struct({}),
        output: Schema.Struct({ n: Schema.Number }),
        execute: () => Effect.succeed({ n: 1 }),
        toModelOutput: () => [{ type: "file", data: "AAAA", mime: "image/png" }],
      })
      expect(LLM.toResultValue(yield* settle(text, {}))).toEqual({ type: "text", value: "hi" })
      expect(LLM.toResultValue(yield* settle(json, {}))).toEqual({ type: "json", value: { n: 1 } })
      const output = yield* settle(media, {})
      expect(output.content).toEqual([{ type: "file", uri: "data:image/png;base64,AAAA", mime: "image/png" }])
      expect("name" in output.content[0]!).toBe(false)
      expect(LLM.toResultValue(output).type).toBe("content")
    }),
  )

  it.effect("structured projection: encoded structured value, full output for the model, structured outputSchema", () =>
    Effect.gen(function* () {
      const seen: Array<unknown> = []
      const tool = Tool.make({
        description: "structured",
        input: Schema.Struct({ command: Schema.String }),
        output: Schema.Struct({ exit: Schema.Number, output: Schema.String }),
        structured: Schema.Struct({ exit: Schema.NumberFromString }),
        toStructuredOutput: ({ output }) => ({ exit: output.exit }),
        execute: () => Effect.succeed({ exit: 3, output: "full text" }),
        toModelOutput: ({ output }) => (seen.push(output), [{ type: "text", text: output.output }]),
      })
      const output = yield* settle(tool, { command: "x" })
      expect(output.structured).toEqual({ exit: "3" })
      expect(seen).toEqual([{ exit: 3, output: "full text" }])
      const schema = Tool.definition("s", tool).outputSchema as { properties: Record<string, unknown> }
      expect(Object.keys(schema.properties)).toEqual(["exit"])
    }),
  )

  it.effect("a throwing toModelOutput is a defect, not a tool failure", () =>
    Effect.gen(function* () {
      const tool = Tool.make({
        description: "throws",
        input: Schema.Struct({}),
        output: Schema.String,
        execute: () => Effect.succeed("x"),
        toModelOutput: () => {
          throw new Error("projection bug")
        },
      })
      const exit = yield* Effect.exit(settle(tool, {}))
      expect(Exit.isFailure(exit) && Option.isSome(Cause.dieOption(exit.cause))).toBe(true)
    }),
  )

  it.effect("toStructuredOutput: an encode failure has the output-schema prefix, a throw is a defect", () =>
    Effect.gen(function* () {
      const base = {
        description: "structured",
        input: Schema.Struct({}),
        output: Schema.Struct({ n: Schema.Number }),
        structured: Schema.Struct({ n: Schema.Positive }),
        execute: () => Effect.succeed({ n: -1 }),
      }
      const invalid = Tool.make({ ...base, toStructuredOutput: ({ output }) => ({ n: output.n }) })
      const failure = yield* Effect.flip(settle(invalid, {}))
      expect(failure).toBeInstanceOf(LLM.ToolFailure)
      expect(failure.message.startsWith("Tool returned an invalid value for its output schema: ")).toBe(true)
      const throwing = Tool.make({
        ...base,
        toStructuredOutput: () => {
          throw new Error("structured bug")
        },
      })
      const exit = yield* Effect.exit(settle(throwing, {}))
      expect(Exit.isFailure(exit) && Cause.dieOption(exit.cause)).toEqual(Option.some(new Error("structured bug")))
      // Without toStructuredOutput the structured value is the encoded output, even when `structured` is set.
      const plain = Tool.make({ ...base, execute: () => Effect.succeed({ n: 2 }) })
      expect(yield* settle(plain, {})).toEqual({ structured: { n: 2 }, content: [] })
    }),
  )

  it.effect("execute: a ToolFailure passes unchanged; defects and interruption propagate untouched", () =>
    Effect.gen(function* () {
      const denied = new Tool.Failure({ message: "Denied", metadata: { a: 1 } })
      const make = (execute: () => Effect.Effect<string, LLM.ToolFailure>) =>
        Tool.make({ description: "e", input: Schema.Struct({}), output: Schema.String, execute })
      expect(
        yield* Effect.flip(
          settle(
            make(() => Effect.fail(denied)),
            {},
          ),
        ),
      ).toBe(denied)
      const defect = new Error("executor defect")
      const died = yield* Effect.exit(
        settle(
          make(() => Effect.die(defect)),
          {},
        ),
      )
      expect(Exit.isFailure(died) && Cause.dieOption(died.cause)).toEqual(Option.some(defect))
      const interrupted = yield* Effect.exit(
        settle(
          make(() => Effect.interrupt),
          {},
        ),
      )
      expect(Exit.isFailure(interrupted) && Cause.isInterruptedOnly(interrupted.cause)).toBe(true)
    }),
  )

  it.live("effectful (asynchronous) codecs decode and encode through the Effect parser", () =>
    Effect.gen(function* () {
      const Slow = Schema.transformOrFail(Schema.String, Schema.String, {
        strict: true,
        decode: (value) => Effect.as(Effect.sleep("1 millis"), value.toUpperCase()),
        encode: (value) => Effect.as(Effect.sleep("1 millis"), value.toLowerCase()),
      })
      const tool = Tool.make({
        description: "slow",
        input: Schema.Struct({ text: Slow }),
        output: Slow,
        execute: (input) => Effect.succeed(`${input.text}!`),
      })
      expect(yield* settle(tool, { text: "ab" })).toEqual({
        structured: "ab!",
        content: [{ type: "text", text: "ab!" }],
      })
      const failure = yield* Effect.flip(settle(tool, { text: 1 }))
      expect(failure.message.startsWith("Invalid tool input: ")).toBe(true)
    }),
  )

  it("isUserStop recognises declined permissions and dismissed questions only as defects", () => {
    const declined = { _tag: "PermissionV2.DeclinedError" }
    const dismissed = { _tag: "QuestionV2.RejectedError" }
    expect(Tool.isUserStop(Cause.die(declined))).toBe(true)
    expect(Tool.isUserStop(Cause.die(dismissed))).toBe(true)
    expect(Tool.isUserStop(Cause.sequential(Cause.fail("x"), Cause.die(declined)))).toBe(true)
    expect(Tool.isUserStop(Cause.fail(declined))).toBe(false)
    expect(Tool.isUserStop(Cause.die(new Error("other")))).toBe(false)
  })
})

describe("LLM", () => {
  it("toResultValue and fromResultValue", () => {
    expect(LLM.toResultValue({ structured: { a: 1 }, content: [] })).toEqual({ type: "json", value: { a: 1 } })
    expect(
      LLM.toResultValue({
        structured: {},
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      }).type,
    ).toBe("content")
    expect(LLM.fromResultValue({ type: "text", value: { a: 1 } })).toEqual({
      structured: {},
      content: [{ type: "text", text: '{"a":1}' }],
    })
    expect(LLM.fromResultValue({ type: "json", value: 1 })).toEqual({ structured: 1, content: [] })
    expect(LLM.fromResultValue({ type: "error", value: "x" })).toBeUndefined()
  })
})
