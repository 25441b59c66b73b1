/**
 * Web addresses as permission resources, and the network addresses they reach. `canonical` turns a URL into the
 * one spelling rules are matched against (so `http://127.1/` and `http://0x7f000001/` are both
 * `http://127.0.0.1/`), `classify` says whether an IP address is public or belongs to a loopback, private,
 * link-local, unique-local, metadata or other special range (by `ipaddr.js`), and `pinnedLookup` makes a socket
 * connect to exactly the addresses that were classified. See docs/trust/webfetch.md.
 *
 * @since 0.2.0
 */
import * as dns from "node:dns"
import * as net from "node:net"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import ipaddr from "ipaddr.js"

/**
 * Why a URL was refused: not a URL, not HTTP(S), credentials in it, no host, or a path segment a server could read
 * as `.` or `..` although the URL parser does not (an encoded slash or a `;` parameter next to dots).
 *
 * @since 0.2.0
 * @category models
 */
export const InvalidReason = Schema.Literal("syntax", "scheme", "credentials", "host", "dot_segment")
/**
 * @see InvalidReason
 *
 * @since 0.2.0
 * @category models
 */
export type InvalidReason = typeof InvalidReason.Type

/**
 * A URL that cannot be a webfetch target.
 *
 * @since 0.2.0
 * @category errors
 */
export class InvalidUrlError extends Schema.TaggedError<InvalidUrlError>()("WebAddress.InvalidUrlError", {
  url: Schema.String,
  reason: InvalidReason,
}) {
  override get message(): string {
    return reasonText[this.reason]
  }
}

const reasonText: Record<InvalidReason, string> = {
  syntax: "Invalid URL",
  scheme: "URL must use http:// or https://",
  credentials: "URL must not contain credentials (user:password@)",
  host: "URL has no host",
  dot_segment: "URL path has a segment a server may read as . or .. (encoded slash or ; parameter)",
}

/**
 * A host name could not be resolved to any address.
 *
 * @since 0.2.0
 * @category errors
 */
export class ResolveError extends Schema.TaggedError<ResolveError>()("WebAddress.ResolveError", {
  hostname: Schema.String,
  detail: Schema.String,
}) {
  override get message(): string {
    return `Could not resolve ${this.hostname}: ${this.detail}`
  }
}

/**
 * A URL in canonical form.
 *
 * @since 0.2.0
 * @category models
 */
export interface Canonical {
  /** The canonical serialisation: the permission resource and the URL that is requested. */
  readonly href: string
  /** `scheme://host[:port]` of `href`. */
  readonly origin: string
  /** The host to resolve or connect to, without IPv6 brackets. */
  readonly hostname: string
  /** Whether `hostname` is an IP address (nothing to resolve). */
  readonly literal: boolean
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/
const ESCAPE = /%([0-9A-Fa-f]{2})/g

/** Decodes percent-escapes of unreserved characters and upper-cases the hex digits of every other escape. */
const normaliseEscapes = (text: string): string =>
  text.replace(ESCAPE, (_, hex: string) => {
    const character = String.fromCharCode(Number.parseInt(hex, 16))
    return UNRESERVED.test(character) ? character : `%${hex.toUpperCase()}`
  })

/** True when a segment could be a dot segment to a server that splits on encoded slashes or drops `;` params. */
const hiddenDotSegment = (segment: string): boolean =>
  segment.split(/%2F|%5C/).some((piece) => {
    const name = (piece.split(";", 1)[0] ?? "").replaceAll("%2E", ".")
    return name === "." || name === ".."
  })

const fail = (url: string, reason: InvalidReason) => Either.left(new InvalidUrlError({ url, reason }))

/**
 * The canonical form of `raw`, resolved against `base` when given: the WHATWG serialisation (scheme and host
 * lower-cased, IPv4 in any numeric spelling as a dotted quad, IPv6 compressed in brackets, dot segments and
 * percent-encoded dots resolved, the default port dropped), plus: an IPv4-mapped IPv6 host written as IPv4, trailing
 * dots of a domain removed, escapes of unreserved characters decoded and other escapes upper-cased, and the
 * fragment dropped. Credentials, other schemes and hidden dot segments are refused.
 *
 * @since 0.2.0
 * @category utilities
 */
export const canonical = (raw: string, base?: string): Either.Either<Canonical, InvalidUrlError> => {
  let url: URL
  try {
    url = new URL(raw, base)
  } catch {
    return fail(raw, "syntax")
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return fail(raw, "scheme")
  if (url.username !== "" || url.password !== "") return fail(raw, "credentials")
  url.hash = ""
  let hostname = url.hostname
  if (hostname.startsWith("[")) {
    const address = ipaddr.IPv6.parse(hostname.slice(1, -1))
    hostname = address.isIPv4MappedAddress() ? address.toIPv4Address().toString() : hostname.slice(1, -1)
  } else if (net.isIPv4(hostname) === false) {
    hostname = hostname.replace(/\.+$/, "")
    if (hostname === "") return fail(raw, "host")
  }
  url.hostname = net.isIPv6(hostname) ? `[${hostname}]` : hostname
  // The setters re-run the WHATWG path parser, which resolves any dot segment the decoding produced.
  url.pathname = normaliseEscapes(url.pathname)
  if (url.search !== "") url.search = normaliseEscapes(url.search)
  if (url.pathname.split("/").some(hiddenDotSegment)) return fail(raw, "dot_segment")
  const literal = net.isIP(hostname) !== 0
  return Either.right({ href: url.href, origin: url.origin, hostname, literal })
}

/**
 * The kind of an IP address: `public` for ordinary unicast, `metadata` for cloud instance-metadata endpoints, else
 * the `ipaddr.js` range name (`loopback`, `private`, `linkLocal`, `uniqueLocal`, `unspecified`, `carrierGradeNat`,
 * `reserved`, `multicast`, `6to4`, `teredo`, …). NAT64 addresses (`64:ff9b::/96`) take the kind of the IPv4 address
 * they carry; an IPv4-mapped IPv6 address that of its IPv4 address. Text that is not an address is `invalid`.
 *
 * @since 0.2.0
 * @category models
 */
export type Range = string

/**
 * Instance-metadata endpoints of the large clouds, some of which sit in otherwise public or reserved space.
 *
 * @since 0.2.0
 * @category constants
 */
export const METADATA_ADDRESSES: ReadonlyArray<string> = [
  "169.254.169.254/32",
  "169.254.170.2/32",
  "fd00:ec2::254/128",
  "100.100.100.200/32",
  "192.0.0.192/32",
  "168.63.129.16/32",
]

const metadata = {
  metadata: METADATA_ADDRESSES.map((cidr) => ipaddr.parseCIDR(cidr)),
}

const NAT64 = ipaddr.parseCIDR("64:ff9b::/96")

/**
 * The range of `address` (IPv4 or IPv6 text); text that is not an IP address is `invalid`, which counts as private.
 *
 * @since 0.2.0
 * @category utilities
 */
export const classify = (address: string): Range => {
  if (!ipaddr.isValid(address)) return "invalid"
  let parsed = ipaddr.process(address)
  if (parsed.kind() === "ipv6" && parsed.match(NAT64)) {
    parsed = new ipaddr.IPv4(parsed.toByteArray().slice(12))
  }
  if (ipaddr.subnetMatch(parsed, metadata, "none") === "metadata") return "metadata"
  const range = parsed.range()
  return range === "unicast" ? "public" : range
}

/**
 * Whether `address` is anything but public unicast: loopback, private, link-local, unique-local, metadata and
 * every other special range count as private.
 *
 * @since 0.2.0
 * @category guards
 */
export const isPrivate = (address: string): boolean => classify(address) !== "public"

/**
 * One resolved address.
 *
 * @since 0.2.0
 * @category models
 */
export interface Resolved {
  readonly address: string
  readonly family: 4 | 6
}

/**
 * Resolves a host name to every address it has (in the resolver's order).
 *
 * @since 0.2.0
 * @category models
 */
export interface ResolverInterface {
  readonly resolve: (hostname: string) => Effect.Effect<ReadonlyArray<Resolved>, ResolveError>
}

/**
 * The operating system's resolver (`dns.lookup` with every address, in the system's order).
 *
 * @since 0.2.0
 * @category utilities
 */
export const systemResolver: ResolverInterface = {
  resolve: (hostname) =>
    Effect.async<ReadonlyArray<Resolved>, ResolveError>((resume) => {
      dns.lookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
        if (error !== null) resume(Effect.fail(new ResolveError({ hostname, detail: error.code ?? error.message })))
        else if (addresses.length === 0) resume(Effect.fail(new ResolveError({ hostname, detail: "no address" })))
        else resume(Effect.succeed(addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }))))
      })
    }),
}

/**
 * The resolver webfetch uses; the system resolver unless a layer provides another (tests map names to loopback).
 * Whatever it answers is classified and connected to as is.
 *
 * @since 0.2.0
 * @category tags
 */
export class Resolver extends Context.Reference<Resolver>()("@toolgate/WebAddress/Resolver", {
  defaultValue: (): ResolverInterface => systemResolver,
}) {}

/**
 * The addresses of `target`: the literal itself, or what `resolver` answers for its host name.
 *
 * @since 0.2.0
 * @category utilities
 */
export const addressesOf = (
  resolver: ResolverInterface,
  target: Canonical,
): Effect.Effect<ReadonlyArray<Resolved>, ResolveError> =>
  target.literal
    ? Effect.succeed([{ address: target.hostname, family: net.isIPv6(target.hostname) ? 6 : 4 }])
    : resolver.resolve(target.hostname)

/**
 * A `lookup` for sockets that answers every host name with exactly `addresses` (in both callback forms), so the
 * connection goes to the addresses that were checked and a second DNS answer can never change it.
 *
 * @since 0.2.0
 * @category utilities
 */
export const pinnedLookup =
  (addresses: ReadonlyArray<Resolved>): net.LookupFunction =>
  (_hostname, options, callback) => {
    const family =
      options.family === 4 || options.family === "IPv4"
        ? 4
        : options.family === 6 || options.family === "IPv6"
          ? 6
          : undefined
    const usable = family === undefined ? addresses : addresses.filter((entry) => entry.family === family)
    if (usable.length === 0) {
      const error: NodeJS.ErrnoException = new Error("No checked address of the requested family")
      error.code = "ENOTFOUND"
      callback(error, "", 0)
      return
    }
    if (options.all === true) {
      ;(callback as unknown as (error: null, all: ReadonlyArray<dns.LookupAddress>) => void)(
        null,
        usable.map(({ address, family }) => ({ address, family })),
      )
      return
    }
    callback(null, usable[0]!.address, usable[0]!.family)
  }
