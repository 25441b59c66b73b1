/**
 * One MCP tool as a toolgate tool: its definition as the server advertised it (the input schema passed through as
 * JSON schema), the gate every call passes (action `mcp`, resource `<server>/<tool>`, a definition-bound approval),
 * and the mapping of an MCP result to the tool output. Internal to `McpTools`.
 *
 * @since 0.4.0
 * @internal
 */
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import { Approvals, LLM, PermissionV2, Tool, Wildcard } from "@toolgate/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * What the tool of one MCP tool needs from its server: the call itself, the rules that decide whether a user rule
 * names it, and whether the server's read-only hints may relax the default ask.
 *
 * @internal
 */
export interface Host {
  readonly server: string
  readonly trusted: boolean
  readonly timeout: Duration.Duration
  readonly permission: PermissionV2.Interface
  /** True when one of the user's configured rules for `agent` names action `mcp` and matches `resource`. */
  readonly namedByUser: (agent: string, resource: string) => boolean
  /** True when an approval was saved for another definition of `resource` (the prompt says so). */
  readonly approvedElsewhere: (resource: string, bound: string) => Effect.Effect<boolean>
  readonly call: (
    tool: string,
    input: Record<string, unknown>,
    context: Tool.Context,
  ) => Effect.Effect<CallToolResult, LLM.ToolFailure>
}

/** The MCP tool result as the settlement receives it: the whole result; `structured` is its `structuredContent`. */
const Output = Schema.Unknown

const ARGUMENTS = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const digests = new WeakMap<LLM.ToolDefinition, string>()
const digestOf = (definition: LLM.ToolDefinition): string => {
  let digest = digests.get(definition)
  if (digest === undefined) digests.set(definition, (digest = Approvals.definitionDigest(definition)))
  return digest
}

/** How many hex digits of the definition digest a bound approval names (64 bits). */
const BOUND_DIGITS = 16

/**
 * The resource an MCP tool's ask evaluates and saves: `definition:<server>/<tool>@<digest>`, bound to the definition
 * the call was advertised with (see docs/mcp-tools.md).
 *
 * @internal
 */
export const boundResource = (resource: string, definition: LLM.ToolDefinition): string =>
  `${PermissionV2.DEFINITION_PREFIX}${resource}@${digestOf(definition).slice(0, BOUND_DIGITS)}`

const textOfResource = (resource: { readonly uri: string; readonly text?: unknown; readonly blob?: unknown }) =>
  typeof resource.text === "string" ? resource.text : undefined

/**
 * MCP content as tool content: text stays text, images and audio become files, an embedded resource becomes its
 * text (headed by its URI) or a file, a resource link a line naming it.
 *
 * @internal
 */
export const toContent = (result: CallToolResult): ReadonlyArray<Tool.Content> => {
  const out: Array<Tool.Content> = []
  for (const part of result.content ?? []) {
    switch (part.type) {
      case "text":
        out.push({ type: "text", text: part.text })
        break
      case "image":
      case "audio":
        out.push({ type: "file", data: part.data, mime: part.mimeType })
        break
      case "resource": {
        const text = textOfResource(part.resource)
        if (text !== undefined) out.push({ type: "text", text: `${part.resource.uri}\n${text}` })
        else if ("blob" in part.resource)
          out.push({
            type: "file",
            data: part.resource.blob,
            mime: part.resource.mimeType ?? "application/octet-stream",
            name: part.resource.uri,
          })
        break
      }
      case "resource_link":
        out.push({ type: "text", text: `resource: ${part.uri}${part.name === undefined ? "" : ` (${part.name})`}` })
        break
    }
  }
  if (out.length === 0 && result.structuredContent === undefined) out.push({ type: "text", text: "" })
  return out
}

/** The text of an `isError` result, for the model-visible failure. */
const errorText = (result: CallToolResult): string => {
  const text = (result.content ?? [])
    .map((part) => (part.type === "text" ? part.text : ""))
    .filter((part) => part !== "")
    .join("\n")
  return text === "" ? "The MCP tool reported an error without a message" : text
}

/**
 * The largest failure message kept from an `isError` result: a failure is not bounded by `ToolOutputStore`, so the
 * producer caps it (and says so).
 */
const MAX_ERROR_CHARS = 16 * 1024

const capped = (text: string): string =>
  text.length <= MAX_ERROR_CHARS
    ? text
    : `${text.slice(0, MAX_ERROR_CHARS)}\n… (${text.length - MAX_ERROR_CHARS} more characters of the error omitted)`

const annotationsOf = (tool: McpTool): LLM.ToolAnnotations | undefined => {
  const hints = tool.annotations
  if (hints === undefined && tool.title === undefined) return undefined
  const title = tool.title ?? hints?.title
  return {
    ...(title === undefined ? {} : { title }),
    ...(hints?.readOnlyHint === undefined ? {} : { readOnlyHint: hints.readOnlyHint }),
    ...(hints?.destructiveHint === undefined ? {} : { destructiveHint: hints.destructiveHint }),
    ...(hints?.idempotentHint === undefined ? {} : { idempotentHint: hints.idempotentHint }),
    ...(hints?.openWorldHint === undefined ? {} : { openWorldHint: hints.openWorldHint }),
  }
}

/**
 * The toolgate tool of MCP tool `tool`: advertised with the server's description and input schema, gated, then
 * called through `host`.
 *
 * @internal
 */
export const make = (host: Host, tool: McpTool, name: string): Tool.AnyTool => {
  const resource = `${host.server}/${tool.name}`
  const hints = tool.annotations
  // MCP's defaults: a tool that says nothing may be destructive and may reach an open world; only explicit hints
  // change the default ask here.
  const risky = hints?.destructiveHint === true || hints?.openWorldHint === true
  const relaxed = host.trusted && hints?.readOnlyHint === true && !risky
  const annotations = annotationsOf(tool)
  const description = tool.description ?? tool.title ?? `The ${tool.name} tool of the MCP server ${host.server}`

  const gate = Effect.fnUntraced(function* (input: Record<string, unknown>, context: Tool.Context) {
    const caller = PermissionV2.fromToolCall(context)
    const metadata = { server: host.server, tool: tool.name, arguments: input }
    if (!risky || host.namedByUser(context.agent, resource)) {
      const [effect] = yield* host.permission.check({
        sessionID: context.sessionID,
        agent: context.agent,
        action: "mcp",
        resources: [resource],
      })
      // A configured deny or allow decides (and is journaled); a trusted server's read-only tool skips the ask.
      if (effect !== "ask") return yield* host.permission.assert({ ...caller, action: "mcp", resources: [resource], metadata })
      if (relaxed) return
    }
    const definition = context.definition ?? Tool.definition(name, self)
    const bound = boundResource(resource, definition)
    const changed = yield* host.approvedElsewhere(resource, bound)
    yield* host.permission.assert({
      ...caller,
      action: "mcp",
      resources: [bound],
      save: [Wildcard.literal(bound)],
      metadata: {
        ...metadata,
        definition: digestOf(definition),
        description: changed
          ? `The server changed the definition of ${resource} (its description or input schema) since it was approved: the saved approval does not apply to this definition`
          : `call ${resource} of the MCP server ${host.server}`,
        ...(changed ? { definitionChanged: true } : {}),
      },
    })
  })

  const self: Tool.AnyTool = Tool.make({
    description,
    ...(annotations === undefined ? {} : { annotations }),
    input: ARGUMENTS.annotations({ jsonSchema: tool.inputSchema as object }),
    output: Output,
    structured: Schema.Unknown,
    toStructuredOutput: ({ output }) => (output as CallToolResult).structuredContent ?? null,
    toModelOutput: ({ output }) => toContent(output as CallToolResult),
    execute: (input, context) =>
      gate(input, context).pipe(
        Effect.mapError(PermissionV2.leafFailure((error) => new LLM.ToolFailure({ message: String(error), error }))),
        Effect.zipRight(host.call(tool.name, input, context)),
        Effect.flatMap((result) =>
          result.isError === true
            ? Effect.fail(new LLM.ToolFailure({ message: capped(errorText(result)) }))
            : Effect.succeed(result as unknown),
        ),
      ),
  })
  return self
}
