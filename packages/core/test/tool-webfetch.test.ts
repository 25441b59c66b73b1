import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref, Schema, TestClock } from "effect"
import { ApplicationTools, Tool, ToolOutputStore, ToolRegistry, WebFetchTool } from "../src/index.js"
import * as FakePermission from "./support/permission.js"

const registry = ToolRegistry.layer.pipe(Layer.provide([ApplicationTools.layer, ToolOutputStore.layerPassthrough]))

/** The real registry with webfetch registered, the fake permission service and the given HTTP client. */
const env = (client: Layer.Layer<HttpClient.HttpClient>) =>
  WebFetchTool.layer.pipe(Layer.provideMerge(Layer.mergeAll(registry, FakePermission.layer, client)))

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

interface Recorded {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
}

/** A fake client: records every request and answers from `respond`. */
const fakeClient = (respond: (url: string, index: number) => Response | undefined) => {
  const requests: Array<Recorded> = []
  const client = HttpClient.make((request, url) =>
    Effect.suspend(() => {
      requests.push({ url: url.toString(), headers: request.headers })
      const response = respond(url.toString(), requests.length - 1)
      return response === undefined ? Effect.never : Effect.succeed(HttpClientResponse.fromWeb(request, response))
    }),
  )
  return { requests, layer: Layer.succeed(HttpClient.HttpClient, client) }
}

/** A loopback server for the scope's lifetime; handlers are per path. */
const server = (handler: (request: http.IncomingMessage, response: http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly base: string; readonly server: http.Server }>((resume) => {
      const instance = http.createServer(handler)
      instance.listen(0, "127.0.0.1", () => {
        const { port } = instance.address() as AddressInfo
        resume(Effect.succeed({ base: `http://127.0.0.1:${port}`, server: instance }))
      })
    }),
    ({ server: instance }) =>
      Effect.async<void>((resume) => {
        instance.closeAllConnections()
        instance.close(() => resume(Effect.void))
      }),
  )

const HTML = "<h1>Hello</h1><script>bad()</script><p>world <strong>wide</strong></p><style>.bad {}</style>"

const failure = (value: string) => ({ type: "error", value })

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
    expect(WebFetchTool.description.split("\n\n")).toHaveLength(2)
  })

  it.scoped("registers and fetches an ordinary hostname HTTP URL without rewriting it", () => {
    const fake = fakeClient(() => new Response("hello", { headers: { "content-type": "text/plain" } }))
    const url = "http://example.com/public"
    return Effect.gen(function* () {
      const turn = yield* (yield* ToolRegistry.Service).materialize()
      expect(turn.definitions.map((definition) => definition.name)).toEqual(["webfetch"])
      const settlement = yield* settle({ url, format: "text", timeout: 4 })
      expect(settlement.result).toEqual({ type: "text", value: "hello" })
      expect(settlement.output?.structured).toEqual({ url, contentType: "text/plain", format: "text", output: "hello" })
      expect(yield* FakePermission.asserts).toEqual([
        {
          sessionID: "ses_webfetch",
          agent: "build",
          action: "webfetch",
          resources: [url],
          save: ["*"],
          metadata: { url, format: "text", timeout: 4 },
          source: { type: "tool", messageID: "msg_tool_test", callID: "call-webfetch" },
        },
      ])
      expect(fake.requests.map((request) => request.url)).toEqual([url])
      const headers = fake.requests[0]!.headers
      expect(headers["accept"]).toContain("text/plain;q=1.0")
      expect(headers["accept"]).toBe("text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1")
      expect(headers["user-agent"]).toBe(WebFetchTool.BROWSER_USER_AGENT)
      expect(headers["user-agent"]).toBe(
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36",
      )
      expect(headers["accept-language"]).toBe("en-US,en;q=0.9")
    }).pipe(Effect.provide(env(fake.layer)))
  })

  it.scoped("sends the exact Accept header for each format", () => {
    const fake = fakeClient(() => new Response("x", { headers: { "content-type": "text/plain" } }))
    return Effect.gen(function* () {
      yield* settle({ url: "http://example.com/a" })
      yield* settle({ url: "http://example.com/a", format: "html" })
      expect(fake.requests.map((request) => request.headers["accept"])).toEqual([
        "text/markdown;q=1.0, text/x-markdown;q=0.9, text/plain;q=0.8, text/html;q=0.7, */*;q=0.1",
        "text/html;q=1.0, application/xhtml+xml;q=0.9, text/plain;q=0.8, text/markdown;q=0.7, */*;q=0.1",
      ])
    }).pipe(Effect.provide(env(fake.layer)))
  })

  it.scoped("accepts localhost URLs with the same requested-URL permission check", () =>
    Effect.gen(function* () {
      const { base } = yield* server((_, response) => {
        response.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
        response.end("local")
      })
      const url = `${base.replace("127.0.0.1", "localhost")}/here`
      const settlement = yield* settle({ url, format: "text" }).pipe(Effect.provide(env(NodeHttpClient.layerUndici)))
      expect(settlement.result).toEqual({ type: "text", value: "local" })
      expect(settlement.output?.structured).toMatchObject({ contentType: "text/plain; charset=utf-8" })
    }),
  )

  for (const [label, client] of [
    ["undici", NodeHttpClient.layerUndici],
    ["fetch", FetchHttpClient.layer],
  ] as const) {
    it.scoped(`follows redirects while approving only the requested URL (${label})`, () =>
      Effect.gen(function* () {
        const paths: Array<string> = []
        const { base } = yield* server((request, response) => {
          paths.push(request.url ?? "")
          if (request.url === "/start") {
            response.writeHead(302, { location: "/target" })
            response.end()
            return
          }
          response.writeHead(200, { "content-type": "text/plain" })
          response.end("redirected")
        })
        const url = `${base}/start`
        return yield* Effect.gen(function* () {
          const settlement = yield* settle({ url, format: "text" })
          expect(settlement.result).toEqual({ type: "text", value: "redirected" })
          expect((yield* FakePermission.asserts).map((input) => input.resources)).toEqual([[url]])
          expect(paths).toEqual(["/start", "/target"])
        }).pipe(Effect.provide(env(client)))
      }),
    )
  }

  it.scoped("rejects non-HTTP schemes before permission or transport", () => {
    const fake = fakeClient(() => new Response("x"))
    return Effect.gen(function* () {
      const settlement = yield* settle({ url: "file:///etc/passwd" })
      expect(settlement.result).toEqual(failure("Unable to fetch file:///etc/passwd"))
      const invalid = yield* settle({ url: "not a url" })
      expect(invalid.result).toEqual(failure("Unable to fetch not a url"))
      expect(yield* FakePermission.asserts).toEqual([])
      expect(fake.requests).toEqual([])
    }).pipe(Effect.provide(env(fake.layer)))
  })

  it.scoped("converts HTML to requested markdown and text", () =>
    Effect.gen(function* () {
      const { base } = yield* server((_, response) => {
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        response.end("<h1>Hello</h1><p>world</p>")
      })
      return yield* Effect.gen(function* () {
        const markdown = yield* settle({ url: `${base}/page` })
        expect(markdown.result).toEqual({ type: "text", value: "# Hello\n\nworld" })
        const text = yield* settle({ url: `${base}/page`, format: "text" })
        expect(text.result).toEqual({ type: "text", value: "Helloworld" })
        const html = yield* settle({ url: `${base}/page`, format: "html" })
        expect(html.result).toEqual({ type: "text", value: "<h1>Hello</h1><p>world</p>" })
      }).pipe(Effect.provide(env(NodeHttpClient.layerUndici)))
    }),
  )

  it.scoped("returns non-HTML bodies unchanged whatever the format", () => {
    const fake = fakeClient(() => new Response("<h1>raw</h1>", { headers: { "content-type": "application/json" } }))
    return Effect.gen(function* () {
      const settlement = yield* settle({ url: "http://example.com/data" })
      expect(settlement.result).toEqual({ type: "text", value: "<h1>raw</h1>" })
    }).pipe(Effect.provide(env(fake.layer)))
  })

  it.scoped("returns an error result when HTML-to-Markdown conversion throws", () => {
    const nested = `${"<div>".repeat(10_000)}deep${"</div>".repeat(10_000)}`
    const fake = fakeClient(() => new Response(nested, { headers: { "content-type": "text/html" } }))
    const url = "http://example.com/nested"
    return Effect.gen(function* () {
      const settlement = yield* settle({ url })
      expect(settlement.result).toEqual(failure(`Unable to fetch ${url}`))
    }).pipe(Effect.provide(env(fake.layer)))
  })

  it.scoped("rejects declared and streamed oversized bodies", () =>
    Effect.gen(function* () {
      let streamed = 0
      const { base } = yield* server((request, response) => {
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
        const declared = yield* settle({ url: `${base}/declared` })
        expect(declared.result).toEqual(failure(`Unable to fetch ${base}/declared`))
        const stream = yield* settle({ url: `${base}/streamed` })
        expect(stream.result).toEqual(failure(`Unable to fetch ${base}/streamed`))
        expect(streamed).toBe(WebFetchTool.MAX_RESPONSE_BYTES + 1)
      }).pipe(Effect.provide(env(NodeHttpClient.layerUndici)))
    }),
  )

  it.scoped("accepts a body of exactly 5 MiB", () => {
    const body = Buffer.alloc(WebFetchTool.MAX_RESPONSE_BYTES, "a")
    const fake = fakeClient(() => new Response(body, { headers: { "content-type": "text/plain" } }))
    return Effect.gen(function* () {
      const settlement = yield* settle({ url: "http://example.com/big", format: "text" })
      expect(settlement.output?.structured).toMatchObject({ output: body.toString("utf8") })
    }).pipe(Effect.provide(env(fake.layer)))
  })

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

  it.scoped("keeps images and files unsupported until typed settlement can carry attachments", () => {
    const types = ["image/png", "application/pdf"]
    const fake = fakeClient((_, index) => new Response("bytes", { headers: { "content-type": types[index]! } }))
    return Effect.gen(function* () {
      for (const type of types) {
        const url = `http://example.com/${type}`
        const settlement = yield* settle({ url })
        expect(settlement.result).toEqual(failure(`Unable to fetch ${url}`))
      }
      expect(fake.requests).toHaveLength(2)
    }).pipe(Effect.provide(env(fake.layer)))
  })

  it.scoped("accepts SVG and XML-family content types as text", () => {
    const types = ["image/svg+xml", "application/atom+xml", "application/ld+json", ""]
    const fake = fakeClient((_, index) => {
      const headers = new Headers()
      if (types[index] !== "") headers.set("content-type", types[index]!)
      return new Response("<x/>", { headers })
    })
    return Effect.gen(function* () {
      for (const _ of types) {
        const settlement = yield* settle({ url: "http://example.com/doc" })
        expect(settlement.result).toEqual({ type: "text", value: "<x/>" })
      }
    }).pipe(Effect.provide(env(fake.layer)))
  })

  it.scoped("retries Cloudflare challenges with an honest user agent", () => {
    const fake = fakeClient((_, index) =>
      index === 0
        ? new Response("challenge", {
            status: 403,
            headers: { "cf-mitigated": "challenge", "content-type": "text/html" },
          })
        : new Response("ok", { headers: { "content-type": "text/plain" } }),
    )
    return Effect.gen(function* () {
      const settlement = yield* settle({ url: "https://example.com/protected" })
      expect(settlement.result).toEqual({ type: "text", value: "ok" })
      expect(fake.requests).toHaveLength(2)
      expect(fake.requests[0]!.headers["user-agent"]).toContain("Mozilla/5.0")
      expect(fake.requests[1]!.headers["user-agent"]).toBe("toolgate")
    }).pipe(Effect.provide(env(fake.layer)))
  })

  it.scoped("a non-2xx status, and a 403 without the challenge header, fail without retry", () => {
    const fake = fakeClient((url) =>
      url.endsWith("/forbidden")
        ? new Response("no", { status: 403, headers: { "content-type": "text/plain" } })
        : new Response("gone", { status: 404, headers: { "content-type": "text/plain" } }),
    )
    return Effect.gen(function* () {
      expect((yield* settle({ url: "http://example.com/forbidden" })).result).toEqual(
        failure("Unable to fetch http://example.com/forbidden"),
      )
      expect((yield* settle({ url: "http://example.com/missing" })).result).toEqual(
        failure("Unable to fetch http://example.com/missing"),
      )
      expect(fake.requests).toHaveLength(2)
    }).pipe(Effect.provide(env(fake.layer)))
  })

  it.effect("times out stalled requests", () => {
    const fake = fakeClient(() => undefined)
    return Effect.gen(function* () {
      const fiber = yield* Effect.fork(settle({ url: "https://1.1.1.1/slow", timeout: 1 }))
      yield* TestClock.adjust("1 second")
      const settlement = yield* Fiber.join(fiber)
      expect(settlement.result).toEqual(failure("Unable to fetch https://1.1.1.1/slow"))
      expect(fake.requests.map((request) => request.url)).toEqual(["https://1.1.1.1/slow"])
    }).pipe(Effect.provide(env(fake.layer)), Effect.scoped)
  })

  it.scoped("maps blocked and corrected permissions to P5 messages without a request", () => {
    const fake = fakeClient(() => new Response("x"))
    return Effect.gen(function* () {
      yield* FakePermission.deny("webfetch")
      const blocked = yield* settle({ url: "https://example.com/x" })
      expect(blocked.result).toEqual(
        failure("Permission denied by configured rules for webfetch: https://example.com/x"),
      )
      expect(fake.requests).toEqual([])
    }).pipe(Effect.provide(env(fake.layer)))
  })

  it.scoped("maps a corrected permission to the user's feedback", () => {
    const fake = fakeClient(() => new Response("x"))
    return Effect.gen(function* () {
      const state = yield* FakePermission.FakePermissionState
      yield* Ref.set(state.corrected, new Map([["webfetch", "use the docs site"]]))
      const settlement = yield* settle({ url: "https://example.com/x" })
      expect(settlement.result).toEqual(
        failure(
          "The user rejected permission to use this specific tool call with the following feedback: use the docs site",
        ),
      )
      expect(fake.requests).toEqual([])
    }).pipe(Effect.provide(env(fake.layer)))
  })

  it.effect("keeps the exact inner failure messages in ToolFailure.error", () =>
    Effect.gen(function* () {
      const { service } = yield* FakePermission.makeFake
      const client = fakeClient((url) => {
        if (url.endsWith("/png")) return new Response("x", { headers: { "content-type": "image/png" } })
        if (url.endsWith("/pdf")) return new Response("x", { headers: { "content-type": "application/pdf" } })
        if (url.endsWith("/big"))
          return new Response("x", { headers: { "content-type": "text/plain", "content-length": "5242881" } })
        return undefined
      })
      const tool = WebFetchTool.make(Effect.runSync(HttpClient.HttpClient.pipe(Effect.provide(client.layer))), service)
      const inner = (url: string, timeout?: number) =>
        Effect.flip(
          Tool.settle(
            tool,
            { id: "call-inner", name: "webfetch", input: timeout === undefined ? { url } : { url, timeout } },
            { sessionID: "ses_webfetch", agent: "build", assistantMessageID: "msg", toolCallID: "call-inner" },
          ),
        ).pipe(Effect.map((failure) => [failure.message, (failure.error as Error).message]))
      expect(yield* inner("http://a.test/png")).toEqual([
        "Unable to fetch http://a.test/png",
        "Unsupported fetched image content type: image/png",
      ])
      expect(yield* inner("http://a.test/pdf")).toEqual([
        "Unable to fetch http://a.test/pdf",
        "Unsupported fetched file content type: application/pdf",
      ])
      expect(yield* inner("http://a.test/big")).toEqual([
        "Unable to fetch http://a.test/big",
        "Response too large (exceeds 5242880 byte limit)",
      ])
      const slow = yield* Effect.fork(inner("http://a.test/slow", 1))
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(slow)).toEqual(["Unable to fetch http://a.test/slow", "Request timed out"])
    }),
  )
})
