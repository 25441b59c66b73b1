import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { HttpClient, HttpClientResponse } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, Fiber, Layer, Ref, Schema, TestClock } from "effect"
import { ApplicationTools, ToolOutputStore, ToolRegistry, WebSearchTool } from "../src/index.js"
import * as FakePermission from "./support/permission.js"

const registry = ToolRegistry.layer.pipe(Layer.provide([ApplicationTools.layer, ToolOutputStore.layerPassthrough]))

const env = (client: Layer.Layer<HttpClient.HttpClient>, config: WebSearchTool.ConfigInput) =>
  WebSearchTool.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(registry, FakePermission.layer, client, WebSearchTool.layerConfig(config))),
  )

const SESSION = "ses_websearch"

const settle = (input: Record<string, unknown>, sessionID = SESSION) =>
  Effect.gen(function* () {
    const turn = yield* (yield* ToolRegistry.Service).materialize()
    return yield* turn.settle({
      sessionID,
      agent: "build",
      assistantMessageID: "msg_tool_test",
      call: { id: "call-websearch", name: "websearch", input },
    })
  })

interface Captured {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: unknown
}

/** A loopback MCP endpoint answering every POST with `reply`; records each request. */
const server = (reply: (response: http.ServerResponse) => void) =>
  Effect.gen(function* () {
    const requests: Array<Captured> = []
    const instance = yield* Effect.acquireRelease(
      Effect.async<http.Server>((resume) => {
        const created = http.createServer((request, response) => {
          const chunks: Array<Buffer> = []
          request.on("data", (chunk: Buffer) => chunks.push(chunk))
          request.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8")
            requests.push({
              method: request.method ?? "",
              url: request.url ?? "",
              headers: request.headers,
              body: text === "" ? undefined : JSON.parse(text),
            })
            reply(response)
          })
        })
        created.listen(0, "127.0.0.1", () => resume(Effect.succeed(created)))
      }),
      (created) =>
        Effect.async<void>((resume) => {
          created.closeAllConnections()
          created.close(() => resume(Effect.void))
        }),
    )
    const { port } = instance.address() as AddressInfo
    return { base: `http://127.0.0.1:${port}`, requests }
  })

const jsonReply = (text: string) => (response: http.ServerResponse) => {
  response.writeHead(200, { "content-type": "application/json" })
  response.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text }] } }))
}

const failure = (value: string) => ({ type: "error", value })

/** A session id whose FNV-1a hash is even (exa) or odd (parallel). */
const sessionFor = (provider: WebSearchTool.Provider) => {
  for (let i = 0; ; i++) {
    const id = `ses_${i}`
    if (WebSearchTool.selectProvider(id) === provider) return id
  }
}

describe("websearch", () => {
  it("rejects out-of-range numeric controls", () => {
    const decode = Schema.decodeUnknownEither(WebSearchTool.Input)
    expect(decode({ query: "q", numResults: 0 })._tag).toBe("Left")
    expect(decode({ query: "q", numResults: 21 })._tag).toBe("Left")
    expect(decode({ query: "q", numResults: 2.5 })._tag).toBe("Left")
    expect(decode({ query: "q", contextMaxCharacters: 50_001 })._tag).toBe("Left")
    expect(decode({ query: "q", numResults: 20, contextMaxCharacters: 50_000 })._tag).toBe("Right")
  })

  it("has the expected constants and description", () => {
    expect(WebSearchTool.NO_RESULTS).toBe("No search results found. Please try a different query.")
    expect(WebSearchTool.EXA_URL).toBe("https://mcp.exa.ai/mcp")
    expect(WebSearchTool.PARALLEL_URL).toBe("https://search.parallel.ai/mcp")
    expect(WebSearchTool.MAX_RESPONSE_BYTES).toBe(262144)
    expect(WebSearchTool.VERSION).toBe(
      JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")).version,
    )
    const paragraphs = WebSearchTool.description.split("\n\n")
    expect(paragraphs).toHaveLength(4)
    expect(paragraphs[3]).toContain(String(new Date().getFullYear()))
  })

  it("selects a stable provider per session", () => {
    // FNV-1a 32-bit reference values ("a" → 0xe40c292c, "foobar" → 0xbf9cf968).
    expect(WebSearchTool.fnv1a("a")).toBe(0xe40c292c)
    expect(WebSearchTool.fnv1a("foobar")).toBe(0xbf9cf968)
    expect(WebSearchTool.selectProvider("")).toBe("exa")
    expect(WebSearchTool.selectProvider("a")).toBe("exa")
    expect(WebSearchTool.selectProvider("foobar")).toBe("exa")
    expect(WebSearchTool.selectProvider("b")).toBe(WebSearchTool.fnv1a("b") % 2 === 0 ? "exa" : "parallel")
    FastCheck.assert(
      FastCheck.property(FastCheck.string(), (id) => {
        const first = WebSearchTool.selectProvider(id)
        expect(WebSearchTool.selectProvider(id)).toBe(first)
        // The reference renders the hash in base 36 and parses it back: the same number.
        const roundTrip = Number.parseInt(WebSearchTool.fnv1a(id).toString(36), 36)
        expect(first).toBe(id === "" || roundTrip % 2 === 0 ? "exa" : "parallel")
      }),
    )
    expect(new Set(Array.from({ length: 64 }, (_, i) => WebSearchTool.selectProvider(`ses_${i}`)))).toEqual(
      new Set(["exa", "parallel"]),
    )
  })

  it("supports an explicit operational override", () => {
    const both = { enableExa: true, enableParallel: true }
    expect(WebSearchTool.selectProvider(sessionFor("exa"), both, "parallel")).toBe("parallel")
    expect(WebSearchTool.selectProvider(sessionFor("parallel"), both, "exa")).toBe("exa")
  })

  it("prefers Parallel when both explicit flags are enabled", () => {
    expect(WebSearchTool.selectProvider(sessionFor("exa"), { enableExa: true, enableParallel: true })).toBe("parallel")
  })

  it("prefers Exa when only its explicit flag is enabled", () => {
    expect(WebSearchTool.selectProvider(sessionFor("parallel"), { enableExa: true, enableParallel: false })).toBe("exa")
  })

  it("reads the environment with the renamed product flags", () => {
    expect(WebSearchTool.fromEnvironment({})).toEqual({
      enableExa: false,
      enableParallel: false,
      exaUrl: WebSearchTool.EXA_URL,
      parallelUrl: WebSearchTool.PARALLEL_URL,
    })
    expect(
      WebSearchTool.fromEnvironment({
        TOOLGATE_WEBSEARCH_PROVIDER: "parallel",
        TOOLGATE_EXPERIMENTAL_EXA: "TRUE",
        TOOLGATE_ENABLE_PARALLEL: "1",
        TOOLGATE_WEBSEARCH_EXA_URL: "http://127.0.0.1:1/exa",
        TOOLGATE_WEBSEARCH_PARALLEL_URL: "http://127.0.0.1:1/parallel",
        EXA_API_KEY: "k1",
        PARALLEL_API_KEY: "k2",
      }),
    ).toEqual({
      provider: "parallel",
      enableExa: true,
      enableParallel: true,
      exaUrl: "http://127.0.0.1:1/exa",
      parallelUrl: "http://127.0.0.1:1/parallel",
      exaApiKey: "k1",
      parallelApiKey: "k2",
    })
    const other = WebSearchTool.fromEnvironment({ TOOLGATE_WEBSEARCH_PROVIDER: "google", TOOLGATE_EXPERIMENTAL: "yes" })
    expect(other.provider).toBeUndefined()
    expect(other.enableExa).toBe(false)
    expect(WebSearchTool.fromEnvironment({ TOOLGATE_EXPERIMENTAL: "true" }).enableExa).toBe(true)
    expect(WebSearchTool.fromEnvironment({ TOOLGATE_EXPERIMENTAL_PARALLEL: "1" }).enableParallel).toBe(true)
  })

  it("parses plain JSON-RPC responses", () => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "plain results" }] },
    })
    expect(WebSearchTool.parseResponse(body)).toBe("plain results")
    expect(
      WebSearchTool.parseResponse(
        JSON.stringify({
          result: {
            content: [
              { type: "text", text: "" },
              { type: "text", text: "second" },
            ],
          },
        }),
      ),
    ).toBe("second")
    expect(WebSearchTool.parseResponse("")).toBeUndefined()
  })

  it("parses SSE JSON-RPC responses and ignores non-JSON frames", () => {
    const json = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "sse results" }] } })
    expect(WebSearchTool.parseResponse(`data: [DONE]\nevent: message\ndata: ${json}\n\n`)).toBe("sse results")
    expect(WebSearchTool.parseResponse("event: message\ndata: [DONE]\n")).toBeUndefined()
  })

  it.scoped("registers websearch, asserts query permission, and calls Exa", () =>
    Effect.gen(function* () {
      const parallel = yield* server(jsonReply("wrong provider"))
      const exa = yield* server(jsonReply("exa results"))
      const input = {
        query: "effect ts",
        numResults: 3,
        livecrawl: "preferred",
        type: "fast",
        contextMaxCharacters: 2500,
      }
      return yield* Effect.gen(function* () {
        const turn = yield* (yield* ToolRegistry.Service).materialize()
        expect(turn.definitions.map((definition) => definition.name)).toEqual(["websearch"])
        const settlement = yield* settle(input)
        expect(settlement.result).toEqual({ type: "text", value: "exa results" })
        expect(settlement.output?.structured).toEqual({ provider: "exa", text: "exa results" })
        expect(yield* FakePermission.asserts).toEqual([
          {
            sessionID: SESSION,
            agent: "build",
            action: "websearch",
            resources: ["effect ts"],
            save: ["*"],
            metadata: { ...input, provider: "exa" },
            source: { type: "tool", messageID: "msg_tool_test", callID: "call-websearch" },
          },
        ])
        expect(parallel.requests).toEqual([])
        expect(exa.requests).toHaveLength(1)
        const [request] = exa.requests
        expect(request!.method).toBe("POST")
        expect(request!.url).toBe("/mcp/exa")
        expect(request!.headers["accept"]).toBe("application/json, text/event-stream")
        expect(request!.body).toEqual({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: "web_search_exa",
            arguments: {
              query: "effect ts",
              type: "fast",
              numResults: 3,
              livecrawl: "preferred",
              contextMaxCharacters: 2500,
            },
          },
        })
      }).pipe(
        Effect.provide(
          env(NodeHttpClient.layerUndici, {
            provider: "exa",
            exaUrl: `${exa.base}/mcp/exa`,
            parallelUrl: `${parallel.base}/mcp`,
          }),
        ),
      )
    }),
  )

  it.scoped("fills Exa defaults and omits contextMaxCharacters when absent", () =>
    Effect.gen(function* () {
      const exa = yield* server(jsonReply("defaults"))
      return yield* Effect.gen(function* () {
        yield* settle({ query: "q" }, sessionFor("exa"))
        expect((exa.requests[0]!.body as { params: unknown }).params).toEqual({
          name: "web_search_exa",
          arguments: { query: "q", type: "auto", numResults: 8, livecrawl: "fallback" },
        })
      }).pipe(
        Effect.provide(
          env(NodeHttpClient.layerUndici, { exaUrl: `${exa.base}/mcp`, parallelUrl: "http://127.0.0.1:9/none" }),
        ),
      )
    }),
  )

  it.scoped("calls Parallel with session ID and keeps bearer credentials out of output", () =>
    Effect.gen(function* () {
      const parallel = yield* server(jsonReply("parallel results"))
      const session = sessionFor("parallel")
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ query: "news" }, session)
        expect(settlement.result).toEqual({ type: "text", value: "parallel results" })
        expect(settlement.output?.structured).toEqual({ provider: "parallel", text: "parallel results" })
        expect(JSON.stringify(settlement)).not.toContain("parallel-secret")
        const [request] = parallel.requests
        expect(parallel.requests).toHaveLength(1)
        expect(request!.url).toBe("/search")
        expect(request!.headers["authorization"]).toBe("Bearer parallel-secret")
        expect(request!.headers["user-agent"]).toBe(`toolgate/${WebSearchTool.VERSION}`)
        expect(request!.body).toEqual({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: "web_search",
            arguments: { objective: "news", search_queries: ["news"], session_id: session },
          },
        })
        expect(Object.keys((request!.body as { params: { arguments: object } }).params.arguments)).not.toContain(
          "model_name",
        )
        expect((yield* FakePermission.asserts)[0]?.metadata).toEqual({ query: "news", provider: "parallel" })
      }).pipe(
        Effect.provide(
          env(NodeHttpClient.layerUndici, {
            parallelUrl: `${parallel.base}/search`,
            exaUrl: "http://127.0.0.1:9/none",
            parallelApiKey: "parallel-secret",
          }),
        ),
      )
    }),
  )

  it.scoped("keeps an Exa credential in the transport URL and out of model output", () =>
    Effect.gen(function* () {
      const exa = yield* server(jsonReply("keyed results"))
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ query: "keyed" })
        expect(settlement.result).toEqual({ type: "text", value: "keyed results" })
        expect(exa.requests.map((request) => request.url)).toEqual(["/mcp?exaApiKey=exa+secret"])
        const serialised = JSON.stringify(settlement)
        expect(serialised).not.toContain("exa secret")
        expect(serialised).not.toContain("exa+secret")
        expect(WebSearchTool.exaEndpoint(`${exa.base}/mcp`, "exa secret")).toBe(`${exa.base}/mcp?exaApiKey=exa+secret`)
      }).pipe(
        Effect.provide(
          env(NodeHttpClient.layerUndici, { provider: "exa", exaUrl: `${exa.base}/mcp`, exaApiKey: "exa secret" }),
        ),
      )
    }),
  )

  it.scoped("returns the legacy no-results fallback as concise model text", () =>
    Effect.gen(function* () {
      const exa = yield* server((response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.end()
      })
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ query: "nothing" })
        expect(settlement.result).toEqual({
          type: "text",
          value: "No search results found. Please try a different query.",
        })
        expect(exa.requests).toHaveLength(1)
      }).pipe(Effect.provide(env(NodeHttpClient.layerUndici, { provider: "exa", exaUrl: `${exa.base}/mcp` })))
    }),
  )

  it.scoped("a non-2xx status is an error", () =>
    Effect.gen(function* () {
      const exa = yield* server((response) => {
        response.writeHead(500, { "content-type": "application/json" })
        response.end(JSON.stringify({ result: { content: [{ type: "text", text: "not this" }] } }))
      })
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ query: "broken" })
        expect(settlement.result).toEqual(failure("Unable to search the web for broken"))
      }).pipe(Effect.provide(env(NodeHttpClient.layerUndici, { provider: "exa", exaUrl: `${exa.base}/mcp` })))
    }),
  )

  it.scoped("rejects oversized MCP response bodies", () => {
    let pulls = 0
    let cancelled = false
    const chunk = new Uint8Array(64 * 1024).fill(120)
    const client = HttpClient.make((request) =>
      Effect.sync(() =>
        HttpClientResponse.fromWeb(
          request,
          new Response(
            new ReadableStream<Uint8Array>(
              {
                pull: (controller) => {
                  pulls++
                  controller.enqueue(chunk)
                },
                cancel: () => {
                  cancelled = true
                },
              },
              { highWaterMark: 0 },
            ),
            { headers: { "content-type": "text/event-stream" } },
          ),
        ),
      ),
    )
    return Effect.gen(function* () {
      const settlement = yield* settle({ query: "too much" })
      expect(settlement.result).toEqual(failure("Unable to search the web for too much"))
      expect(pulls).toBeGreaterThan(4)
      expect(pulls).toBeLessThan(10)
      expect(cancelled).toBe(true)
    }).pipe(Effect.provide(env(Layer.succeed(HttpClient.HttpClient, client), { provider: "exa" })))
  })

  it.scoped("rejects a declared oversized body before reading it", () =>
    Effect.gen(function* () {
      const exa = yield* server((response) => {
        response.writeHead(200, { "content-type": "application/json", "content-length": String(300 * 1024) })
        response.write("{")
      })
      return yield* Effect.gen(function* () {
        const settlement = yield* settle({ query: "declared" })
        expect(settlement.result).toEqual(failure("Unable to search the web for declared"))
      }).pipe(Effect.provide(env(NodeHttpClient.layerUndici, { provider: "exa", exaUrl: `${exa.base}/mcp` })))
    }),
  )

  it.effect("times out after 25 seconds", () => {
    const requests = Ref.unsafeMake(0)
    const client = HttpClient.make(() =>
      Effect.zipRight(
        Ref.update(requests, (n) => n + 1),
        Effect.never,
      ),
    )
    return Effect.gen(function* () {
      const fiber = yield* Effect.fork(settle({ query: "slow" }))
      yield* TestClock.adjust("24 seconds")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      const settlement = yield* Fiber.join(fiber)
      expect(settlement.result).toEqual(failure("Unable to search the web for slow"))
      expect(yield* Ref.get(requests)).toBe(1)
    }).pipe(Effect.provide(env(Layer.succeed(HttpClient.HttpClient, client), { provider: "parallel" })), Effect.scoped)
  })

  it.scoped("maps blocked and corrected permissions to their model-visible messages without a request", () => {
    let requests = 0
    const client = HttpClient.make(() => Effect.sync(() => requests++).pipe(Effect.zipRight(Effect.never)))
    return Effect.gen(function* () {
      yield* FakePermission.deny("websearch")
      const blocked = yield* settle({ query: "secret plans" })
      expect(blocked.result).toEqual(failure("Permission denied by configured rules for websearch: secret plans"))
      const state = yield* FakePermission.FakePermissionState
      yield* Ref.set(state.denied, new Set())
      yield* Ref.set(state.corrected, new Map([["websearch", "search the docs instead"]]))
      const corrected = yield* settle({ query: "secret plans" })
      expect(corrected.result).toEqual(
        failure(
          "The user rejected permission to use this specific tool call with the following feedback: search the docs instead",
        ),
      )
      expect(requests).toBe(0)
    }).pipe(Effect.provide(env(Layer.succeed(HttpClient.HttpClient, client), { provider: "exa" })))
  })
})
