/**
 * MCP tools and toolgate tools, both ways. Outward: toolgate definitions and settlements in MCP's shapes (tools with
 * their title, annotations and, for object structured output, `outputSchema`; results whose content keeps its kind
 * and whose structured output is `structuredContent`). Inward: MCP servers as a tool source — `layer` reads the
 * `mcp` entries of a Location's configuration, starts each server (a project document's only after a
 * `project_program` approval), and registers its tools as one Location registration named `<server>_<tool>`, each
 * call gated as action `mcp`, resource `<server>/<tool>`. See docs/mcp-tools.md.
 *
 * @since 0.2.0
 */
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import type { Config, Global, LLM, Location, PermissionV2, ToolRegistry, Tools } from "@toolgate/core"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Source from "./internal/source.js"

type McpContent = CallToolResult["content"][number]

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * True iff `schema` describes an object, so MCP can advertise it as `outputSchema` (MCP requires type object).
 *
 * @since 0.2.0
 * @category guards
 */
export const isObjectSchema = (schema: LLM.JsonSchema | undefined): schema is LLM.JsonSchema =>
  schema !== undefined && schema.type === "object"

/**
 * A definition as an MCP tool: name, title, description, input schema, the output schema when the structured
 * output is an object, and the tool's annotations.
 *
 * @example
 * ```ts
 * import { McpTools } from "@toolgate/mcp"
 * import { deepStrictEqual } from "node:assert"
 *
 * const tool = McpTools.toMcpTool({
 *   name: "read",
 *   description: "Reads a file",
 *   inputSchema: { properties: { path: { type: "string" } }, required: ["path"] },
 *   annotations: { title: "Read", readOnlyHint: true },
 * })
 * deepStrictEqual(tool, {
 *   name: "read",
 *   title: "Read",
 *   description: "Reads a file",
 *   inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
 *   annotations: { title: "Read", readOnlyHint: true },
 * })
 * ```
 *
 * @since 0.1.0
 * @category utilities
 */
export const toMcpTool = (definition: LLM.ToolDefinition): McpTool => {
  const annotations = definition.annotations
  return {
    name: definition.name,
    ...(annotations?.title === undefined ? {} : { title: annotations.title }),
    description: definition.description,
    inputSchema: { type: "object", ...definition.inputSchema } as McpTool["inputSchema"],
    ...(isObjectSchema(definition.outputSchema)
      ? { outputSchema: definition.outputSchema as McpTool["outputSchema"] }
      : {}),
    ...(annotations === undefined ? {} : { annotations }),
  }
}

const base64Of = (uri: string): string => uri.slice(uri.indexOf(",") + 1)

/**
 * Tool content as MCP content: text stays text, images and audio keep their kind, other files become resources.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toMcpContent = (part: LLM.ToolContent): McpContent => {
  if (part.type === "text") return { type: "text", text: part.text }
  const data = base64Of(part.uri)
  if (part.mime.startsWith("image/")) return { type: "image", data, mimeType: part.mime }
  if (part.mime.startsWith("audio/")) return { type: "audio", data, mimeType: part.mime }
  return {
    type: "resource",
    resource: {
      uri: `toolgate:file/${encodeURIComponent(part.name ?? "attachment")}`,
      mimeType: part.mime,
      blob: data,
    },
  }
}

/**
 * A value as text: strings as they are, anything else as JSON.
 *
 * @since 0.2.0
 * @category utilities
 */
export const textOf = (value: unknown): string =>
  typeof value === "string" ? value : (JSON.stringify(value) ?? String(value))

/**
 * A settlement as an MCP result. Errors are `isError` text; an object structured output is `structuredContent`
 * (and, when the tool produced no content, also its JSON text, as MCP asks for compatibility). Managed files that
 * bounding kept are listed in `_meta.outputPaths`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toCallToolResult = (settlement: ToolRegistry.Settlement): CallToolResult => {
  const { result, output } = settlement
  if (result.type === "error") return { content: [{ type: "text", text: textOf(result.value) }], isError: true }
  const structured = output?.structured
  const content: Array<McpContent> =
    output !== undefined && output.content.length > 0
      ? output.content.map(toMcpContent)
      : [{ type: "text", text: result.type === "json" ? textOf(result.value) : textOf(structured) }]
  return {
    content,
    ...(isRecord(structured) ? { structuredContent: structured } : {}),
    ...(settlement.outputPaths === undefined ? {} : { _meta: { outputPaths: [...settlement.outputPaths] } }),
  }
}

/**
 * A server's configuration: the `mcp.<name>` entry of `toolgate.json` (`Config.McpServer`).
 *
 * @since 0.4.0
 * @category models
 */
export type ServerConfig = Source.ServerConfig

/**
 * Where a server was configured: `user` (the user's configuration directory), `project` (a project's own document,
 * which needs a `project_program` approval before the server starts) or `code` (`Interface.add`).
 *
 * @since 0.4.0
 * @category models
 */
export type Origin = Source.Origin

/**
 * A server's state: `starting`, `running`, `failed` (with the cause; it is restarted with backoff), `waiting` (for
 * its `project_program` approval) or `disabled`.
 *
 * @since 0.4.0
 * @category models
 */
export type State = Source.State

/**
 * One server as `Interface.servers` lists it.
 *
 * @since 0.4.0
 * @category models
 */
export type Status = Source.Status

/**
 * The caller of `Interface.approve`.
 *
 * @since 0.4.0
 * @category models
 */
export type Caller = Source.Caller

/**
 * A server that cannot be added, started or approved, or whose tool names clash (the message names both).
 *
 * @since 0.4.0
 * @category errors
 */
export const ServerError = Source.ServerError
/**
 * @see ServerError
 *
 * @since 0.4.0
 * @category errors
 */
export type ServerError = Source.ServerError

/**
 * The service of one Location: `servers`, `changes`, `add`, `approve`.
 *
 * @since 0.4.0
 * @category models
 */
export type Interface = Source.Interface

/**
 * The McpTools service tag (`@toolgate/v2/McpTools`).
 *
 * @since 0.4.0
 * @category tags
 */
export const Service = Source.Service
/**
 * @see Service
 *
 * @since 0.4.0
 * @category tags
 */
export type Service = Source.Service

/**
 * Builds the service of one Location (see `layer`).
 *
 * @since 0.4.0
 * @category constructors
 */
export const make: Effect.Effect<
  Interface,
  never,
  | Tools.Service
  | PermissionV2.Service
  | Config.Service
  | Global.Service
  | Location.Service
  | Scope.Scope
> = Source.make

/**
 * The Location layer: the configured servers start (user and code servers at once, a project document's after
 * `approve`), their tools are registered through `Tools`, and everything stops when the Location closes. Build it
 * beside the Location's other layers (it needs `Tools`, `PermissionV2`, `Config`, `Global` and `Location`;
 * `PermissionSaved`, when present, lets a prompt say that a tool's definition changed since it was approved).
 *
 * @since 0.4.0
 * @category layers
 */
export const layer: Layer.Layer<
  Service,
  never,
  Tools.Service | PermissionV2.Service | Config.Service | Global.Service | Location.Service
> = Source.layer

/**
 * `value` with every `{env:NAME}` replaced by the runner's variable `NAME`, or the error naming `field` and the
 * variable that is not set.
 *
 * @since 0.4.0
 * @category utilities
 */
export const expand: (
  value: string,
  field: string,
  environment?: NodeJS.ProcessEnv,
) => Either.Either<string, string> = Source.expand
