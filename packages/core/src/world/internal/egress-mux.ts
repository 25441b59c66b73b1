/**
 * The wire between the egress bridge (inside the sandbox) and the egress proxy (in toolgate): many TCP connections
 * carried over one inherited, already-connected socket. Each connection is a stream of frames:
 *
 * | bytes | field |
 * |---|---|
 * | 1 | kind: 1 open, 2 data, 3 end, 4 close, 5 credit |
 * | 4 | stream id (unsigned, big-endian; never 0) |
 * | 4 | payload length (unsigned, big-endian) |
 * | n | payload: data bytes (1 to `MAX_PAYLOAD`), a 4-byte credit for `credit`, nothing otherwise |
 *
 * Only the bridge opens streams, with strictly increasing ids. `end` is a half-close (no more data from the sender),
 * `close` an abort. Flow control is per stream: a sender may have at most `WINDOW` bytes unacknowledged; the receiver
 * returns `credit` as its consumer reads them, so a slow connection never stalls the others and memory stays bounded
 * (`WINDOW` per stream each way, `MAX_STREAMS` streams). A frame that breaks these rules ends the whole channel.
 *
 * This file is dependency-free (Node built-ins only) because the bridge loads it in a fresh Node process inside the
 * sandbox. See docs/egress.md.
 */
import { Buffer } from "node:buffer"
import { EventEmitter } from "node:events"
import { Duplex, finished } from "node:stream"

/** The bytes before each payload. */
export const HEADER_BYTES = 9
/** The largest data payload of one frame. */
export const MAX_PAYLOAD = 64 * 1024
/** The unacknowledged bytes a sender may have in flight per stream. */
export const WINDOW = 256 * 1024
/** The streams the proxy side keeps open at once; later opens are closed at once. */
export const MAX_STREAMS = 256

/** The frame kinds. */
export const Kind = { open: 1, data: 2, end: 3, close: 4, credit: 5 } as const
/** @see Kind */
export type Kind = (typeof Kind)[keyof typeof Kind]

/** One frame. */
export interface Frame {
  readonly kind: Kind
  readonly stream: number
  readonly payload: Uint8Array
}

/** A frame or a sequence of frames that breaks the format; the channel carrying it is closed. */
export class ProtocolError extends Error {
  override readonly name = "EgressMux.ProtocolError"
}

const EMPTY = Buffer.alloc(0)
const MAX_ID = 0xffffffff

/** Whether `frame` is well formed: a known kind, a stream id in 1..2^32-1, and the payload size its kind requires. */
export const validate = (frame: Frame): string | undefined => {
  if (!Number.isInteger(frame.stream) || frame.stream < 1 || frame.stream > MAX_ID) return "stream id out of range"
  const size = frame.payload.byteLength
  switch (frame.kind) {
    case Kind.data:
      return size >= 1 && size <= MAX_PAYLOAD ? undefined : `data payload of ${size} bytes`
    case Kind.credit:
      return size === 4 ? undefined : `credit payload of ${size} bytes`
    case Kind.open:
    case Kind.end:
    case Kind.close:
      return size === 0 ? undefined : `payload on a control frame`
    default:
      return `unknown frame kind ${String(frame.kind)}`
  }
}

/** The bytes of `frame`; throws `ProtocolError` for a malformed one. */
export const encode = (frame: Frame): Buffer => {
  const invalid = validate(frame)
  if (invalid !== undefined) throw new ProtocolError(invalid)
  const bytes = Buffer.allocUnsafe(HEADER_BYTES + frame.payload.byteLength)
  headerOf(frame.kind, frame.stream, frame.payload.byteLength).copy(bytes, 0)
  bytes.set(frame.payload, HEADER_BYTES)
  return bytes
}

/** A `credit` frame returning `bytes` to the sender of `stream`. */
export const credit = (stream: number, bytes: number): Frame => {
  const payload = Buffer.allocUnsafe(4)
  payload.writeUInt32BE(bytes, 0)
  return { kind: Kind.credit, stream, payload }
}

/** The 9-byte header of a frame with a `size`-byte payload. */
const headerOf = (kind: Kind, stream: number, size: number): Buffer => {
  const bytes = Buffer.allocUnsafe(HEADER_BYTES)
  bytes.writeUInt8(kind, 0)
  bytes.writeUInt32BE(stream, 1)
  bytes.writeUInt32BE(size, 5)
  return bytes
}

/**
 * Reassembles frames from chunks split or merged anywhere. Chunks are queued and a frame is copied only when it
 * spans chunks; a payload inside one chunk is a view of it.
 */
export class Decoder {
  private readonly chunks: Array<Buffer> = []
  private size = 0

  /** The frames completed by `chunk`, in order; throws `ProtocolError` on the first malformed one. */
  push(chunk: Uint8Array): Array<Frame> {
    const incoming = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    if (incoming.length > 0) {
      this.chunks.push(incoming)
      this.size += incoming.length
    }
    const frames: Array<Frame> = []
    while (this.size >= HEADER_BYTES) {
      const header = this.peek(HEADER_BYTES)
      const kind = header.readUInt8(0) as Kind
      const stream = header.readUInt32BE(1)
      const size = header.readUInt32BE(5)
      // Checked before waiting for the payload, so a huge announced length never makes us buffer it.
      if (size > MAX_PAYLOAD) throw new ProtocolError(`payload of ${size} bytes announced`)
      if (this.size < HEADER_BYTES + size) break
      const bytes = this.take(HEADER_BYTES + size)
      const frame: Frame = { kind, stream, payload: bytes.subarray(HEADER_BYTES) }
      const invalid = validate(frame)
      if (invalid !== undefined) throw new ProtocolError(invalid)
      frames.push(frame)
    }
    return frames
  }

  /** Bytes of an incomplete frame held back. */
  get pending(): number {
    return this.size
  }

  /** The first `n` queued bytes as one buffer, without consuming them. */
  private peek(n: number): Buffer {
    const first = this.chunks[0]!
    if (first.length >= n) return first
    const joined = Buffer.concat(this.chunks, this.size)
    this.chunks.length = 0
    this.chunks.push(joined)
    return joined
  }

  /** Removes and returns the first `n` queued bytes (a view when they lie in one chunk). */
  private take(n: number): Buffer {
    this.size -= n
    const first = this.chunks[0]!
    if (first.length >= n) {
      if (first.length === n) this.chunks.shift()
      else this.chunks[0] = first.subarray(n)
      return first.subarray(0, n)
    }
    const out = Buffer.allocUnsafe(n)
    let at = 0
    while (at < n) {
      const chunk = this.chunks[0]!
      const part = Math.min(chunk.length, n - at)
      chunk.copy(out, at, 0, part)
      at += part
      if (part === chunk.length) this.chunks.shift()
      else this.chunks[0] = chunk.subarray(part)
    }
    return out
  }
}

/** Options of a `Mux`. */
export interface MuxOptions {
  /** `bridge` opens streams; `proxy` accepts them (at most `maxStreams` at once). */
  readonly side: "bridge" | "proxy"
  readonly window?: number
  readonly maxStreams?: number
}

/**
 * One side of a multiplexed channel. Emits `stream` (proxy side) with each stream the bridge opened, and `close`
 * once the channel is gone (every stream is destroyed with it).
 */
export class Mux extends EventEmitter {
  readonly window: number
  private readonly streams = new Map<number, MuxStream>()
  private readonly decoder = new Decoder()
  private readonly drainWaiters: Array<() => void> = []
  private lastOpened = 0
  private closed = false

  constructor(
    private readonly channel: Duplex,
    private readonly options: MuxOptions,
  ) {
    super()
    this.window = options.window ?? WINDOW
    channel.on("data", (chunk: Buffer) => this.receive(chunk))
    channel.on("drain", () => this.drained())
    channel.on("end", () => this.close())
    channel.on("close", () => this.close())
    channel.on("error", () => this.close())
  }

  /** Opens a new stream (bridge side). On a closed channel the stream is returned already destroyed. */
  open(): MuxStream {
    if (this.options.side !== "bridge") throw new Error("only the bridge opens streams")
    const id = ++this.lastOpened
    const stream = new MuxStream(this, id)
    if (this.closed) {
      stream.destroy()
      return stream
    }
    this.streams.set(id, stream)
    this.send({ kind: Kind.open, stream: id, payload: EMPTY })
    return stream
  }

  /** Destroys every stream and the channel. */
  close(): void {
    if (this.closed) return
    this.closed = true
    for (const stream of [...this.streams.values()]) stream.destroy()
    this.streams.clear()
    this.channel.destroy()
    for (const waiter of this.drainWaiters.splice(0)) waiter()
    this.emit("close")
  }

  get isClosed(): boolean {
    return this.closed
  }

  /** Open streams. */
  get size(): number {
    return this.streams.size
  }

  /** Writes a frame; false when the channel asks the writer to wait for `whenDrained`. */
  send(frame: Frame): boolean {
    if (this.closed) return true
    if (frame.kind !== Kind.data) return this.channel.write(encode(frame))
    const invalid = validate(frame)
    if (invalid !== undefined) throw new ProtocolError(invalid)
    // Header and payload go out in one vectored write, without copying the payload.
    this.channel.cork()
    this.channel.write(headerOf(frame.kind, frame.stream, frame.payload.byteLength))
    const ready = this.channel.write(frame.payload)
    this.channel.uncork()
    return ready
  }

  /** Runs `waiter` once the channel drained (or closed). */
  whenDrained(waiter: () => void): void {
    if (this.closed) waiter()
    else this.drainWaiters.push(waiter)
  }

  /** Forgets a destroyed stream. */
  forget(stream: MuxStream): void {
    if (this.streams.get(stream.id) === stream) this.streams.delete(stream.id)
  }

  private drained(): void {
    for (const waiter of this.drainWaiters.splice(0)) waiter()
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return
    try {
      for (const frame of this.decoder.push(chunk)) this.dispatch(frame)
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error
      this.emit("protocolError", error)
      this.close()
    }
  }

  private dispatch(frame: Frame): void {
    if (this.closed) return
    if (frame.kind === Kind.open) {
      if (this.options.side !== "proxy") throw new ProtocolError("open from the proxy side")
      if (frame.stream <= this.lastOpened) throw new ProtocolError(`stream ${frame.stream} reused or out of order`)
      this.lastOpened = frame.stream
      if (this.streams.size >= (this.options.maxStreams ?? MAX_STREAMS)) {
        this.send({ kind: Kind.close, stream: frame.stream, payload: EMPTY })
        return
      }
      const stream = new MuxStream(this, frame.stream)
      this.streams.set(frame.stream, stream)
      this.emit("stream", stream)
      return
    }
    const stream = this.streams.get(frame.stream)
    // Frames still in flight for a stream this side already destroyed are dropped.
    if (stream === undefined) {
      if (frame.stream > this.lastOpened) throw new ProtocolError(`frame for unopened stream ${frame.stream}`)
      return
    }
    switch (frame.kind) {
      case Kind.data:
        return stream.receiveData(frame.payload)
      case Kind.end:
        return stream.receiveEnd()
      case Kind.close:
        return stream.receiveClose()
      case Kind.credit:
        return stream.receiveCredit(Buffer.from(frame.payload).readUInt32BE(0))
    }
  }
}

/** A write waiting for credit: the rest of its chunk and its callback. */
interface Blocked {
  chunk: Buffer
  readonly callback: (error?: Error | null) => void
}

/** One connection on a `Mux`: a Duplex with half-close, flow-controlled by credit. */
export class MuxStream extends Duplex {
  /** Bytes this side may still send. */
  private sendCredit: number
  /** Bytes received and not yet credited back. */
  private outstanding = 0
  private blocked: Blocked | undefined
  private receivedEnd = false
  private sentEnd = false
  private peerClosed = false

  constructor(
    private readonly mux: Mux,
    readonly id: number,
  ) {
    super({ allowHalfOpen: true, readableHighWaterMark: mux.window })
    this.sendCredit = mux.window
  }

  // Socket-like no-ops, so `http.Server` can serve a stream as a connection.
  setTimeout(): this {
    return this
  }
  setNoDelay(): this {
    return this
  }
  setKeepAlive(): this {
    return this
  }

  override _read(): void {
    this.grant()
  }

  // Credit is returned after a read took bytes out of the buffer (`_read` runs before they are taken).
  override read(size?: number): unknown {
    const chunk: unknown = super.read(size)
    this.grant()
    return chunk
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.blocked = { chunk, callback }
    this.flush()
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.sentEnd = true
    this.mux.send({ kind: Kind.end, stream: this.id, payload: EMPTY })
    callback()
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const blocked = this.blocked
    this.blocked = undefined
    if (!this.peerClosed && !(this.sentEnd && this.receivedEnd)) {
      this.mux.send({ kind: Kind.close, stream: this.id, payload: EMPTY })
    }
    this.mux.forget(this)
    blocked?.callback(error ?? new Error("stream closed"))
    callback(error)
  }

  /** Sends as much of the blocked write as credit allows; completes it when all is sent and the channel drained. */
  private flush(): void {
    const blocked = this.blocked
    if (blocked === undefined || this.destroyed) return
    let drained = true
    while (blocked.chunk.length > 0 && this.sendCredit > 0) {
      const size = Math.min(blocked.chunk.length, MAX_PAYLOAD, this.sendCredit)
      drained = this.mux.send({ kind: Kind.data, stream: this.id, payload: blocked.chunk.subarray(0, size) })
      blocked.chunk = blocked.chunk.subarray(size)
      this.sendCredit -= size
    }
    if (blocked.chunk.length > 0) return
    this.blocked = undefined
    if (drained) blocked.callback()
    else this.mux.whenDrained(() => blocked.callback())
  }

  /** Returns credit for what the consumer has taken: in batches of a quarter window, or all once it caught up. */
  private grant(): void {
    const consumed = this.outstanding - this.readableLength
    if (consumed <= 0 || this.peerClosed || this.destroyed || this.receivedEnd) return
    if (consumed < this.mux.window / 4 && this.readableLength > 0) return
    this.outstanding -= consumed
    this.mux.send(credit(this.id, consumed))
  }

  receiveData(payload: Uint8Array): void {
    if (this.receivedEnd) throw new ProtocolError(`data after end on stream ${this.id}`)
    if (this.outstanding + payload.byteLength > this.mux.window) {
      throw new ProtocolError(`stream ${this.id} exceeded its window`)
    }
    this.outstanding += payload.byteLength
    this.push(payload)
    this.grant()
  }

  receiveEnd(): void {
    if (this.receivedEnd) throw new ProtocolError(`second end on stream ${this.id}`)
    this.receivedEnd = true
    this.push(null)
  }

  receiveClose(): void {
    this.peerClosed = true
    this.destroy()
  }

  receiveCredit(bytes: number): void {
    this.sendCredit += bytes
    if (this.sendCredit > this.mux.window) throw new ProtocolError(`stream ${this.id} credited past its window`)
    this.flush()
  }
}

/**
 * Joins a local socket and a stream both ways: data and half-closes flow through, and when either side fails or
 * closes before both directions finished, the other is destroyed.
 */
export const link = (a: Duplex, b: Duplex): void => {
  a.pipe(b)
  b.pipe(a)
  const abort = (other: Duplex) => (error?: Error | null) => {
    if (error !== undefined && error !== null) other.destroy()
  }
  a.on("error", () => undefined)
  b.on("error", () => undefined)
  finished(a, abort(b))
  finished(b, abort(a))
}
