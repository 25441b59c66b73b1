/**
 * WebAddress: the canonical form of URLs (the webfetch permission resource) and the classification of the
 * addresses a host resolves to. The attacks through the tool are in trust/webfetch.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck } from "effect"
import { WebAddress } from "../src/index.js"

const href = (raw: string, base?: string) =>
  Either.match(WebAddress.canonical(raw, base), { onLeft: (error) => `! ${error.reason}`, onRight: (url) => url.href })

describe("WebAddress.canonical", () => {
  it("writes every spelling of one address the same way", () => {
    const table: ReadonlyArray<readonly [string, string]> = [
      ["http://127.1/", "http://127.0.0.1/"],
      ["http://2130706433/", "http://127.0.0.1/"],
      ["http://0x7f000001/", "http://127.0.0.1/"],
      ["http://0177.0.0.1/", "http://127.0.0.1/"],
      ["http://0x7f.1/", "http://127.0.0.1/"],
      ["http://127.0.0.1.:80/", "http://127.0.0.1/"],
      ["HTTP://LOCALHOST/", "http://localhost/"],
      ["http://localhost../a", "http://localhost/a"],
      ["http://%6c%6fcalhost/", "http://localhost/"],
      ["http://[::ffff:127.0.0.1]/", "http://127.0.0.1/"],
      ["http://[::FFFF:7F00:1]:8080/", "http://127.0.0.1:8080/"],
      ["http://[0:0:0:0:0:0:0:1]:80/", "http://[::1]/"],
      ["https://Example.COM:443/A/./b/../c?q=1#frag", "https://example.com/A/c?q=1"],
      ["http://h/public/../private", "http://h/private"],
      ["http://h/public/%2e%2E/private", "http://h/private"],
      ["http://h/public\\..\\private", "http://h/private"],
      ["http://h/%70ublic/%7euser/%2a%2f", "http://h/public/~user/%2A%2F"],
      ["http://h/a?x=%7e%41&y=%2f", "http://h/a?x=~A&y=%2F"],
      ["http://h", "http://h/"],
    ]
    for (const [raw, canonical] of table) expect(href(raw), raw).toBe(canonical)
    expect(href("../b", "http://h/a/c")).toBe("http://h/b")
    expect(href("//other.example/x", "https://h/")).toBe("https://other.example/x")
  })

  it("refuses what cannot be a webfetch target, naming the reason", () => {
    const table: ReadonlyArray<readonly [string, WebAddress.InvalidReason]> = [
      ["not a url", "syntax"],
      ["file:///etc/passwd", "scheme"],
      ["ftp://h/", "scheme"],
      ["javascript:alert(1)", "scheme"],
      ["http://user@h/", "credentials"],
      ["http://user:pass@h/", "credentials"],
      ["http://:p@h/", "credentials"],
      ["http://./", "host"],
      ["http://h/a/..%2fb", "dot_segment"],
      ["http://h/a/%2e%2e%5Cb", "dot_segment"],
      ["http://h/a/..;/b", "dot_segment"],
      ["http://h/a/.;x/b", "dot_segment"],
    ]
    for (const [raw, reason] of table) expect(href(raw), raw).toBe(`! ${reason}`)
    // An encoded slash alone is kept (some APIs use it in names).
    expect(href("http://h/projects/group%2fname")).toBe("http://h/projects/group%2Fname")
  })

  it("reports the host to resolve without brackets, and whether it is an IP literal", () => {
    expect(Either.getOrThrow(WebAddress.canonical("http://[::1]:8080/x"))).toEqual({
      href: "http://[::1]:8080/x",
      origin: "http://[::1]:8080",
      hostname: "::1",
      literal: true,
    })
    expect(Either.getOrThrow(WebAddress.canonical("https://Docs.Example./x"))).toMatchObject({
      origin: "https://docs.example",
      hostname: "docs.example",
      literal: false,
    })
  })

  it("is idempotent: the canonical form of a canonical URL is itself (property)", () => {
    const part = FastCheck.constantFrom("a", "A", ".", "..", "%2e", "%2E", "%41", "%7e", "%2f", "x;y", "", "~", "%25")
    const host = FastCheck.constantFrom(
      "h",
      "H.",
      "127.1",
      "0x7f000001",
      "[::ffff:127.0.0.1]",
      "[::1]",
      "xn--bcher-kva",
    )
    FastCheck.assert(
      FastCheck.property(host, FastCheck.array(part, { maxLength: 5 }), (h, parts) => {
        const once = WebAddress.canonical(`http://${h}/${parts.join("/")}`)
        if (Either.isLeft(once)) return
        expect(href(once.right.href)).toBe(once.right.href)
      }),
      { numRuns: 300 },
    )
  })
})

describe("WebAddress.classify", () => {
  it("names the range of each address; only ordinary unicast is public", () => {
    const table: ReadonlyArray<readonly [string, string]> = [
      ["8.8.8.8", "public"],
      ["2606:4700:4700::1111", "public"],
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["::1", "loopback"],
      ["::ffff:127.0.0.1", "loopback"],
      ["10.1.2.3", "private"],
      ["172.31.0.1", "private"],
      ["192.168.1.1", "private"],
      ["::ffff:192.168.1.1", "private"],
      ["169.254.1.1", "linkLocal"],
      ["fe80::1", "linkLocal"],
      ["fd12:3456::1", "uniqueLocal"],
      ["169.254.169.254", "metadata"],
      ["fd00:ec2::254", "metadata"],
      ["100.100.100.200", "metadata"],
      ["168.63.129.16", "metadata"],
      ["0.0.0.0", "unspecified"],
      ["::", "unspecified"],
      ["100.64.0.1", "carrierGradeNat"],
      ["224.0.0.1", "multicast"],
      ["240.0.0.1", "reserved"],
      ["64:ff9b::7f00:1", "loopback"],
      ["64:ff9b::808:808", "public"],
      ["2002:7f00:1::1", "6to4"],
      ["not-an-address", "invalid"],
    ]
    for (const [address, range] of table) expect(WebAddress.classify(address), address).toBe(range)
    expect(WebAddress.isPrivate("127.0.0.1")).toBe(true)
    expect(WebAddress.isPrivate("8.8.8.8")).toBe(false)
    expect(WebAddress.isPrivate("example.com")).toBe(true)
  })
})

describe("WebAddress.addressesOf", () => {
  it.effect("uses an IP literal as is and asks the resolver only for names", () =>
    Effect.gen(function* () {
      const names: Array<string> = []
      const resolver: WebAddress.ResolverInterface = {
        resolve: (hostname) =>
          Effect.sync(() => {
            names.push(hostname)
            return [{ address: "10.0.0.1", family: 4 as const }]
          }),
      }
      const literal = Either.getOrThrow(WebAddress.canonical("http://[::1]/"))
      expect(yield* WebAddress.addressesOf(resolver, literal)).toEqual([{ address: "::1", family: 6 }])
      const name = Either.getOrThrow(WebAddress.canonical("http://Intranet./"))
      expect(yield* WebAddress.addressesOf(resolver, name)).toEqual([{ address: "10.0.0.1", family: 4 }])
      expect(names).toEqual(["intranet"])
    }),
  )

  it.effect("the system resolver answers localhost (from the hosts file) with loopback", () =>
    Effect.gen(function* () {
      const local = yield* WebAddress.systemResolver.resolve("localhost")
      expect(local.length).toBeGreaterThan(0)
      expect(local.every(({ address }) => WebAddress.classify(address) === "loopback")).toBe(true)
    }),
  )
})
