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
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
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
 * The middleware the server wraps the API in: refuses a foreign host or a cross-origin request, and adds the
 * security headers to every response.
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
      // The response is written inside `app`: the headers go in as a pre-response handler.
      return Effect.zipRight(
        HttpApp.appendPreResponseHandler((_request, response) =>
          Effect.succeed(HttpServerResponse.setHeaders(response, SECURITY_HEADERS)),
        ),
        app,
      )
    })
