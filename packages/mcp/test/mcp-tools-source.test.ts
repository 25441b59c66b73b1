/**
 * MCP servers as a tool source, against real servers started by the tests: the fixture server on the official SDK
 * over stdio (a child process) and over streamable HTTP on 127.0.0.1 (a free port), and the published
 * `@modelcontextprotocol/server-everything`. Every call goes through a registry materialization of a real Location
 * (`Core.layerTest`: in-memory database, the real permission gate and approval protocol).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Approvals, Config, Global, PermissionV2, SessionV2, ToolRegistry } from "@toolgate/core"
import { ApprovalServer } from "@toolgate/core/server"
import { Core } from "@toolgate/core/testing"
import { Duration, Effect, Layer, Redacted, type Scope } from "effect"
import { McpTools } from "../src/index.js"
import { packageDir } from "./support/client.js"
import { serveHttp } from "./support/fixture-server.js"

const FIXTURE = path.join(packageDir, "test-bundle", "mcp-fixture.js")

const tempFile = (name: string) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-mcp-src-")))
  return path.join(dir, name)
}

const fixture = (log: string, extra: Partial<McpTools.ServerConfig> = {}): McpTools.ServerConfig => ({
  command: [process.execPath, FIXTURE, log],
  ...extra,
})

interface Documents {
  /** Servers in the user's configuration directory. */
  readonly user?: Record<string, McpTools.ServerConfig>
  /** Servers in the project's own document. */
  readonly project?: Record<string, McpTools.ServerConfig>
  readonly permissions?: ReadonlyArray<PermissionV2.Rule>
}

/** `McpTools.layer` over documents placed where the user's and the project's configuration live. */
const mcpLayer = (documents: Documents) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const global = yield* Global.Service
      const entries: Array<Config.Entry> = []
      if (documents.user !== undefined || documents.permissions !== undefined)
        entries.push({
          type: "document",
          path: path.join(global.config, "toolgate.json"),
          info: {
            ...(documents.user === undefined ? {} : { mcp: documents.user }),
            ...(documents.permissions === undefined ? {} : { permissions: documents.permissions }),
          },
        })
      if (documents.project !== undefined)
        entries.push({ type: "document", path: "/project/toolgate.json", info: { mcp: documents.project } })
      return McpTools.layer.pipe(Layer.provide(Config.layerFromEntries(entries)))
    }),
  )

const stack = (documents: Documents, options: Core.TestOptions = {}) =>
  mcpLayer(documents).pipe(
    Layer.provideMerge(
      Core.layerTest({
        ...options,
        ...(documents.permissions === undefined ? {} : { config: { permissions: [...documents.permissions] } }),
      }),
    ),
  )

/** Runs `body` in a fresh stack with session `ses_1` of agent `build`. */
const within = <A, E>(
  documents: Documents,
  body: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof stack>> | Scope.Scope>,
  options: Core.TestOptions = {},
) =>
  Effect.gen(function* () {
    yield* (yield* SessionV2.Service).create({ id: "ses_1", agent: "build" })
    return yield* body
  }).pipe(Effect.provide(stack(documents, options)), Effect.scoped)

/** Waits until `server` is in state `tag` (polling the service; bounded). */
const until = (server: string, predicate: (status: McpTools.Status) => boolean) =>
  Effect.gen(function* () {
    const mcp = yield* McpTools.Service
    for (;;) {
      const status = (yield* mcp.servers()).find((candidate) => candidate.name === server)
      if (status !== undefined && predicate(status)) return status
      yield* Effect.sleep(Duration.millis(10))
    }
  }).pipe(Effect.timeoutFail({ duration: Duration.seconds(20), onTimeout: () => new Error(`timed out waiting for ${server}`) }))

const running = (server: string) => until(server, (status) => status.state._tag === "running")

let calls = 0
const settle = (materialization: ToolRegistry.Materialization, name: string, input: unknown = {}) =>
  materialization.settle({
    sessionID: "ses_1",
    agent: "build",
    assistantMessageID: "msg_1",
    call: { id: `call_${++calls}`, name, input },
  })

const materialize = Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize())

const lines = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean) : [])

describe("McpTools as a tool source (stdio fixture)", () => {
  it.live("lists a user server's tools as <server>_<tool> and calls them through a materialization", () => {
    const log = tempFile("log")
    return within(
      { user: { fx: fixture(log) } },
      Effect.gen(function* () {
        const status = yield* running("fx")
        expect(status.origin).toBe("user")
        expect(status.tools).toContain("fx_echo")
        const materialization = yield* materialize
        const echo = materialization.definitions.find((definition) => definition.name === "fx_echo")!
        expect(echo.description).toBe("Echoes its text")
        expect(echo.inputSchema).toMatchObject({ properties: { text: { type: "string" } }, required: ["text"] })
        expect(echo.annotations).toMatchObject({ readOnlyHint: true })
        expect((yield* settle(materialization, "fx_echo", { text: "hi" })).result).toEqual({
          type: "text",
          value: "echo: hi",
        })
        const rich = yield* settle(materialization, "fx_rich")
        expect(rich.output?.structured).toEqual({ count: 3 })
        expect(rich.output?.content).toEqual([
          { type: "text", text: "three parts" },
          { type: "file", uri: `data:image/png;base64,${Buffer.from("png-bytes").toString("base64")}`, mime: "image/png" },
          { type: "text", text: "file:///notes.txt\nnote body" },
        ])
        expect((yield* settle(materialization, "fx_fail")).result).toEqual({
          type: "error",
          value: "the fixture failed on purpose",
        })
      }),
      { permission: "once" },
    )
  })

  it.live("include and exclude choose the tools; a server with enabled: false does not start", () => {
    const log = tempFile("log")
    const off = tempFile("off")
    return within(
      { user: { fx: fixture(log, { include: ["e*", "rich"], exclude: ["rich"] }), off: fixture(off, { enabled: false }) } },
      Effect.gen(function* () {
        expect((yield* running("fx")).tools).toEqual(["fx_echo"])
        const mcp = yield* McpTools.Service
        expect((yield* mcp.servers()).find((status) => status.name === "off")?.state).toEqual({ _tag: "disabled" })
        expect(lines(off)).toEqual([])
      }),
    )
  })

  it.live("an embedder adds a server from code; a tool name two servers both map to fails naming both", () => {
    const log = tempFile("log")
    return within(
      { user: { a_b: fixture(log, { include: ["echo"] }) } },
      Effect.gen(function* () {
        yield* running("a_b")
        const mcp = yield* McpTools.Service
        const duplicate = yield* Effect.flip(mcp.add("a_b", fixture(log)))
        expect(duplicate.message).toBe("An MCP server named a_b is already configured")
        yield* mcp.add("extra", fixture(log, { include: ["echo"] }))
        expect((yield* running("extra")).origin).toBe("code")
        yield* mcp.add("a.b", fixture(log, { include: ["echo"] }))
        const failed = yield* until("a.b", (status) => status.state._tag === "failed")
        expect(failed.state).toEqual({
          _tag: "failed",
          cause: "The tool echo of MCP server a.b and the tool echo of MCP server a_b both become the tool name a_b_echo",
        })
        expect((yield* materialize).definitions.map((definition) => definition.name)).toEqual(
          expect.arrayContaining(["a_b_echo", "extra_echo"]),
        )
      }),
    )
  })

  it.live("a destructive tool asks under the built-in rules; a user rule naming it decides; the ask shows the arguments", () => {
    const log = tempFile("log")
    const asked: Array<Approvals.Prompt> = []
    const permission: Core.PermissionScript = (_request, prompt) => {
      asked.push(prompt)
      return { reply: "once" }
    }
    return Effect.gen(function* () {
      yield* within(
        { user: { fx: fixture(log) } },
        Effect.gen(function* () {
          yield* running("fx")
          const materialization = yield* materialize
          // The reference preset allows everything: a plain tool runs, a destructive one asks.
          expect((yield* settle(materialization, "fx_echo", { text: "a" })).result.type).toBe("text")
          expect(asked).toEqual([])
          expect((yield* settle(materialization, "fx_delete_all", {})).result).toEqual({ type: "text", value: "deleted" })
          expect(asked).toHaveLength(1)
          const [prompt] = asked
          expect(prompt!.request.action).toBe("mcp")
          expect(prompt!.request.resources[0]).toMatch(/^definition:fx\/delete_all@[0-9a-f]{16}$/)
          expect(prompt!.request.metadata).toMatchObject({ server: "fx", tool: "delete_all", arguments: {} })
          expect(prompt!.tool).toMatchObject({ name: "fx_delete_all", input: {} })
        }),
        { permission },
      )
      asked.length = 0
      yield* within(
        { user: { fx: fixture(log) }, permissions: [{ action: "mcp", resource: "fx/delete_*", effect: "allow" }] },
        Effect.gen(function* () {
          yield* running("fx")
          expect((yield* settle(yield* materialize, "fx_delete_all", {})).result.type).toBe("text")
          expect(asked).toEqual([])
        }),
        { permission },
      )
      yield* within(
        { user: { fx: fixture(log) }, permissions: [{ action: "mcp", resource: "fx/*", effect: "deny" }] },
        Effect.gen(function* () {
          yield* running("fx")
          expect((yield* settle(yield* materialize, "fx_echo", { text: "a" })).result).toEqual({
            type: "error",
            value: "Permission denied by configured rules for mcp: fx/echo",
          })
        }),
        { permission },
      )
    })
  })

  it.live("tools/list_changed in the middle of a turn: a call from the earlier materialization is stale", () => {
    const log = tempFile("log")
    return within(
      { user: { fx: fixture(log) } },
      Effect.gen(function* () {
        yield* running("fx")
        const registry = yield* ToolRegistry.Service
        const before = yield* registry.materialize()
        const echo = before.definitions.find((definition) => definition.name === "fx_echo")!
        expect((yield* settle(before, "fx_rewrite")).result).toEqual({ type: "text", value: "rewritten" })
        // The server sent list_changed; wait until the registration was replaced.
        for (;;) {
          const now = yield* registry.materialize()
          const next = now.definitions.find((definition) => definition.name === "fx_echo")
          if (next !== undefined && next.description !== echo.description) break
          yield* Effect.sleep(Duration.millis(10))
        }
        expect((yield* settle(before, "fx_echo", { text: "x" })).result).toEqual({
          type: "error",
          value: "Stale tool call: fx_echo",
        })
        const after = yield* registry.materialize()
        expect(after.definitions.find((definition) => definition.name === "fx_echo")?.description).toBe(
          "Echoes its text, and now something else",
        )
        expect((yield* settle(after, "fx_echo", { text: "x" })).result).toEqual({ type: "text", value: "echo: x" })
      }),
      { permission: "once" },
    )
  })

  it.live("a rewritten definition voids the saved approval, and the prompt says the definition changed", () => {
    const log = tempFile("log")
    const asked: Array<Approvals.Prompt> = []
    return within(
      { user: { fx: fixture(log) }, permissions: [{ action: "mcp", resource: "*", effect: "ask" }] },
      Effect.gen(function* () {
        yield* running("fx")
        const registry = yield* ToolRegistry.Service
        const first = yield* registry.materialize()
        expect((yield* settle(first, "fx_echo", { text: "1" })).result.type).toBe("text")
        expect(asked.map((prompt) => prompt.request.metadata?.["tool"])).toEqual(["echo"])
        // Saved: the same definition runs without asking.
        expect((yield* settle(first, "fx_echo", { text: "2" })).result.type).toBe("text")
        expect(asked).toHaveLength(1)
        yield* settle(first, "fx_rewrite")
        expect(asked).toHaveLength(2)
        let second = yield* registry.materialize()
        while (second.definitions.find((d) => d.name === "fx_echo")?.description === "Echoes its text") {
          yield* Effect.sleep(Duration.millis(10))
          second = yield* registry.materialize()
        }
        expect((yield* settle(second, "fx_echo", { text: "3" })).result.type).toBe("text")
        expect(asked).toHaveLength(3)
        const changed = asked[2]!
        expect(changed.request.resources[0]).not.toBe(asked[0]!.request.resources[0])
        expect(changed.request.metadata).toMatchObject({ definitionChanged: true })
        expect(String(changed.request.metadata?.["description"])).toContain("changed the definition of fx/echo")
      }),
      {
        permission: (request, prompt) => {
          asked.push(prompt)
          return request.metadata?.["tool"] === "echo" ? { choice: "always:pattern" } : { reply: "once" }
        },
      },
    )
  })

  it.live("a project document's server does not start until the user approves it (project_program)", () => {
    const log = tempFile("log")
    const asked: Array<Approvals.Prompt> = []
    return within(
      { project: { proj: fixture(log) } },
      Effect.gen(function* () {
        const mcp = yield* McpTools.Service
        const [status] = yield* mcp.servers()
        expect(status).toMatchObject({
          name: "proj",
          origin: "project",
          document: "/project/toolgate.json",
          state: { _tag: "waiting", program: `${process.execPath} ${FIXTURE} ${log}` },
          tools: [],
        })
        expect(lines(log)).toEqual([])
        expect((yield* materialize).definitions.some((definition) => definition.name.startsWith("proj_"))).toBe(false)
        yield* mcp.approve("proj", { sessionID: "ses_1" })
        expect(asked.map((prompt) => [prompt.request.action, prompt.request.resources])).toEqual([
          ["project_program", [`${process.execPath} ${FIXTURE} ${log}`]],
        ])
        yield* running("proj")
        expect(lines(log)).toHaveLength(1)
      }),
      {
        permission: (_request, prompt) => {
          asked.push(prompt)
          return { reply: "once" }
        },
      },
    )
  })

  it.live("a rejected project_program keeps the server waiting", () => {
    const log = tempFile("log")
    return within(
      { project: { proj: fixture(log) } },
      Effect.gen(function* () {
        const mcp = yield* McpTools.Service
        const exit = yield* Effect.exit(mcp.approve("proj", { sessionID: "ses_1" }))
        expect(exit._tag).toBe("Failure")
        expect((yield* mcp.servers())[0]?.state._tag).toBe("waiting")
        expect(lines(log)).toEqual([])
      }),
      { permission: () => ({ reply: "reject", message: "no" }) },
    )
  })

  it.live("a hang hits the per-call timeout and the server receives notifications/cancelled", () => {
    const log = tempFile("log")
    return within(
      { user: { fx: fixture(log, { timeout: 300 }) } },
      Effect.gen(function* () {
        yield* running("fx")
        expect((yield* settle(yield* materialize, "fx_hang")).result).toEqual({
          type: "error",
          value: "MCP server fx: hang did not answer within 300 ms (the call was cancelled)",
        })
        while (!lines(log).includes("cancelled hang")) yield* Effect.sleep(Duration.millis(10))
      }),
      { permission: "once" },
    )
  })

  it.live("a crash withdraws the server's tools and restarts it", () => {
    const log = tempFile("log")
    return within(
      { user: { fx: fixture(log) } },
      Effect.gen(function* () {
        yield* running("fx")
        const before = yield* materialize
        const crashed = yield* settle(before, "fx_crash")
        expect(crashed.result.type).toBe("error")
        expect(String(crashed.result.value)).toMatch(/^MCP server fx: the call of crash failed/)
        yield* until("fx", (status) => status.state._tag === "running" && lines(log).filter((line) => line.startsWith("start")).length === 2)
        expect((yield* settle(before, "fx_echo", { text: "x" })).result).toEqual({
          type: "error",
          value: "Stale tool call: fx_echo",
        })
        expect((yield* settle(yield* materialize, "fx_echo", { text: "x" })).result).toEqual({
          type: "text",
          value: "echo: x",
        })
      }),
      { permission: "once" },
    )
  })

  it.live("progress notifications reach Tool.Context.progress", () => {
    const log = tempFile("log")
    return within(
      { user: { fx: fixture(log) } },
      Effect.gen(function* () {
        yield* running("fx")
        const materialization = yield* materialize
        const updates: Array<unknown> = []
        const done = yield* materialization.settle({
          sessionID: "ses_1",
          agent: "build",
          assistantMessageID: "msg_1",
          call: { id: "call_progress", name: "fx_progress", input: {} },
          progress: (update) => updates.push(update),
        })
        expect(done.result).toEqual({ type: "text", value: "done" })
        expect(updates).toEqual([
          { message: "step 1", progress: 1, total: 4 },
          { message: "step 2", progress: 2, total: 4 },
        ])
      }),
      { permission: "once" },
    )
  })
})

describe("McpTools as a tool source (streamable HTTP on 127.0.0.1)", () => {
  it.live("lists and calls over streamable HTTP", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => serveHttp()),
      (server) =>
        within(
          { user: { web: { url: server.url } } },
          Effect.gen(function* () {
            yield* running("web")
            expect((yield* settle(yield* materialize, "web_echo", { text: "over http" })).result).toEqual({
              type: "text",
              value: "echo: over http",
            })
          }),
          { permission: "once" },
        ),
      (server) => Effect.promise(() => server.close()),
    ),
  )

  it.live("a 50 MB result is bounded once by the settlement", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => serveHttp()),
      (server) =>
        within(
          { user: { web: { url: server.url } } },
          Effect.gen(function* () {
            yield* running("web")
            const big = yield* settle(yield* materialize, "web_big")
            expect(big.result.type).toBe("text")
            expect(big.outputPaths).toHaveLength(1)
            expect(String(big.result.value).length).toBeLessThan(100 * 1024)
            expect(fs.statSync(big.outputPaths![0]!).size).toBe(50 * 1024 * 1024)
          }),
          { permission: "once" },
        ),
      (server) => Effect.promise(() => server.close()),
    ),
  )

  it.live("an elicitation is an ask answered through the HTTP approval API", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => serveHttp()),
      (server) =>
        within(
          { user: { web: { url: server.url } } },
          Effect.gen(function* () {
            yield* running("web")
            const approvals = yield* ApprovalServer.Service
            const auth = { authorization: `Bearer ${Redacted.value(approvals.token)}` }
            const call = yield* Effect.fork(settle(yield* materialize, "web_confirm"))
            let asks: Array<Approvals.Prompt> = []
            while (asks.length === 0) {
              asks = (yield* Effect.promise(() =>
                fetch(`${approvals.url}/api/asks`, { headers: auth }).then((response) => response.json()),
              )) as Array<Approvals.Prompt>
              if (asks.length === 0) yield* Effect.sleep(Duration.millis(10))
            }
            const [ask] = asks
            expect(ask!.request.action).toBe("mcp_elicitation")
            expect(ask!.request.resources).toEqual(["web"])
            expect(ask!.request.metadata).toMatchObject({ description: "Really go on?" })
            const answered = yield* Effect.promise(() =>
              fetch(`${approvals.url}/api/asks/${ask!.request.id}/answer`, {
                method: "POST",
                headers: { ...auth, "content-type": "application/json" },
                body: JSON.stringify({ digest: ask!.digest, choice: "once" }),
              }),
            )
            expect(answered.status).toBe(204)
            const settled = yield* Effect.fromFiber(call)
            expect(settled.result).toEqual({ type: "text", value: "elicitation: accept" })
          }).pipe(Effect.provide(ApprovalServer.layer({ port: 0 }))),
        ),
      (server) => Effect.promise(() => server.close()),
    ),
  )
})

describe("McpTools as a tool source (the published @modelcontextprotocol/server-everything)", () => {
  it.live("lists its tools and calls echo and get-sum over stdio", () => {
    const entry = path.join(packageDir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
    return within(
      { user: { everything: { command: [process.execPath, entry, "stdio"] } } },
      Effect.gen(function* () {
        const status = yield* running("everything")
        expect(status.tools).toEqual(expect.arrayContaining(["everything_echo", "everything_get-sum"]))
        // The server announces list changes of its own: a call refused as stale is settled again against a fresh
        // materialization (as a runner's next turn would).
        const call = (name: string, input: unknown) =>
          Effect.gen(function* () {
            for (let attempt = 0; ; attempt++) {
              const settled = yield* settle(yield* materialize, name, input)
              if (attempt < 5 && settled.result.value === `Stale tool call: ${name}`) continue
              return settled
            }
          })
        expect((yield* call("everything_echo", { message: "published" })).result).toEqual({
          type: "text",
          value: "Echo: published",
        })
        const sum = yield* call("everything_get-sum", { a: 2, b: 3 })
        expect(String(sum.result.value)).toContain("5")
      }),
      { permission: "once" },
    )
  })
})
