/**
 * The codec steps of a settlement: input decoding and output encoding, each one parse in continuation style. A plain
 * struct is first tried by a faster parser that only ever answers a success; anything it cannot decide goes to the
 * full parser exactly once, which answers synchronously for a synchronous schema and as an Effect for an effectful
 * one (an effectful field transform runs once per call, on either path).
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import type { ParseOptions } from "effect/SchemaAST"
import type * as LLM from "../../values/llm.js"

/**
 * What a parse answers when it cannot decide synchronously on its own.
 *
 * @since 0.3.0
 * @category parsing
 */
export const UNDECIDED: unique symbol = Symbol("Tool.undecided")

/**
 * A parse that failed synchronously, with the issue the full parser reported.
 *
 * @since 0.3.0
 * @category parsing
 */
export class Failed {
  constructor(readonly issue: ParseResult.ParseIssue) {}
}

/**
 * A parse that needs effects (an effectful transformation): the Effect that does it, not yet run.
 *
 * @since 0.3.0
 * @category parsing
 */
export class Pending<A> {
  constructor(readonly effect: Effect.Effect<A, ParseResult.ParseIssue>) {}
}

/**
 * One codec step. `fast` is the struct parser when the schema is a plain struct: a parsed value or `UNDECIDED`.
 * `full` is the full parser, run at most once per value: the parsed value, a `Failed`, or a `Pending` (no parsed
 * value is ever an instance of these two module-private classes); `resume` continues a `Pending` with `next` on its
 * value or `fail` on the model-visible failure `onError` makes of its issue.
 *
 * @since 0.3.0
 * @category parsing
 */
export interface Step<A> {
  readonly fast: ((value: unknown) => A | typeof UNDECIDED) | undefined
  readonly full: (value: unknown) => A | Failed | Pending<A>
  readonly resume: <B, E>(
    pending: Pending<A>,
    next: (parsed: A) => Effect.Effect<B, E>,
    fail: (failure: LLM.ToolFailure) => Effect.Effect<B, E>,
  ) => Effect.Effect<B, E>
  readonly onError: (issue: ParseResult.ParseIssue) => LLM.ToolFailure
}

/**
 * The full parser of `ast` with effects allowed: for a synchronous schema its answer is an `Either` (itself an
 * Effect), so it can be read in place; otherwise it is the Effect that does the parse, not yet run.
 */
const fullParser = (
  ast: SchemaAST.AST,
  decoding: boolean,
  options: ParseOptions | undefined,
): ((value: unknown) => Effect.Effect<unknown, ParseResult.ParseIssue>) => {
  const schema = Schema.make(ast)
  return decoding ? ParseResult.decodeUnknown(schema, options) : ParseResult.encodeUnknown(schema, options)
}

const keywordTypes: Partial<Record<SchemaAST.AST["_tag"], "string" | "number" | "boolean">> = {
  StringKeyword: "string",
  NumberKeyword: "number",
  BooleanKeyword: "boolean",
}

/**
 * A faster parser for the common schema, a plain `Schema.Struct` without index signatures, with the same successes
 * as the full parser with `options`. With `onExcessProperty: "error"` the full parser checks every own key against a
 * union of literal schemas; this one looks it up in a set. It then parses each property with the very parser and
 * options the full parser uses for it, in the same order. It only ever answers a success: anything else (not a
 * record, a key the schema does not declare, a property that fails or needs an effect) is `UNDECIDED`, so every
 * error a model sees still comes from the full parser, and an effectful property is left to it unrun. `undefined`
 * when the schema is not such a struct or the options are ones it does not reproduce.
 */
const structParser = (
  ast: SchemaAST.AST,
  decoding: boolean,
  options: ParseOptions | undefined,
): ((value: unknown) => unknown) | undefined => {
  if (ast._tag !== "TypeLiteral" || ast.indexSignatures.length > 0 || ast.propertySignatures.length === 0)
    return undefined
  if (options?.onExcessProperty === "preserve" || options?.propertyOrder === "original" || options?.exact === true)
    return undefined
  // Annotations that change how the struct itself parses keep the full parser.
  if (
    Option.isSome(SchemaAST.getParseOptionsAnnotation(ast)) ||
    Option.isSome(SchemaAST.getDecodingFallbackAnnotation(ast))
  )
    return undefined
  const excess = options?.onExcessProperty === "error"
  const declared = new Set<PropertyKey>()
  const properties = ast.propertySignatures.map((signature) => {
    declared.add(signature.name)
    return {
      name: signature.name,
      optional: signature.isOptional,
      // A string, number or boolean keyword parses a value of its type to itself either way (whatever its
      // annotations: they only act on a failure, which is left to the full parser), so its parse is a `typeof` test.
      type: keywordTypes[signature.type._tag],
      parse: fullParser(signature.type, decoding, options),
    }
  })
  return (value) => {
    if (!Predicate.isRecord(value)) return UNDECIDED
    if (excess) {
      // The own keys, as `Reflect.ownKeys` lists them; these two calls are several times cheaper together.
      for (const key of Object.getOwnPropertyNames(value)) if (!declared.has(key)) return UNDECIDED
      for (const key of Object.getOwnPropertySymbols(value)) if (!declared.has(key)) return UNDECIDED
    }
    const parsed: Record<PropertyKey, unknown> = {}
    for (const property of properties) {
      if (property.optional && !Object.prototype.hasOwnProperty.call(value, property.name)) continue
      const field = value[property.name]
      if (property.type !== undefined) {
        if (typeof field !== property.type) return UNDECIDED
        parsed[property.name] = field
        continue
      }
      // An effectful parse is an Effect that is not an `Either`: left to the full parser, never run here.
      const result = property.parse(field)
      if (!Either.isEither(result) || Either.isLeft(result)) return UNDECIDED
      parsed[property.name] = result.right
    }
    return parsed
  }
}

/**
 * The codec step for `schema` in one direction: the struct parser when it applies, and the full parser.
 *
 * @since 0.3.0
 * @category parsing
 */
export const step = <A>(
  schema: Schema.Schema.Any,
  decoding: boolean,
  options: ParseOptions | undefined,
  onError: (issue: ParseResult.ParseIssue) => LLM.ToolFailure,
): Step<A> => {
  const fast = structParser(schema.ast, decoding, options)
  const parser = fullParser(schema.ast, decoding, options) as (
    value: unknown,
  ) => Effect.Effect<A, ParseResult.ParseIssue>
  // Returns the closure rather than writing it as an `onFailure:` property, which would name it per call.
  const failWith =
    <B, E>(fail: (failure: LLM.ToolFailure) => Effect.Effect<B, E>) =>
    (issue: ParseResult.ParseIssue): Effect.Effect<B, E> =>
      fail(onError(issue))
  return {
    fast: fast as ((value: unknown) => A | typeof UNDECIDED) | undefined,
    full: (value) => {
      const result = parser(value)
      if (!Either.isEither(result)) return new Pending(result)
      const settled = result as Either.Either<A, ParseResult.ParseIssue>
      return Either.isRight(settled) ? settled.right : new Failed(settled.left)
    },
    resume: (pending, next, fail) => Effect.matchEffect(pending.effect, { onFailure: failWith(fail), onSuccess: next }),
    onError,
  }
}
