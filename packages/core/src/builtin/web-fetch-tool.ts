/**
 * The `webfetch` tool: one HTTP(S) GET under permission checks, returned as text, Markdown or raw HTML. The
 * permission resource is the canonical URL; every redirect hop is checked again; a host that resolves to a
 * loopback, private, link-local, unique-local or metadata address also needs `private:<canonical URL>`, and the
 * socket connects to exactly the address that was checked. Bodies are capped at 5 MiB, only textual content types
 * are accepted, and the timeout covers resolution, transfer and conversion (large pages are converted in a worker
 * thread that the timeout terminates). See docs/trust/webfetch.md.
 *
 * This module is the leaf (its input, the permission flow and the redirect loop); one exchange is in
 * `internal/web-fetch-exchange.ts`, the HTML conversion in `internal/web-fetch-html.ts`, the failures in
 * `internal/web-fetch-errors.ts`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as LLM from "../values/llm.js"
import * as Wildcard from "../values/wildcard.js"
import * as PermissionV2 from "../permission/permission.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"
import * as WebAddress from "../world/web-address.js"
import * as BoundedBody from "./internal/bounded-body.js"
import { RedirectLimitError } from "./internal/web-fetch-errors.js"
import * as Exchange from "./internal/web-fetch-exchange.js"
import * as Html from "./internal/web-fetch-html.js"

// The failures of one call: the model sees `Unable to fetch <url>`, the message stays on `ToolFailure.error`.
export {
  /**
   * The server answered with a status outside 2xx that is not a followed redirect.
   *
   * @since 0.3.0
   * @category errors
   */
  StatusError,
  /**
   * The response is an image or not textual.
   *
   * @since 0.3.0
   * @category errors
   */
  ContentTypeError,
  /**
   * The body is (or declares to be) larger than `MAX_RESPONSE_BYTES`.
   *
   * @since 0.3.0
   * @category errors
   */
  TooLargeError,
  /**
   * The call's time budget (resolution, transfer and conversion together) ran out.
   *
   * @since 0.3.0
   * @category errors
   */
  TimeoutError,
  /**
   * More than `MAX_REDIRECTS` redirects in one call.
   *
   * @since 0.3.0
   * @category errors
   */
  RedirectLimitError,
  /**
   * HTML could not be converted (nested too deeply, or the converter failed).
   *
   * @since 0.3.0
   * @category errors
   */
  ConversionError,
} from "./internal/web-fetch-errors.js"

/**
 * The registered tool name and permission action.
 *
 * @since 0.1.0
 * @category utilities
 */
export const name = "webfetch"
/**
 * The largest accepted response body.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_RESPONSE_BYTES: number = Exchange.MAX_RESPONSE_BYTES

/**
 * Progress is reported each time this many more bytes of a body have arrived.
 *
 * @since 0.1.0
 * @category constants
 */
export const PROGRESS_BYTES: number = BoundedBody.PROGRESS_BYTES
/**
 * The request timeout when the input gives none, in seconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TIMEOUT_SECONDS = 30
/**
 * The largest accepted `timeout`, in seconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_TIMEOUT_SECONDS = 120
/**
 * The most redirects one call follows.
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_REDIRECTS = 10
/**
 * The prefix of the second resource a fetch needs when its host resolves to a non-public address. Only a rule whose
 * resource pattern starts with it can allow such a fetch (`PermissionV2.EXPLICIT_RESOURCE_PREFIXES`).
 *
 * @since 0.2.0
 * @category constants
 */
export const PRIVATE_PREFIX: typeof PermissionV2.PRIVATE_PREFIX = PermissionV2.PRIVATE_PREFIX
/**
 * HTML up to this many UTF-16 units (4 Ki), nested no deeper than `INLINE_MARKDOWN_DEPTH`, is converted to Markdown
 * on the calling thread; every other document goes to a worker thread, which the call's timeout terminates.
 *
 * @since 0.2.0
 * @category constants
 */
export const INLINE_MARKDOWN_LIMIT: number = Html.INLINE_MARKDOWN_LIMIT

/**
 * The deepest nesting converted on the calling thread (32); deeper documents go to the worker.
 *
 * @since 0.4.0
 * @category constants
 */
export const INLINE_MARKDOWN_DEPTH: number = Html.INLINE_MARKDOWN_DEPTH

/**
 * The model-facing description (our own wording).
 *
 * @since 0.1.0
 * @category utilities
 */
export const description = [
  "Retrieve an HTTP or HTTPS URL and return its content as plain text, Markdown or raw HTML; Markdown unless another format is requested.",
  "Prefer a more specific tool when one fits. This tool never changes anything. A long text result may be shortened to a preview, with the full output kept in managed storage.",
].join("\n\n")

/**
 * The output formats.
 *
 * @since 0.1.0
 * @category models
 */
export const Format = Schema.Literal("text", "markdown", "html")
/**
 * @see Format
 *
 * @since 0.1.0
 * @category models
 */
export type Format = typeof Format.Type

/**
 * The tool input; `format` decodes to `markdown` when absent.
 *
 * @since 0.1.0
 * @category models
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
 * @category models
 */
export type Input = typeof Input.Type

/**
 * The domain output, also the structured output.
 *
 * @since 0.1.0
 * @category models
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
 * @category models
 */
export type Output = typeof Output.Type

/**
 * The browser-like user agent of the first attempt.
 *
 * @since 0.1.0
 * @category constants
 */
export const BROWSER_USER_AGENT: string = Exchange.BROWSER_USER_AGENT
/**
 * The honest user agent used to retry a Cloudflare challenge.
 *
 * @since 0.1.0
 * @category constants
 */
export const CHALLENGE_USER_AGENT: string = Exchange.CHALLENGE_USER_AGENT

/**
 * The `Accept` header for each format.
 *
 * @since 0.1.0
 * @category utilities
 */
export const accept: (format: Format) => string = Exchange.accept

/**
 * Reads a response body of at most `max` bytes. A declared `Content-Length` (safe non-negative integer) above `max`
 * fails before reading; a stream that grows past `max` fails at the crossing chunk, which ends (cancels) the stream.
 *
 * @since 0.1.0
 * @category utilities
 * @internal
 */
export const collectBoundedBody = BoundedBody.collectBoundedBody

/**
 * The mime type of a `content-type` value: the part before `;`, trimmed and lower-cased.
 *
 * @since 0.1.0
 * @category utilities
 */
export const mimeOf: (contentType: string) => string = Exchange.mimeOf

/**
 * The concatenated text nodes of `html` outside active or embedded content (nesting-aware), trimmed.
 *
 * @since 0.1.0
 * @category utilities
 * @internal
 */
export const extractText: (html: string) => string = Html.extractText

/**
 * The deepest element nesting converted to Markdown. Turndown's DOM parser is quadratic in depth and its converter
 * overflows the stack at roughly 1400 levels, so deeper documents fail up front instead of blocking the event loop.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_HTML_DEPTH: number = Html.MAX_HTML_DEPTH

/**
 * `html` as Markdown: ATX headings, `---` rules, `-` bullets, fenced code, `*` emphasis; no script/style/meta/link.
 * Throws `ConversionError` on documents nested deeper than `MAX_HTML_DEPTH`.
 *
 * @since 0.1.0
 * @category utilities
 * @internal
 */
export const toMarkdown: (html: string) => string = Html.toMarkdown

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
 * @category constructors
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
        const timed = yield* Exchange.makeBudget(input.timeout ?? DEFAULT_TIMEOUT_SECONDS)
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
          const result = yield* timed(Exchange.exchange(target, addresses, input.format, context.progress))
          if (result._tag === "page") {
            const text = new TextDecoder().decode(result.body)
            const output = yield* timed(Html.convert(text, result.contentType, input.format))
            return { url: input.url, contentType: result.contentType, format: input.format, output } satisfies Output
          }
          if (redirects >= MAX_REDIRECTS) {
            return yield* new RedirectLimitError({ limit: MAX_REDIRECTS })
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
 * @category models
 */
export type WebFetch = ReturnType<typeof make>

/**
 * Registers `webfetch` in the Location for the layer's lifetime, with the `WebAddress.Resolver` of the context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, never, PermissionV2.Service | Tools.Service> = Tools.layer(
  name,
  Effect.gen(function* () {
    const permission = yield* PermissionV2.Service
    const resolver = yield* WebAddress.Resolver
    return make(permission, resolver)
  }),
)
