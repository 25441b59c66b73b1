/**
 * The tool contract. `make` returns an opaque frozen value; its codecs, executor, definition derivation and
 * catalogue permission live in a private table of the contract (`internal/runtime.ts`), so callers can neither read
 * the schemas nor call the executor: only a registry materialization settles a call (decode input → execute → encode
 * output → project model content), and `@toolgate/core/testing` offers `ToolTest.settle` for unit tests.
 *
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as JSONSchema from "effect/JSONSchema"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { ParseOptions } from "effect/SchemaAST"
import * as LLM from "../values/llm.js"
import * as ProviderSchema from "../values/provider-schema.js"
import * as Codec from "./internal/codec.js"
import * as InvalidInput from "./internal/invalid-input.js"
import * as Runtime from "./internal/runtime.js"

/**
 * One progress report of a running call: a short human-readable status, optional numbers for protocols that show
 * a bar (MCP `progress`/`total`), and new output since the last report.
 *
 * @since 0.2.0
 * @category models
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
 * A registry materialization also gives `call` (the call as the model sent it: name, raw input) and `definition`
 * (the definition the tool was advertised with, one object per registered tool), so a permission prompt raised by
 * the call can show it and bind its digest to it (`PermissionV2.fromToolCall` passes them on; see
 * docs/approvals.md). Both are read-only identity, never an executor or a callback.
 *
 * @since 0.1.0
 * @category models
 */
export interface Context {
  readonly sessionID: string
  readonly agent: string
  readonly assistantMessageID: string
  readonly toolCallID: string
  readonly progress?: (update: Progress) => void
  /**
   * The call being settled, as the model sent it (its `input` is the raw input, before decoding).
   *
   * @since 0.3.0
   */
  readonly call?: LLM.ToolCall
  /**
   * The tool's definition as this materialization advertised it (name, description, input schema).
   *
   * @since 0.3.0
   */
  readonly definition?: LLM.ToolDefinition
}

/**
 * A codec with no service requirements.
 *
 * @since 0.1.0
 * @category models
 */
export type SchemaType<A> = Schema.Schema<A, any, never>

declare const TypeId: unique symbol

/**
 * An opaque tool value.
 *
 * @since 0.1.0
 * @category models
 */
export interface Definition<in out Input, in out Output> {
  readonly [TypeId]: { readonly input: Input; readonly output: Output }
}

/**
 * Any tool value.
 *
 * @since 0.1.0
 * @category models
 */
export type AnyTool = Definition<any, any>

/**
 * The model-visible expected failure of a tool.
 *
 * @since 0.1.0
 * @category errors
 */
export const Failure = LLM.ToolFailure
/**
 * @see Failure
 *
 * @since 0.1.0
 * @category errors
 */
export type Failure = LLM.ToolFailure

/**
 * A record key failed `validateName`.
 *
 * @since 0.1.0
 * @category errors
 */
export class RegistrationError extends Schema.TaggedError<RegistrationError>()("Tool.RegistrationError", {
  name: Schema.String,
  message: Schema.String,
}) {}

/**
 * What `toModelOutput` returns: text, or media as base64 `data`.
 *
 * @since 0.1.0
 * @category models
 */
export type Content =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "file"; readonly data: string; readonly mime: string; readonly name?: string | undefined }

/**
 * The arguments of `make`.
 *
 * @since 0.1.0
 * @category models
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

const jsonSchema = (codec: Schema.Schema.Any): LLM.JsonSchema =>
  ProviderSchema.normalize(JSONSchema.make(codec) as unknown as ProviderSchema.Schema)

/** Input decoding refuses properties the schema does not declare, as the advertised `additionalProperties` says. */
const inputOptions: ParseOptions = { onExcessProperty: "error", errors: "all" }

const invalidInput = (issue: ParseResult.ParseIssue) => new LLM.ToolFailure({ message: InvalidInput.message(issue) })

const invalidOutput = (issue: ParseResult.ParseIssue) =>
  new LLM.ToolFailure({
    message: `Tool returned an invalid value for its output schema: ${ParseResult.parseError(issue).message}`,
  })

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
 * @category constructors
 */
export const make = <I extends SchemaType<any>, O extends SchemaType<any>, S extends SchemaType<any> = O>(
  config: Config<I, O, S>,
): Definition<I["Type"], S["Type"]> => {
  const decodeInput = Codec.step<I["Type"]>(config.input, true, inputOptions, invalidInput)
  const encodeOutput = Codec.step<O["Encoded"]>(config.output, false, undefined, invalidOutput)
  const decodeFast = decodeInput.fast
  const encodeFast = encodeOutput.fast
  const { structured, toStructuredOutput, toModelOutput } = config
  const encodeStructured =
    structured !== undefined && toStructuredOutput !== undefined
      ? Codec.step<S["Encoded"]>(structured, false, undefined, invalidOutput)
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

  /**
   * Runs `step` on `value` and continues with `then(parsed)` or `fail`: in place for the struct parser's success and
   * a synchronous full parse, through the Effect for an effectful one. The full parser runs at most once.
   */
  const through = <A, B, E>(
    step: Codec.Step<A>,
    value: unknown,
    then: (parsed: A) => Effect.Effect<B, E>,
    fail: Fail<B, E>,
  ): Effect.Effect<B, E> => {
    const parsed = step.full(value)
    if (parsed instanceof Codec.Failed) return fail(step.onError(parsed.issue))
    if (parsed instanceof Codec.Pending) return step.resume(parsed, then, fail)
    return then(parsed)
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
    return through(
      encodeStructured,
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
    if (encodeFast !== undefined) {
      const output = encodeFast(value)
      if (output !== Codec.UNDECIDED) return finish(input, output, context, next, fail)
    }
    return through(encodeOutput, value, (output) => finish(input, output, context, next, fail), fail)
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

  const settle: Runtime.Runtime<Context>["settle"] = (call, context, next, fail) => {
    if (decodeFast !== undefined) {
      const input = decodeFast(call.input)
      if (input !== Codec.UNDECIDED) return execute(input, context, next, fail)
    }
    return through(decodeInput, call.input, (input) => execute(input, context, next, fail), fail)
  }

  const tool = Object.freeze({}) as Definition<I["Type"], S["Type"]>
  Runtime.set<Context>(tool, { definition, settle })
  return tool
}

/**
 * Returns a new tool that shares `tool`'s runtime and definition cache but carries catalogue action `action`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withPermission = <T extends AnyTool>(tool: T, action: string): T => {
  const decorated = Object.freeze({}) as T
  Runtime.set<Context>(decorated, { ...Runtime.of<Context>(tool), permission: action })
  return decorated
}

/**
 * The catalogue permission action: the decorated action, else the registration name.
 *
 * @since 0.1.0
 * @category getters
 */
export const permission = (tool: AnyTool, name: string): string => Runtime.of(tool).permission ?? name

/**
 * The model definition of `tool` registered as `name`; the same object is returned for the same (tool, name).
 *
 * @since 0.1.0
 * @category getters
 */
export const definition = (name: string, tool: AnyTool): LLM.ToolDefinition => Runtime.of(tool).definition(name)

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/

/**
 * Succeeds iff `name` is a letter followed by up to 63 letters, digits, `_` or `-`.
 *
 * @since 0.1.0
 * @category names
 */
export const validateName = (name: string): Effect.Effect<void, RegistrationError> =>
  NAME.test(name) ? Effect.void : Effect.fail(new RegistrationError({ name, message: `Invalid tool name: ${name}` }))

/**
 * Validates every key of a registration record; the first invalid key (in object order) fails.
 *
 * @since 0.1.0
 * @category names
 */
export const validateNames = (names: ReadonlyArray<string>): Effect.Effect<void, RegistrationError> => {
  const invalid = names.find((name) => !NAME.test(name))
  return invalid === undefined ? Effect.void : validateName(invalid)
}

/**
 * Replaces every character outside `[a-zA-Z0-9_-]` with `_`; the result may still fail `validateName`.
 *
 * @since 0.1.0
 * @category names
 */
export const sanitizeName = (name: string): string => name.replace(/[^a-zA-Z0-9_-]/g, "_")

/**
 * `Object.entries(tools)` with sanitised keys, for raw-name sources such as MCP. Registries never sanitise.
 *
 * @since 0.1.0
 * @category names
 */
export const registrationEntries = (
  tools: Readonly<Record<string, AnyTool>>,
): ReadonlyArray<readonly [string, AnyTool]> =>
  Object.entries(tools).map(([name, tool]) => [sanitizeName(name), tool] as const)

/**
 * True iff the cause carries a declined permission or a dismissed question as a defect.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isUserStop = (cause: Cause.Cause<unknown>): boolean =>
  LLM.hasDefectTag(cause, "PermissionV2.DeclinedError") || LLM.hasDefectTag(cause, "QuestionV2.RejectedError")
