/**
 * The `webfetch` tool (04 §14): one HTTP(S) GET under a permission check on the requested URL, returned as text,
 * Markdown or raw HTML. Redirects are followed without further approval, bodies are capped at 5 MiB, and only
 * textual content types are accepted. The HTTP client is captured when the layer is built.
 *
 * @since 0.1.0
 */
import { HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Duration, Effect, Layer, Schema, Stream } from "effect"
import { Parser } from "htmlparser2"
import TurndownService from "turndown"
import * as LLM from "../values/llm.js"
import * as PermissionV2 from "../policy/permission.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"

/** The registered tool name and permission action. */
export const name = "webfetch"
/** The largest accepted response body. */
export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024
/** The request timeout when the input gives none, in seconds. */
export const DEFAULT_TIMEOUT_SECONDS = 30
/** The largest accepted `timeout`, in seconds. */
export const MAX_TIMEOUT_SECONDS = 120

/** The model-facing description (P19: our wording). */
export const description = [
  "Retrieve an HTTP or HTTPS URL and return its content as plain text, Markdown or raw HTML; Markdown unless another format is requested.",
  "Prefer a more specific tool when one fits. This tool never changes anything. A long text result may be shortened to a preview, with the full output kept in managed storage.",
].join("\n\n")

/** The output formats. */
export const Format = Schema.Literal("text", "markdown", "html")
/** @see Format */
export type Format = typeof Format.Type

/** The tool input; `format` decodes to `markdown` when absent. */
export const Input = Schema.Struct({
  url: Schema.String.annotations({ description: "HTTP or HTTPS address to retrieve" }),
  format: Schema.optionalWith(
    Format.annotations({ description: "Format of the returned content; markdown when omitted." }),
    { default: () => "markdown" as const },
  ),
  timeout: Schema.optional(
    Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(MAX_TIMEOUT_SECONDS)).annotations({
      description: `Timeout in seconds, at most ${MAX_TIMEOUT_SECONDS}`,
    }),
  ),
})
/** @see Input */
export type Input = typeof Input.Type

/** The domain output, also the structured output. */
export const Output = Schema.Struct({
  url: Schema.String,
  contentType: Schema.String,
  format: Format,
  output: Schema.String,
})
/** @see Output */
export type Output = typeof Output.Type

/** The browser-like user agent of the first attempt. */
export const BROWSER_USER_AGENT =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36"
/** The honest user agent used to retry a Cloudflare challenge. */
export const CHALLENGE_USER_AGENT = "toolgate"

/** The `Accept` header for each format. */
export const accept = (format: Format): string => {
  switch (format) {
    case "markdown":
      return "text/markdown;q=1.0, text/x-markdown;q=0.9, text/plain;q=0.8, text/html;q=0.7, */*;q=0.1"
    case "text":
      return "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1"
    case "html":
      return "text/html;q=1.0, application/xhtml+xml;q=0.9, text/plain;q=0.8, text/markdown;q=0.7, */*;q=0.1"
  }
}

/**
 * Reads a response body of at most `max` bytes. A declared `Content-Length` (safe non-negative integer) above `max`
 * fails before reading; a stream that grows past `max` fails at the crossing chunk, which ends (cancels) the stream.
 */
export const collectBoundedBody = <E>(
  response: HttpClientResponse.HttpClientResponse,
  max: number,
  tooLarge: () => E,
): Effect.Effect<Uint8Array, E | HttpClientError.ResponseError> =>
  Effect.suspend(() => {
    const header = response.headers["content-length"]
    const declared = header === undefined || header === "" ? undefined : Number.parseInt(header, 10)
    if (declared !== undefined && Number.isSafeInteger(declared) && declared >= 0 && declared > max) {
      return Effect.fail(tooLarge())
    }
    const chunks: Array<Uint8Array> = []
    let size = 0
    return Stream.runForEach(response.stream, (chunk) => {
      if (size + chunk.byteLength > max) return Effect.fail(tooLarge())
      chunks.push(chunk)
      size += chunk.byteLength
      return Effect.void
    }).pipe(Effect.map(() => Buffer.concat(chunks, size)))
  })

/** The mime type of a `content-type` value: the part before `;`, trimmed and lower-cased. */
export const mimeOf = (contentType: string): string => (contentType.split(";", 1)[0] ?? "").trim().toLowerCase()

const isImage = (mime: string) =>
  mime.startsWith("image/") && mime !== "image/svg+xml" && mime !== "image/vnd.fastbidsheet"

const isTextual = (mime: string) =>
  mime === "" ||
  mime.startsWith("text/") ||
  mime === "application/json" ||
  mime.endsWith("+json") ||
  mime === "application/xml" ||
  mime.endsWith("+xml") ||
  mime === "application/javascript" ||
  mime === "application/x-javascript"

const SKIPPED = new Set(["script", "style", "noscript", "iframe", "object", "embed"])

/** The concatenated text nodes of `html` outside active or embedded content (nesting-aware), trimmed. */
export const extractText = (html: string): string => {
  let text = ""
  let depth = 0
  const parser = new Parser({
    onopentag: (tag) => {
      if (depth > 0 || SKIPPED.has(tag)) depth++
    },
    ontext: (chunk) => {
      if (depth === 0) text += chunk
    },
    onclosetag: () => {
      if (depth > 0) depth--
    },
  })
  parser.write(html)
  parser.end()
  return text.trim()
}

/**
 * The deepest element nesting converted to Markdown. Turndown's DOM parser is quadratic in depth and its converter
 * overflows the stack at roughly 1400 levels, so deeper documents fail up front instead of blocking the event loop.
 */
export const MAX_HTML_DEPTH = 1024

const nestingDepth = (html: string): number => {
  let depth = 0
  let deepest = 0
  const parser = new Parser({
    onopentag: () => {
      depth++
      if (depth > deepest) deepest = depth
    },
    onclosetag: () => {
      if (depth > 0) depth--
    },
  })
  parser.write(html)
  parser.end()
  return deepest
}

let turndown: TurndownService | undefined

/**
 * `html` as Markdown: ATX headings, `---` rules, `-` bullets, fenced code, `*` emphasis; no script/style/meta/link.
 * Throws on documents nested deeper than `MAX_HTML_DEPTH`.
 */
export const toMarkdown = (html: string): string => {
  if (nestingDepth(html) > MAX_HTML_DEPTH) throw new Error(`HTML nesting exceeds ${MAX_HTML_DEPTH} levels`)
  if (turndown === undefined) {
    turndown = new TurndownService({
      headingStyle: "atx",
      hr: "---",
      bulletListMarker: "-",
      codeBlockStyle: "fenced",
      emDelimiter: "*",
    })
    turndown.remove(["script", "style", "meta", "link"])
  }
  return turndown.turndown(html)
}

const convert = (body: string, contentType: string, format: Format): string => {
  if (!contentType.includes("text/html")) return body
  if (format === "markdown") return toMarkdown(body)
  if (format === "text") return extractText(body)
  return body
}

const request = (url: string, format: Format, userAgent: string) =>
  HttpClientRequest.get(url).pipe(
    HttpClientRequest.setHeaders({
      "User-Agent": userAgent,
      Accept: accept(format),
      "Accept-Language": "en-US,en;q=0.9",
    }),
  )

const isChallenge = (response: HttpClientResponse.HttpClientResponse) =>
  response.status === 403 && response.headers["cf-mitigated"] === "challenge"

const fetchText = (http: HttpClient.HttpClient, input: Input) =>
  Effect.gen(function* () {
    let response = yield* http.execute(request(input.url, input.format, BROWSER_USER_AGENT))
    if (isChallenge(response)) response = yield* http.execute(request(input.url, input.format, CHALLENGE_USER_AGENT))
    if (response.status < 200 || response.status >= 300) {
      return yield* Effect.fail(new Error(`Request failed with status ${response.status}`))
    }
    const contentType = response.headers["content-type"] ?? ""
    const mime = mimeOf(contentType)
    if (isImage(mime)) return yield* Effect.fail(new Error(`Unsupported fetched image content type: ${mime}`))
    if (!isTextual(mime)) return yield* Effect.fail(new Error(`Unsupported fetched file content type: ${mime}`))
    const body = yield* collectBoundedBody(
      response,
      MAX_RESPONSE_BYTES,
      () => new Error(`Response too large (exceeds ${MAX_RESPONSE_BYTES} byte limit)`),
    )
    return { body, contentType }
  }).pipe(
    Effect.timeoutFail({
      duration: Duration.seconds(input.timeout ?? DEFAULT_TIMEOUT_SECONDS),
      onTimeout: () => new Error("Request timed out"),
    }),
  )

const checkUrl = (raw: string) =>
  Effect.try({
    try: () => {
      const url = new URL(raw)
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("URL must use http:// or https://")
    },
    catch: (error) => error,
  })

/** Builds the tool around a captured HTTP client and permission service. */
export const make = (http: HttpClient.HttpClient, permission: PermissionV2.Interface) => {
  const client = HttpClient.followRedirects(http, 10)
  return Tool.make({
    description,
    input: Input,
    output: Output,
    toModelOutput: ({ output }) => [{ type: "text", text: output.output }],
    execute: (input, context) =>
      Effect.gen(function* () {
        yield* checkUrl(input.url)
        yield* permission.assert({
          action: name,
          resources: [input.url],
          save: ["*"],
          metadata: { ...input },
          ...PermissionV2.fromToolCall(context),
        })
        const { body, contentType } = yield* fetchText(client, input)
        const text = new TextDecoder().decode(body)
        const output = yield* Effect.try({
          try: () => convert(text, contentType, input.format),
          catch: (error) => error,
        })
        return { url: input.url, contentType, format: input.format, output } satisfies Output
      }).pipe(
        Effect.mapError(
          PermissionV2.leafFailure((error) => new LLM.ToolFailure({ message: `Unable to fetch ${input.url}`, error })),
        ),
      ),
  })
}

/** The tool value type. */
export type WebFetch = ReturnType<typeof make>

/** Registers `webfetch` in the Location for the layer's lifetime. */
export const layer: Layer.Layer<never, never, HttpClient.HttpClient | PermissionV2.Service | Tools.Service> =
  Tools.layer(
    name,
    Effect.gen(function* () {
      const http = yield* HttpClient.HttpClient
      const permission = yield* PermissionV2.Service
      return make(http, permission)
    }),
  )
