/**
 * Input decoding and output encoding on the settlement path answer exactly what `Schema.decodeUnknownEither(input,
 * { onExcessProperty: "error", errors: "all" })` and `Schema.encodeEither(output)` answer: the same value (key order
 * included) or the same model-visible error, for structs (which take a faster parser) and for every other shape, on
 * random values with and without keys the schema does not declare.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, FastCheck as fc, Schema } from "effect"
import { type LLM, Tool } from "../src/index.js"

const context = { sessionID: "ses_decode", agent: "build", assistantMessageID: "msg_decode", toolCallID: "call" }
const options = { onExcessProperty: "error", errors: "all" } as const

const Pair = Schema.Struct({ old: Schema.String, new: Schema.String })
const schemas: ReadonlyArray<readonly [string, Schema.Schema<any, any, never>]> = [
  ["flat", Schema.Struct({ text: Schema.String, count: Schema.Number, flag: Schema.Boolean })],
  [
    "optional",
    Schema.Struct({ text: Schema.optional(Schema.String), n: Schema.optionalWith(Schema.Number, { exact: true }) }),
  ],
  ["nested", Schema.Struct({ edits: Schema.Array(Pair), meta: Schema.optional(Pair) })],
  ["transformed", Schema.Struct({ n: Schema.NumberFromString, tag: Schema.Literal("a", "b"), any: Schema.Unknown })],
  ["refined", Schema.Struct({ text: Schema.String.pipe(Schema.minLength(2)), n: Schema.Int })],
  ["annotated", Schema.Struct({ text: Schema.String.annotations({ description: "d" }) })],
  ["defaults", Schema.Struct({ text: Schema.optionalWith(Schema.String, { default: () => "x" }) })],
  ["filtered struct", Schema.Struct({ a: Schema.Number, b: Schema.Number }).pipe(Schema.filter((v) => v.a < v.b))],
  ["record", Schema.Record({ key: Schema.String, value: Schema.Number })],
  ["empty", Schema.Struct({})],
]

const keys = ["text", "count", "flag", "n", "edits", "meta", "old", "new", "tag", "any", "a", "b", "extra"]
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.string({ maxLength: 4 }),
    fc.constantFrom("1", "2.5", "x", "a", "b", "", "ab"),
    fc.integer({ min: -3, max: 3 }),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie("value"), { maxLength: 3 }),
    tie("object"),
  ),
  object: fc.dictionary(fc.constantFrom(...keys), tie("value"), { maxKeys: 5 }),
})).value
const input = fc.oneof(value, fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 5 }))

/** The keys of `value` and of every object in it, in order, so a reordered result is told apart. */
const shape = (value: unknown): unknown =>
  typeof value !== "object" || value === null
    ? value
    : Array.isArray(value)
      ? value.map(shape)
      : Object.entries(value).map(([key, inner]) => [key, shape(inner)])

describe("settlement input decoding", () => {
  for (const [label, schema] of schemas) {
    it(`${label}: the same value or the same error as the full decoder`, () => {
      const tool = Tool.make({
        description: label,
        input: schema,
        output: Schema.Unknown,
        execute: (decoded) => Effect.succeed({ decoded }),
      })
      const decode = Schema.decodeUnknownEither(schema, options)
      fc.assert(
        fc.property(input, (raw) => {
          const exit = Effect.runSyncExit(Tool.settle(tool, { id: "call", name: label, input: raw }, context))
          const expected = decode(raw)
          if (Either.isRight(expected)) {
            expect(exit).toEqual(Exit.succeed({ structured: { decoded: expected.right }, content: [] }))
            expect(shape((exit as Exit.Success<LLM.ToolOutput, never>).value.structured)).toEqual(
              shape({ decoded: expected.right }),
            )
          } else {
            expect(exit).toEqual(
              Exit.fail(new Tool.Failure({ message: `Invalid tool input: ${expected.left.message}` })),
            )
          }
        }),
        { numRuns: 400 },
      )
    })
  }

  for (const [label, schema] of schemas) {
    it(`${label}: output encoding gives the same value or the same error as Schema.encodeEither`, () => {
      const tool = Tool.make({
        description: label,
        input: Schema.Unknown,
        output: schema,
        execute: (raw) => Effect.succeed(raw),
      })
      const encode = Schema.encodeEither(schema)
      fc.assert(
        fc.property(input, (raw) => {
          const exit = Effect.runSyncExit(Tool.settle(tool, { id: "call", name: label, input: raw }, context))
          const expected = encode(raw)
          if (Either.isRight(expected)) {
            const content = typeof expected.right === "string" ? [{ type: "text", text: expected.right }] : []
            expect(exit).toEqual(Exit.succeed({ structured: expected.right, content }))
            expect(shape((exit as Exit.Success<LLM.ToolOutput, never>).value.structured)).toEqual(shape(expected.right))
          } else {
            const message = `Tool returned an invalid value for its output schema: ${expected.left.message}`
            expect(exit).toEqual(Exit.fail(new Tool.Failure({ message })))
          }
        }),
        { numRuns: 400 },
      )
    })
  }

  it("a key the struct does not declare is refused with the full decoder's message, and never executes", () => {
    let ran = 0
    const tool = Tool.make({
      description: "echo",
      input: Schema.Struct({ text: Schema.String }),
      output: Schema.String,
      execute: ({ text }) => Effect.sync(() => (ran++, text)),
    })
    const exit = Effect.runSyncExit(
      Tool.settle(tool, { id: "call", name: "echo", input: { text: "hi", extra: 1 } }, context),
    )
    expect(exit).toEqual(
      Exit.fail(
        new Tool.Failure({
          message: 'Invalid tool input: { readonly text: string }\n└─ ["extra"]\n   └─ is unexpected, expected: "text"',
        }),
      ),
    )
    const symbolKey = Effect.runSyncExit(
      Tool.settle(tool, { id: "call", name: "echo", input: { text: "hi", [Symbol.for("x")]: 1 } }, context),
    )
    expect(Exit.isFailure(symbolKey)).toBe(true)
    expect(ran).toBe(0)
    expect(Effect.runSync(Tool.settle(tool, { id: "call", name: "echo", input: { text: "hi" } }, context))).toEqual({
      structured: "hi",
      content: [{ type: "text", text: "hi" }],
    })
    expect(ran).toBe(1)
  })
})
