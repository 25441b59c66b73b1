/**
 * One HTTP exchange of `webfetch`: a GET over sockets pinned to the checked addresses (with the Cloudflare
 * challenge retry), a redirect returned rather than followed, the content type checked before the body is read,
 * the body read under its cap; and the time budget one call's timed steps share.
 *
 * @since 0.3.0
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Tool from "../../tool/tool.js"
import * as WebAddress from "../../world/web-address.js"
import { collectBoundedBody } from "./bounded-body.js"
import { ContentTypeError, StatusError, TimeoutError, TooLargeError } from "./web-fetch-errors.js"
import type { Format } from "./web-fetch-html.js"

/**
 * The largest accepted response body.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024

/**
 * The browser-like user agent of the first attempt.
 *
 * @since 0.3.0
 * @category constants
 */
export const BROWSER_USER_AGENT =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36"

/**
 * The honest user agent used to retry a Cloudflare challenge.
 *
 * @since 0.3.0
 * @category constants
 */
export const CHALLENGE_USER_AGENT = "toolgate"

/**
 * The `Accept` header for each format.
 *
 * @since 0.3.0
 * @category requests
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
 * The mime type of a `content-type` value: the part before `;`, trimmed and lower-cased.
 *
 * @since 0.3.0
 * @category requests
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

/**
 * What one hop produced: a redirect to follow, or the page.
 *
 * @since 0.3.0
 * @category models
 */
export type Exchange =
  | { readonly _tag: "redirect"; readonly location: string }
  | { readonly _tag: "page"; readonly body: Uint8Array; readonly contentType: string }

/**
 * One GET of `target` over sockets that can only connect to `addresses` (the checked ones), with the Cloudflare
 * retry; a redirect is returned, not followed.
 *
 * @since 0.3.0
 * @category requests
 */
export const exchange = (
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
        return yield* new StatusError({ status: response.status })
      }
      const contentType = response.headers["content-type"] ?? ""
      const mime = mimeOf(contentType)
      if (isImage(mime)) return yield* new ContentTypeError({ mime, image: true })
      if (!isTextual(mime)) return yield* new ContentTypeError({ mime, image: false })
      const body = yield* collectBoundedBody(
        response,
        MAX_RESPONSE_BYTES,
        () => new TooLargeError({ limit: MAX_RESPONSE_BYTES }),
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

/**
 * A time budget of `seconds` shared by every timed step of one call (resolution, transfer, conversion): each step
 * runs under what is left and fails with `TimeoutError` when it runs out. Time between steps (waiting for a
 * permission answer) is not counted: the user's reading time is not the network's.
 *
 * @since 0.3.0
 * @category requests
 */
export const makeBudget = (seconds: number) =>
  Effect.sync(() => {
    let left = seconds * 1000
    const timedOut = () => new TimeoutError({ seconds })
    return <A, E, R>(step: Effect.Effect<A, E, R>): Effect.Effect<A, E | TimeoutError, R> =>
      Effect.gen(function* () {
        if (left <= 0) return yield* timedOut()
        const started = yield* Clock.currentTimeMillis
        return yield* step.pipe(
          Effect.timeoutFail({ duration: Duration.millis(left), onTimeout: timedOut }),
          Effect.ensuring(Effect.map(Clock.currentTimeMillis, (now) => void (left -= now - started))),
        )
      })
  })
