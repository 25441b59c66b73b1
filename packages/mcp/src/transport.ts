/**
 * The server's transports. `stdio` reads newline-delimited JSON-RPC from stdin and writes to stdout with a limit on
 * one message (`MAX_MESSAGE_BYTES`, 64 MiB by default): a longer line is dropped as it streams in — never buffered
 * past the limit — and answered with a JSON-RPC error naming the limit, for the id the line carried; the next line is
 * served as usual. A line that is not UTF-8 JSON, or starts with a byte order mark, is answered with a parse error.
 * `guard` puts `McpMessage.check` in front of any transport (`serve` applies it to every transport, stdio included),
 * so a malformed message with an id is always answered. End of input closes the transport. See docs/adapters.md.
 *
 * @since 0.3.0
 */
import { isUtf8 } from "node:buffer"
import Tokenizer from "@streamparser/json/tokenizer.js"
import TokenType from "@streamparser/json/utils/types/tokenType.js"
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js"
import * as McpMessage from "./message.js"

/**
 * The default limit on one received message, in bytes (64 MiB): a 50 MB `write` fits.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024

/**
 * Options of `stdio`.
 *
 * @since 0.3.0
 * @category models
 */
export interface StdioOptions {
  /** The limit on one received message in bytes, without its newline (default `MAX_MESSAGE_BYTES`). */
  readonly maxMessageBytes?: number
  /** Where messages come from (default `process.stdin`). */
  readonly input?: NodeJS.ReadableStream
  /** Where messages go (default `process.stdout`). */
  readonly output?: NodeJS.WritableStream
}

const sizeText = (bytes: number): string =>
  bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`

/**
 * The message of the error an oversized message is answered with.
 *
 * @since 0.3.0
 * @category constructors
 */
export const oversizedMessage = (size: number, limit: number): string =>
  `Invalid Request: the message is ${size} bytes, over this server's limit of ${limit} bytes (${sizeText(limit)}) on one message`

/**
 * Finds the top-level `"id"` of a JSON object streamed through it, keeping nothing else: what an oversized message
 * is answered to. Gives up (no id) on anything that is not a JSON object.
 */
class IdFinder {
  id: RequestId | null = null
  private done = false
  private depth = 0
  private state: "key" | "colon" | "value" | "other" = "other"
  private key: string | undefined
  private readonly tokenizer = new Tokenizer({ stringBufferSize: 64 * 1024 })

  constructor() {
    this.tokenizer.onToken = ({ token, value }) => this.token(token, value)
    this.tokenizer.onError = () => void (this.done = true)
  }

  feed(piece: Uint8Array): void {
    if (this.done) return
    try {
      this.tokenizer.write(piece)
    } catch {
      this.done = true
    }
  }

  private token(token: TokenType, value: unknown): void {
    if (this.done) return
    const top = this.depth === 1
    switch (token) {
      case TokenType.LEFT_BRACE:
      case TokenType.LEFT_BRACKET:
        if (this.depth === 0 && token === TokenType.LEFT_BRACKET) this.done = true
        if (this.depth === 0) this.state = "key"
        else if (top) this.state = "other"
        this.depth++
        return
      case TokenType.RIGHT_BRACE:
      case TokenType.RIGHT_BRACKET:
        this.depth--
        if (this.depth === 0) this.done = true
        return
      case TokenType.COMMA:
        if (top) this.state = "key"
        return
      case TokenType.COLON:
        if (top && this.state === "colon") this.state = "value"
        return
      default:
        if (!top) return
        if (this.state === "key" && token === TokenType.STRING) {
          this.key = value as string
          this.state = "colon"
          return
        }
        if (this.state === "value" && this.key === "id") {
          if (typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value))) {
            this.id = value
            this.done = true
          }
        }
        this.state = "other"
    }
  }
}

class StdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: <T extends JSONRPCMessage>(message: T) => void

  private readonly input: NodeJS.ReadableStream
  private readonly output: NodeJS.WritableStream
  private readonly limit: number
  private held: Array<Buffer> = []
  private heldBytes = 0
  /** Set while an oversized line streams in: its size so far and the id it carries. */
  private oversized: { bytes: number; readonly finder: IdFinder } | undefined
  private closed = false

  constructor(options: StdioOptions) {
    this.input = options.input ?? process.stdin
    this.output = options.output ?? process.stdout
    this.limit = options.maxMessageBytes ?? MAX_MESSAGE_BYTES
  }

  private readonly ondata = (chunk: Buffer | string) => {
    const data = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk
    let start = 0
    for (;;) {
      const newline = data.indexOf(0x0a, start)
      if (newline === -1) return this.take(data.subarray(start))
      this.take(data.subarray(start, newline))
      this.endLine()
      start = newline + 1
    }
  }

  private readonly onend = () => void this.close()

  private readonly oninputerror = (error: Error) => this.onerror?.(error)

  // A closed stdout (the client went away) ends the connection instead of crashing the process with EPIPE.
  private readonly onoutputerror = (error: Error) => {
    this.onerror?.(error)
    void this.close()
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return
    if (this.oversized !== undefined) {
      this.oversized.bytes += piece.length
      this.oversized.finder.feed(piece)
      return
    }
    if (this.heldBytes + piece.length <= this.limit) {
      this.held.push(piece)
      this.heldBytes += piece.length
      return
    }
    const finder = new IdFinder()
    for (const held of this.held) finder.feed(held)
    finder.feed(piece)
    this.oversized = { bytes: this.heldBytes + piece.length, finder }
    this.held = []
    this.heldBytes = 0
  }

  private endLine(): void {
    const oversized = this.oversized
    if (oversized !== undefined) {
      this.oversized = undefined
      const message = oversizedMessage(oversized.bytes, this.limit)
      return this.refuse(message, oversized.finder.id, ErrorCode.InvalidRequest, {
        limit: this.limit,
        size: oversized.bytes,
      })
    }
    const bytes = this.held.length === 1 ? this.held[0]! : Buffer.concat(this.held, this.heldBytes)
    this.held = []
    this.heldBytes = 0
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length
    const line = bytes.subarray(0, end)
    if (line.every((byte) => byte === 0x20 || byte === 0x09)) return
    if (!isUtf8(line)) return this.refuse("Parse error: the message is not valid UTF-8", null, ErrorCode.ParseError)
    const text = line.toString("utf8")
    const bom = text.charCodeAt(0) === 0xfeff
    let value: unknown
    try {
      value = JSON.parse(bom ? text.slice(1) : text)
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error)
      return this.refuse(`Parse error: ${detail}`, null, ErrorCode.ParseError)
    }
    if (bom) {
      const message = "Parse error: the message starts with a byte order mark (U+FEFF); send UTF-8 JSON without one"
      return this.refuse(message, McpMessage.idOf(value), ErrorCode.ParseError)
    }
    // Checked by `guard`, which every server transport goes through.
    this.onmessage?.(value as JSONRPCMessage)
  }

  private refuse(message: string, id: RequestId | null, code: number, data?: unknown): void {
    this.onerror?.(new McpMessage.RefusedError({ reason: message }))
    this.write(McpMessage.errorReply(id, code, message, data)).catch((error) => this.onerror?.(error))
  }

  async start(): Promise<void> {
    this.input.on("data", this.ondata)
    this.input.on("end", this.onend)
    this.input.on("error", this.oninputerror)
    this.output.on("error", this.onoutputerror)
  }

  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    return this.write(message)
  }

  private write(message: JSONRPCMessage | McpMessage.ErrorReply): Promise<void> {
    if (this.closed) return Promise.resolve()
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.output.once("drain", resolve)
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.input.off("data", this.ondata)
    this.input.off("end", this.onend)
    this.input.off("error", this.oninputerror)
    if (this.input.listenerCount("data") === 0) this.input.pause()
    this.held = []
    this.heldBytes = 0
    this.oversized = undefined
    this.onclose?.()
  }
}

/**
 * A stdio server transport with a limit on one received message (see the module doc).
 *
 * @since 0.3.0
 * @category constructors
 */
export const stdio = (options: StdioOptions = {}): Transport => new StdioTransport(options)

/**
 * `transport` with every received value checked by `McpMessage.check` first: accepted messages go on to the
 * server, refused ones are answered (when they carry an id) and reported through `onerror`.
 *
 * @since 0.3.0
 * @category combinators
 */
export const guard = (transport: Transport): Transport => {
  const guarded: Transport = {
    start: () => transport.start(),
    send: (message, options) => transport.send(message, options),
    close: () => transport.close(),
    setProtocolVersion: (version) => transport.setProtocolVersion?.(version),
  }
  Object.defineProperty(guarded, "sessionId", { get: () => transport.sessionId, enumerable: true })
  transport.onclose = () => guarded.onclose?.()
  transport.onerror = (error) => guarded.onerror?.(error)
  transport.onmessage = (value, extra) => {
    const checked = McpMessage.check(value)
    if (checked._tag === "Accepted") return guarded.onmessage?.(checked.message, extra)
    guarded.onerror?.(new McpMessage.RefusedError({ reason: checked.reason }))
    for (const reply of checked.replies) {
      // An `id: null` reply is what JSON-RPC asks for; the SDK's type has no null id.
      transport.send(reply as unknown as JSONRPCMessage).catch((error: Error) => guarded.onerror?.(error))
    }
    if (checked.inward !== undefined) guarded.onmessage?.(checked.inward, extra)
  }
  return guarded
}
