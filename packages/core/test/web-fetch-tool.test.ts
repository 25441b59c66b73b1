/**
 * webfetch against real loopback servers with the fake permission service (every check allowed and recorded).
 * Loopback is a private address, so each fetch here also passes the `private:` check; the attacks on the rules
 * themselves are in trust/webfetch.test.ts.
 */
import type * as http from "node:http"
import { HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Layer, Ref, Schema, TestClock, TestServices } from "effect"
import * as Html from "../src/builtin/internal/web-fetch-html.js"
import {
  ApplicationTools,
  PermissionV2,
  Tool,
  ToolOutputStore,
  ToolRegistry,
  WebAddress,
  WebFetchTool,
} from "../src/index.js"
import { loopbackServer, respond } from "./support/loopback-server.js"
import * as FakePermission from "./support/permission.js"
import { ToolTest } from "../src/entry/testing.js"

const registry = ToolRegistry.layer.pipe(Layer.provide([ApplicationTools.layer, ToolOutputStore.layerPassthrough]))

/** Resolves every name in `names` to 127.0.0.1 and nothing else. */
const namesToLoopback = (...names: ReadonlyArray<string>): WebAddress.ResolverInterface => ({
  resolve: (hostname) =>
    names.includes(hostname)
      ? Effect.succeed([{ address: "127.0.0.1", family: 4 as const }])
      : Effect.fail(new WebAddress.ResolveError({ hostname, detail: "ENOTFOUND" })),
})

/** The real registry with webfetch registered, the fake permission service and, when given, a resolver. */
const env = (resolver?: WebAddress.ResolverInterface) => {
  const base = Layer.mergeAll(registry, FakePermission.layer)
  const tool = WebFetchTool.layer.pipe(Layer.provideMerge(base))
  return resolver === undefined ? tool : tool.pipe(Layer.provide(Layer.succeed(WebAddress.Resolver, resolver)))
}

/** Materializes with no permissions and settles one webfetch call. */
const settle = (input: Record<string, unknown>) =>
  Effect.gen(function* () {
    const turn = yield* (yield* ToolRegistry.Service).materialize()
    return yield* turn.settle({
      sessionID: "ses_webfetch",
      agent: "build",
      assistantMessageID: "msg_tool_test",
      call: { id: "call-webfetch", name: "webfetch", input },
    })
  })

/** The resources of each recorded assert. */
const resources = Effect.map(FakePermission.asserts, (all) => all.map((input) => input.resources))

const HTML = "<h1>Hello</h1><script>bad()</script><p>world <strong>wide</strong></p><style>.bad {}</style>"

const failure = (value: string) => ({ type: "error", value })

/** Answers by path: each entry is a status, headers and body. */
const routes =
  (table: Record<string, readonly [number, Record<string, string>, string | Buffer]>) =>
  (request: http.IncomingMessage, response: http.ServerResponse) => {
    const route = table[request.url ?? ""]
    if (route === undefined) {
      response.writeHead(404, { "content-type": "text/plain" })
      response.end("missing")
      return
    }
    response.writeHead(route[0], route[1])
    response.end(route[2])
  }

describe("webfetch", () => {
  it("defaults format and rejects invalid timeout controls", () => {
    const decode = Schema.decodeUnknownEither(WebFetchTool.Input)
    expect(Schema.decodeUnknownSync(WebFetchTool.Input)({ url: "https://a.test" })).toEqual({
      url: "https://a.test",
      format: "markdown",
    })
    expect(decode({ url: "https://a.test", timeout: 0 })._tag).toBe("Left")
    expect(decode({ url: "https://a.test", timeout: 121 })._tag).toBe("Left")
    expect(decode({ url: "https://a.test", timeout: 0.5 })._tag).toBe("Right")
    expect(decode({ url: "https://a.test", timeout: 120 })._tag).toBe("Right")
    expect(decode({ url: "https://a.test", format: "pdf" })._tag).toBe("Left")
  })

  it("ports HTML text and markdown conversions without active content", () => {
    expect(WebFetchTool.extractText(HTML)).toBe("Helloworld wide")
    expect(WebFetchTool.toMarkdown(HTML)).toBe("# Hello\n\nworld **wide**")
    expect(WebFetchTool.extractText("<p>a<noscript><b>x</b><i>y</i></noscript>b<iframe>z</iframe></p>")).toBe("ab")
    expect(WebFetchTool.toMarkdown("<ul><li>one</li></ul><hr><pre><code>x</code></pre><em>e</em>")).toBe(
      "-   one\n\n---\n\n```\nx\n```\n\n*e*",
    )
  })

  it("converts nesting up to MAX_HTML_DEPTH and refuses deeper documents up front", () => {
    const nest = (depth: number) => `${"<div>".repeat(depth)}deep${"</div>".repeat(depth)}`
    expect(WebFetchTool.toMarkdown(nest(WebFetchTool.MAX_HTML_DEPTH))).toBe("deep")
    expect(() => WebFetchTool.toMarkdown(nest(WebFetchTool.MAX_HTML_DEPTH + 1))).toThrow(
      "HTML nesting exceeds 1024 levels",
    )
    // Void elements and implied closes do not deepen the document.
    expect(WebFetchTool.toMarkdown("<p>a<br><img src=x><p>b".repeat(500))).toContain("a  \n![](x)\n\nb")
  })

  it("has the expected constants and registration", () => {
    expect(WebFetchTool.name).toBe("webfetch")
    expect(WebFetchTool.MAX_RESPONSE_BYTES).toBe(5242880)
    expect(WebFetchTool.DEFAULT_TIMEOUT_SECONDS).toBe(30)
    expect(WebFetchTool.MAX_TIMEOUT_SECONDS).toBe(120)
    expect(WebFetchTool.MAX_REDIRECTS).toBe(10)
    expect(WebFetchTool.PRIVATE_PREFIX).toBe("private:")
    expect(PermissionV2.EXPLICIT_RESOURCE_PREFIXES).toContain(WebFetchTool.PRIVATE_PREFIX)
    expect(WebFetchTool.description.split("\n\n")).toHaveLength(2)
  })

  // Changed from the reference: the host resolves to loopback, so a second check on `private:<url>` follows the
  // check on the URL (see docs/trust/webfetch.md).
  it.scoped("registers and fetches an ordinary hostname HTTP URL without rewriting it", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer(respond("hello"))
      const origin = `http://docs.test:${server.port}`
      const url = `${origin}/public`
      return yield* Effect.gen(function* () {
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        expect(turn.definitions.map((definition) => definition.name)).toEqual(["webfetch"])
        const settlement = yield* settle({ url, format: "text", timeout: 4 })
        expect(settlement.result).toEqual({ type: "text", value: "hello" })
        expect(settlement.output?.structured).toEqual({
          url,
          contentType: "text/plain",
          format: "text",
          output: "hello",
        })
        const source = { type: "tool", messageID: "msg_tool_test", callID: "call-webfetch" }
        expect(yield* FakePermission.asserts).toEqual([
          {
            sessionID: "ses_webfetch",
            agent: "build",
            action: "webfetch",
            resources: [url],
            save: [`${origin}/*`],
            metadata: { url, format: "text", timeout: 4 },
            source,
          },
          {
            sessionID: "ses_webfetch",
            agent: "build",
            action: "webfetch",
            resources: [`private:${url}`],
            save: [`private:${origin}/*`],
            metadata: { url, addresses: [{ address: "127.0.0.1", range: "loopback" }] },
            source,
          },
        ])
        expect(server.hits.map((hit) => hit.url)).toEqual(["/public"])
        const headers = server.hits[0]!.headers
        expect(headers["host"]).toBe(`docs.test:${server.port}`)
        expect(headers["accept"]).toBe("text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1")
        expect(headers["user-agent"]).toBe(WebFetchTool.BROWSER_USER_AGENT)
        expect(headers["user-agent"]).toBe(
          "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36",
        )
        expect(headers["accept-language"]).toBe("en-US,en;q=0.9")
      }).pipe(Effect.provide(env(namesToLoopback("docs.test"))))
    }),
  )

  it.scoped("reports the bytes received as progress, with the declared total", () =>
    Effect.gen(function* () {
      const body = "x".repeat(WebFetchTool.PROGRESS_BYTES * 3 + 10)
      const server = yield* loopbackServer((_, response) => {
        response.writeHead(200, { "content-type": "text/plain", "content-length": String(body.length) })
        // Several writes, so the body arrives in several chunks.
        for (let i = 0; i < body.length; i += 16 * 1024) response.write(body.slice(i, i + 16 * 1024))
        response.end()
      })
      const url = `http://docs.test:${server.port}/big`
      return yield* Effect.gen(function* () {
        const reports: Array<Tool.Progress> = []
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        const settlement = yield* turn.settle({
          sessionID: "ses_webfetch",
          agent: "build",
          assistantMessageID: "msg_tool_test",
          call: { id: "call-webfetch", name: "webfetch", input: { url, format: "text", timeout: 10 } },
          progress: (update) => reports.push(update),
        })
        expect(settlement.result).toEqual({ type: "text", value: body })
        // How the body is split into chunks is up to the network stack: at least one report, never more than one per 64 KiB.
        expect(reports.length).toBeGreaterThanOrEqual(1)
        expect(reports.length).toBeLessThanOrEqual(3)
        for (const report of reports) expect(report).toMatchObject({ total: body.length })
        const received = reports.map((report) => report.progress!)
        expect(received).toEqual([...received].sort((a, b) => a - b))
        expect(received.at(-1)).toBeLessThanOrEqual(body.length)
        expect(reports[0]!.message).toMatch(/^received \d+ bytes of \d+$/)
      }).pipe(Effect.provide(env(namesToLoopback("docs.test"))))
    }),
  )

  it.scoped("sends the exact Accept header for each format", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer(respond("x"))
      return yield* Effect.gen(function* () {
        yield* settle({ url: `${server.base}/a` })
        yield* settle({ url: `${server.base}/a`, format: "html" })
        expect(server.hits.map((hit) => hit.headers["accept"])).toEqual([
          "text/markdown;q=1.0, text/x-markdown;q=0.9, text/plain;q=0.8, text/html;q=0.7, */*;q=0.1",
          "text/html;q=1.0, application/xhtml+xml;q=0.9, text/plain;q=0.8, text/markdown;q=0.7, */*;q=0.1",
        ])
      }).pipe(Effect.provide(env()))
    }),
  )

  // Changed from the reference: localhost resolves to loopback, which adds the `private:` check.
  it.scoped("accepts localhost URLs after the URL check and the private-address check", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer((_, response) => {
        response.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
        response.end("local")
      })
      const url = `http://localhost:${server.port}/here`
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ url, format: "text" })
        expect(settlement.result).toEqual({ type: "text", value: "local" })
        expect(settlement.output?.structured).toMatchObject({ contentType: "text/plain; charset=utf-8" })
        expect(yield* resources).toEqual([[url], [`private:${url}`]])
      }).pipe(Effect.provide(env()))
    }),
  )

  // Changed from the reference, which approved only the requested URL: every hop is checked again.
  it.scoped("follows redirects, checking every hop's canonical URL", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer(
        routes({
          "/start": [302, { location: "/./target/../target" }, ""],
          "/target": [200, { "content-type": "text/plain" }, "redirected"],
        }),
      )
      const url = `${server.base}/start`
      const target = `${server.base}/target`
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ url, format: "text" })
        expect(settlement.result).toEqual({ type: "text", value: "redirected" })
        expect(yield* resources).toEqual([[url], [`private:${url}`], [target], [`private:${target}`]])
        const hop = (yield* FakePermission.asserts)[2]!
        expect(hop.metadata).toEqual({ url: target, format: "text", redirectedFrom: url })
        expect(server.hits.map((hit) => hit.url)).toEqual(["/start", "/target"])
      }).pipe(Effect.provide(env()))
    }),
  )

  it.scoped("stops after MAX_REDIRECTS redirects", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer((request, response) => {
        const n = Number((request.url ?? "/0").slice(1))
        response.writeHead(302, { location: `/${n + 1}` })
        response.end()
      })
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ url: `${server.base}/0` })
        expect(settlement.result).toEqual(failure(`Unable to fetch ${server.base}/0`))
        expect(server.hits).toHaveLength(WebFetchTool.MAX_REDIRECTS + 1)
      }).pipe(Effect.provide(env()))
    }),
  )

  it.scoped("rejects non-HTTP schemes before permission or transport", () =>
    Effect.gen(function* () {
      const settlement = yield* settle({ url: "file:///etc/passwd" })
      expect(settlement.result).toEqual(failure("Unable to fetch file:///etc/passwd"))
      const invalid = yield* settle({ url: "not a url" })
      expect(invalid.result).toEqual(failure("Unable to fetch not a url"))
      expect(yield* FakePermission.asserts).toEqual([])
    }).pipe(Effect.provide(env())),
  )

  it.scoped("converts HTML to requested markdown and text", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer(respond("<h1>Hello</h1><p>world</p>", "text/html; charset=utf-8"))
      return yield* Effect.gen(function* () {
        const markdown = yield* settle({ url: `${server.base}/page` })
        expect(markdown.result).toEqual({ type: "text", value: "# Hello\n\nworld" })
        const text = yield* settle({ url: `${server.base}/page`, format: "text" })
        expect(text.result).toEqual({ type: "text", value: "Helloworld" })
        const html = yield* settle({ url: `${server.base}/page`, format: "html" })
        expect(html.result).toEqual({ type: "text", value: "<h1>Hello</h1><p>world</p>" })
      }).pipe(Effect.provide(env()))
    }),
  )

  it.scoped("converts a page above INLINE_MARKDOWN_LIMIT in a worker with the same result", () =>
    Effect.gen(function* () {
      // Above the inline limit, and longer than one parser chunk (256 KiB), so the chunked passes are exercised.
      const page = `<h1>Big</h1>${"<p>para <em>graph</em></p><ul><li>item</li></ul>".repeat(6000)}`
      expect(page.length).toBeGreaterThan(Math.max(WebFetchTool.INLINE_MARKDOWN_LIMIT, 256 * 1024))
      const server = yield* loopbackServer(respond(page, "text/html"))
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ url: `${server.base}/big` })
        expect(settlement.result).toEqual({ type: "text", value: WebFetchTool.toMarkdown(page) })
        const text = yield* settle({ url: `${server.base}/big`, format: "text" })
        expect(text.result).toEqual({ type: "text", value: WebFetchTool.extractText(page) })
      }).pipe(Effect.provide(env()))
    }),
  )

  it.scoped("returns non-HTML bodies unchanged whatever the format", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer(respond("<h1>raw</h1>", "application/json"))
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ url: `${server.base}/data` })
        expect(settlement.result).toEqual({ type: "text", value: "<h1>raw</h1>" })
      }).pipe(Effect.provide(env()))
    }),
  )

  it.scoped("returns an error result when HTML-to-Markdown conversion throws", () =>
    Effect.gen(function* () {
      const nested = `${"<div>".repeat(10_000)}deep${"</div>".repeat(10_000)}`
      const server = yield* loopbackServer(respond(nested, "text/html"))
      const url = `${server.base}/nested`
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ url })
        expect(settlement.result).toEqual(failure(`Unable to fetch ${url}`))
      }).pipe(Effect.provide(env()))
    }),
  )

  it.scoped("rejects declared and streamed oversized bodies", () =>
    Effect.gen(function* () {
      let streamed = 0
      const server = yield* loopbackServer((request, response) => {
        if (request.url === "/declared") {
          response.writeHead(200, { "content-type": "text/plain", "content-length": String(6 * 1024 * 1024) })
          response.write("x")
          return
        }
        response.writeHead(200, { "content-type": "text/plain" })
        const chunk = Buffer.alloc(1024 * 1024, "x")
        for (let i = 0; i < 5; i++) response.write(chunk)
        response.end("y")
        streamed = 5 * 1024 * 1024 + 1
      })
      return yield* Effect.gen(function* () {
        const declared = yield* settle({ url: `${server.base}/declared` })
        expect(declared.result).toEqual(failure(`Unable to fetch ${server.base}/declared`))
        const stream = yield* settle({ url: `${server.base}/streamed` })
        expect(stream.result).toEqual(failure(`Unable to fetch ${server.base}/streamed`))
        expect(streamed).toBe(WebFetchTool.MAX_RESPONSE_BYTES + 1)
      }).pipe(Effect.provide(env()))
    }),
  )

  it.scoped("accepts a body of exactly 5 MiB", () =>
    Effect.gen(function* () {
      const body = Buffer.alloc(WebFetchTool.MAX_RESPONSE_BYTES, "a")
      const server = yield* loopbackServer(respond(body))
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ url: `${server.base}/big`, format: "text" })
        expect(settlement.output?.structured).toMatchObject({ output: body.toString("utf8") })
      }).pipe(Effect.provide(env()))
    }),
  )

  it.effect("collectBoundedBody fails on the crossing chunk with the size message", () =>
    Effect.gen(function* () {
      const request = HttpClientRequest.get("http://example.com/")
      const over = HttpClientResponse.fromWeb(request, new Response(new Uint8Array(11)))
      const error = yield* Effect.flip(WebFetchTool.collectBoundedBody(over, 10, () => new Error("too large")))
      expect((error as Error).message).toBe("too large")
      const exact = HttpClientResponse.fromWeb(request, new Response(new Uint8Array(10)))
      expect((yield* WebFetchTool.collectBoundedBody(exact, 10, () => new Error("too large"))).byteLength).toBe(10)
    }),
  )

  it.scoped("keeps images and files unsupported until typed settlement can carry attachments", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer((request, response) => {
        response.writeHead(200, { "content-type": (request.url ?? "").slice(1) })
        response.end("bytes")
      })
      return yield* Effect.gen(function* () {
        for (const type of ["image/png", "application/pdf"]) {
          const url = `${server.base}/${type}`
          const settlement = yield* settle({ url })
          expect(settlement.result).toEqual(failure(`Unable to fetch ${url}`))
        }
        expect(server.hits).toHaveLength(2)
      }).pipe(Effect.provide(env()))
    }),
  )

  it.scoped("accepts SVG and XML-family content types as text", () =>
    Effect.gen(function* () {
      const types = ["image/svg+xml", "application/atom+xml", "application/ld+json", ""]
      const server = yield* loopbackServer((request, response) => {
        const type = types[Number((request.url ?? "/0").slice(1))]!
        // Node's server adds no content-type of its own, so "" sends none.
        response.writeHead(200, type === "" ? {} : { "content-type": type })
        response.end("<x/>")
      })
      return yield* Effect.gen(function* () {
        for (let index = 0; index < types.length; index++) {
          const settlement = yield* settle({ url: `${server.base}/${index}` })
          expect(settlement.result).toEqual({ type: "text", value: "<x/>" })
        }
      }).pipe(Effect.provide(env()))
    }),
  )

  it.scoped("retries Cloudflare challenges with an honest user agent", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer((request, response) => {
        if (request.headers["user-agent"] !== "toolgate") {
          response.writeHead(403, { "cf-mitigated": "challenge", "content-type": "text/html" })
          response.end("challenge")
          return
        }
        response.writeHead(200, { "content-type": "text/plain" })
        response.end("ok")
      })
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ url: `${server.base}/protected` })
        expect(settlement.result).toEqual({ type: "text", value: "ok" })
        expect(server.hits).toHaveLength(2)
        expect(server.hits[0]!.headers["user-agent"]).toContain("Mozilla/5.0")
        expect(server.hits[1]!.headers["user-agent"]).toBe("toolgate")
      }).pipe(Effect.provide(env()))
    }),
  )

  it.scoped("a non-2xx status, and a 403 without the challenge header, fail without retry", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer(routes({ "/forbidden": [403, { "content-type": "text/plain" }, "no"] }))
      return yield* Effect.gen(function* () {
        expect((yield* settle({ url: `${server.base}/forbidden` })).result).toEqual(
          failure(`Unable to fetch ${server.base}/forbidden`),
        )
        expect((yield* settle({ url: `${server.base}/missing` })).result).toEqual(
          failure(`Unable to fetch ${server.base}/missing`),
        )
        expect(server.hits).toHaveLength(2)
      }).pipe(Effect.provide(env()))
    }),
  )

  it.scoped("a 3xx without a Location header is a failed status, not a redirect", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer(routes({ "/moved": [302, { "content-type": "text/plain" }, "nowhere"] }))
      return yield* Effect.gen(function* () {
        expect((yield* settle({ url: `${server.base}/moved` })).result).toEqual(
          failure(`Unable to fetch ${server.base}/moved`),
        )
        expect(server.hits).toHaveLength(1)
      }).pipe(Effect.provide(env()))
    }),
  )

  it.effect("times out stalled requests", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer(() => {})
      const url = `${server.base}/slow`
      return yield* Effect.gen(function* () {
        const fiber = yield* Effect.fork(settle({ url, timeout: 1 }))
        yield* server.nextHit
        yield* TestClock.adjust("1 second")
        const settlement = yield* Fiber.join(fiber)
        expect(settlement.result).toEqual(failure(`Unable to fetch ${url}`))
        expect(server.hits.map((hit) => hit.url)).toEqual(["/slow"])
      }).pipe(Effect.provide(env()))
    }).pipe(Effect.scoped),
  )

  it.effect("the timeout bounds the conversion: 56 KB of nested <b> is stopped when the budget runs out", () =>
    Effect.gen(function* () {
      // 25 blocks of 333 nested <b> (58 KB): within MAX_HTML_DEPTH, and seconds of Turndown work.
      const page = ("<b>".repeat(333) + "x" + "</b>".repeat(333)).repeat(25)
      expect(page.length).toBeGreaterThan(56_000)
      const conversion = yield* Effect.fork(
        Html.convert(page, "text/html", "markdown").pipe(Effect.timeout("500 millis")),
      )
      // Once the conversion is under way its timeout is a pending sleep; a conversion that ran on this thread would
      // have finished (with a result) before any sleep could be seen.
      while ((yield* TestClock.sleeps()).length === 0 && conversion.unsafePoll() === null) yield* Effect.yieldNow()
      yield* TestClock.adjust("500 millis")
      // A hang guard far above the timeout (the worker is terminated; the fiber does not wait for it to wind down).
      const exit = yield* Fiber.await(conversion).pipe(
        Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error("conversion not stopped") }),
        TestServices.provideLive,
      )
      expect(Exit.isFailure(exit) && Cause.isFailType(exit.cause) && exit.cause.error._tag).toBe("TimeoutException")
    }),
  )

  it.scoped("maps blocked and corrected permissions to their model-visible messages without a request", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer(respond("x"))
      return yield* Effect.gen(function* () {
        yield* FakePermission.deny("webfetch")
        const blocked = yield* settle({ url: `${server.base}/x` })
        expect(blocked.result).toEqual(failure(`Permission denied by configured rules for webfetch: ${server.base}/x`))
        expect(server.hits).toEqual([])
      }).pipe(Effect.provide(env()))
    }),
  )

  it.scoped("maps a corrected permission to the user's feedback", () =>
    Effect.gen(function* () {
      const server = yield* loopbackServer(respond("x"))
      return yield* Effect.gen(function* () {
        const state = yield* FakePermission.FakePermissionState
        yield* Ref.set(state.corrected, new Map([["webfetch", "use the docs site"]]))
        const settlement = yield* settle({ url: `${server.base}/x` })
        expect(settlement.result).toEqual(
          failure(
            "The user rejected permission to use this specific tool call with the following feedback: use the docs site",
          ),
        )
        expect(server.hits).toEqual([])
      }).pipe(Effect.provide(env()))
    }),
  )

  it.effect("keeps the typed inner failures and their exact messages in ToolFailure.error", () =>
    Effect.gen(function* () {
      const { service } = yield* FakePermission.makeFake
      const server = yield* loopbackServer((request, response) => {
        if (request.url === "/png") return respond("x", "image/png")(request, response)
        if (request.url === "/pdf") return respond("x", "application/pdf")(request, response)
        if (request.url === "/big") {
          response.writeHead(200, { "content-type": "text/plain", "content-length": "5242881" })
          response.write("x")
        }
      })
      const tool = WebFetchTool.make(service)
      const inner = (url: string, timeout?: number) =>
        Effect.flip(
          ToolTest.settle(tool, timeout === undefined ? { url } : { url, timeout }, {
            name: "webfetch",
            context: { sessionID: "ses_webfetch", assistantMessageID: "msg", toolCallID: "call-inner" },
          }),
        ).pipe(
          Effect.map((failure) => [
            failure.message,
            `${(failure.error as { _tag: string })._tag}: ${(failure.error as Error).message}`,
          ]),
        )
      const base = server.base
      expect(yield* inner(`${base}/png`)).toEqual([
        `Unable to fetch ${base}/png`,
        "WebFetchTool.ContentTypeError: Unsupported fetched image content type: image/png",
      ])
      expect(yield* inner(`${base}/pdf`)).toEqual([
        `Unable to fetch ${base}/pdf`,
        "WebFetchTool.ContentTypeError: Unsupported fetched file content type: application/pdf",
      ])
      expect(yield* inner(`${base}/big`)).toEqual([
        `Unable to fetch ${base}/big`,
        "WebFetchTool.TooLargeError: Response too large (exceeds 5242880 byte limit)",
      ])
      const slow = yield* Effect.fork(inner(`${base}/slow`, 1))
      yield* server.nextHit.pipe(Effect.repeatN(3))
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(slow)).toEqual([
        `Unable to fetch ${base}/slow`,
        "WebFetchTool.TimeoutError: Request timed out",
      ])
    }).pipe(Effect.scoped),
  )
})
