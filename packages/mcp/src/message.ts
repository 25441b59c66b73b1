/**
 * What the server accepts as one JSON-RPC message, and what it answers for anything else. Every received value is
 * checked before the MCP SDK sees it: a value the SDK would drop silently (a `method` that is not a string, a wrong
 * `jsonrpc`, positional `params`, a batch, an unexpected member, the params of `initialize`, `ping`, `tools/list` or
 * `tools/call` not matching their schema) is refused instead, and when it carries an id the client receives a
 * JSON-RPC error for that id, in one line: `-32600` for a malformed message, `-32602` for malformed params. A
 * refused value without a usable id is answered with `id: null` (as JSON-RPC 2.0 asks); a refused notification or
 * response is not answered (JSON-RPC never answers those) — a malformed response to one of the server's own
 * requests fails that request at once instead of leaving it waiting. See docs/adapters.md.
 *
 * @since 0.3.0
 */
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  JSONRPCErrorResponseSchema,
  JSONRPCMessageSchema,
  type JSONRPCMessage,
  JSONRPCResultResponseSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js"
import * as Schema from "effect/Schema"

/**
 * A JSON-RPC error response as sent on the wire; `id` is `null` when the refused value had no usable id.
 *
 * @since 0.3.0
 * @category models
 */
export interface ErrorReply {
  readonly jsonrpc: "2.0"
  readonly id: RequestId | null
  readonly error: { readonly code: number; readonly message: string; readonly data?: unknown }
}

/**
 * The outcome of `check`: the message to hand to the SDK, or why the value was refused, the replies to send to
 * the peer (none for a notification or a response) and, for a malformed response to one of our requests, the error
 * response that fails that request.
 *
 * @since 0.3.0
 * @category models
 */
export type Checked =
  | { readonly _tag: "Accepted"; readonly message: JSONRPCMessage }
  | {
      readonly _tag: "Refused"
      readonly reason: string
      readonly replies: ReadonlyArray<ErrorReply>
      readonly inward?: JSONRPCMessage
    }

/**
 * A value the server refused (reported through the transport's `onerror`, so the server logs it).
 *
 * @since 0.3.0
 * @category errors
 */
export class RefusedError extends Schema.TaggedError<RefusedError>()("McpMessage.RefusedError", {
  reason: Schema.String,
}) {
  override get message(): string {
    return `refused a message: ${this.reason}`
  }
}

/**
 * The requests whose params are checked against the SDK's schemas before the SDK dispatches them: the ones this
 * server answers.
 *
 * @since 0.3.0
 * @category constants
 */
export const CHECKED_REQUESTS = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
} as const

const REQUEST_MEMBERS = new Set(["jsonrpc", "id", "method", "params"])

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isRequestId = (value: unknown): value is RequestId =>
  typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value))

const describe = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "string" ? "a string" : typeof value

/**
 * The id a value carries, if it is a usable JSON-RPC id (a string or an integer); `null` otherwise.
 *
 * @since 0.3.0
 * @category getters
 */
export const idOf = (value: unknown): RequestId | null =>
  isRecord(value) && isRequestId(value["id"]) ? value["id"] : null

/**
 * An error reply.
 *
 * @since 0.3.0
 * @category constructors
 */
export const errorReply = (id: RequestId | null, code: number, message: string, data?: unknown): ErrorReply => ({
  jsonrpc: "2.0",
  id,
  error: { code, message, ...(data === undefined ? {} : { data }) },
})

/**
 * The first issue of a failed schema parse, in one line: where (`params.name`) and what was expected.
 *
 * @since 0.3.0
 * @category utils
 */
export const firstIssue = (error: {
  readonly issues: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }>
}): string => {
  const issue = error.issues[0]
  if (issue === undefined) return "does not match the schema"
  const where = issue.path.map(String).join(".")
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : ""
  return `${where === "" ? "the message" : where}: ${issue.message.replace(/\s+/g, " ")}${more}`
}

const refused = (reason: string, replies: ReadonlyArray<ErrorReply>, inward?: JSONRPCMessage): Checked =>
  inward === undefined ? { _tag: "Refused", reason, replies } : { _tag: "Refused", reason, replies, inward }

/** Refuses `value`, answering its id unless it is a response (no method, but a result or an error). */
const refuse = (value: Record<string, unknown>, code: number, message: string): Checked => {
  const id = idOf(value)
  const response = !("method" in value) && ("result" in value || "error" in value)
  return refused(message, id !== null && !response ? [errorReply(id, code, message)] : [])
}

const checkRequest = (value: Record<string, unknown>): Checked | undefined => {
  const method = value["method"]
  if (typeof method !== "string")
    return refuse(
      value,
      ErrorCode.InvalidRequest,
      `Invalid Request: "method" must be a string, not ${describe(method)}`,
    )
  if ("result" in value || "error" in value)
    return refuse(
      value,
      ErrorCode.InvalidRequest,
      `Invalid Request: a request or notification has no "result" or "error"`,
    )
  if ("params" in value && !isRecord(value["params"]))
    return refuse(
      value,
      ErrorCode.InvalidParams,
      `Invalid params: "params" must be an object (MCP has no positional params), not ${describe(value["params"])}`,
    )
  const unexpected = Object.keys(value).find((key) => !REQUEST_MEMBERS.has(key))
  if (unexpected !== undefined)
    return refuse(value, ErrorCode.InvalidRequest, `Invalid Request: unexpected member ${JSON.stringify(unexpected)}`)
  const schema = Object.hasOwn(CHECKED_REQUESTS, method)
    ? CHECKED_REQUESTS[method as keyof typeof CHECKED_REQUESTS]
    : undefined
  if (schema !== undefined && "id" in value) {
    const parsed = schema.safeParse(value)
    if (!parsed.success)
      return refuse(value, ErrorCode.InvalidParams, `Invalid params of ${method}: ${firstIssue(parsed.error)}`)
  }
  return undefined
}

/** A malformed response: never answered, but a valid id fails the request it answers. */
const checkResponse = (value: Record<string, unknown>): Checked | undefined => {
  const parsed = ("error" in value ? JSONRPCErrorResponseSchema : JSONRPCResultResponseSchema).safeParse(value)
  if (parsed.success) return undefined
  const reason = `malformed response: ${firstIssue(parsed.error)}`
  const id = idOf(value)
  if (id === null) return refused(reason, [])
  const inward: JSONRPCMessage = {
    jsonrpc: "2.0",
    id,
    error: {
      code: ErrorCode.InvalidRequest,
      message: `the client's response was malformed: ${firstIssue(parsed.error)}`,
    },
  }
  return refused(reason, [], inward)
}

const checkOne = (value: unknown): Checked => {
  if (!isRecord(value)) {
    const message = `Invalid Request: a message must be a JSON object, not ${describe(value)}`
    return refused(message, [errorReply(null, ErrorCode.InvalidRequest, message)])
  }
  const response = !("method" in value) && ("result" in value || "error" in value)
  if ("id" in value && !isRequestId(value["id"])) {
    const message = `Invalid Request: "id" must be a string or an integer, not ${describe(value["id"])}`
    return refused(message, response ? [] : [errorReply(null, ErrorCode.InvalidRequest, message)])
  }
  const shaped = response
    ? checkResponse(value)
    : value["jsonrpc"] !== "2.0"
      ? refuse(value, ErrorCode.InvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
      : "method" in value
        ? checkRequest(value)
        : refuse(
            value,
            ErrorCode.InvalidRequest,
            `Invalid Request: a message needs "method" (a request or notification) or "result"/"error" (a response)`,
          )
  if (shaped !== undefined) return shaped
  // Whatever the checks above did not name, the SDK's own schema decides (an unknown shape is refused, not dropped).
  const parsed = JSONRPCMessageSchema.safeParse(value)
  return parsed.success
    ? { _tag: "Accepted", message: parsed.data }
    : refuse(value, ErrorCode.InvalidRequest, `Invalid Request: ${firstIssue(parsed.error)}`)
}

const BATCH =
  "Invalid Request: batches are not supported (MCP sends one JSON-RPC message per line); send each message on its own line"

/**
 * Checks one received value (already parsed from JSON).
 *
 * @example
 * ```ts
 * import { McpMessage } from "@toolgate/mcp"
 * import { deepStrictEqual } from "node:assert"
 *
 * deepStrictEqual(McpMessage.check({ jsonrpc: "2.0", id: 7, method: 5 }), {
 *   _tag: "Refused",
 *   reason: 'Invalid Request: "method" must be a string, not number',
 *   replies: [
 *     { jsonrpc: "2.0", id: 7, error: { code: -32600, message: 'Invalid Request: "method" must be a string, not number' } },
 *   ],
 * })
 * ```
 *
 * @since 0.3.0
 * @category checks
 */
export const check = (value: unknown): Checked => {
  if (!Array.isArray(value)) return checkOne(value)
  const ids = value.map(idOf).filter((id): id is RequestId => id !== null)
  const replies =
    ids.length === 0
      ? [errorReply(null, ErrorCode.InvalidRequest, BATCH)]
      : ids.map((id) => errorReply(id, ErrorCode.InvalidRequest, BATCH))
  return refused(BATCH, replies)
}
