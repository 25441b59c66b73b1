/**
 * Malformed and oversized JSON-RPC over a real server's stdio: every malformed shape that carries an id gets a
 * JSON-RPC error for that id in one line, an oversized message gets an error naming the limit, and the server goes
 * on answering. The lines are written raw to the child's stdin (the SDK client cannot send malformed messages);
 * `McpMessage.check` is also checked in-process, for every JSON value.
 */
import * as ChildProcess from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { McpMessage } from "../src/index.js"
import { packageDir, serverArgs, tempDir } from "./support/client.js"

/** A server child process spoken to in raw lines; each reply line is parsed. */
const rawServer = (env: Record<string, string>) => {
  const child = ChildProcess.spawn(process.execPath, [...serverArgs("serve")], {
    cwd: packageDir,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  })
  const replies: Array<unknown> = []
  const waiters: Array<() => void> = []
  let pending = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    pending += chunk
    for (let newline = pending.indexOf("\n"); newline !== -1; newline = pending.indexOf("\n")) {
      replies.push(JSON.parse(pending.slice(0, newline)))
      pending = pending.slice(newline + 1)
      for (const wake of waiters.splice(0)) wake()
    }
  })
  child.stderr.resume()
  /** Writes `line` (and its newline) and returns the next `count` replies. */
  const exchange = async (line: string | Buffer, count = 1): Promise<Array<any>> => {
    const from = replies.length
    child.stdin.write(line)
    child.stdin.write("\n")
    while (replies.length < from + count) await new Promise<void>((resolve) => waiters.push(resolve))
    return replies.slice(from, from + count)
  }
  const close = () =>
    new Promise<void>((resolve) => {
      child.on("close", () => resolve())
      child.stdin.end()
    })
  return { exchange, close }
}

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
})

describe("malformed JSON-RPC with an id is answered with a JSON-RPC error, and the server goes on", () => {
  let server: ReturnType<typeof rawServer>
  beforeAll(async () => {
    server = rawServer({
      TOOLGATE_MCP_DIR: tempDir("toolgate-mcp-raw-"),
      TOOLGATE_MCP_DATA: tempDir("toolgate-mcp-raw-data-"),
    })
    const [reply] = await server.exchange(initialize)
    expect(reply).toMatchObject({ id: 0, result: { serverInfo: { name: "toolgate" } } })
  }, 60_000)
  afterAll(() => server.close())

  // The line, the id the reply must carry (null: the line has no usable id), the code and the exact message.
  const shapes: ReadonlyArray<readonly [string, string | Buffer, number | string | null, number, string | RegExp]> = [
    [
      '"method" not a string',
      '{"jsonrpc":"2.0","id":1,"method":5}',
      1,
      -32600,
      'Invalid Request: "method" must be a string, not number',
    ],
    [
      'a wrong "jsonrpc"',
      '{"jsonrpc":"1.0","id":2,"method":"ping"}',
      2,
      -32600,
      'Invalid Request: "jsonrpc" must be "2.0"',
    ],
    ['no "jsonrpc"', '{"id":"three","method":"ping"}', "three", -32600, 'Invalid Request: "jsonrpc" must be "2.0"'],
    [
      "array params",
      '{"jsonrpc":"2.0","id":4,"method":"ping","params":[]}',
      4,
      -32602,
      'Invalid params: "params" must be an object (MCP has no positional params), not an array',
    ],
    [
      "null params",
      '{"jsonrpc":"2.0","id":5,"method":"tools/list","params":null}',
      5,
      -32602,
      'Invalid params: "params" must be an object (MCP has no positional params), not null',
    ],
    [
      "a byte order mark",
      '\uFEFF{"jsonrpc":"2.0","id":6,"method":"ping"}',
      6,
      -32700,
      "Parse error: the message starts with a byte order mark (U+FEFF); send UTF-8 JSON without one",
    ],
    [
      "an unexpected member",
      '{"jsonrpc":"2.0","id":7,"method":"ping","extra":true}',
      7,
      -32600,
      'Invalid Request: unexpected member "extra"',
    ],
    [
      "neither method nor result",
      '{"jsonrpc":"2.0","id":8}',
      8,
      -32600,
      'Invalid Request: a message needs "method" (a request or notification) or "result"/"error" (a response)',
    ],
    [
      "both method and result",
      '{"jsonrpc":"2.0","id":9,"method":"ping","result":{}}',
      9,
      -32600,
      'Invalid Request: a request or notification has no "result" or "error"',
    ],
    [
      "tools/call without params",
      '{"jsonrpc":"2.0","id":10,"method":"tools/call"}',
      10,
      -32602,
      "Invalid params of tools/call: params: Invalid input: expected object, received undefined",
    ],
    [
      "tools/call with a number for a name",
      '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":5}}',
      11,
      -32602,
      "Invalid params of tools/call: params.name: Invalid input: expected string, received number",
    ],
    [
      "tools/call with array arguments",
      '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"read","arguments":[]}}',
      12,
      -32602,
      "Invalid params of tools/call: params.arguments: Invalid input: expected record, received array",
    ],
    [
      "initialize without params",
      '{"jsonrpc":"2.0","id":13,"method":"initialize"}',
      13,
      -32602,
      "Invalid params of initialize: params: Invalid input: expected object, received undefined",
    ],
    [
      "an id that is an object",
      '{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}',
      null,
      -32600,
      'Invalid Request: "id" must be a string or an integer, not object',
    ],
    [
      "a fractional id",
      '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
      null,
      -32600,
      'Invalid Request: "id" must be a string or an integer, not number',
    ],
    [
      "a value that is not an object",
      "42",
      null,
      -32600,
      "Invalid Request: a message must be a JSON object, not number",
    ],
    ["not JSON", '{"jsonrpc":"2.0","id":14,', null, -32700, /^Parse error: [^\n]+ in JSON at position 25$/], // (the wording is V8's)
    [
      "bytes that are not UTF-8",
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":15,"method":"ping","params":{"x":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}}'),
      ]),
      null,
      -32700,
      "Parse error: the message is not valid UTF-8",
    ],
  ]

  it.each(shapes)("%s", async (_, line, id, code, message) => {
    const [reply] = await server.exchange(line)
    expect(reply).toEqual({
      jsonrpc: "2.0",
      id,
      error: { code, message: typeof message === "string" ? message : expect.stringMatching(message) },
    })
    // Served again right away.
    expect(await server.exchange('{"jsonrpc":"2.0","id":"after","method":"ping"}')).toEqual([
      { jsonrpc: "2.0", id: "after", result: {} },
    ])
  })

  it("a batch: one error per member that has an id", async () => {
    const batch =
      '[{"jsonrpc":"2.0","id":20,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":21,"method":"ping"}]'
    const message =
      "Invalid Request: batches are not supported (MCP sends one JSON-RPC message per line); send each message on its own line"
    expect(await server.exchange(batch, 2)).toEqual([
      { jsonrpc: "2.0", id: 20, error: { code: -32600, message } },
      { jsonrpc: "2.0", id: 21, error: { code: -32600, message } },
    ])
  })

  it("a malformed notification is not answered; the next request is", async () => {
    expect(
      await server.exchange(
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}\n{"jsonrpc":"2.0","id":"next","method":"ping"}',
      ),
    ).toEqual([{ jsonrpc: "2.0", id: "next", result: {} }])
  })
})

describe("a message over the limit is answered with an error naming the limit, for the id it carries", () => {
  let server: ReturnType<typeof rawServer>
  const limit = 4096
  const message = (size: number) =>
    `Invalid Request: the message is ${size} bytes, over this server's limit of ${limit} bytes (4096 bytes) on one message`
  beforeAll(async () => {
    server = rawServer({
      TOOLGATE_MCP_DIR: tempDir("toolgate-mcp-limit-"),
      TOOLGATE_MCP_DATA: tempDir("toolgate-mcp-limit-data-"),
      TOOLGATE_MCP_MAX_MESSAGE: String(limit),
    })
    await server.exchange(initialize)
  }, 60_000)
  afterAll(() => server.close())

  const big = "x".repeat(3 * limit)
  const cases: ReadonlyArray<readonly [string, string, number | string | null]> = [
    [
      "id last (as the official SDK sends it)",
      JSON.stringify({
        method: "tools/call",
        params: { name: "write", arguments: { path: "a", content: big } },
        jsonrpc: "2.0",
        id: 31,
      }),
      31,
    ],
    [
      "id first",
      JSON.stringify({
        jsonrpc: "2.0",
        id: "first",
        method: "tools/call",
        params: { name: "write", arguments: { path: "a", content: big } },
      }),
      "first",
    ],
    [
      "an id only inside params (not the message's)",
      JSON.stringify({ jsonrpc: "2.0", method: "x", params: { id: 5, big } }),
      null,
    ],
    ["not JSON before its id", `{${big},"id":32}`, null],
  ]

  it.each(cases)("%s", async (_, line, id) => {
    const [reply] = await server.exchange(line)
    const size = Buffer.byteLength(line)
    expect(reply).toEqual({
      jsonrpc: "2.0",
      id,
      error: { code: -32600, message: message(size), data: { limit, size } },
    })
    expect(await server.exchange('{"jsonrpc":"2.0","id":"after","method":"ping"}')).toEqual([
      { jsonrpc: "2.0", id: "after", result: {} },
    ])
  })

  it("a message of exactly the limit is served", async () => {
    const head = '{"jsonrpc":"2.0","id":40,"method":"ping","params":{"_meta":{"pad":"'
    const tail = '"}}}'
    const line = head + "p".repeat(limit - head.length - tail.length) + tail
    expect(Buffer.byteLength(line)).toBe(limit)
    expect(await server.exchange(line)).toEqual([{ jsonrpc: "2.0", id: 40, result: {} }])
  })
})

describe("McpMessage.check", () => {
  it("never throws, and refuses a request with a usable id only with a reply for that id", () => {
    const request = FastCheck.record(
      {
        jsonrpc: FastCheck.oneof(FastCheck.constant("2.0"), FastCheck.jsonValue()),
        id: FastCheck.oneof(FastCheck.integer(), FastCheck.string(), FastCheck.jsonValue()),
        method: FastCheck.oneof(
          FastCheck.constantFrom("ping", "tools/call", "tools/list", "initialize", "other"),
          FastCheck.jsonValue(),
        ),
        params: FastCheck.jsonValue(),
        result: FastCheck.jsonValue(),
      },
      { requiredKeys: [] },
    )
    FastCheck.assert(
      FastCheck.property(FastCheck.oneof(request, FastCheck.jsonValue()), (value) => {
        const checked = McpMessage.check(value)
        if (checked._tag === "Accepted") return
        const id = McpMessage.idOf(value)
        const isRequest = typeof value === "object" && value !== null && !("result" in value) && !("error" in value)
        if (id !== null && isRequest) expect(checked.replies.map((reply) => reply.id)).toEqual([id])
        for (const reply of checked.replies) expect(reply.error.message).not.toContain("\n")
      }),
      { numRuns: 2000 },
    )
  })
})
