/**
 * Records under OpenAI strict mode. A closed empty object (`{ properties: {}, additionalProperties: false }`) would
 * only ever let a strict model send `{}`, so `ProviderSchema.toStrict` projects a record — `Schema.Record`, an
 * optional one, one inside an array, one with template-literal keys — to an array of `{ key, value }` pairs, and
 * `fromStrictInput` turns the pairs back into the record the tool decodes. An object that mixes declared properties
 * with other keys cannot be projected and fails naming the field.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Effect, FastCheck, JSONSchema, Schema } from "effect"
import { ProviderSchema, Tool, ToolRegistry } from "../src/index.js"
import { Core } from "../src/entry/testing.js"
import { openAiStrictViolations } from "./support/openai-strict.js"

const Input = Schema.Struct({
  env: Schema.Record({ key: Schema.String, value: Schema.String }),
  limits: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Number })),
  groups: Schema.Array(
    Schema.Struct({ name: Schema.String, tags: Schema.Record({ key: Schema.String, value: Schema.Boolean }) }),
  ),
  headers: Schema.optional(Schema.Record({ key: Schema.TemplateLiteral("x-", Schema.String), value: Schema.String })),
})

const tag = Tool.make({
  description: "Echo the input back.",
  input: Input,
  output: Schema.Unknown,
  execute: (input) => Effect.succeed(input),
  toModelOutput: ({ output }) => [{ type: "text", text: JSON.stringify(output) }],
})

const provider = () => ProviderSchema.normalize(JSONSchema.make(Input) as unknown as ProviderSchema.Schema)

const pairs = (record: Record<string, unknown>) => Object.entries(record).map(([key, value]) => ({ key, value }))

describe("ProviderSchema.toStrict: records", () => {
  it("projects every record to an array of key/value pairs that passes the OpenAI strict-mode rules", () => {
    const strict = ProviderSchema.toStrict(provider())
    expect(openAiStrictViolations(strict)).toEqual([])
    const properties = strict.properties as Record<string, Record<string, unknown>>
    expect(properties.env).toEqual({
      type: "array",
      items: {
        type: "object",
        properties: { key: { type: "string" }, value: { type: "string" } },
        required: ["key", "value"],
        additionalProperties: false,
      },
    })
    expect(properties.limits).toMatchObject({ type: ["array", "null"] })
    expect(properties.headers).toMatchObject({
      items: { properties: { key: { type: "string", pattern: "^x-[\\s\\S]*?$" } } },
    })
    // Nowhere a closed object with no properties: the shape that allowed only `{}`.
    expect(JSON.stringify(strict)).not.toContain('"properties":{},')
  })

  it("what a strict model may send is valid against the projection and decodes back to the tool's records", () => {
    const strict = ProviderSchema.toStrict(provider())
    const validate = new Ajv2020({ strict: true, allowUnionTypes: true }).compile(strict)
    // `__proto__` is left out here: Effect's own Record decoding drops that key (covered separately below).
    const key = FastCheck.string().filter((name) => name !== "__proto__")
    const record = <V>(value: FastCheck.Arbitrary<V>) => FastCheck.dictionary(key, value, { maxKeys: 4 })
    FastCheck.assert(
      FastCheck.property(
        record(FastCheck.string()),
        record(FastCheck.double({ noNaN: true, noDefaultInfinity: true })),
        record(FastCheck.boolean()),
        (env, limits, tags) => {
          const sent = {
            env: pairs(env),
            limits: pairs(limits),
            groups: [{ name: "g", tags: pairs(tags) }],
            headers: null,
          }
          expect(validate(sent), JSON.stringify(validate.errors)).toBe(true)
          const restored = ProviderSchema.fromStrictInput(provider(), sent)
          expect(restored).toEqual({ env, limits, groups: [{ name: "g", tags }] })
          expect(Schema.decodeUnknownSync(Input)(restored)).toEqual({ env, limits, groups: [{ name: "g", tags }] })
        },
      ),
      { numRuns: 200 },
    )
  })

  it("a key named __proto__ stays an ordinary key; a repeated key keeps the last value", () => {
    const restored = ProviderSchema.fromStrictInput(provider(), {
      env: [
        { key: "__proto__", value: "x" },
        { key: "a", value: "1" },
        { key: "a", value: "2" },
      ],
      groups: [],
    }) as { env: Record<string, string> }
    expect(Object.getPrototypeOf(restored.env)).toBe(Object.prototype)
    expect(Object.keys(restored.env)).toEqual(["__proto__", "a"])
    expect(restored.env.a).toBe("2")
  })

  it("anything that is not a list of pairs is left for the tool's own decoding to judge", () => {
    const sent = { env: [{ key: "a", value: "1", extra: true }], groups: [] }
    expect(ProviderSchema.fromStrictInput(provider(), sent)).toEqual(sent)
    expect(ProviderSchema.fromStrictInput(provider(), { env: { a: "1" }, groups: [] })).toEqual({
      env: { a: "1" },
      groups: [],
    })
  })

  it("an object that mixes declared properties with other keys fails, naming the field", () => {
    const Mixed = Schema.Struct({
      request: Schema.Struct({ url: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.String })),
    })
    const schema = ProviderSchema.normalize(JSONSchema.make(Mixed) as unknown as ProviderSchema.Schema)
    expect(() => ProviderSchema.toStrict(schema)).toThrow(ProviderSchema.StrictProjectionError)
    expect(() => ProviderSchema.toStrict(schema)).toThrow(
      "Cannot project input.request to OpenAI strict mode: an object with declared properties that also accepts other keys cannot be closed without losing them; put the other keys in a record property of their own, or send the schemas unprojected",
    )
  })

  it.effect("a registered tool with records settles what a strict model sent, pairs turned back into records", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry.Service
      yield* registry.register({ tag })
      const turn = yield* registry.materialize([])
      const definition = turn.definitions.find((candidate) => candidate.name === "tag")!
      expect(openAiStrictViolations(ProviderSchema.toStrict(definition.inputSchema))).toEqual([])
      const sent = {
        env: [{ key: "HOME", value: "/h" }],
        limits: null,
        groups: [{ name: "g", tags: [{ key: "t", value: true }] }],
        headers: null,
      }
      const settled = yield* turn.settle({
        sessionID: "ses_x",
        agent: "build",
        assistantMessageID: "msg_x",
        call: { id: "c", name: "tag", input: ProviderSchema.fromStrictInput(definition.inputSchema, sent) },
      })
      expect(settled.result).toEqual({
        type: "text",
        value: JSON.stringify({ env: { HOME: "/h" }, groups: [{ name: "g", tags: { t: true } }] }),
      })
    }).pipe(Effect.provide(Core.layerTest({})), Effect.scoped),
  )
})
