/**
 * The egress proxy's decision logic (world/egress/internal/decision.ts) against a scripted permission service and
 * resolver: how proxy request targets become `net:<host>:<port>`, what is asked in which order, that a refused name
 * is never resolved, how each refusal maps to the client's answer, and that a call decides each destination once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck, Fiber } from "effect"
import { PermissionV2, WebAddress, WebFetchTool } from "../src/index.js"
import { EgressProxy } from "../src/entry/egress.js"
import * as Decision from "../src/world/egress/internal/decision.js"

type Outcome = "allow" | "deny" | "correct" | "decline" | "hang"

/** A permission service answering each assert by its first resource, and recording every input. */
const scripted = (answer: (resource: string) => Outcome) => {
  const asserts: Array<PermissionV2.AssertInput> = []
  const permission: Pick<PermissionV2.Interface, "assert"> = {
    assert: (input) =>
      Effect.suspend((): Effect.Effect<void, PermissionV2.BlockedError | PermissionV2.CorrectedError> => {
        asserts.push(input)
        switch (answer(input.resources[0]!)) {
          case "allow":
            return Effect.void
          case "deny":
            return Effect.fail(new PermissionV2.BlockedError({ rules: [], action: input.action, resources: [] }))
          case "correct":
            return Effect.fail(new PermissionV2.CorrectedError({ feedback: "use the mirror" }))
          case "decline":
            return Effect.die(new PermissionV2.DeclinedError())
          case "hang":
            return Effect.never
        }
      }),
  }
  return { permission, asserts }
}

/** A resolver with fixed answers that records what it was asked. */
const resolver = (table: Record<string, ReadonlyArray<string>>) => {
  const asked: Array<string> = []
  const service: WebAddress.ResolverInterface = {
    resolve: (hostname) =>
      Effect.suspend(() => {
        asked.push(hostname)
        const addresses = table[hostname]
        return addresses === undefined
          ? Effect.fail(new WebAddress.ResolveError({ hostname, detail: "ENOTFOUND" }))
          : Effect.succeed(addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }) as const))
      }),
  }
  return { service, asked }
}

const caller = {
  sessionID: "ses_egress",
  agent: "build",
  source: { type: "tool" as const, messageID: "msg_1", callID: "call_1" },
}

const target = (authority: string, defaultPort?: number) =>
  Either.getOrThrow(Decision.parseAuthority(authority, defaultPort))

describe("request targets", () => {
  it.each([
    ["example.com:443", "net:example.com:443"],
    ["EXAMPLE.com.:443", "net:example.com:443"],
    ["127.1:80", "net:127.0.0.1:80"],
    ["0x7f000001:8080", "net:127.0.0.1:8080"],
    ["2130706433:1", "net:127.0.0.1:1"],
    ["[::ffff:127.0.0.1]:22", "net:127.0.0.1:22"],
    ["[0:0:0:0:0:0:0:1]:443", "net:[::1]:443"],
    ["bücher.example:443", "net:xn--bcher-kva.example:443"],
  ])("CONNECT %s is %s", (authority, resource) => {
    expect(Decision.resourceOf(target(authority))).toBe(resource)
  })

  it.each([
    ["example.com", "no port"],
    ["example.com:0", "port out of range"],
    ["example.com:65536", "port out of range"],
    ["user@example.com:443", "not a host:port"],
    ["example.com/x:443", "not a host:port"],
    ["exa mple.com:443", "not a host:port"],
    ["exa%6dple.com:443", "not a host:port"],
    ["[not-ipv6]:443", "not a host:port"],
    ["", "not a host:port"],
  ])("CONNECT %j is refused (%s)", (authority, reason) => {
    const parsed = Decision.parseAuthority(authority)
    expect(Either.isLeft(parsed) && parsed.left).toContain(reason)
  })

  it("absolute-form requests keep their path and query as written and drop the fragment", () => {
    const parse = (url: string) => Either.getOrThrow(Decision.parseAbsolute(url))
    expect(parse("HTTP://Example.COM/a/../b?x=1#frag")).toEqual({
      target: { host: "example.com", port: 80, literal: false },
      path: "/a/../b?x=1",
    })
    expect(parse("http://127.0.0.1:8080")).toEqual({
      target: { host: "127.0.0.1", port: 8080, literal: true },
      path: "/",
    })
    expect(parse("http://h?q").path).toBe("/?q")
    for (const [url, reason] of [
      ["/origin-form", "absolute http:// URL"],
      ["https://example.com/", "use CONNECT"],
      ["ftp://example.com/", "not proxied"],
      ["http://user:pass@example.com/", "credentials"],
    ] as const) {
      const parsed = Decision.parseAbsolute(url)
      expect(Either.isLeft(parsed) && parsed.left).toContain(reason)
    }
  })

  it("every spelling of a domain (case, trailing dots) is one resource", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.boolean(), { minLength: 11, maxLength: 11 }),
        FastCheck.nat({ max: 3 }),
        FastCheck.integer({ min: 1, max: 65535 }),
        (upper, dots, port) => {
          const host = [..."example.org"].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join("") + ".".repeat(dots)
          expect(Decision.resourceOf(target(`${host}:${port}`))).toBe(`net:example.org:${port}`)
        },
      ),
    )
  })

  it("the public resource helper and constants match webfetch's", () => {
    expect(EgressProxy.resource("::1", 443)).toBe("net:[::1]:443")
    expect(EgressProxy.resource("Localhost.", 3000)).toBe("net:localhost:3000")
    expect(EgressProxy.resource("a/b", 1)).toBeUndefined()
    expect(EgressProxy.ACTION).toBe(WebFetchTool.name)
    expect(EgressProxy.PRIVATE_PREFIX).toBe(WebFetchTool.PRIVATE_PREFIX)
    expect(PermissionV2.EXPLICIT_RESOURCE_PREFIXES).toContain(EgressProxy.PRIVATE_PREFIX)
  })
})

const asker = (permission: Pick<PermissionV2.Interface, "assert">, service: WebAddress.ResolverInterface) => ({
  permission,
  caller,
  resolver: service,
  metadata: { command: "npm install" },
})

describe("decide", () => {
  it.effect("a public name: net: is asked, then the name resolved; nothing private is asked", () =>
    Effect.gen(function* () {
      const { permission, asserts } = scripted(() => "allow")
      const dns = resolver({ "registry.example": ["93.184.216.34"] })
      const verdict = yield* Decision.decide(
        asker(permission, dns.service),
        target("registry.example:443"),
        "CONNECT x",
      )
      expect(verdict).toEqual({
        _tag: "allowed",
        addresses: [{ address: "93.184.216.34", family: 4 }],
        private: false,
      })
      expect(asserts).toEqual([
        {
          action: "webfetch",
          resources: ["net:registry.example:443"],
          save: ["net:registry.example:443"],
          metadata: { command: "npm install", host: "registry.example", port: 443, request: "CONNECT x" },
          ...caller,
        },
      ])
      expect(dns.asked).toEqual(["registry.example"])
    }),
  )

  it.effect("a name with a non-public address: private:net: is asked after net:, with the addresses", () =>
    Effect.gen(function* () {
      const { permission, asserts } = scripted(() => "allow")
      const dns = resolver({ "db.internal": ["10.0.0.5", "93.184.216.34"] })
      const verdict = yield* Decision.decide(asker(permission, dns.service), target("db.internal:5432"), "CONNECT x")
      expect(verdict).toMatchObject({ _tag: "allowed", private: true })
      expect(asserts.map((input) => input.resources)).toEqual([
        ["net:db.internal:5432"],
        ["private:net:db.internal:5432"],
      ])
      expect(asserts[1]!.save).toEqual(["private:net:db.internal:5432"])
      expect(asserts[1]!.metadata).toMatchObject({ addresses: [{ address: "10.0.0.5", range: "private" }] })
    }),
  )

  it.effect("an address literal needs no resolution: one ask with both resources when it is private", () =>
    Effect.gen(function* () {
      const { permission, asserts } = scripted(() => "allow")
      const dns = resolver({})
      yield* Decision.decide(asker(permission, dns.service), target("[fd00:ec2::254]:80"), "GET x")
      yield* Decision.decide(asker(permission, dns.service), target("93.184.216.34:443"), "CONNECT x")
      expect(asserts.map((input) => input.resources)).toEqual([
        ["net:[fd00:ec2::254]:80", "private:net:[fd00:ec2::254]:80"],
        ["net:93.184.216.34:443"],
      ])
      expect(asserts[0]!.metadata).toMatchObject({ addresses: [{ address: "fd00:ec2::254", range: "metadata" }] })
      expect(dns.asked).toEqual([])
    }),
  )

  it.effect("each refusal maps to its answer; a name refused as net: is never resolved", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [Outcome, Decision.Refusal, string]> = [
        ["deny", "denied", "denied by the permission rules"],
        ["correct", "rejected", "rejected by the user: use the mirror"],
        ["decline", "declined", "rejected by the user"],
      ]
      for (const [outcome, reason, detail] of cases) {
        const { permission } = scripted(() => outcome)
        const dns = resolver({ "secret-in-a-name.example": ["93.184.216.34"] })
        const verdict = yield* Decision.decide(
          asker(permission, dns.service),
          target("secret-in-a-name.example:443"),
          "CONNECT x",
        )
        expect(verdict).toEqual({ _tag: "refused", reason, status: 403, detail })
        expect(dns.asked).toEqual([])
      }
    }),
  )

  it.effect("a private: refusal after an allowed net: refuses the destination", () =>
    Effect.gen(function* () {
      const { permission } = scripted((resource) => (resource.startsWith("private:") ? "deny" : "allow"))
      const dns = resolver({ intranet: ["192.168.1.10"] })
      const verdict = yield* Decision.decide(asker(permission, dns.service), target("intranet:80"), "GET x")
      expect(verdict).toMatchObject({ _tag: "refused", reason: "denied" })
    }),
  )

  it.effect("a name that does not resolve is a 502 with the resolver's reason", () =>
    Effect.gen(function* () {
      const { permission } = scripted(() => "allow")
      const verdict = yield* Decision.decide(
        asker(permission, resolver({}).service),
        target("nowhere.example:443"),
        "CONNECT x",
      )
      expect(verdict).toEqual({
        _tag: "refused",
        reason: "unresolvable",
        status: 502,
        detail: "Could not resolve nowhere.example: ENOTFOUND",
      })
    }),
  )

  it.effect("any other defect is not swallowed", () =>
    Effect.gen(function* () {
      const permission: Pick<PermissionV2.Interface, "assert"> = { assert: () => Effect.die(new Error("boom")) }
      const exit = yield* Effect.exit(
        Decision.decide(asker(permission, resolver({}).service), target("a.example:1"), "x"),
      )
      expect(exit._tag).toBe("Failure")
    }),
  )
})

describe("memo", () => {
  it.effect("concurrent requests for one destination share one ask; the verdict lasts the call", () =>
    Effect.gen(function* () {
      const { permission, asserts } = scripted(() => "allow")
      const memo = yield* Decision.memo(asker(permission, resolver({ "a.example": ["93.184.216.34"] }).service))
      const verdicts = yield* Effect.all(
        Array.from({ length: 8 }, () => memo.verdict(target("A.example:443"), "CONNECT a.example:443")),
        { concurrency: "unbounded" },
      )
      expect(new Set(verdicts.map((verdict) => verdict._tag))).toEqual(new Set(["allowed"]))
      yield* memo.verdict(target("a.example:443"), "again")
      expect(asserts.length).toBe(1)
      // Another port is another destination.
      yield* memo.verdict(target("a.example:80", 80), "GET")
      expect(asserts.length).toBe(2)
      expect(memo.decisions().map((decision) => decision.resource)).toEqual(["net:a.example:443", "net:a.example:80"])
    }),
  )

  it.effect("after a reject without a message, new destinations are refused without asking", () =>
    Effect.gen(function* () {
      const { permission, asserts } = scripted((resource) => (resource.includes("first") ? "decline" : "allow"))
      const memo = yield* Decision.memo(asker(permission, resolver({}).service))
      const waiting = yield* Effect.fork(memo.declined)
      const first = yield* memo.verdict(target("first.example:443"), "x")
      yield* Fiber.join(waiting)
      const second = yield* memo.verdict(target("9.9.9.9:443"), "x")
      expect([first, second]).toMatchObject([
        { _tag: "refused", reason: "declined", detail: "rejected by the user" },
        { _tag: "refused", reason: "declined", detail: "rejected by the user earlier in this call" },
      ])
      expect(asserts.length).toBe(1)
    }),
  )

  it.effect("interrupting the deciding request interrupts those waiting on the same ask", () =>
    Effect.gen(function* () {
      const { permission } = scripted(() => "hang")
      const memo = yield* Decision.memo(asker(permission, resolver({}).service))
      const first = yield* Effect.fork(memo.verdict(target("9.9.9.9:443"), "x"))
      yield* Effect.yieldNow()
      const second = yield* Effect.fork(memo.verdict(target("9.9.9.9:443"), "x"))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(first)
      const exit = yield* Fiber.await(second)
      expect(exit._tag).toBe("Failure")
      expect(memo.decisions()).toEqual([])
    }),
  )
})

describe("note", () => {
  it("lists refused destinations with their reasons, and nothing when all were allowed", () => {
    const allowed = { resource: "net:a:443", outcome: "allowed", private: false, detail: "allowed" } as const
    expect(EgressProxy.note([allowed])).toBeUndefined()
    const note = EgressProxy.note([
      allowed,
      { resource: "net:b:80", outcome: "denied", private: false, detail: "denied by the permission rules" },
    ])
    expect(note).toContain("refused: net:b:80 (denied by the permission rules).")
    expect(note).toContain("webfetch permission rule on net:<host>:<port>")
  })
})
