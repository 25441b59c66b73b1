/**
 * The `webfetch` tool: one HTTP(S) GET under permission checks, returned as text, Markdown or raw HTML. The
 * permission resource is the canonical URL; every redirect hop is checked again; a host that resolves to a
 * loopback, private, link-local, unique-local or metadata address also needs `private:<canonical URL>`, and the
 * socket connects to exactly the address that was checked. Bodies are capped at 5 MiB, only textual content types
 * are accepted, and the timeout covers resolution, transfer and conversion (large pages are converted in a worker
 * thread that the timeout terminates). See docs/trust/webfetch.md.
 *
 * @since 0.1.0
 */
import { Worker } from "node:worker_threads"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Parser } from "htmlparser2"
import type TurndownService from "turndown"
import * as CorePackage from "../system/core-package.js"
import * as LLM from "../values/llm.js"
import * as Wildcard from "../values/wildcard.js"
import * as PermissionV2 from "../policy/permission.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"
import * as WebAddress from "../world/web-address.js"

/**
 * The registered tool name and permission action.
 *
 * @since 0.1.0
 */
export const name = "webfetch"
/**
 * The largest accepted response body.
 *
 * @since 0.1.0
 */
export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024

/**
 * Progress is reported each time this many more bytes of a body have arrived.
 *
 * @since 0.1.0
 */
export const PROGRESS_BYTES = 64 * 1024
/**
 * The request timeout when the input gives none, in seconds.
 *
 * @since 0.1.0
 */
export const DEFAULT_TIMEOUT_SECONDS = 30
/**
 * The largest accepted `timeout`, in seconds.
 *
 * @since 0.1.0
 */
export const MAX_TIMEOUT_SECONDS = 120
/**
 * The most redirects one call follows.
 *
 * @since 0.2.0
 */
export const MAX_REDIRECTS = 10
/**
 * The prefix of the second resource a fetch needs when its host resolves to a non-public address. Only a rule whose
 * resource pattern starts with it can allow such a fetch (`PermissionV2.EXPLICIT_RESOURCE_PREFIXES`).
 *
 * @since 0.2.0
 */
export const PRIVATE_PREFIX = "private:"
/**
 * HTML up to this many UTF-16 units is converted to Markdown on the calling thread; larger documents go to a worker
 * thread, which the call's timeout terminates.
 *
 * @since 0.2.0
 */
export const INLINE_MARKDOWN_LIMIT = 64 * 1024

/**
 * The model-facing description (our own wording).
 *
 * @since 0.1.0
 */
export const description = [
  "Retrieve an HTTP or HTTPS URL and return its content as plain text, Markdown or raw HTML; Markdown unless another format is requested.",
  "Prefer a more specific tool when one fits. This tool never changes anything. A long text result may be shortened to a preview, with the full output kept in managed storage.",
].join("\n\n")

/**
 * The output formats.
 *
 * @since 0.1.0
 */
export const Format = Schema.Literal("text", "markdown", "html")
/**
 * @see Format
 *
 * @since 0.1.0
 */
export type Format = typeof Format.Type

/**
 * The tool input; `format` decodes to `markdown` when absent.
 *
 * @since 0.1.0
 */
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
/**
 * @see Input
 *
 * @since 0.1.0
 */
export type Input = typeof Input.Type

/**
 * The domain output, also the structured output.
 *
 * @since 0.1.0
 */
export const Output = Schema.Struct({
  url: Schema.String,
  contentType: Schema.String,
  format: Format,
  output: Schema.String,
})
/**
 * @see Output
 *
 * @since 0.1.0
 */
export type Output = typeof Output.Type

/**
 * The browser-like user agent of the first attempt.
 *
 * @since 0.1.0
 */
export const BROWSER_USER_AGENT =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36"
/**
 * The honest user agent used to retry a Cloudflare challenge.
 *
 * @since 0.1.0
 */
export const CHALLENGE_USER_AGENT = "toolgate"

/**
 * The `Accept` header for each format.
 *
 * @since 0.1.0
 */
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
 *
 * @since 0.1.0
 */
export const collectBoundedBody = <E>(
  response: HttpClientResponse.HttpClientResponse,
  max: number,
  tooLarge: () => E,
  onProgress?: (received: number, declared: number | undefined) => void,
): Effect.Effect<Uint8Array, E | HttpClientError.ResponseError> =>
  Effect.suspend(() => {
    const header = response.headers["content-length"]
    const declared = header === undefined || header === "" ? undefined : Number.parseInt(header, 10)
    if (declared !== undefined && Number.isSafeInteger(declared) && declared >= 0 && declared > max) {
      return Effect.fail(tooLarge())
    }
    const chunks: Array<Uint8Array> = []
    let size = 0
    const total = declared !== undefined && Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined
    let reported = 0
    return Stream.runForEach(response.stream, (chunk) => {
      if (size + chunk.byteLength > max) return Effect.fail(tooLarge())
      chunks.push(chunk)
      size += chunk.byteLength
      if (onProgress !== undefined && size - reported >= PROGRESS_BYTES) {
        reported = size
        onProgress(size, total)
      }
      return Effect.void
    }).pipe(Effect.map(() => Buffer.concat(chunks, size)))
  })

/**
 * The mime type of a `content-type` value: the part before `;`, trimmed and lower-cased.
 *
 * @since 0.1.0
 */
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

/** A parser whose handlers collect what `result` returns once the whole document has been written. */
interface Pass<A> {
  readonly parser: Parser
  readonly result: () => A
}

const textPass = (): Pass<string> => {
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
  return { parser, result: () => text.trim() }
}

const depthPass = (): Pass<number> => {
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
  return { parser, result: () => deepest }
}

const runPass = <A>(pass: Pass<A>, html: string): A => {
  pass.parser.write(html)
  pass.parser.end()
  return pass.result()
}

/** The characters fed to a parser between two yields to the event loop. */
const PASS_CHUNK = 256 * 1024

/** Yields to the event loop (timers included), so a pending timeout can interrupt a long parse. */
const yieldToEventLoop = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** `runPass` in chunks with a yield to the event loop between them: interruptible, and never blocks for long. */
const runPassChunked = <A>(pass: Pass<A>, html: string): Effect.Effect<A> =>
  Effect.gen(function* () {
    for (let at = 0; at < html.length; at += PASS_CHUNK) {
      pass.parser.write(html.slice(at, at + PASS_CHUNK))
      if (at + PASS_CHUNK < html.length) yield* yieldToEventLoop
    }
    pass.parser.end()
    return pass.result()
  })

/**
 * The concatenated text nodes of `html` outside active or embedded content (nesting-aware), trimmed.
 *
 * @since 0.1.0
 */
export const extractText = (html: string): string => runPass(textPass(), html)

/**
 * The deepest element nesting converted to Markdown. Turndown's DOM parser is quadratic in depth and its converter
 * overflows the stack at roughly 1400 levels, so deeper documents fail up front instead of blocking the event loop.
 *
 * @since 0.1.0
 */
export const MAX_HTML_DEPTH = 1024

/** Turndown's options: ATX headings, `---` rules, `-` bullets, fenced code, `*` emphasis. */
const TURNDOWN_OPTIONS = {
  headingStyle: "atx",
  hr: "---",
  bulletListMarker: "-",
  codeBlockStyle: "fenced",
  emDelimiter: "*",
} as const satisfies TurndownService.Options

/** Elements dropped with their content. */
const TURNDOWN_REMOVED = ["script", "style", "meta", "link"] as const

let turndown: TurndownService | undefined

const depthError = () => new Error(`HTML nesting exceeds ${MAX_HTML_DEPTH} levels`)

const turndownInline = (html: string): string => {
  if (turndown === undefined) {
    // Loaded on the first conversion (it brings a whole DOM implementation), not with the module.
    const Turndown = CorePackage.require("turndown") as typeof TurndownService
    turndown = new Turndown(TURNDOWN_OPTIONS)
    turndown.remove([...TURNDOWN_REMOVED])
  }
  return turndown.turndown(html)
}

/**
 * `html` as Markdown: ATX headings, `---` rules, `-` bullets, fenced code, `*` emphasis; no script/style/meta/link.
 * Throws on documents nested deeper than `MAX_HTML_DEPTH`.
 *
 * @since 0.1.0
 */
export const toMarkdown = (html: string): string => {
  if (runPass(depthPass(), html) > MAX_HTML_DEPTH) throw depthError()
  return turndownInline(html)
}

/** The worker's whole program: convert `workerData.html` with the same options and post the Markdown back. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const TurndownService = require(workerData.module)
const service = new TurndownService(workerData.options)
service.remove(workerData.removed)
parentPort.postMessage(service.turndown(workerData.html))
`

let turndownModule: string | undefined

/** Converts `html` in a fresh worker thread; interruption (the timeout) terminates the worker. */
const turndownInWorker = (html: string): Effect.Effect<string, Error> =>
  Effect.async<string, Error>((resume) => {
    turndownModule ??= CorePackage.require.resolve("turndown")
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { module: turndownModule, options: TURNDOWN_OPTIONS, removed: TURNDOWN_REMOVED, html },
    })
    let settled = false
    const settle = (effect: Effect.Effect<string, Error>) => {
      if (settled) return
      settled = true
      resume(effect)
    }
    worker.once("message", (markdown: string) => settle(Effect.succeed(markdown)))
    worker.once("error", (error) => settle(Effect.fail(error instanceof Error ? error : new Error(String(error)))))
    worker.once("exit", (code) => settle(Effect.fail(new Error(`HTML conversion stopped (exit code ${code})`))))
    // Stopping starts at once; the call does not wait for the thread to wind down.
    return Effect.sync(() => void worker.terminate().catch(() => undefined))
  })

/** `toMarkdown` without blocking the event loop for long: chunked depth check, then inline or worker conversion. */
const toMarkdownBounded = (html: string): Effect.Effect<string, Error> =>
  Effect.gen(function* () {
    if ((yield* runPassChunked(depthPass(), html)) > MAX_HTML_DEPTH) return yield* Effect.fail(depthError())
    if (html.length <= INLINE_MARKDOWN_LIMIT) {
      return yield* Effect.try({ try: () => turndownInline(html), catch: (error) => error as Error })
    }
    return yield* turndownInWorker(html)
  })

const convert = (body: string, contentType: string, format: Format): Effect.Effect<string, Error> => {
  if (!contentType.includes("text/html")) return Effect.succeed(body)
  if (format === "markdown") return toMarkdownBounded(body)
  if (format === "text") return runPassChunked(textPass(), body)
  return Effect.succeed(body)
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

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/** What one hop produced: a redirect to follow, or the page. */
type Exchange =
  | { readonly _tag: "redirect"; readonly location: string }
  | { readonly _tag: "page"; readonly body: Uint8Array; readonly contentType: string }

/**
 * One GET of `target` over sockets that can only connect to `addresses` (the checked ones), with the Cloudflare
 * retry; a redirect is returned, not followed.
 */
const exchange = (
  target: WebAddress.Canonical,
  addresses: ReadonlyArray<WebAddress.Resolved>,
  format: Format,
  progress: Tool.Context["progress"],
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const agent = yield* NodeHttpClient.makeAgent({ lookup: WebAddress.pinnedLookup(addresses), keepAlive: false })
      const http = yield* Effect.provideService(NodeHttpClient.make, NodeHttpClient.HttpAgent, agent)
      let response = yield* http.execute(request(target.href, format, BROWSER_USER_AGENT))
      if (isChallenge(response)) response = yield* http.execute(request(target.href, format, CHALLENGE_USER_AGENT))
      const location = response.headers["location"]
      if (REDIRECTS.has(response.status) && location !== undefined && location !== "") {
        return { _tag: "redirect", location } satisfies Exchange as Exchange
      }
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
        progress === undefined
          ? undefined
          : (received, declared) =>
              progress({
                message: `received ${received} bytes${declared === undefined ? "" : ` of ${declared}`}`,
                progress: received,
                ...(declared === undefined ? {} : { total: declared }),
              }),
      )
      return { _tag: "page", body, contentType } satisfies Exchange as Exchange
    }),
  )

const timedOut = () => new Error("Request timed out")

/**
 * A time budget shared by every timed step of one call (resolution, transfer, conversion). Time spent waiting for
 * a permission answer is not counted: the user's reading time is not the network's.
 */
const makeBudget = (seconds: number) =>
  Effect.sync(() => {
    let left = seconds * 1000
    return <A, E, R>(step: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
      Effect.gen(function* () {
        if (left <= 0) return yield* Effect.fail(timedOut())
        const started = yield* Clock.currentTimeMillis
        return yield* step.pipe(
          Effect.timeoutFail({ duration: Duration.millis(left), onTimeout: timedOut }),
          Effect.ensuring(Effect.map(Clock.currentTimeMillis, (now) => void (left -= now - started))),
        )
      })
  })

const canonicalOf = (raw: string, base?: string) =>
  Either.match(WebAddress.canonical(raw, base), {
    onLeft: (error) => Effect.fail(error),
    onRight: (target) => Effect.succeed(target),
  })

/** The model-visible failure: the reference's `Unable to fetch <url>`, with the reason for refusals it lacks. */
const failure = (url: string) => (error: unknown) => {
  if (error instanceof WebAddress.InvalidUrlError && error.reason !== "syntax" && error.reason !== "scheme") {
    return new LLM.ToolFailure({ message: `Unable to fetch ${url}: ${error.message}`, error })
  }
  return new LLM.ToolFailure({ message: `Unable to fetch ${url}`, error })
}

/**
 * Builds the tool around a captured permission service and resolver (the system resolver by default). The tool
 * makes its own connections, pinned to checked addresses; it does not use an `HttpClient` from the context.
 *
 * @since 0.2.0
 */
export const make = (
  permission: PermissionV2.Interface,
  resolver: WebAddress.ResolverInterface = WebAddress.systemResolver,
) =>
  Tool.make({
    description,
    annotations: { title: "Fetch web page", readOnlyHint: true, openWorldHint: true },
    input: Input,
    output: Output,
    toModelOutput: ({ output }) => [{ type: "text", text: output.output }],
    execute: (input, context) =>
      Effect.gen(function* () {
        const caller = PermissionV2.fromToolCall(context)
        const timed = yield* makeBudget(input.timeout ?? DEFAULT_TIMEOUT_SECONDS)
        let target = yield* canonicalOf(input.url)
        let from: string | undefined
        for (let redirects = 0; ; redirects++) {
          yield* permission.assert({
            action: name,
            resources: [target.href],
            // "always" allows this origin (scheme, host and port), not every URL: a new host asks again.
            save: [`${Wildcard.literal(`${target.origin}/`)}*`],
            metadata: from === undefined ? { ...input } : { ...input, url: target.href, redirectedFrom: from },
            ...caller,
          })
          const addresses = yield* timed(WebAddress.addressesOf(resolver, target))
          const ranges = addresses.map(({ address }) => ({ address, range: WebAddress.classify(address) }))
          const special = ranges.filter(({ range }) => range !== "public")
          if (special.length > 0) {
            yield* permission.assert({
              action: name,
              resources: [`${PRIVATE_PREFIX}${target.href}`],
              save: [`${Wildcard.literal(`${PRIVATE_PREFIX}${target.origin}/`)}*`],
              metadata: { url: target.href, addresses: special },
              ...caller,
            })
          }
          const result = yield* timed(exchange(target, addresses, input.format, context.progress))
          if (result._tag === "page") {
            const text = new TextDecoder().decode(result.body)
            const output = yield* timed(convert(text, result.contentType, input.format))
            return { url: input.url, contentType: result.contentType, format: input.format, output } satisfies Output
          }
          if (redirects >= MAX_REDIRECTS) {
            return yield* Effect.fail(new Error(`Too many redirects (more than ${MAX_REDIRECTS})`))
          }
          from = target.href
          target = yield* canonicalOf(result.location, target.href)
        }
      }).pipe(Effect.mapError(PermissionV2.leafFailure(failure(input.url)))),
  })

/**
 * The tool value type.
 *
 * @since 0.1.0
 */
export type WebFetch = ReturnType<typeof make>

/**
 * Registers `webfetch` in the Location for the layer's lifetime, with the `WebAddress.Resolver` of the context.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<never, never, PermissionV2.Service | Tools.Service> = Tools.layer(
  name,
  Effect.gen(function* () {
    const permission = yield* PermissionV2.Service
    const resolver = yield* WebAddress.Resolver
    return make(permission, resolver)
  }),
)
