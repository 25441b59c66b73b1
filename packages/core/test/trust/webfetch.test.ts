/**
 * webfetch against the attacks of an outside pass (see docs/trust/webfetch.md): loopback under other spellings past
 * a deny rule, dot segments past an allow rule, redirects to URLs no rule allows, hosts that resolve to private
 * addresses, a second DNS answer, and a large page that outlived its timeout. Every case runs on a real Location
 * (real PermissionV2 with the built-in agents, SQLite) against real loopback servers whose request logs prove what
 * was fetched; every ask is rejected (with a message) unless the case says otherwise.
 */
import type * as http from "node:http"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck, Layer, Runtime } from "effect"
import {
  type PermissionV2,
  SessionV2,
  Tool,
  ToolRegistry,
  WebAddress,
  WebFetchTool,
  Wildcard,
} from "../../src/index.js"
import * as Core from "../../src/testing/core.js"
import { type Loopback, loopbackServer, respond } from "../support/loopback-server.js"
import * as FakePermission from "../support/permission.js"
import { ToolTest } from "../../src/entry/testing.js"

/** How one ask is answered. */
type Answer = (request: PermissionV2.Request) => { readonly reply: PermissionV2.Reply; readonly message?: string }

const reject: Answer = () => ({ reply: "reject", message: "no" })

/** The asks a Location received, and how the next ones are answered. */
interface AskLog {
  readonly requests: Array<PermissionV2.Request>
  answer: Answer
}

const rejected = {
  type: "error",
  value: "The user rejected permission to use this specific tool call with the following feedback: no",
}

/** A real Location with `rules` appended to the configuration, `resolver` for host names, and an ask log. */
const location = (options: {
  readonly rules?: ReadonlyArray<PermissionV2.Rule>
  readonly resolver?: WebAddress.ResolverInterface
}) => {
  const log: AskLog = { requests: [], answer: reject }
  const layer = Core.layerTest({
    config: { permissions: [...(options.rules ?? [])] },
    permission: (request) => {
      log.requests.push(request)
      return log.answer(request)
    },
  })
  const provided =
    options.resolver === undefined
      ? layer
      : layer.pipe(Layer.provide(Layer.succeed(WebAddress.Resolver, options.resolver)))
  return { log, layer: provided }
}

/** Settles one webfetch call through a fresh materialization, in a new `build` session. */
const fetch = (input: Record<string, unknown>) =>
  Effect.gen(function* () {
    const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
    const turn = yield* (yield* ToolRegistry.Service).materialize([])
    return yield* turn.settle({
      sessionID: session.id,
      agent: "build",
      assistantMessageID: "msg_trust",
      call: { id: "call_webfetch", name: "webfetch", input },
    })
  })

const SECRET = "LOOPBACK_SECRET_9d41"

/** Answers every path with the secret, except the routes given. */
const secretServer = (routes: Record<string, (response: http.ServerResponse) => void> = {}) =>
  loopbackServer((request, response) => {
    const route = routes[request.url ?? ""]
    if (route !== undefined) return route(response)
    respond(`${SECRET} at ${request.url}`)(request, response)
  })

const redirect = (location: string) => (response: http.ServerResponse) => {
  response.writeHead(302, { location })
  response.end()
}

const asked = (log: AskLog) => log.requests.map((request) => request.resources)

const leaks = (settled: ToolRegistry.Settlement) => JSON.stringify(settled).includes(SECRET)

describe("canonical URLs: a deny on http://127.0.0.1* holds for every spelling", () => {
  it.scoped("decimal, octal, hex, short forms, trailing dot and IPv4-mapped IPv6 are denied; nothing is fetched", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const p = server.port
      const { log, layer } = location({
        rules: [{ action: "webfetch", resource: "http://127.0.0.1*", effect: "deny" }],
      })
      return yield* Effect.gen(function* () {
        for (const url of [
          `http://127.0.0.1:${p}/`,
          `http://127.1:${p}/`,
          `http://2130706433:${p}/`,
          `http://0x7f000001:${p}/`,
          `http://0X7F.0.0.1:${p}/`,
          `http://0177.0.0.1:${p}/`,
          `http://017700000001:${p}/`,
          `http://127.0.1:${p}/`,
          `http://127.0.0.1.:${p}/`,
          `HTTP://127.0.0.1:${p}/`,
          `http://[::ffff:127.0.0.1]:${p}/`,
          `http://[::FFFF:7F00:1]:${p}/`,
          `http://%31%32%37.0.0.1:${p}/`,
        ]) {
          const settled = yield* fetch({ url })
          expect(settled.result, url).toEqual({
            type: "error",
            value: `Permission denied by configured rules for webfetch: http://127.0.0.1:${p}/`,
          })
        }
        expect(server.hits).toEqual([])
        expect(log.requests).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("HTTP://LOCALHOST/ is not 127.0.0.1 to the rule, but it resolves to loopback: the private check asks", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const p = server.port
      const { log, layer } = location({
        rules: [{ action: "webfetch", resource: "http://127.0.0.1*", effect: "deny" }],
      })
      return yield* Effect.gen(function* () {
        for (const url of [`HTTP://LOCALHOST:${p}/`, `http://localhost.:${p}/`, `http://LocalHost..:${p}/x#frag`]) {
          const settled = yield* fetch({ url })
          expect(settled.result, url).toEqual(rejected)
          expect(leaks(settled)).toBe(false)
        }
        expect(asked(log)).toEqual([
          [`private:http://localhost:${p}/`],
          [`private:http://localhost:${p}/`],
          [`private:http://localhost:${p}/x`],
        ])
        expect(server.hits).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )
})

describe("canonical URLs: an allow on …/public/* reaches only /public/", () => {
  /** Webfetch asks by default; the public folder is allowed; the private check is lifted for this server. */
  const rules = (server: Loopback) => [
    { action: "webfetch", resource: "*", effect: "ask" as const },
    { action: "webfetch", resource: `${server.base}/public/*`, effect: "allow" as const },
    { action: "webfetch", resource: `private:${server.base}/*`, effect: "allow" as const },
  ]

  it.scoped("the allowed folder is fetched without an ask (control)", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const { log, layer } = location({ rules: rules(server) })
      return yield* Effect.gen(function* () {
        const settled = yield* fetch({ url: `${server.base}/public/page`, format: "text" })
        expect(settled.result).toEqual({ type: "text", value: `${SECRET} at /public/page` })
        expect(log.requests).toEqual([])
        expect(server.hits.map((hit) => hit.url)).toEqual(["/public/page"])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("dot segments, plain or percent-encoded, resolve before the rule is matched: they ask", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const { log, layer } = location({ rules: rules(server) })
      return yield* Effect.gen(function* () {
        for (const path of [
          "/public/../private",
          "/public/%2e%2e/private",
          "/public/%2E%2e/private",
          "/public/.%2e/private",
          "/public/%2e./private",
          "/public/./../private",
          "/public/sub/../../private",
          "/public\\..\\private",
          "/%70ublic/../private",
        ]) {
          const settled = yield* fetch({ url: `${server.base}${path}` })
          expect(settled.result, path).toEqual(rejected)
        }
        expect(new Set(asked(log).flat())).toEqual(new Set([`${server.base}/private`]))
        expect(log.requests).toHaveLength(9)
        expect(server.hits).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("segments a server may read as .. (encoded slash, ; parameter) are refused with a reason", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const { log, layer } = location({ rules: rules(server) })
      return yield* Effect.gen(function* () {
        for (const path of [
          "/public/..%2fprivate",
          "/public/..%2Fprivate",
          "/public/%2e%2e%2fprivate",
          "/public/..%5cprivate",
          "/public/..;/private",
          "/public/.%2E;x/private",
        ]) {
          const url = `${server.base}${path}`
          const settled = yield* fetch({ url })
          expect(settled.result, path).toEqual({
            type: "error",
            value: `Unable to fetch ${url}: URL path has a segment a server may read as . or .. (encoded slash or ; parameter)`,
          })
        }
        expect(log.requests).toEqual([])
        expect(server.hits).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("credentials in the URL are refused before any check", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const { log, layer } = location({ rules: rules(server) })
      return yield* Effect.gen(function* () {
        const url = `http://user:pass@127.0.0.1:${server.port}/public/x`
        const settled = yield* fetch({ url })
        expect(settled.result).toEqual({
          type: "error",
          value: `Unable to fetch ${url}: URL must not contain credentials (user:password@)`,
        })
        expect(log.requests).toEqual([])
        expect(server.hits).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("a 302 from the allowed folder to a URL no rule allows asks; rejected, it is not followed", () =>
    Effect.gen(function* () {
      const other = yield* secretServer()
      const server = yield* secretServer({
        "/public/same-origin": redirect("/private"),
        "/public/dots": redirect("/public/%2e%2e/private"),
        "/public/cross-origin": redirect(`${other.base}/secret`),
        "/public/metadata": redirect("http://169.254.169.254/latest/meta-data/"),
        "/public/scheme": redirect("file:///etc/passwd"),
        "/public/hop": redirect("/public/landing"),
      })
      const { log, layer } = location({ rules: rules(server) })
      return yield* Effect.gen(function* () {
        for (const path of ["/public/same-origin", "/public/dots", "/public/cross-origin", "/public/metadata"]) {
          const settled = yield* fetch({ url: `${server.base}${path}` })
          expect(settled.result, path).toEqual(rejected)
          expect(leaks(settled)).toBe(false)
        }
        expect(asked(log)).toEqual([
          [`${server.base}/private`],
          [`${server.base}/private`],
          [`${other.base}/secret`],
          ["http://169.254.169.254/latest/meta-data/"],
        ])
        expect(log.requests.map((request) => request.metadata?.["redirectedFrom"])).toEqual([
          `${server.base}/public/same-origin`,
          `${server.base}/public/dots`,
          `${server.base}/public/cross-origin`,
          `${server.base}/public/metadata`,
        ])
        const scheme = yield* fetch({ url: `${server.base}/public/scheme` })
        expect(scheme.result).toEqual({ type: "error", value: `Unable to fetch ${server.base}/public/scheme` })
        // An allowed hop is followed without an ask.
        const hop = yield* fetch({ url: `${server.base}/public/hop`, format: "text" })
        expect(hop.result).toEqual({ type: "text", value: `${SECRET} at /public/landing` })
        expect(log.requests).toHaveLength(4)
        expect(server.hits.map((hit) => hit.url)).toEqual([
          "/public/same-origin",
          "/public/dots",
          "/public/cross-origin",
          "/public/metadata",
          "/public/scheme",
          "/public/hop",
          "/public/landing",
        ])
        expect(other.hits).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("an approved cross-origin hop is then subject to the private check of its own origin", () =>
    Effect.gen(function* () {
      const other = yield* secretServer()
      const server = yield* secretServer({ "/public/away": redirect(`${other.base}/secret`) })
      const { log, layer } = location({ rules: rules(server) })
      return yield* Effect.gen(function* () {
        log.answer = (request) =>
          request.resources[0]!.startsWith("private:") ? { reply: "reject", message: "no" } : { reply: "once" }
        const settled = yield* fetch({ url: `${server.base}/public/away` })
        expect(settled.result).toEqual(rejected)
        expect(asked(log)).toEqual([[`${other.base}/secret`], [`private:${other.base}/secret`]])
        expect(other.hits).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )
})

describe("the private check: what the host resolves to", () => {
  it.scoped("an allow on every URL does not reach loopback: it asks private:<url>, rejected, nothing fetched", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const { log, layer } = location({ rules: [{ action: "webfetch", resource: "*", effect: "allow" }] })
      return yield* Effect.gen(function* () {
        const url = `${server.base}/x`
        const settled = yield* fetch({ url })
        expect(settled.result).toEqual(rejected)
        expect(log.requests.map((request) => [request.action, request.resources, request.save])).toEqual([
          ["webfetch", [`private:${url}`], [`${Wildcard.literal(`private:${server.base}/`)}*`]],
        ])
        expect(log.requests[0]!.metadata).toEqual({ url, addresses: [{ address: "127.0.0.1", range: "loopback" }] })
        expect(server.hits).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("IPv6 loopback in any spelling asks; approved, the same spellings reach the ::1 server", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer(respond(SECRET), "::1")
      const p = server.port
      const { log, layer } = location({ rules: [{ action: "webfetch", resource: "*", effect: "allow" }] })
      const spellings = [`http://[::1]:${p}/`, `http://[0:0:0:0:0:0:0:1]:${p}/`, `http://[::0:0:1]:${p}/`]
      return yield* Effect.gen(function* () {
        for (const url of spellings) expect((yield* fetch({ url })).result, url).toEqual(rejected)
        expect(asked(log)).toEqual(spellings.map(() => [`private:http://[::1]:${p}/`]))
        expect(server.hits).toEqual([])
        log.answer = () => ({ reply: "once" })
        for (const url of spellings)
          expect((yield* fetch({ url, format: "text" })).result, url).toEqual({ type: "text", value: SECRET })
        expect(server.hits.map((hit) => hit.localAddress)).toEqual(["::1", "::1", "::1"])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("the built-in defaults (allow everything) still ask for a private address", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const { log, layer } = location({})
      return yield* Effect.gen(function* () {
        const settled = yield* fetch({ url: `${server.base}/x` })
        expect(settled.result).toEqual(rejected)
        expect(asked(log)).toEqual([[`private:${server.base}/x`]])
        expect(server.hits).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("approved once, the fetch happens; the ask was raised first", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const { log, layer } = location({})
      return yield* Effect.gen(function* () {
        log.answer = () => ({ reply: "once" })
        const settled = yield* fetch({ url: `${server.base}/x`, format: "text" })
        expect(settled.result).toEqual({ type: "text", value: `${SECRET} at /x` })
        expect(asked(log)).toEqual([[`private:${server.base}/x`]])
        expect(server.hits.map((hit) => hit.url)).toEqual(["/x"])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("a configured allow on the private: resource lifts the ask", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const { log, layer } = location({
        rules: [{ action: "webfetch", resource: `private:${server.base}/*`, effect: "allow" }],
      })
      return yield* Effect.gen(function* () {
        const settled = yield* fetch({ url: `${server.base}/x`, format: "text" })
        expect(settled.result).toEqual({ type: "text", value: `${SECRET} at /x` })
        expect(log.requests).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("a configured deny on private:* refuses every private address without an ask", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const { log, layer } = location({ rules: [{ action: "webfetch", resource: "private:*", effect: "deny" }] })
      return yield* Effect.gen(function* () {
        const settled = yield* fetch({ url: `${server.base}/x` })
        expect(settled.result).toEqual({
          type: "error",
          value: `Permission denied by configured rules for webfetch: private:${server.base}/x`,
        })
        expect(log.requests).toEqual([])
        expect(server.hits).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("'always' on a private ask saves this origin only; 'always' on a URL ask never lifts a private one", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const other = yield* secretServer()
      const { log, layer } = location({ rules: [{ action: "webfetch", resource: "*", effect: "ask" }] })
      return yield* Effect.gen(function* () {
        log.answer = (request) =>
          request.resources[0]!.startsWith("private:") ? { reply: "reject", message: "no" } : { reply: "always" }
        // The URL ask is answered "always" (saves this origin); the private ask still comes and is rejected.
        expect((yield* fetch({ url: `${server.base}/a` })).result).toEqual(rejected)
        expect(asked(log)).toEqual([[`${server.base}/a`], [`private:${server.base}/a`]])
        expect(server.hits).toEqual([])
        // Now "always" on the private ask of this origin.
        log.answer = () => ({ reply: "always" })
        expect((yield* fetch({ url: `${server.base}/b`, format: "text" })).result).toEqual({
          type: "text",
          value: `${SECRET} at /b`,
        })
        expect((yield* fetch({ url: `${server.base}/c`, format: "text" })).result).toEqual({
          type: "text",
          value: `${SECRET} at /c`,
        })
        expect(asked(log).slice(2)).toEqual([[`private:${server.base}/b`]])
        // Another port is another origin: its URL asks again (the "always" above saved only the first origin).
        log.answer = reject
        expect((yield* fetch({ url: `${other.base}/d` })).result).toEqual(rejected)
        expect(asked(log).slice(3)).toEqual([[`${other.base}/d`]])
        expect(server.hits.map((hit) => hit.url)).toEqual(["/b", "/c"])
        expect(other.hits).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("a name that resolves to loopback asks; metadata names the address and range", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      const resolver: WebAddress.ResolverInterface = {
        resolve: (hostname) =>
          hostname === "intranet.example"
            ? Effect.succeed([
                { address: "127.0.0.1", family: 4 },
                { address: "10.0.0.7", family: 4 },
              ])
            : Effect.fail(new WebAddress.ResolveError({ hostname, detail: "ENOTFOUND" })),
      }
      const { log, layer } = location({ resolver })
      return yield* Effect.gen(function* () {
        const url = `http://intranet.example:${server.port}/x`
        expect((yield* fetch({ url })).result).toEqual(rejected)
        expect(log.requests.map((request) => [request.resources, request.metadata])).toEqual([
          [
            [`private:${url}`],
            {
              url,
              addresses: [
                { address: "127.0.0.1", range: "loopback" },
                { address: "10.0.0.7", range: "private" },
              ],
            },
          ],
        ])
        expect(server.hits).toEqual([])
      }).pipe(Effect.provide(layer))
    }),
  )

  it.scoped("no DNS-rebinding gap: the connection goes to the address that was checked, resolved once", () =>
    Effect.gen(function* () {
      const server = yield* secretServer()
      let calls = 0
      // The first answer is the one that is checked; any later lookup would fail the fetch, and the operating
      // system cannot resolve this name at all, so a successful fetch proves the socket used the checked address.
      const resolver: WebAddress.ResolverInterface = {
        resolve: (hostname) =>
          Effect.suspend(() => {
            calls++
            return calls === 1
              ? Effect.succeed([{ address: "127.0.0.1", family: 4 as const }])
              : Effect.fail(new WebAddress.ResolveError({ hostname, detail: "rebound" }))
          }),
      }
      const { log, layer } = location({ resolver })
      return yield* Effect.gen(function* () {
        log.answer = () => ({ reply: "once" })
        const settled = yield* fetch({ url: `http://rebind.invalid:${server.port}/x`, format: "text" })
        expect(settled.result).toEqual({ type: "text", value: `${SECRET} at /x` })
        expect(calls).toBe(1)
        expect(asked(log)).toEqual([[`private:http://rebind.invalid:${server.port}/x`]])
        expect(server.hits.map((hit) => [hit.url, hit.headers["host"], hit.localAddress])).toEqual([
          ["/x", `rebind.invalid:${server.port}`, "127.0.0.1"],
        ])
      }).pipe(Effect.provide(layer))
    }),
  )

  it("pinnedLookup answers every name with the checked addresses only, in both callback forms", () => {
    const lookup = WebAddress.pinnedLookup([
      { address: "203.0.113.9", family: 4 },
      { address: "2001:db8::9", family: 6 },
    ])
    const answers: Array<unknown> = []
    lookup("anything.example", { all: true }, (error, all) => answers.push([error, all]))
    lookup("other.example", {}, (error, address, family) => answers.push([error, address, family]))
    lookup("x", { family: 6 }, (error, address, family) => answers.push([error, address, family]))
    lookup("x", { family: "IPv4" } as never, (error, address, family) => answers.push([error, address, family]))
    expect(answers).toEqual([
      [
        null,
        [
          { address: "203.0.113.9", family: 4 },
          { address: "2001:db8::9", family: 6 },
        ],
      ],
      [null, "203.0.113.9", 4],
      [null, "2001:db8::9", 6],
      [null, "203.0.113.9", 4],
    ])
    const v4only = WebAddress.pinnedLookup([{ address: "203.0.113.9", family: 4 }])
    v4only("x", { family: 6 }, (error) => answers.push((error as NodeJS.ErrnoException | null)?.code))
    expect(answers.at(-1)).toBe("ENOTFOUND")
  })
})

describe("conversion runs inside the timeout", () => {
  it.live(
    "a page whose Markdown conversion alone outlasts the timeout fails with the timeout as the reason, after its transfer ended",
    () =>
      Effect.gen(function* () {
        // About 1 MB of HTML: transferred over loopback well within the timeout, converted (in a worker) in far more
        // than half a second, so only a timeout that covers the conversion can end the call with "Request timed out".
        const page = `<html><body>${'<p>Hello <b>world</b> <a href="/x">link</a> text</p><ul><li>one</li></ul>'.repeat(15_000)}</body></html>`
        expect(page.length).toBeLessThan(WebFetchTool.MAX_RESPONSE_BYTES)
        const timeout = 0.5
        // Each response's end, as the server saw it: the transfer was over before the call failed.
        const sent: Array<string> = []
        const server = yield* loopbackServer((request, response) => {
          response.on("finish", () => sent.push(request.url ?? ""))
          respond(page, "text/html")(request, response)
        })
        const { layer } = location({
          rules: [{ action: "webfetch", resource: `private:${server.base}/*`, effect: "allow" }],
        })
        const settled = yield* fetch({ url: `${server.base}/big`, timeout }).pipe(Effect.provide(layer))
        expect(settled.result).toEqual({ type: "error", value: `Unable to fetch ${server.base}/big` })
        expect(sent).toEqual(["/big"])
        // The same call on the tool value shows why it failed.
        const { service } = yield* FakePermission.makeFake
        const failure = yield* Effect.flip(
          ToolTest.settle(
            WebFetchTool.make(service),
            { url: `${server.base}/big`, timeout },
            { name: "webfetch", context: { sessionID: "ses_big", assistantMessageID: "msg", toolCallID: "call_big" } },
          ),
        )
        expect([failure.message, (failure.error as Error).message]).toEqual([
          `Unable to fetch ${server.base}/big`,
          "Request timed out",
        ])
        expect(sent).toEqual(["/big", "/big"])
      }).pipe(Effect.scoped),
    60_000,
  )
})

/** IPv4 address spellings the WHATWG parser accepts: per-part decimal/octal/hex, and the short forms. */
const ipv4Spelling = (bytes: ReadonlyArray<number>) =>
  FastCheck.record({
    form: FastCheck.constantFrom(4, 3, 2, 1),
    radix: FastCheck.array(FastCheck.constantFrom("dec", "oct", "hex", "HEX"), { minLength: 4, maxLength: 4 }),
    trailingDot: FastCheck.boolean(),
  }).map(({ form, radix, trailingDot }) => {
    const [a, b, c, d] = bytes as [number, number, number, number]
    const parts =
      form === 4
        ? [a, b, c, d]
        : form === 3
          ? [a, b, c * 256 + d]
          : form === 2
            ? [a, b * 65536 + c * 256 + d]
            : [((a * 256 + b) * 256 + c) * 256 + d]
    const spelled = parts.map((value, i) => {
      switch (radix[i]) {
        case "oct":
          return `0${value.toString(8)}`
        case "hex":
          return `0x${value.toString(16)}`
        case "HEX":
          return `0X${value.toString(16).toUpperCase()}`
        default:
          return String(value)
      }
    })
    return spelled.join(".") + (trailingDot ? "." : "")
  })

const byte = FastCheck.integer({ min: 0, max: 255 })

/** Non-public IPv4 addresses: loopback (mostly 127.0.0.1, where the server listens), private, metadata, … */
const privateV4 = FastCheck.oneof(
  { weight: 4, arbitrary: FastCheck.constant([127, 0, 0, 1]) },
  FastCheck.tuple(FastCheck.constant(127), byte, byte, byte),
  FastCheck.tuple(FastCheck.constant(10), byte, byte, byte),
  FastCheck.tuple(FastCheck.constant(172), FastCheck.integer({ min: 16, max: 31 }), byte, byte),
  FastCheck.tuple(FastCheck.constant(192), FastCheck.constant(168), byte, byte),
  FastCheck.tuple(FastCheck.constant(169), FastCheck.constant(254), byte, byte),
  FastCheck.tuple(FastCheck.constant(100), FastCheck.integer({ min: 64, max: 127 }), byte, byte),
  FastCheck.constant([0, 0, 0, 0]),
)

const hex4 = (value: number, upper: boolean) => (upper ? value.toString(16).toUpperCase() : value.toString(16))

/** A host spelling (ready for a URL) of a non-public address, and whether it is 127.0.0.1 or 0.0.0.0 (reaches the server). */
const privateHost = FastCheck.oneof(
  privateV4.chain((bytes) =>
    ipv4Spelling(bytes).map((host) => ({
      host,
      local: bytes.join(".") === "127.0.0.1" || bytes.join(".") === "0.0.0.0",
    })),
  ),
  FastCheck.tuple(privateV4, FastCheck.boolean(), FastCheck.boolean()).map(([bytes, dotted, upper]) => {
    const [a, b, c, d] = bytes as [number, number, number, number]
    const tail = dotted ? bytes.join(".") : `${hex4(a * 256 + b, upper)}:${hex4(c * 256 + d, upper)}`
    return {
      host: `[${upper ? "::FFFF" : "::ffff"}:${tail}]`,
      local: bytes.join(".") === "127.0.0.1" || bytes.join(".") === "0.0.0.0",
    }
  }),
  FastCheck.constantFrom(
    { host: "[::1]", local: false },
    { host: "[0:0:0:0:0:0:0:1]", local: false },
    { host: "[::]", local: false },
    { host: "[64:ff9b::7f00:1]", local: false },
    { host: "[fd00:ec2::254]", local: false },
    { host: "[fe80::1]", local: false },
    { host: "[fc00::1]", local: false },
    { host: "[2002:7f00:1::]", local: false },
  ),
  FastCheck.tuple(
    FastCheck.constantFrom("localhost", "LOCALHOST", "LocalHost", "localhost.", "LOCALHOST.."),
    FastCheck.constant(true),
  ).map(([host, local]) => ({ host, local })),
)

describe("property: no generated spelling of a loopback or private address is fetched without an ask", () => {
  it.scoped(
    "with every URL allowed and every ask rejected, the server sees nothing",
    () =>
      Effect.gen(function* () {
        const server = yield* secretServer()
        const { log, layer } = location({ rules: [{ action: "webfetch", resource: "*", effect: "allow" }] })
        return yield* Effect.gen(function* () {
          const runtime = yield* Effect.runtime<SessionV2.Service | ToolRegistry.Service>()
          const urlArb = FastCheck.record({
            target: privateHost,
            scheme: FastCheck.constantFrom("http", "HTTP", "Http"),
            userinfo: FastCheck.constantFrom("", "", "", "user@", "user:pass@", ":@"),
            port: FastCheck.constantFrom("server", "server", "default", "other"),
            path: FastCheck.constantFrom("/", "/x", "/a/../b", "/%2e%2e/x", ""),
          }).map(({ target, scheme, userinfo, port, path }) => {
            const portText = port === "server" ? `:${server.port}` : port === "other" ? ":9" : ""
            return {
              url: `${scheme}://${userinfo}${target.host}${portText}${path}`,
              local: target.local && port === "server",
            }
          })
          const outcomes = { asked: 0, refused: 0, reachable: 0 }
          const runOne = (url: string) =>
            Effect.gen(function* () {
              const before = log.requests.length
              const hits = server.hits.length
              const exit = yield* Effect.exit(fetch({ url, timeout: 2 }))
              if (Exit.isFailure(exit)) throw new Error(`defect for ${url}: ${Cause.pretty(exit.cause)}`)
              const settled = exit.value
              const asks = log.requests.slice(before)
              expect(server.hits.length, url).toBe(hits)
              expect(leaks(settled), url).toBe(false)
              if (asks.length > 0) {
                outcomes.asked++
                expect(
                  asks.map((request) => request.resources[0]!.startsWith("private:")),
                  url,
                ).toEqual([true])
                expect(settled.result, url).toEqual(rejected)
              } else {
                // No ask: only a refusal before any connection (credentials in the URL) is acceptable.
                outcomes.refused++
                expect(settled.result, url).toEqual({
                  type: "error",
                  value: `Unable to fetch ${url}: URL must not contain credentials (user:password@)`,
                })
              }
            })
          yield* Effect.promise(() =>
            FastCheck.assert(
              FastCheck.asyncProperty(urlArb, ({ url, local }) => {
                if (local) outcomes.reachable++
                return Runtime.runPromise(runtime)(runOne(url))
              }),
              { numRuns: 200 },
            ),
          )
          // Both outcomes occur, and many URLs would have reached the server had they not asked.
          expect(outcomes.asked * outcomes.refused).toBeGreaterThan(0)
          expect(outcomes.reachable).toBeGreaterThan(20)
          expect(server.hits).toEqual([])
        }).pipe(Effect.provide(layer))
      }),
    120_000,
  )
})
