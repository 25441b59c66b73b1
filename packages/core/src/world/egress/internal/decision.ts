/**
 * What the egress proxy decides for one destination: the target parsed from a proxy request, its permission
 * resource `net:<host>:<port>`, and the verdict — PermissionV2 on the resource (allow / deny / ask), then, for a
 * host that resolves (once) to a non-public address, on `private:net:<host>:<port>`. An allowed verdict carries the
 * addresses that were classified; the proxy connects to exactly those. Verdicts are kept for the rest of the call.
 *
 * @since 0.3.0
 */
import * as net from "node:net"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import type * as SessionV2 from "../../../place/session.js"
import * as PermissionV2 from "../../../permission/permission.js"
import * as Wildcard from "../../../values/wildcard.js"
import * as WebAddress from "../../web-address.js"

/**
 * The permission action of egress (the one webfetch asks with).
 *
 * @since 0.3.0
 * @category constants
 */
export const ACTION = "webfetch"
/**
 * The prefix of an egress resource.
 *
 * @since 0.3.0
 * @category constants
 */
export const NET_PREFIX: typeof PermissionV2.NET_PREFIX = PermissionV2.NET_PREFIX
/**
 * The prefix a non-public destination needs on top (as webfetch's).
 *
 * @since 0.3.0
 * @category constants
 */
export const PRIVATE_PREFIX: typeof PermissionV2.PRIVATE_PREFIX = PermissionV2.PRIVATE_PREFIX

/**
 * A destination: a canonical host (IPv6 without brackets) and a port.
 *
 * @since 0.3.0
 * @category models
 */
export interface Target {
  readonly host: string
  readonly port: number
  /** The host is an IP address (nothing to resolve). */
  readonly literal: boolean
}

/**
 * `host:port`, the IPv6 host in brackets.
 *
 * @since 0.3.0
 * @category utilities
 */
export const authorityOf = (target: Pick<Target, "host" | "port">): string =>
  `${net.isIPv6(target.host) ? `[${target.host}]` : target.host}:${target.port}`

/**
 * The `Host` header for `target`: the authority without the default port 80.
 *
 * @since 0.3.0
 * @category utilities
 */
export const hostHeaderOf = (target: Pick<Target, "host" | "port">): string => {
  const host = net.isIPv6(target.host) ? `[${target.host}]` : target.host
  return target.port === 80 ? host : `${host}:${target.port}`
}

/**
 * `net:<host>:<port>`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const resourceOf = (target: Pick<Target, "host" | "port">): string => `${NET_PREFIX}${authorityOf(target)}`

const AUTHORITY = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s/?#@[\]:\\%]+))(?::([0-9]{1,5}))?$/

/**
 * The target of `authority` (`host[:port]`, IPv6 in brackets), the host canonicalised as `WebAddress.canonical`
 * does (lower case, every IPv4 spelling as a dotted quad, IPv4-mapped IPv6 as IPv4, trailing dots dropped, IDN as
 * punycode). `defaultPort` applies when no port is written; `undefined` makes the port required.
 *
 * @since 0.3.0
 * @category utilities
 */
export const parseAuthority = (authority: string, defaultPort?: number): Either.Either<Target, string> => {
  const match = AUTHORITY.exec(authority)
  if (match === null) return Either.left(`not a host:port: ${JSON.stringify(authority)}`)
  const port = match[3] === undefined ? defaultPort : Number(match[3])
  if (port === undefined) return Either.left(`no port in ${JSON.stringify(authority)}`)
  if (!Number.isInteger(port) || port < 1 || port > 65535) return Either.left(`port out of range in ${authority}`)
  const host = match[1] === undefined ? match[2]! : `[${match[1]}]`
  let canonical: WebAddress.Canonical
  try {
    const parsed = WebAddress.canonical(`http://${host}/`)
    if (Either.isLeft(parsed)) return Either.left(`invalid host ${JSON.stringify(host)}: ${parsed.left.message}`)
    canonical = parsed.right
  } catch {
    return Either.left(`invalid host ${JSON.stringify(host)}`)
  }
  return Either.right({ host: canonical.hostname, port, literal: canonical.literal })
}

/**
 * An absolute-form `http://` request target: where it goes and the path (with query) to send, as written.
 *
 * @since 0.3.0
 * @category models
 */
export interface Absolute {
  readonly target: Target
  readonly path: string
}

/**
 * Parses the request target of a plain (non-CONNECT) proxy request; only `http://` absolute URLs are accepted.
 *
 * @since 0.3.0
 * @category utilities
 */
export const parseAbsolute = (url: string): Either.Either<Absolute, string> => {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)
  if (scheme === null) return Either.left("a proxy request needs an absolute http:// URL")
  if (scheme[1]!.toLowerCase() !== "http") {
    return Either.left(`${scheme[1]!.toLowerCase()}:// is not proxied as a plain request (use CONNECT for https)`)
  }
  const rest = url.slice(scheme[0].length)
  const end = rest.search(/[/?#]/)
  const authority = end === -1 ? rest : rest.slice(0, end)
  if (authority.includes("@")) return Either.left("credentials in a proxied URL are refused")
  const tail = end === -1 ? "" : rest.slice(end).replace(/#.*$/s, "")
  const path = tail === "" ? "/" : tail.startsWith("?") ? `/${tail}` : tail
  return Either.map(parseAuthority(authority, 80), (target) => ({ target, path }))
}

/**
 * Why a destination is refused.
 *
 * @since 0.3.0
 * @category models
 */
export type Refusal = "denied" | "rejected" | "declined" | "timed_out" | "unresolvable" | "no_session"

/**
 * The verdict on a destination.
 *
 * @since 0.3.0
 * @category models
 */
export type Verdict =
  | { readonly _tag: "allowed"; readonly addresses: ReadonlyArray<WebAddress.Resolved>; readonly private: boolean }
  | {
      readonly _tag: "refused"
      readonly reason: Refusal
      /** 403 for a permission refusal, 502 when the name does not resolve. */
      readonly status: 403 | 502
      /** Short and model-visible: why, in words. */
      readonly detail: string
    }

/**
 * The caller fields of `PermissionV2.fromToolCall`: the asks go to this session and agent, about this call.
 *
 * @since 0.3.0
 * @category models
 */
export type Caller = Pick<PermissionV2.AssertInput, "sessionID" | "agent" | "source">

/**
 * What deciding needs: the permission service, the caller, the resolver, and metadata added to every ask.
 *
 * @since 0.3.0
 * @category models
 */
export interface Asker {
  readonly permission: Pick<PermissionV2.Interface, "assert">
  readonly caller: Caller
  readonly resolver: WebAddress.ResolverInterface
  readonly metadata: Readonly<Record<string, unknown>>
}

const refused = (reason: Refusal, detail: string, status: 403 | 502 = 403): Verdict => ({
  _tag: "refused",
  reason,
  status,
  detail,
})

/**
 * The verdict on `target`, asked about `request` (the request line, for the prompt). A name is resolved only after
 * `net:` was allowed, so a refused name is never looked up.
 *
 * @since 0.3.0
 * @category utilities
 */
export const decide = (asker: Asker, target: Target, request: string): Effect.Effect<Verdict> => {
  const resource = resourceOf(target)
  const privateResource = `${PRIVATE_PREFIX}${resource}`
  const metadata = { ...asker.metadata, host: target.host, port: target.port, request }
  const assert = (resources: ReadonlyArray<string>, extra: Record<string, unknown>) =>
    asker.permission.assert({
      action: ACTION,
      resources,
      save: resources.map(Wildcard.literal),
      metadata: { ...metadata, ...extra },
      ...asker.caller,
    })
  const special = (addresses: ReadonlyArray<WebAddress.Resolved>) =>
    addresses
      .map(({ address }) => ({ address, range: WebAddress.classify(address) }))
      .filter(({ range }) => range !== "public")

  const evaluate: Effect.Effect<Verdict, PermissionV2.Error | WebAddress.ResolveError | SessionV2.NotFoundError> =
    target.literal
      ? Effect.suspend(() => {
          // Nothing to resolve: both resources in one ask.
          const addresses = [{ address: target.host, family: net.isIPv6(target.host) ? 6 : 4 } as const]
          const ranges = special(addresses)
          const resources = ranges.length > 0 ? [resource, privateResource] : [resource]
          return Effect.as(assert(resources, ranges.length > 0 ? { addresses: ranges } : {}), {
            _tag: "allowed",
            addresses,
            private: ranges.length > 0,
          } satisfies Verdict)
        })
      : Effect.gen(function* () {
          yield* assert([resource], {})
          const addresses = yield* asker.resolver.resolve(target.host)
          const ranges = special(addresses)
          if (ranges.length > 0) yield* assert([privateResource], { addresses: ranges })
          return { _tag: "allowed", addresses, private: ranges.length > 0 } satisfies Verdict
        })

  return evaluate.pipe(
    Effect.catchTags({
      "PermissionV2.BlockedError": () => Effect.succeed(refused("denied", "denied by the permission rules")),
      "PermissionV2.CorrectedError": (error) =>
        Effect.succeed(refused("rejected", `rejected by the user: ${error.feedback}`)),
      "Approvals.TimedOutError": (error) => Effect.succeed(refused("timed_out", error.message)),
      // A hook that failed refuses the destination (fails closed), naming the hook.
      "Hooks.HookError": (error) => Effect.succeed(refused("denied", error.message)),
      "WebAddress.ResolveError": (error) => Effect.succeed(refused("unresolvable", error.message, 502)),
      "Session.NotFoundError": () => Effect.succeed(refused("no_session", "the session of this call does not exist")),
    }),
    // A reject without a message arrives as a defect; here it refuses the destination, and the proxy reports it.
    Effect.catchSomeDefect((defect) =>
      defect instanceof PermissionV2.DeclinedError
        ? Option.some(Effect.succeed(refused("declined", "rejected by the user")))
        : Option.none(),
    ),
  )
}

/**
 * One destination decided during the call.
 *
 * @since 0.3.0
 * @category models
 */
export interface Decision {
  readonly resource: string
  readonly verdict: Verdict
}

/**
 * The verdicts of one call: each destination decided once, concurrent requests for it waiting on the same ask.
 *
 * @since 0.3.0
 * @category models
 */
export interface Memo {
  readonly verdict: (target: Target, request: string) => Effect.Effect<Verdict>
  readonly decisions: () => ReadonlyArray<Decision>
  /** Completes once the user rejected an ask without a message; later new destinations are refused unasked. */
  readonly declined: Effect.Effect<void>
}

/**
 * A fresh memo over `asker`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const memo = (asker: Asker): Effect.Effect<Memo> =>
  Effect.gen(function* () {
    const declined = yield* Deferred.make<void>()
    const pending = new Map<string, Deferred.Deferred<Verdict>>()
    const settled: Array<Decision> = []
    const verdict = (target: Target, request: string): Effect.Effect<Verdict> =>
      Effect.suspend(() => {
        const resource = resourceOf(target)
        const known = pending.get(resource)
        if (known !== undefined) return Deferred.await(known)
        const deferred = Deferred.unsafeMake<Verdict>(FiberId.none)
        pending.set(resource, deferred)
        const run = Effect.flatMap(Deferred.isDone(declined), (stop) =>
          stop
            ? Effect.succeed(refused("declined", "rejected by the user earlier in this call"))
            : decide(asker, target, request),
        )
        return run.pipe(
          Effect.tap((result) =>
            Effect.suspend(() => {
              settled.push({ resource, verdict: result })
              return result._tag === "refused" && result.reason === "declined"
                ? Deferred.succeed(declined, undefined)
                : Effect.void
            }),
          ),
          Effect.exit,
          Effect.flatMap((exit) => Effect.zipRight(Deferred.done(deferred, exit), exit)),
          Effect.onInterrupt(() => Deferred.interrupt(deferred)),
        )
      })
    return { verdict, decisions: () => [...settled], declined: Deferred.await(declined) }
  })
