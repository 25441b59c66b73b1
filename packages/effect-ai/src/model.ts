/**
 * A `Model` for the toolgate Runner on top of `@effect/ai`'s `LanguageModel`: any Effect AI provider (OpenAI,
 * Anthropic, …) drives the Runner. Requests become an `@effect/ai` Prompt plus one dynamic Tool per definition;
 * streamed parts become Runner events. Tool-call resolution stays disabled: the Runner settles every call through
 * its own materialization.
 *
 * By default the tools are advertised with their strict projection (`ProviderSchema.toStrict`: every property
 * required, optional ones nullable, closed objects), which OpenAI's strict mode accepts and every other provider
 * reads as ordinary JSON Schema; the `null` a strict provider sends for an omitted optional field is turned back
 * into an absent field before the Runner sees the call.
 *
 * @since 0.1.0
 */
import type * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Prompt from "@effect/ai/Prompt"
import * as Response from "@effect/ai/Response"
import * as Tool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import type { LLM } from "@toolgate/core"
import { Model, ProviderSchema } from "@toolgate/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/**
 * How tool input schemas are advertised: `"strict"` sends the OpenAI strict-mode projection (the default, and
 * what `@effect/ai-openai`'s default `strict: true` needs); `"standard"` sends the definitions' schemas as they are
 * (for a provider configured with `strict: false`, or one that rejects `null` in types).
 *
 * @since 0.2.0
 * @category models
 */
export type SchemaMode = "strict" | "standard"

/**
 * Options of `layerWith` / `makeWith`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly schemas?: SchemaMode
}

/**
 * Parameters that accept any value and advertise `schema` as their JSON Schema (validation is ours, at settle).
 *
 * @since 0.1.0
 * @category utilities
 */
export const jsonSchemaParameters = (schema: LLM.JsonSchema): Tool.AnyStructSchema =>
  Schema.Unknown.annotations({ jsonSchema: schema }) as unknown as Tool.AnyStructSchema

/**
 * The input schema a provider is shown for `definition` under `mode`.
 *
 * @since 0.2.0
 * @category utilities
 */
export const advertisedSchema = (definition: LLM.ToolDefinition, mode: SchemaMode = "strict"): LLM.JsonSchema =>
  mode === "strict" ? ProviderSchema.toStrict(definition.inputSchema) : definition.inputSchema

/**
 * A provider's tool input read back against `definition`: under `"strict"` a `null` sent for an optional field
 * the tool does not accept as `null` becomes absent; otherwise the input is returned as is.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromProviderInput = (definition: LLM.ToolDefinition, input: unknown, mode: SchemaMode = "strict") =>
  mode === "strict" ? ProviderSchema.fromStrictInput(definition.inputSchema, input) : input

/**
 * An `@effect/ai` Tool advertising one toolgate definition (its schema projected for `mode`, strict by default).
 * Success and failure are both `Unknown` and failures are returned to the model (`failureMode: "return"`).
 *
 * @since 0.1.0
 * @category utilities
 */
export const toTool = (definition: LLM.ToolDefinition, mode: SchemaMode = "strict"): Tool.Any =>
  Tool.make(definition.name, {
    description: definition.description,
    success: Schema.Unknown,
    failure: Schema.Unknown,
    failureMode: "return",
  }).setParameters(jsonSchemaParameters(advertisedSchema(definition, mode)))

/**
 * The toolkit the provider is shown. Its `handle` is never called: resolution is disabled and the Runner settles
 * calls itself.
 */
const advertised = (
  definitions: ReadonlyArray<LLM.ToolDefinition>,
  mode: SchemaMode,
): Toolkit.WithHandler<Record<string, Tool.Any>> => ({
  tools: Object.fromEntries(definitions.map((definition) => [definition.name, toTool(definition, mode)])),
  handle: (name) => Effect.dieMessage(`EffectAiModel: tool ${String(name)} must be settled by the Runner`),
})

const describeFile = (file: LLM.ToolFileContent): string =>
  `[${file.name ?? "file"} (${file.mime}) is attached in the next message]`

/**
 * The value a provider sees for one toolgate result, and whether it is a failure. Text is a plain string (the
 * provider decides how to frame it), structured results are the value itself, and content is its text parts
 * joined by newlines, each media part named by a line that points at the message carrying it (see
 * `toPromptMessages`).
 *
 * @since 0.1.0
 * @category utilities
 */
export const toResultPart = (
  result: LLM.ToolResultValue,
): { readonly result: unknown; readonly isFailure: boolean } => {
  switch (result.type) {
    case "text":
      return {
        result: typeof result.value === "string" ? result.value : JSON.stringify(result.value),
        isFailure: false,
      }
    case "content":
      return {
        result: result.value.map((part) => (part.type === "text" ? part.text : describeFile(part))).join("\n"),
        isFailure: false,
      }
    case "json":
      return { result: result.value, isFailure: false }
    case "error":
      return { result: result.value, isFailure: true }
  }
}

const DATA_URI = /^data:([^;,]*)(;base64)?,(.*)$/s

/**
 * A media part of a tool result as an `@effect/ai` file part: the bytes of a data URI, otherwise the URI as a URL
 * (or as given when it does not parse).
 *
 * @since 0.2.0
 * @category utilities
 */
export const toFilePart = (file: LLM.ToolFileContent): Prompt.FilePartEncoded => {
  const match = DATA_URI.exec(file.uri)
  const asUri = (): Prompt.FilePartEncoded["data"] => (URL.canParse(file.uri) ? new URL(file.uri) : file.uri)
  const data: Prompt.FilePartEncoded["data"] =
    match === null
      ? asUri()
      : match[2] !== undefined
        ? Either.getOrElse(Encoding.decodeBase64(match[3]!), asUri)
        : Either.getOrElse(
            Either.try(() => new TextEncoder().encode(decodeURIComponent(match[3]!))),
            asUri,
          )
  return { type: "file", mediaType: file.mime, data, ...(file.name === undefined ? {} : { fileName: file.name }) }
}

/**
 * Converts a Runner request into `@effect/ai` messages: the system prompt first, assistant text and tool calls in
 * one assistant message, and consecutive tool results grouped into one tool message. `@effect/ai` tool messages
 * carry no media, so the media parts of a group's results follow it as one user message of file parts.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toPromptMessages = (request: Model.Request): Array<Prompt.MessageEncoded> => {
  const messages: Array<Prompt.MessageEncoded> = []
  if (request.system !== undefined && request.system !== "") messages.push({ role: "system", content: request.system })
  let results: Array<Prompt.ToolMessagePartEncoded> | undefined
  let files: Array<Prompt.FilePartEncoded> = []
  const closeGroup = () => {
    results = undefined
    if (files.length > 0) messages.push({ role: "user", content: files })
    files = []
  }
  for (const message of request.messages) {
    if (message.role !== "tool") closeGroup()
    switch (message.role) {
      case "user":
        messages.push({ role: "user", content: [{ type: "text", text: message.content }] })
        break
      case "assistant": {
        const content: Array<Prompt.AssistantMessagePartEncoded> = []
        if (message.text !== "") content.push({ type: "text", text: message.text })
        for (const call of message.toolCalls) {
          content.push({
            type: "tool-call",
            id: call.id,
            name: call.name,
            params: call.input,
            providerExecuted: call.providerExecuted === true,
          })
        }
        messages.push({ role: "assistant", content })
        break
      }
      case "tool": {
        const part: Prompt.ToolMessagePartEncoded = {
          type: "tool-result",
          id: message.callID,
          name: message.name,
          providerExecuted: false,
          ...toResultPart(message.result),
        }
        if (message.result.type === "content") {
          for (const item of message.result.value) if (item.type === "file") files.push(toFilePart(item))
        }
        if (results === undefined) {
          results = [part]
          messages.push({ role: "tool", content: results })
        } else results.push(part)
        break
      }
    }
  }
  closeGroup()
  return messages
}

/** A provider-executed result as the Runner records it. */
const fromProviderResult = (part: { readonly result: unknown; readonly isFailure: boolean }): LLM.ToolResultValue => {
  if (part.isFailure) return { type: "error", value: part.result }
  return typeof part.result === "string" ? { type: "text", value: part.result } : { type: "json", value: part.result }
}

const hasEntries = (value: object | undefined): value is Record<string, unknown> =>
  value !== undefined && Object.keys(value).length > 0

/**
 * Reads a tool call's input back for the Runner (e.g. strict `null`s removed); identity by default.
 *
 * @since 0.2.0
 * @category models
 */
export type InputReader = (name: string, input: unknown) => unknown

const asIs: InputReader = (_name, input) => input

/**
 * Maps one streamed part to Runner events. Text deltas, tool calls (their input read through `readInput`),
 * provider-executed tool results and the finish reason are kept; reasoning, tool-parameter deltas, sources and
 * metadata are dropped. An `error` part fails.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromStreamPart = (
  part: Response.StreamPart<Record<string, Tool.Any>>,
  readInput: InputReader = asIs,
): Effect.Effect<ReadonlyArray<Model.Event>, Model.ModelError> => {
  switch (part.type) {
    case "text-delta":
      return Effect.succeed(part.delta === "" ? [] : [{ type: "text", text: part.delta }])
    case "tool-call":
      return Effect.succeed([
        {
          type: "tool-call",
          id: part.id,
          name: part.name,
          input: part.providerExecuted ? part.params : readInput(part.name, part.params),
          ...(part.providerExecuted ? { providerExecuted: true } : {}),
          ...(hasEntries(part.metadata) ? { metadata: part.metadata } : {}),
        },
      ])
    case "tool-result":
      return Effect.succeed(
        part.providerExecuted
          ? [{ type: "tool-result", id: part.id, name: part.name, result: fromProviderResult(part) }]
          : [],
      )
    case "finish":
      return Effect.succeed([{ type: "finish", reason: part.reason }])
    case "error":
      return Effect.fail(new Model.ModelError({ message: messageOf(part.error), cause: part.error }))
    default:
      return Effect.succeed([])
  }
}

const messageOf = (error: unknown): string =>
  error instanceof Error
    ? error.message
    : typeof error === "object" && error !== null && "message" in error
      ? String(error.message)
      : String(error)

const toModelError = (error: AiError.AiError | Model.ModelError): Model.ModelError =>
  error._tag === "Model.ModelError" ? error : new Model.ModelError({ message: error.message, cause: error })

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/**
 * The raw parts of the chunk whose decoding failed, when the failure is `@effect/ai` rejecting a streamed chunk
 * (a `MalformedOutput` from `LanguageModel` itself, caused by a `ParseError` whose actual value is the chunk).
 */
const failedChunk = (error: AiError.AiError | Model.ModelError): ReadonlyArray<unknown> | undefined => {
  if (error._tag !== "MalformedOutput" || error.module !== "LanguageModel" || !ParseResult.isParseError(error.cause))
    return undefined
  const actual = error.cause.issue.actual
  if (Chunk.isChunk(actual)) return Chunk.toReadonlyArray(actual)
  return Array.isArray(actual) ? actual : undefined
}

/**
 * Recovers a chunk `@effect/ai` refused because it calls a tool that was not advertised: every call to an unknown
 * name becomes a plain tool-call event (the Runner settles it as `Unknown tool: <name>`), and the other parts of
 * the chunk are decoded one by one as usual. Returns `undefined` (the original failure stands) when the chunk has
 * no such call or another part of it does not decode.
 */
const recoverUnknownCalls = (
  parts: ReadonlyArray<unknown>,
  toolkit: Toolkit.WithHandler<Record<string, Tool.Any>>,
  readInput: InputReader,
): Effect.Effect<ReadonlyArray<Model.Event>, Model.ModelError> | undefined => {
  const known = (name: unknown) => typeof name === "string" && Object.hasOwn(toolkit.tools, name)
  const unknownCall = (part: unknown): part is { id: string; name: string; params: unknown } =>
    isRecord(part) &&
    part.type === "tool-call" &&
    typeof part.id === "string" &&
    typeof part.name === "string" &&
    !known(part.name) &&
    part.providerExecuted !== true
  if (!parts.some(unknownCall)) return undefined
  const decode = Schema.decodeUnknownEither(Response.StreamPart(toolkit))
  const steps: Array<Effect.Effect<ReadonlyArray<Model.Event>, Model.ModelError>> = []
  for (const part of parts) {
    if (unknownCall(part)) {
      steps.push(Effect.succeed([{ type: "tool-call", id: part.id, name: part.name, input: part.params }]))
      continue
    }
    const decoded = decode(part)
    if (Either.isLeft(decoded)) return undefined
    steps.push(fromStreamPart(decoded.right, readInput))
  }
  return Effect.map(Effect.all(steps), (events) => events.flat())
}

/**
 * A short `ModelError` for a chunk `@effect/ai` refused: its message names the parts that do not decode (by type,
 * and name for tool parts) instead of printing the whole decoding schema; the original error stays the cause.
 */
const refusedChunkError = (
  error: AiError.AiError | Model.ModelError,
  parts: ReadonlyArray<unknown>,
  toolkit: Toolkit.WithHandler<Record<string, Tool.Any>>,
): Model.ModelError => {
  const decode = Schema.decodeUnknownEither(Response.StreamPart(toolkit))
  const refused = parts
    .filter((part) => Either.isLeft(decode(part)))
    .map((part) =>
      isRecord(part) ? `${String(part.type)}${typeof part.name === "string" ? ` ${part.name}` : ""}` : typeof part,
    )
  const what = refused.length === 0 ? "an undecodable chunk" : refused.join(", ")
  return new Model.ModelError({
    message: `LanguageModel.streamText: the provider streamed a part @effect/ai cannot decode: ${what}`,
    cause: error,
  })
}

/**
 * Builds the Model from the `LanguageModel` in context.
 *
 * A call to a tool name the model invented is not lost with the turn: `@effect/ai` decodes each streamed chunk
 * against the advertised toolkit and fails the stream on an unknown name, so the adapter takes the refused chunk
 * out of the decoding error and replays it, the unknown calls included. The provider stream has ended by then:
 * whatever it would have streamed after that chunk (with `@effect/ai-openai`, one chunk per server event: later
 * calls of the same turn, later text, the finish part) is not seen. The Runner settles what arrived and the next
 * request shows the model `Unknown tool: <name>`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeWith = (options: Options = {}): Effect.Effect<Model.Interface, never, LanguageModel.LanguageModel> =>
  Effect.map(LanguageModel.LanguageModel, (language) => {
    const mode = options.schemas ?? "strict"
    return Model.Service.of({
      stream: (request) => {
        const byName = new Map(request.tools.map((definition) => [definition.name, definition]))
        const readInput: InputReader = (name, input) => {
          const definition = byName.get(name)
          return definition === undefined ? input : fromProviderInput(definition, input, mode)
        }
        const toolkit = advertised(request.tools, mode)
        const prompt = toPromptMessages(request)
        // Without tools nothing is advertised; a call the model makes anyway is recovered like an unknown name.
        const parts: Stream.Stream<Response.StreamPart<Record<string, Tool.Any>>, AiError.AiError> = request.tools
          .length === 0
          ? language.streamText({ prompt })
          : language.streamText({ prompt, toolkit, disableToolCallResolution: true })
        return parts.pipe(
          Stream.mapConcatEffect((part) => fromStreamPart(part, readInput)),
          Stream.catchAll((error) => {
            const chunk = failedChunk(error)
            const recovered = chunk === undefined ? undefined : recoverUnknownCalls(chunk, toolkit, readInput)
            if (recovered !== undefined) return Stream.flattenIterables(Stream.fromEffect(recovered))
            return Stream.fail(chunk === undefined ? toModelError(error) : refusedChunkError(error, chunk, toolkit))
          }),
        )
      },
    })
  })

/**
 * Builds the Model from the `LanguageModel` in context, advertising strict schemas.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Model.Interface, never, LanguageModel.LanguageModel> = makeWith()

/**
 * Provides `Model.Service` from an `@effect/ai` `LanguageModel` (any provider layer) with the given options.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerWith = (options: Options = {}): Layer.Layer<Model.Service, never, LanguageModel.LanguageModel> =>
  Layer.effect(Model.Service, makeWith(options))

/**
 * Provides `Model.Service` from an `@effect/ai` `LanguageModel` (any provider layer), strict schemas.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Model.Service, never, LanguageModel.LanguageModel> = layerWith()
