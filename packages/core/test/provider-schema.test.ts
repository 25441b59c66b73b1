import { describe, expect, it, layer } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Ajv } from "ajv"
import { Effect, FastCheck, Schema } from "effect"
import { BuiltInTools, type LLM, ProviderSchema, Tool, ToolRegistry } from "../src/index.js"
import { Core, ToolTest } from "../src/entry/testing.js"
import { openAiStrictViolations } from "./support/openai-strict.js"

const strictAjv = () => ({
  draft2020: new Ajv2020({ strict: true, allErrors: true }),
  draft07: new Ajv({ strict: true, allErrors: true }),
})

const definitionsOf = Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize([])).pipe(
  Effect.map((turn) => turn.definitions),
)

/** Effect's refinement titles and descriptions that must never reach a provider. */
const INTERNAL = /^(int|positive|nonNegative|lessThanOrEqualTo\(.*\)|greaterThan\(.*\)|an integer|a positive number)$/

const everyNode = (schema: unknown, visit: (node: Record<string, unknown>) => void): void => {
  if (Array.isArray(schema)) return schema.forEach((item) => everyNode(item, visit))
  if (typeof schema !== "object" || schema === null) return
  visit(schema as Record<string, unknown>)
  for (const value of Object.values(schema)) everyNode(value, visit)
}

layer(Core.layerTest({}))("built-in definitions for providers", (it) => {
  it.effect("every built-in input and output schema compiles under Ajv strict, 2020-12 and draft-07", () =>
    Effect.gen(function* () {
      const definitions = yield* definitionsOf
      expect(definitions.map((definition) => definition.name).sort()).toEqual([...BuiltInTools.names].sort())
      for (const definition of definitions) {
        for (const schema of [definition.inputSchema, definition.outputSchema ?? {}]) {
          const { draft2020, draft07 } = strictAjv()
          expect(() => draft2020.compile(schema), `${definition.name} (2020-12)`).not.toThrow()
          expect(() => draft07.compile(schema), `${definition.name} (draft-07)`).not.toThrow()
        }
      }
    }),
  )

  it.effect("no keyword sits beside a $ref and no Effect-internal title or description leaks", () =>
    Effect.gen(function* () {
      for (const definition of yield* definitionsOf) {
        everyNode(definition.inputSchema, (node) => {
          if ("$ref" in node) expect(Object.keys(node), definition.name).toEqual(["$ref"])
          expect(node.title, definition.name).toBeUndefined()
          if (typeof node.description === "string") expect(node.description, definition.name).not.toMatch(INTERNAL)
        })
        expect(JSON.stringify(definition.inputSchema)).not.toContain("$defs")
      }
    }),
  )

  it.effect("the strict projection of every built-in passes the OpenAI strict-mode rules and Ajv strict", () =>
    Effect.gen(function* () {
      for (const definition of yield* definitionsOf) {
        const strict = ProviderSchema.toStrict(definition.inputSchema)
        expect(openAiStrictViolations(strict), definition.name).toEqual([])
        // Ajv's strictTypes would flag type lists; the projection is for providers, so allow union types.
        const ajv = new Ajv2020({ strict: true, allowUnionTypes: true })
        expect(() => ajv.compile(strict), definition.name).not.toThrow()
      }
    }),
  )

  it.effect("the unprojected schemas would fail strict mode (the checker is not vacuous)", () =>
    Effect.gen(function* () {
      const bash = (yield* definitionsOf).find((definition) => definition.name === "bash")!
      expect(openAiStrictViolations(bash.inputSchema)).toContain("root: property workdir not in required")
    }),
  )

  it.effect("every built-in refuses an argument its schema does not declare, naming it", () =>
    Effect.gen(function* () {
      const turn = yield* (yield* ToolRegistry.Service).materialize([])
      const minimal: Record<string, unknown> = {
        read: { path: "x" },
        write: { path: "x", content: "" },
        edit: { path: "x", oldString: "a", newString: "b" },
        apply_patch: { patchText: "*** Begin Patch\n*** End Patch" },
        glob: { pattern: "*" },
        grep: { pattern: "x" },
        bash: { command: "true" },
        webfetch: { url: "https://example.invalid/" },
        websearch: { query: "x" },
        todowrite: { todos: [] },
        question: { questions: [] },
        skill: { name: "x" },
      }
      for (const name of BuiltInTools.names) {
        const settlement = yield* turn.settle({
          sessionID: "ses_schema",
          agent: "build",
          assistantMessageID: "msg_schema",
          call: { id: `call_${name}`, name, input: { ...(minimal[name] as object), sneaky: true } },
        })
        expect(settlement.result.type, name).toBe("error")
        expect(String(settlement.result.value), name).toMatch(/^Invalid tool input: /)
        expect(String(settlement.result.value), name).toMatch(
          /^Invalid tool input: sneaky: unexpected property, expected one of /,
        )
      }
    }),
  )
})

describe("ProviderSchema", () => {
  const Input = Schema.Struct({
    path: Schema.String,
    limit: Schema.optional(Schema.Int.pipe(Schema.positive())),
    note: Schema.optional(Schema.NullOr(Schema.String)),
    mode: Schema.optional(Schema.Literal("a", "b")),
    nested: Schema.optional(Schema.Struct({ depth: Schema.optional(Schema.Number), tag: Schema.String })),
    list: Schema.optional(Schema.Array(Schema.Struct({ x: Schema.optional(Schema.String) }))),
  })
  const tool = Tool.make({
    description: "d",
    input: Input,
    output: Schema.Unknown,
    execute: (input) => Effect.succeed(input),
  })
  const definition: LLM.ToolDefinition = Tool.definition("probe", tool)

  it("projects optional properties as nullable and requires all of them", () => {
    const strict = ProviderSchema.toStrict(definition.inputSchema)
    expect(strict.required).toEqual(["path", "limit", "note", "mode", "nested", "list"])
    const properties = strict.properties as Record<string, Record<string, unknown>>
    expect(properties.path).toEqual({ type: "string" })
    expect(properties.limit).toMatchObject({ type: ["integer", "null"], exclusiveMinimum: 0 })
    expect(properties.mode).toEqual({ anyOf: [{ type: "string", enum: ["a", "b"] }, { type: "null" }] })
    expect(properties.nested).toMatchObject({ type: ["object", "null"], required: ["depth", "tag"] })
    expect(openAiStrictViolations(strict)).toEqual([])
  })

  it.effect("fromStrictInput turns a strict provider's nulls back into absent fields, and settles", () =>
    Effect.gen(function* () {
      const raw = {
        path: "p",
        limit: null,
        note: null,
        mode: null,
        nested: { depth: null, tag: "t" },
        list: [{ x: null }, { x: "y" }],
      }
      const restored = ProviderSchema.fromStrictInput(definition.inputSchema, raw)
      // `note` accepts null in the original schema, so its null is kept.
      expect(restored).toEqual({ path: "p", note: null, nested: { tag: "t" }, list: [{}, { x: "y" }] })
      const output = yield* ToolTest.settle(tool, restored, { name: "probe" })
      expect(output.structured).toEqual(restored)
    }),
  )

  it("a strict input restored from any combination of given and null optional fields decodes", () => {
    const decode = Schema.decodeUnknownEither(Input, { onExcessProperty: "error" })
    const strict = ProviderSchema.toStrict(definition.inputSchema)
    const optional = FastCheck.option(FastCheck.integer({ min: 1, max: 100 }), { nil: null })
    FastCheck.assert(
      FastCheck.property(optional, FastCheck.option(FastCheck.constantFrom("a", "b"), { nil: null }), (limit, mode) => {
        const sent = { path: "p", limit, note: null, mode, nested: null, list: null }
        // What a strict provider sends always carries every key of `required`.
        expect(Object.keys(sent).sort()).toEqual([...(strict.required as Array<string>)].sort())
        return decode(ProviderSchema.fromStrictInput(definition.inputSchema, sent))._tag === "Right"
      }),
    )
  })

  it("keeps a recursive reference as a bare $ref with its definition", () => {
    interface Tree {
      readonly name: string
      readonly children: ReadonlyArray<Tree>
    }
    const Tree: Schema.Schema<Tree> = Schema.Struct({
      name: Schema.String,
      children: Schema.Array(Schema.suspend((): Schema.Schema<Tree> => Tree)),
    }).annotations({ identifier: "Tree" })
    const recursive = Tool.make({
      description: "r",
      input: Schema.Struct({ tree: Tree }),
      output: Schema.Unknown,
      execute: Effect.succeed,
    })
    const schema = Tool.definition("recursive", recursive).inputSchema
    everyNode(schema, (node) => {
      if ("$ref" in node) expect(Object.keys(node)).toEqual(["$ref"])
    })
    expect(
      new Ajv2020({ strict: true }).compile(schema)({ tree: { name: "a", children: [{ name: "b", children: [] }] } }),
    ).toBe(true)
  })

  it.effect("Tool.make refuses undeclared properties by default", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.either(ToolTest.settle(tool, { path: "p", extra: 1 }, { name: "probe" }))
      expect(exit._tag).toBe("Left")
      if (exit._tag === "Left")
        expect(exit.left.message).toBe(
          "Invalid tool input: extra: unexpected property, expected one of path, limit, note, mode, nested, list",
        )
    }),
  )
})
