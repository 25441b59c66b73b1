/**
 * toolgate definitions and settlements in MCP's shapes: tools with their title, annotations and (for object
 * structured output) `outputSchema`; results whose content keeps its kind and whose structured output is
 * `structuredContent`.
 *
 * @since 0.2.0
 */
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import type { LLM, ToolRegistry } from "@toolgate/core"

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
