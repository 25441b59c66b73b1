/**
 * The transport of `websearch`: one JSON-RPC `tools/call` to an Exa or Parallel MCP endpoint, its response read
 * under a byte cap and a timeout, the result text taken from a JSON body or an SSE stream.
 *
 * @since 0.3.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { collectBoundedBody } from "./bounded-body.js"

/**
 * The largest accepted provider response body.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_RESPONSE_BYTES = 256 * 1024

/**
 * The per-request timeout.
 *
 * @since 0.3.0
 * @category constants
 */
export const REQUEST_TIMEOUT: Duration.Duration = Duration.seconds(25)

/**
 * The provider answered with a status outside 2xx.
 *
 * @since 0.3.0
 * @category errors
 */
export class StatusError extends Schema.TaggedError<StatusError>()("WebSearchTool.StatusError", {
  tool: Schema.String,
  status: Schema.Number,
}) {
  override get message(): string {
    return `${this.tool} request failed with status ${this.status}`
  }
}

/**
 * The provider's response body is larger than `MAX_RESPONSE_BYTES`.
 *
 * @since 0.3.0
 * @category errors
 */
export class TooLargeError extends Schema.TaggedError<TooLargeError>()("WebSearchTool.TooLargeError", {
  tool: Schema.String,
  limit: Schema.Number,
}) {
  override get message(): string {
    return `${this.tool} response exceeded ${this.limit} bytes`
  }
}

/**
 * The provider did not answer within `REQUEST_TIMEOUT`.
 *
 * @since 0.3.0
 * @category errors
 */
export class TimeoutError extends Schema.TaggedError<TimeoutError>()("WebSearchTool.TimeoutError", {
  tool: Schema.String,
}) {
  override get message(): string {
    return `${this.tool} request timed out`
  }
}

const McpResult = Schema.Struct({
  result: Schema.Struct({
    content: Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.String })),
  }),
})
const decodeMcpResult = Schema.decodeUnknownOption(Schema.parseJson(McpResult))

const payloadText = (payload: string): string | undefined => {
  const trimmed = payload.trim()
  if (!trimmed.startsWith("{")) return undefined
  return Option.match(decodeMcpResult(trimmed), {
    onNone: () => undefined,
    onSome: (decoded) => decoded.result.content.find((item) => item.text !== "")?.text,
  })
}

/**
 * The first non-empty content text of a JSON-RPC result: the whole body as one JSON payload first, else each
 * `data: ` line of an SSE stream. Payloads that are not JSON objects of the result shape are ignored.
 *
 * @since 0.1.0
 * @category requests
 */
export const parseResponse = (body: string): string | undefined => {
  const direct = body.trim() === "" ? undefined : payloadText(body)
  if (direct !== undefined) return direct
  for (const line of body.split("\n")) {
    if (!line.startsWith("data: ")) continue
    const text = payloadText(line.slice(6))
    if (text !== undefined) return text
  }
  return undefined
}

/**
 * The Exa endpoint with the key, if any, as the `exaApiKey` query parameter.
 *
 * @since 0.1.0
 * @category requests
 */
export const exaEndpoint = (base: string, key: string | undefined): string => {
  if (key === undefined || key === "") return base
  const url = new URL(base)
  url.searchParams.set("exaApiKey", key)
  return url.toString()
}

/**
 * One JSON-RPC `tools/call` of `tool` at `url`: its first non-empty content text, `undefined` when there is none.
 * The body is read under `MAX_RESPONSE_BYTES`; the whole exchange runs under `REQUEST_TIMEOUT`.
 *
 * @since 0.3.0
 * @category requests
 */
export const call = (
  http: HttpClient.HttpClient,
  url: string,
  tool: string,
  args: Readonly<Record<string, unknown>>,
  headers: Readonly<Record<string, string>>,
) =>
  Effect.gen(function* () {
    const request = HttpClientRequest.post(url).pipe(
      HttpClientRequest.setHeaders({ ...headers, Accept: "application/json, text/event-stream" }),
      HttpClientRequest.bodyUnsafeJson({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: tool, arguments: args },
      }),
    )
    const response = yield* http.execute(request)
    if (response.status < 200 || response.status >= 300) {
      return yield* new StatusError({ tool, status: response.status })
    }
    const body = yield* collectBoundedBody(
      response,
      MAX_RESPONSE_BYTES,
      () => new TooLargeError({ tool, limit: MAX_RESPONSE_BYTES }),
    )
    return parseResponse(new TextDecoder().decode(body))
  }).pipe(Effect.timeoutFail({ duration: REQUEST_TIMEOUT, onTimeout: () => new TimeoutError({ tool }) }))
