/**
 * Model-facing tool types shared by every module: calls, definitions, content, outputs and results.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Schema from "effect/Schema"

/**
 * A JSON Schema document as produced by `JSONSchema.make`.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonSchema = Record<string, unknown>

/**
 * A tool call streamed by the provider; `id` is the provider's call id.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolCall = Schema.Struct({
  type: Schema.optional(Schema.Literal("tool-call")),
  id: Schema.String,
  name: Schema.String,
  input: Schema.Unknown,
  providerExecuted: Schema.optional(Schema.Boolean),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  providerMetadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
})
/**
 * @see ToolCall
 *
 * @since 0.1.0
 * @category models
 */
export type ToolCall = typeof ToolCall.Type

/**
 * What the model is told about one tool.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly inputSchema: JsonSchema
  readonly outputSchema?: JsonSchema
  readonly cache?: unknown
  readonly metadata?: Record<string, unknown>
  readonly native?: unknown
  /** Hints for clients about the tool's behaviour (MCP tool annotations); never an authorisation. */
  readonly annotations?: ToolAnnotations
}

/**
 * What a tool declares about itself for clients: a display title and behaviour hints, with MCP's meanings. Hints
 * are advisory: toolgate's permission rules decide what runs.
 *
 * @since 0.2.0
 * @category models
 */
export interface ToolAnnotations {
  /** A human-readable name for display. */
  readonly title?: string
  /** The tool does not change its environment. */
  readonly readOnlyHint?: boolean
  /** A change the tool makes may be destructive (meaningful when not read-only). */
  readonly destructiveHint?: boolean
  /** Calling it again with the same arguments has no further effect. */
  readonly idempotentHint?: boolean
  /** The tool reaches an open world (the web) rather than a closed domain. */
  readonly openWorldHint?: boolean
}

/**
 * A text part of tool content.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolTextContent = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
/**
 * A media part of tool content, carried as a `data:<mime>;base64,<data>` URI.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolFileContent = Schema.Struct({
  type: Schema.Literal("file"),
  uri: Schema.String,
  mime: Schema.String,
  name: Schema.optionalWith(Schema.String, { exact: true }),
})
/**
 * Tool content: a text or a file part, tagged on `type`.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolContent = Schema.Union(ToolTextContent, ToolFileContent)
/**
 * @see ToolTextContent
 *
 * @since 0.1.0
 * @category models
 */
export type ToolTextContent = { readonly type: "text"; readonly text: string }
/**
 * @see ToolFileContent
 *
 * @since 0.1.0
 * @category models
 */
export type ToolFileContent = {
  readonly type: "file"
  readonly uri: string
  readonly mime: string
  readonly name?: string
}
/**
 * @see ToolContent
 *
 * @since 0.1.0
 * @category models
 */
export type ToolContent = ToolTextContent | ToolFileContent

/**
 * A settled tool output: the structured value plus the content the model reads.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolOutput {
  readonly structured: unknown
  readonly content: ReadonlyArray<ToolContent>
}

/**
 * The schema of `ToolOutput` (for event payloads and journals).
 *
 * @since 0.2.0
 * @category models
 */
export const ToolOutput: Schema.Schema<ToolOutput> = Schema.Struct({
  structured: Schema.Unknown,
  content: Schema.Array(ToolContent),
})

/**
 * The value a provider receives as the tool result.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolResultValue =
  | { readonly type: "json"; readonly value: unknown }
  | { readonly type: "text"; readonly value: unknown }
  | { readonly type: "error"; readonly value: unknown }
  | { readonly type: "content"; readonly value: ReadonlyArray<ToolContent> }

/**
 * The schema of `ToolResultValue`.
 *
 * @since 0.2.0
 * @category models
 */
export const ToolResultValue: Schema.Schema<ToolResultValue> = Schema.Union(
  Schema.Struct({ type: Schema.Literal("json", "text", "error"), value: Schema.Unknown }),
  Schema.Struct({ type: Schema.Literal("content"), value: Schema.Array(ToolContent) }),
)

/**
 * Chooses the provider-facing result: empty content gives `json` of `structured`, exactly one text part gives
 * `text`, anything else gives `content`.
 *
 * @example
 * ```ts
 * import { LLM } from "@toolgate/core"
 * import { deepStrictEqual } from "node:assert"
 *
 * deepStrictEqual(LLM.toResultValue({ structured: { n: 1 }, content: [] }), { type: "json", value: { n: 1 } })
 * deepStrictEqual(LLM.toResultValue({ structured: null, content: [{ type: "text", text: "ok" }] }), {
 *   type: "text",
 *   value: "ok",
 * })
 * ```
 *
 * @since 0.1.0
 * @category utilities
 */
export const toResultValue = (output: ToolOutput): ToolResultValue => {
  if (output.content.length === 0) return { type: "json", value: output.structured }
  const [only] = output.content
  if (output.content.length === 1 && only !== undefined && only.type === "text")
    return { type: "text", value: only.text }
  return { type: "content", value: output.content }
}

/**
 * The reverse of `toResultValue`; `error` results have no output.
 *
 * @since 0.1.0
 * @category constructors
 * @internal
 */
export const fromResultValue = (value: ToolResultValue): ToolOutput | undefined => {
  switch (value.type) {
    case "json":
      return { structured: value.value, content: [] }
    case "text":
      return { structured: {}, content: [{ type: "text", text: textOf(value.value) }] }
    case "content":
      return { structured: {}, content: value.value }
    case "error":
      return undefined
  }
}

const textOf = (value: unknown): string => {
  if (typeof value === "string") return value
  try {
    const json = JSON.stringify(value)
    if (json !== undefined) return json
  } catch {
    // fall through to String()
  }
  return String(value)
}

/**
 * An expected, model-visible tool failure. `error` keeps a cause for diagnostics and is never shown to the model.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolFailure extends Schema.TaggedError<ToolFailure>()("LLM.ToolFailure", {
  message: Schema.String,
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  error: Schema.optional(Schema.Unknown),
}) {}

/**
 * True iff `cause` carries a defect whose `_tag` is `tag`. User stops travel as defects and are recognised by
 * tag string, so modules need not import each other.
 *
 * @since 0.1.0
 * @category guards
 */
export const hasDefectTag = (cause: Cause.Cause<unknown>, tag: string): boolean =>
  Chunk.some(
    Cause.defects(cause),
    (defect) => typeof defect === "object" && defect !== null && (defect as { readonly _tag?: unknown })._tag === tag,
  )
