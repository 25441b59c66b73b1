/**
 * What the approval server checks before any handler runs: the `Host` header names this server (a DNS-rebinding
 * page reaches 127.0.0.1 under its own name and is refused), a browser request comes from the server's own origin
 * (`Origin` equal to `http://<Host>`, `Sec-Fetch-Site` same-origin or none; cross-origin requests are refused whatever
 * they carry, and no CORS header is ever sent), and the bearer token (compared in constant time). Every response
 * carries the security headers of the page.
 *
 * @since 0.3.0
 */
import * as crypto from "node:crypto"
import type { IncomingMessage } from "node:http"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

/**
 * A fresh token: 32 bytes from the operating system's random source, base64url.
 *
 * @since 0.3.0
 * @category utilities
 */
export const generateToken = (): string => crypto.randomBytes(32).toString("base64url")

/**
 * Compares two secrets in time independent of where they differ (hashing first makes the lengths equal).
 *
 * @since 0.3.0
 * @category utilities
 */
export const sameSecret = (given: string, expected: string): boolean =>
  crypto.timingSafeEqual(
    crypto.createHash("sha256").update(given).digest(),
    crypto.createHash("sha256").update(expected).digest(),
  )

/**
 * Whether `bearer` (the decoded `Authorization: Bearer …` value; empty when the header is missing) is the token.
 *
 * @since 0.3.0
 * @category utilities
 */
export const tokenMatches = (bearer: Redacted.Redacted<string>, token: Redacted.Redacted<string>): boolean => {
  const given = Redacted.value(bearer)
  return given.length > 0 && sameSecret(given, Redacted.value(token))
}

const LOOPBACK_NAMES = new Set(["127.0.0.1", "localhost", "[::1]"])

/** The host name of a `Host` header value (`name:port`, `[v6]:port`), lower-cased. */
const hostName = (host: string): string => {
  const lower = host.toLowerCase()
  if (lower.startsWith("[")) return lower.slice(0, lower.indexOf("]") + 1)
  const colon = lower.lastIndexOf(":")
  return colon === -1 ? lower : lower.slice(0, colon)
}

/**
 * The headers of every response: no framing (a page cannot overlay the approve buttons), no sniffing, no referrer.
 *
 * @since 0.3.0
 * @category constants
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "cross-origin-resource-policy": "same-origin",
}

const refuse = (status: number, tag: string, message: string) =>
  HttpServerResponse.unsafeJson({ _tag: tag, message }, { status, headers: SECURITY_HEADERS })

/**
 * The largest request body the server reads, in bytes. A request that declares more (`Content-Length`) is refused
 * before any of it is read; a chunked body is cut when it passes the limit (the rest is discarded unread). Either
 * way the answer is 413 `ApprovalServer.BodyTooLarge`.
 *
 * @since 0.4.0
 * @category constants
 */
export const MAX_BODY_BYTES = 64 * 1024

/**
 * The deepest nesting of arrays and objects a JSON request body may have (an answer body nests one level). A deeper
 * body is 400 `ApprovalServer.BodyTooDeep` before it is parsed.
 *
 * @since 0.4.0
 * @category constants
 */
export const MAX_BODY_DEPTH = 32

/**
 * Whether the JSON text `text` nests arrays and objects deeper than `limit`. Only brackets outside strings count;
 * the text is not otherwise checked (the parser does that once the depth is known to be bounded).
 *
 * @since 0.4.0
 * @category utilities
 */
export const nestedDeeperThan = (text: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i)
    if (inString) {
      if (char === 0x5c)
        i++ // a backslash escapes the next character
      else if (char === 0x22) inString = false
    } else if (char === 0x22) inString = true
    else if (char === 0x5b || char === 0x7b) {
      if (++depth > limit) return true
    } else if (char === 0x5d || char === 0x7d) depth--
  }
  return false
}

const tooLarge = () =>
  refuse(
    413,
    "ApprovalServer.BodyTooLarge",
    `The request body is larger than ${MAX_BODY_BYTES} bytes, the most this server reads.`,
  )

/**
 * Reads a body up to `MAX_BODY_BYTES`: its text, or `undefined` past the limit (what follows is then discarded
 * unread, so the connection stays usable and the refusal reaches the client), or a failure when the client goes
 * away. The request is never destroyed here: that would reset the connection before the refusal is written.
 */
const readBounded = (source: IncomingMessage) =>
  Effect.async<string | undefined, "gone">((resume) => {
    const chunks: Array<Buffer> = []
    let bytes = 0
    const cleanup = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onGone)
      source.off("aborted", onGone)
    }
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes <= MAX_BODY_BYTES) return void chunks.push(chunk)
      cleanup()
      chunks.length = 0
      source.resume()
      resume(Effect.succeed(undefined))
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    }
    const onGone = () => {
      cleanup()
      resume(Effect.fail("gone"))
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onGone)
    source.on("aborted", onGone)
    return Effect.sync(cleanup)
  })

/** `request` with its body already read as `text` (and parsed as `json`): the handlers decode these. */
const withBody = (
  request: HttpServerRequest.HttpServerRequest,
  text: string,
  json: unknown,
): HttpServerRequest.HttpServerRequest =>
  Object.create(request, {
    text: { value: Effect.succeed(text) },
    json: { value: Effect.succeed(json) },
  }) as HttpServerRequest.HttpServerRequest

/**
 * Reads the body of a request that may carry one within `MAX_BODY_BYTES` and `MAX_BODY_DEPTH`, as JSON: a refusal
 * response, or the request with its body read.
 */
const boundBody = (
  request: HttpServerRequest.HttpServerRequest,
): Effect.Effect<HttpServerResponse.HttpServerResponse | HttpServerRequest.HttpServerRequest> => {
  if (request.method === "GET" || request.method === "HEAD" || request.method === "OPTIONS")
    return Effect.succeed(request)
  const declared = request.headers["content-length"]
  if (declared !== undefined && !(Number(declared) <= MAX_BODY_BYTES)) return Effect.succeed(tooLarge())
  const type = request.headers["content-type"]
  return readBounded(NodeHttpServerRequest.toIncomingMessage(request)).pipe(
    Effect.map((text) => {
      if (text === undefined) return tooLarge()
      if (text === "") return withBody(request, text, null)
      if (type !== undefined && !type.toLowerCase().includes("application/json"))
        return refuse(415, "ApprovalServer.BodyNotJson", "Request bodies are JSON (Content-Type: application/json).")
      if (nestedDeeperThan(text, MAX_BODY_DEPTH))
        return refuse(
          400,
          "ApprovalServer.BodyTooDeep",
          `The request body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels, the most this server reads.`,
        )
      try {
        return withBody(request, text, JSON.parse(text))
      } catch {
        return refuse(400, "ApprovalServer.BodyNotJson", "The request body is not valid JSON.")
      }
    }),
    // The client went away mid-body: it reads no answer.
    Effect.catchAll(() =>
      Effect.succeed(refuse(400, "ApprovalServer.BodyNotJson", "The request body could not be read whole.")),
    ),
  )
}

/**
 * Why a request is refused before routing, or `undefined` when it may go on. `hosts` are the host names this server
 * answers to besides the loopback names (the bound host when it is not loopback).
 *
 * @since 0.3.0
 * @category utilities
 */
export const refusal = (
  headers: Readonly<Record<string, string | undefined>>,
  hosts: ReadonlySet<string>,
): { readonly status: number; readonly tag: string; readonly message: string } | undefined => {
  const host = headers["host"]
  if (host === undefined || !(LOOPBACK_NAMES.has(hostName(host)) || hosts.has(hostName(host))))
    return {
      status: 421,
      tag: "ApprovalServer.HostRefused",
      message: `This approval server does not answer to the host ${JSON.stringify(host ?? "")}.`,
    }
  const origin = headers["origin"]
  const site = headers["sec-fetch-site"]
  const crossOrigin =
    (origin !== undefined && origin.toLowerCase() !== `http://${host.toLowerCase()}`) ||
    (site !== undefined && site !== "same-origin" && site !== "none")
  if (crossOrigin)
    return {
      status: 403,
      tag: "ApprovalServer.CrossOriginRefused",
      message: "Cross-origin requests are refused: use the approval page this server serves, or a non-browser client.",
    }
  return undefined
}

/**
 * The middleware the server wraps the API in: refuses a foreign host or a cross-origin request, bounds the body
 * (`MAX_BODY_BYTES`, `MAX_BODY_DEPTH`), and adds the security headers to every response.
 *
 * @since 0.3.0
 * @category utilities
 */
export const middleware =
  (hosts: ReadonlySet<string>) =>
  (app: HttpApp.Default): HttpApp.Default =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const refused = refusal(request.headers, hosts)
      if (refused !== undefined) return Effect.succeed(refuse(refused.status, refused.tag, refused.message))
      return Effect.flatMap(boundBody(request), (read) =>
        HttpServerResponse.isServerResponse(read)
          ? Effect.succeed(read)
          : // The response is written inside `app`: the headers go in as a pre-response handler.
            Effect.zipRight(
              HttpApp.appendPreResponseHandler((_request, response) =>
                Effect.succeed(HttpServerResponse.setHeaders(response, SECURITY_HEADERS)),
              ),
              Effect.provideService(app, HttpServerRequest.HttpServerRequest, read),
            ),
      )
    })
