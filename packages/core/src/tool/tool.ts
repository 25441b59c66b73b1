/**
 * The tool contract. `make` returns an opaque frozen value; its codecs, executor, definition derivation and
 * catalogue permission live in a module-private WeakMap, so callers can neither read the schemas nor call the
 * executor. Settlement always runs decode input → execute → encode output → project model content.
 *
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import type { ParseOptions } from "effect/SchemaAST"
import * as LLM from "../values/llm.js"
import * as ProviderSchema from "../values/provider-schema.js"

/**
 * One progress report of a running call: a short human-readable status, optional numbers for protocols that show
 * a bar (MCP `progress`/`total`), and new output since the last report.
 *
 * @since 0.2.0
 */
export interface Progress {
  readonly message: string
  readonly progress?: number
  readonly total?: number
  readonly output?: string
}

/**
 * The invocation identity every execution receives; cancellation is interruption, permissions are the tool's own.
 * `progress`, when the caller gives one, receives progress reports; it is synchronous, must not block and never
 * fails the call. Tools call it as `context.progress?.(...)`, so its absence costs nothing.
 *
 * @since 0.1.0
 */
export interface Context {
  readonly sessionID: string
  readonly agent: string
  readonly assistantMessageID: string
  readonly toolCallID: string
  readonly progress?: (update: Progress) => void
}

/**
 * A codec with no service requirements.
 *
 * @since 0.1.0
 */
export type SchemaType<A> = Schema.Schema<A, any, never>

declare const TypeId: unique symbol

/**
 * An opaque tool value.
 *
 * @since 0.1.0
 */
export interface Definition<in out Input, in out Output> {
  readonly [TypeId]: { readonly input: Input; readonly output: Output }
}

/**
 * Any tool value.
 *
 * @since 0.1.0
 */
export type AnyTool = Definition<any, any>

/**
 * The model-visible expected failure of a tool.
 *
 * @since 0.1.0
 */
export const Failure = LLM.ToolFailure
/**
 * @see Failure
 *
 * @since 0.1.0
 */
export type Failure = LLM.ToolFailure

/**
 * A record key failed `validateName`.
 *
 * @since 0.1.0
 */
export class RegistrationError extends Schema.TaggedError<RegistrationError>()("Tool.RegistrationError", {
  name: Schema.String,
  message: Schema.String,
}) {}

/**
 * What `toModelOutput` returns: text, or media as base64 `data`.
 *
 * @since 0.1.0
 */
export type Content =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "file"; readonly data: string; readonly mime: string; readonly name?: string | undefined }

/**
 * The arguments of `make`.
 *
 * @since 0.1.0
 */
export interface Config<I extends SchemaType<any>, O extends SchemaType<any>, S extends SchemaType<any>> {
  readonly description: string
  /** A display title and behaviour hints for clients (MCP annotations); advisory only. */
  readonly annotations?: LLM.ToolAnnotations
  readonly input: I
  readonly output: O
  readonly structured?: S
  readonly toStructuredOutput?: (args: { readonly input: I["Type"]; readonly output: O["Encoded"] }) => S["Type"]
  readonly execute: (input: I["Type"], context: Context) => Effect.Effect<O["Type"], LLM.ToolFailure>
  readonly toModelOutput?: (args: {
    readonly input: I["Type"]
    readonly output: O["Encoded"]
  }) => ReadonlyArray<Content>
}

interface Runtime {
  readonly permission?: string
  readonly definition: (name: string) => LLM.ToolDefinition
  /**
   * Runs synchronously up to the executor, and on through encoding and projection when the executor returns a
   * settled success; call it inside a suspended effect.
   */
  readonly settle: <B, E>(
    call: LLM.ToolCall,
    context: Context,
    next: (output: LLM.ToolOutput, context: Context) => Effect.Effect<B, E>,
    fail: (failure: LLM.ToolFailure) => Effect.Effect<B, E>,
  ) => Effect.Effect<B, E>
}

const runtimes = new WeakMap<object, Runtime>()

const runtimeOf = (tool: AnyTool): Runtime => {
  const runtime = typeof tool === "object" && tool !== null ? runtimes.get(tool) : undefined
  if (runtime === undefined) throw new TypeError("Invalid Core Tool value")
  return runtime
}

const jsonSchema = (codec: Schema.Schema.Any): LLM.JsonSchema =>
  ProviderSchema.normalize(JSONSchema.make(codec) as unknown as ProviderSchema.Schema)

/** Input decoding refuses properties the schema does not declare, as the advertised `additionalProperties` says. */
const inputOptions: ParseOptions = { onExcessProperty: "error", errors: "all" }

const invalidInput = (error: ParseResult.ParseError) =>
  new LLM.ToolFailure({ message: `Invalid tool input: ${error.message}` })

const invalidOutput = (error: ParseResult.ParseError) =>
  new LLM.ToolFailure({ message: `Tool returned an invalid value for its output schema: ${error.message}` })

/**
 * A codec step: `sync` is the synchronous parser, whose success is taken as is (most schemas are synchronous and this
 * is far cheaper); when it does not succeed, `slow` lets the Effect parser decide in continuation style, so effectful
 * transformations and failures behave exactly as `Schema.decodeUnknown` / `Schema.encode` specify. A parse failure
 * continues with `fail`.
 */
const codec = <A>(
  sync: (value: unknown) => Either.Either<A, ParseResult.ParseError>,
  effect: (value: any) => Effect.Effect<A, ParseResult.ParseError>,
  onError: (error: ParseResult.ParseError) => LLM.ToolFailure,
) => {
  // Returns the closure rather than writing it as an `onFailure:` property, which would name it per call.
  const failWith =
    <B, E>(fail: (failure: LLM.ToolFailure) => Effect.Effect<B, E>) =>
    (error: ParseResult.ParseError): Effect.Effect<B, E> =>
      fail(onError(error))
  const slow = <B, E>(
    value: unknown,
    next: (parsed: A) => Effect.Effect<B, E>,
    fail: (failure: LLM.ToolFailure) => Effect.Effect<B, E>,
  ): Effect.Effect<B, E> => Effect.matchEffect(effect(value), { onFailure: failWith(fail), onSuccess: next })
  const run = <B, E>(
    value: unknown,
    next: (parsed: A) => Effect.Effect<B, E>,
    fail: (failure: LLM.ToolFailure) => Effect.Effect<B, E>,
  ): Effect.Effect<B, E> => {
    const result = sync(value)
    return Either.isRight(result) ? next(result.right) : slow(value, next, fail)
  }
  return { sync, slow, run }
}

const keywordTypes: Partial<Record<SchemaAST.AST["_tag"], "string" | "number" | "boolean">> = {
  StringKeyword: "string",
  NumberKeyword: "number",
  BooleanKeyword: "boolean",
}

/** What a `structParser` answers when it cannot decide on its own; the full parser then runs. */
const UNDECIDED: unique symbol = Symbol("Tool.undecided")

/**
 * A faster parser for the common schema, a plain `Schema.Struct` without index signatures, with the same successes
 * as `ParseResult.decodeUnknownEither(schema, options)` (or `encodeUnknownEither` when not `decoding`). With
 * `onExcessProperty: "error"` the full parser checks every own key against a union of literal schemas; this one
 * looks it up in a set. It then parses each property with the very parser and options the full parser uses for it,
 * in the same order. It only ever answers a success: anything else (not a record, a key the schema does not declare,
 * a property that fails or needs an effect) is `UNDECIDED`, so every error a model sees still comes from the full
 * parser. `undefined` when the schema is not such a struct or the options are ones it does not reproduce.
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
    const schema = Schema.make(signature.type)
    return {
      name: signature.name,
      optional: signature.isOptional,
      // A string, number or boolean keyword parses a value of its type to itself either way (whatever its
      // annotations: they only act on a failure, which is left to the full parser), so its parse is a `typeof` test.
      type: keywordTypes[signature.type._tag],
      parse: decoding
        ? ParseResult.decodeUnknownEither(schema, options)
        : ParseResult.encodeUnknownEither(schema, options),
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
      // An effectful parse is not an `Either`, so it is not a `Right` either.
      const result = property.parse(field)
      if (!Either.isRight(result)) return UNDECIDED
      parsed[property.name] = result.right
    }
    return parsed
  }
}

const project = (part: Content): LLM.ToolContent => {
  if (part.type === "text") return { type: "text", text: part.text }
  const uri = `data:${part.mime};base64,${part.data}`
  return part.name === undefined
    ? { type: "file", uri, mime: part.mime }
    : { type: "file", uri, mime: part.mime, name: part.name }
}

/**
 * Creates a tool. The result is typed by its decoded input and its structured (or encoded output) value.
 *
 * @since 0.1.0
 */
export const make = <I extends SchemaType<any>, O extends SchemaType<any>, S extends SchemaType<any> = O>(
  config: Config<I, O, S>,
): Definition<I["Type"], S["Type"]> => {
  const decodeInput = codec(
    Schema.decodeUnknownEither(config.input, inputOptions),
    Schema.decodeUnknown(config.input, inputOptions),
    invalidInput,
  )
  const decodeStruct = structParser(config.input.ast, true, inputOptions)
  const encodeOutput = codec(Schema.encodeEither(config.output), Schema.encode(config.output), invalidOutput)
  const encodeStruct = structParser(config.output.ast, false, undefined)
  const { structured, toStructuredOutput, toModelOutput } = config
  const encodeStructured =
    structured !== undefined && toStructuredOutput !== undefined
      ? codec(Schema.encodeEither(structured), Schema.encode(structured), invalidOutput)
      : undefined
  const definitions = new Map<string, LLM.ToolDefinition>()

  const definition = (name: string): LLM.ToolDefinition => {
    const cached = definitions.get(name)
    if (cached !== undefined) return cached
    const built: LLM.ToolDefinition = {
      name,
      description: config.description,
      inputSchema: jsonSchema(config.input),
      outputSchema: jsonSchema(structured ?? config.output),
      ...(config.annotations === undefined ? {} : { annotations: config.annotations }),
    }
    definitions.set(name, built)
    return built
  }

  type Next<B, E> = (output: LLM.ToolOutput, context: Context) => Effect.Effect<B, E>
  type Fail<B, E> = (failure: LLM.ToolFailure) => Effect.Effect<B, E>

  // The common path (a struct input, an executor that returns `Effect.succeed`, synchronous codecs) runs as plain
  // calls with no closure and no Effect of its own. Per-call closures on the other paths are anonymous on purpose: a
  // named one (`const f = …`, `{ key: () => … }`) costs a `defineProperty` per call under transpilers that keep
  // function names (tsx, esbuild `keepNames`).
  const complete = (input: I["Type"], output: O["Encoded"], value: unknown): LLM.ToolOutput => {
    let content: ReadonlyArray<LLM.ToolContent>
    if (toModelOutput !== undefined) content = toModelOutput({ input, output }).map(project)
    else content = typeof output === "string" ? [{ type: "text", text: output }] : []
    return { structured: value, content }
  }

  // Always called inside a suspended effect or a continuation, where a throw from the projections becomes a defect.
  const finish = <B, E>(
    input: I["Type"],
    output: O["Encoded"],
    context: Context,
    next: Next<B, E>,
    fail: Fail<B, E>,
  ): Effect.Effect<B, E> => {
    if (encodeStructured === undefined) return next(complete(input, output, output), context)
    return encodeStructured.run(
      toStructuredOutput!({ input, output }),
      (value) => next(complete(input, output, value), context),
      fail,
    )
  }

  const afterExecute = <B, E>(
    input: I["Type"],
    value: O["Type"],
    context: Context,
    next: Next<B, E>,
    fail: Fail<B, E>,
  ): Effect.Effect<B, E> => {
    if (encodeStruct !== undefined) {
      const output = encodeStruct(value)
      if (output !== UNDECIDED) return finish(input, output, context, next, fail)
    }
    const encoded = encodeOutput.sync(value)
    return Either.isRight(encoded)
      ? finish(input, encoded.right, context, next, fail)
      : encodeOutput.slow(value, (output) => finish(input, output, context, next, fail), fail)
  }

  // Returns the closure rather than writing it as an `onSuccess:` property, which would name it.
  const continueWith =
    <B, E>(input: I["Type"], context: Context, next: Next<B, E>, fail: Fail<B, E>) =>
    (value: O["Type"]): Effect.Effect<B, E> =>
      afterExecute(input, value, context, next, fail)

  // An executor that returned a settled success (`Effect.succeed`) continues in this step; any other Effect,
  // failures included, goes through the match, so expected failures, defects and interruption keep their meaning.
  const execute = <B, E>(
    input: I["Type"],
    context: Context,
    next: Next<B, E>,
    fail: Fail<B, E>,
  ): Effect.Effect<B, E> => {
    const effect = config.execute(input, context)
    if (Exit.isExit(effect) && Exit.isSuccess(effect)) return afterExecute(input, effect.value, context, next, fail)
    return Effect.matchEffect(effect, { onFailure: fail, onSuccess: continueWith(input, context, next, fail) })
  }

  const settle: Runtime["settle"] = (call, context, next, fail) => {
    if (decodeStruct !== undefined) {
      const input = decodeStruct(call.input)
      if (input !== UNDECIDED) return execute(input, context, next, fail)
    }
    return decodeInput.run(call.input, (input) => execute(input, context, next, fail), fail)
  }

  const tool = Object.freeze({}) as Definition<I["Type"], S["Type"]>
  runtimes.set(tool, { definition, settle })
  return tool
}

/**
 * Returns a new tool that shares `tool`'s runtime and definition cache but carries catalogue action `action`.
 *
 * @since 0.1.0
 */
export const withPermission = <T extends AnyTool>(tool: T, action: string): T => {
  const runtime = runtimeOf(tool)
  const decorated = Object.freeze({}) as T
  runtimes.set(decorated, { ...runtime, permission: action })
  return decorated
}

/**
 * The catalogue permission action: the decorated action, else the registration name.
 *
 * @since 0.1.0
 */
export const permission = (tool: AnyTool, name: string): string => runtimeOf(tool).permission ?? name

/**
 * The model definition of `tool` registered as `name`; the same object is returned for the same (tool, name).
 *
 * @since 0.1.0
 */
export const definition = (name: string, tool: AnyTool): LLM.ToolDefinition => runtimeOf(tool).definition(name)

/**
 * Settles one call: decode → execute → encode → project. Defects and interruption propagate untouched.
 *
 * @since 0.1.0
 */
export const settle = (
  tool: AnyTool,
  call: LLM.ToolCall,
  context: Context,
): Effect.Effect<LLM.ToolOutput, LLM.ToolFailure> => {
  const runtime = runtimeOf(tool)
  return Effect.suspend(() =>
    runtime.settle<LLM.ToolOutput, LLM.ToolFailure>(call, context, Effect.succeed, Effect.fail),
  )
}

/**
 * Settles one call like `settle` and continues in the same step: with `onSuccess` on the tool's output, with
 * `onFailure` on its model-visible failure (invalid input, the executor's failure, an invalid output). This costs
 * at most one continuation frame (none when the executor returns a settled success) instead of `settle`'s chain
 * plus a `matchEffect`. Failures and defects of the continuations
 * themselves propagate; defects and interruption of the tool propagate untouched.
 *
 * Unlike `settle`, it runs input decoding (and an executor that does its work before returning its Effect) when it
 * is called, so call it inside `Effect.suspend` or a continuation.
 *
 * @since 0.2.0
 */
export const settleThen = <B, E>(
  tool: AnyTool,
  call: LLM.ToolCall,
  context: Context,
  continuations: {
    /** Receives the output and the `context` the call ran with, so one continuation can serve every call. */
    readonly onSuccess: (output: LLM.ToolOutput, context: Context) => Effect.Effect<B, E>
    readonly onFailure: (failure: LLM.ToolFailure) => Effect.Effect<B, E>
  },
): Effect.Effect<B, E> => runtimeOf(tool).settle(call, context, continuations.onSuccess, continuations.onFailure)

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/

/**
 * Succeeds iff `name` is a letter followed by up to 63 letters, digits, `_` or `-`.
 *
 * @since 0.1.0
 */
export const validateName = (name: string): Effect.Effect<void, RegistrationError> =>
  NAME.test(name) ? Effect.void : Effect.fail(new RegistrationError({ name, message: `Invalid tool name: ${name}` }))

/**
 * Validates every key of a registration record; the first invalid key (in object order) fails.
 *
 * @since 0.1.0
 */
export const validateNames = (names: ReadonlyArray<string>): Effect.Effect<void, RegistrationError> => {
  const invalid = names.find((name) => !NAME.test(name))
  return invalid === undefined ? Effect.void : validateName(invalid)
}

/**
 * Replaces every character outside `[a-zA-Z0-9_-]` with `_`; the result may still fail `validateName`.
 *
 * @since 0.1.0
 */
export const sanitizeName = (name: string): string => name.replace(/[^a-zA-Z0-9_-]/g, "_")

/**
 * `Object.entries(tools)` with sanitised keys, for raw-name sources such as MCP. Registries never sanitise.
 *
 * @since 0.1.0
 */
export const registrationEntries = (
  tools: Readonly<Record<string, AnyTool>>,
): ReadonlyArray<readonly [string, AnyTool]> =>
  Object.entries(tools).map(([name, tool]) => [sanitizeName(name), tool] as const)

/**
 * True iff the cause carries a declined permission or a dismissed question as a defect.
 *
 * @since 0.1.0
 */
export const isUserStop = (cause: Cause.Cause<unknown>): boolean =>
  LLM.hasDefectTag(cause, "PermissionV2.DeclinedError") || LLM.hasDefectTag(cause, "QuestionV2.RejectedError")
