/**
 * Input decoding and output encoding on the settlement path answer exactly what `Schema.decodeUnknownEither(input,
 * { onExcessProperty: "error", errors: "all" })` and `Schema.encodeEither(output)` answer: the same value (key order
 * included), or a failure made from the very issue the full decoder reports, for structs (which take a faster parser)
 * and for every other shape, on random values with and without keys the schema does not declare. An effectful field
 * transform runs once per call, whether the input is valid or not.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, FastCheck as fc, ParseResult, Schema } from "effect"
import { ToolTest } from "../src/entry/testing.js"
import { type LLM, Tool } from "../src/index.js"
import * as InvalidInput from "../src/tool/internal/invalid-input.js"

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
          const exit = Effect.runSyncExit(ToolTest.settle(tool, raw))
          const expected = decode(raw)
          if (Either.isRight(expected)) {
            expect(exit).toEqual(Exit.succeed({ structured: { decoded: expected.right }, content: [] }))
            expect(shape((exit as Exit.Success<LLM.ToolOutput, never>).value.structured)).toEqual(
              shape({ decoded: expected.right }),
            )
          } else {
            expect(exit).toEqual(Exit.fail(new Tool.Failure({ message: InvalidInput.message(expected.left.issue) })))
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
          const exit = Effect.runSyncExit(ToolTest.settle(tool, raw))
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
    const exit = Effect.runSyncExit(ToolTest.settle(tool, { text: "hi", extra: 1 }))
    expect(exit).toEqual(
      Exit.fail(new Tool.Failure({ message: "Invalid tool input: extra: unexpected property, expected one of text" })),
    )
    const symbolKey = Effect.runSyncExit(ToolTest.settle(tool, { text: "hi", [Symbol.for("x")]: 1 }))
    expect(Exit.isFailure(symbolKey)).toBe(true)
    expect(ran).toBe(0)
    expect(Effect.runSync(ToolTest.settle(tool, { text: "hi" }))).toEqual({
      structured: "hi",
      content: [{ type: "text", text: "hi" }],
    })
    expect(ran).toBe(1)
  })

  it.live("an effectful field transform runs once per call: valid, invalid, and failing in the transform itself", () =>
    Effect.gen(function* () {
      let runs = 0
      // Asynchronous, so no synchronous parser can settle it: only an Effect parse can.
      const Counted = Schema.transformOrFail(Schema.String, Schema.String, {
        strict: true,
        decode: (value, _, ast) =>
          Effect.flatMap(Effect.sleep("1 millis"), () => {
            runs++
            return value === "bad"
              ? Effect.fail(new ParseResult.Type(ast, value, "bad is refused"))
              : Effect.succeed(value)
          }),
        encode: (value) => Effect.succeed(value),
      })
      const tool = Tool.make({
        description: "counted",
        input: Schema.Struct({ text: Counted, n: Schema.Number }),
        output: Schema.String,
        execute: ({ text }) => Effect.succeed(text),
      })
      expect((yield* ToolTest.settle(tool, { text: "ok", n: 1 })).structured).toBe("ok")
      expect(runs).toBe(1)
      // Another property is invalid: the transform still runs once (errors: "all"), never three times.
      const invalid = yield* Effect.flip(ToolTest.settle(tool, { text: "ok", n: "1" }))
      expect(invalid.message).toBe('Invalid tool input: n: expected a number, got "1"')
      expect(runs).toBe(2)
      const refused = yield* Effect.flip(ToolTest.settle(tool, { text: "bad", n: 1 }))
      expect(refused.message).toBe("Invalid tool input: text: bad is refused")
      expect(runs).toBe(3)
    }),
  )
})
