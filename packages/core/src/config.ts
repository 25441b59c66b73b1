/**
 * The configuration entries the library reads, lowest to highest priority. Documents are schema-validated
 * `toolgate.json(c)` files; directory entries point at `.toolgate`-style folders (agents, skills).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"

/** A permission rule as configured (the same shape as `PermissionV2.Rule`). */
export const PermissionRule = Schema.Struct({
  action: Schema.String,
  resource: Schema.String,
  effect: Schema.Literal("allow", "deny", "ask"),
})

const PositiveInt = Schema.Int.pipe(Schema.positive())

/** Tool output truncation thresholds. */
export const ToolOutput = Schema.Struct({
  max_lines: Schema.optional(PositiveInt),
  max_bytes: Schema.optional(PositiveInt),
}).annotations({ description: "Tool output truncation thresholds" })

/** Image attachment limits used by `read`. */
export const ImageAttachments = Schema.Struct({
  auto_resize: Schema.optional(Schema.Boolean),
  max_width: Schema.optional(PositiveInt),
  max_height: Schema.optional(PositiveInt),
  max_base64_bytes: Schema.optional(PositiveInt),
})

/** One `agents.<id>` entry. */
export const Agent = Schema.Struct({
  model: Schema.optional(Schema.String),
  variant: Schema.optional(Schema.String),
  request: Schema.optional(
    Schema.Struct({
      headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
      body: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    }),
  ),
  system: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mode: Schema.optional(Schema.Literal("subagent", "primary", "all")),
  hidden: Schema.optional(Schema.Boolean),
  color: Schema.optional(Schema.String),
  steps: Schema.optional(PositiveInt),
  disabled: Schema.optional(Schema.Boolean),
  permissions: Schema.optional(Schema.Array(PermissionRule)),
})

/** A configuration document; unknown keys are ignored on decode. */
export const Info = Schema.Struct({
  permissions: Schema.optional(Schema.Array(PermissionRule)),
  agents: Schema.optional(Schema.Record({ key: Schema.String, value: Agent })),
  default_agent: Schema.optional(Schema.String),
  tool_output: Schema.optional(ToolOutput),
  shell: Schema.optional(Schema.String),
  attachments: Schema.optional(Schema.Struct({ image: Schema.optional(ImageAttachments) })),
})
/** @see Info */
export type Info = typeof Info.Type

/** A parsed configuration document. */
export interface Document {
  readonly type: "document"
  readonly path?: string
  readonly info: Info
}

/** A configuration directory (e.g. `.toolgate/`), for agent markdown files and skills. */
export interface Directory {
  readonly type: "directory"
  readonly path: string
}

/** One configuration entry. */
export type Entry = Document | Directory

/** The Config service: entries from lowest to highest priority. */
export interface Interface {
  readonly entries: () => Effect.Effect<ReadonlyArray<Entry>>
}

/** The Config service tag. */
export class Service extends Context.Tag("@toolgate/v2/Config")<Service, Interface>() {}

/** The documents among `entries`, in priority order. */
export const documents = (entries: ReadonlyArray<Entry>): ReadonlyArray<Document> =>
  entries.filter((entry): entry is Document => entry.type === "document")

/** The value of `key` from the last document that defines it. */
export const latest = <K extends keyof Info>(entries: ReadonlyArray<Entry>, key: K): Info[K] | undefined => {
  let value: Info[K] | undefined
  for (const document of documents(entries)) if (document.info[key] !== undefined) value = document.info[key]
  return value
}

/** A fixed configuration, for tests and embedders. */
export const layerFromEntries = (entries: ReadonlyArray<Entry>): Layer.Layer<Service> =>
  Layer.succeed(Service, Service.of({ entries: () => Effect.succeed(entries) }))

/** A configuration with no entries. */
export const layerEmpty: Layer.Layer<Service> = layerFromEntries([])
