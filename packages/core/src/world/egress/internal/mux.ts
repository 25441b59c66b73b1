/**
 * The multiplexer of the egress channel: many TCP connections carried as streams of frames (`frame.ts`) over
 * one inherited, already-connected socket between the bridge (inside the sandbox) and the egress proxy (in
 * toolgate). Only the bridge opens streams, with strictly increasing ids. `end` is a half-close (no more data from
 * the sender), `close` an abort. Flow control is per stream: a sender may have at most the receiver's window
 * unacknowledged, and the receiver returns `credit` as its consumer reads, so a slow connection never stalls the
 * others. The windows differ by side: what toolgate buffers for the sandbox (`PROXY_WINDOW` per stream, at most
 * `MAX_STREAMS` streams) stays small, while the bridge, whose memory is the sandbox's own, takes a large window
 * (`BRIDGE_WINDOW`) so downloads keep their rate when the two processes wait for the CPU. A frame that breaks these
 * rules ends the whole channel.
 *
 * Dependency-free (Node built-ins only): the bridge loads it in a fresh Node process inside the sandbox. See
 * docs/egress.md.
 *
 * @since 0.3.0
 */
import { Buffer } from "node:buffer"
import { EventEmitter } from "node:events"
import { Duplex, finished } from "node:stream"
import {
  credit,
  Decoder,
  encode,
  type Frame,
  headerOf,
  Kind,
  MAX_PAYLOAD,
  ProtocolError,
  validate,
} from "./frame.js"

/**
 * The bytes the proxy side (toolgate) takes per stream before the bridge must wait for credit: what a sandbox can
 * make toolgate buffer per connection.
 *
 * @since 0.3.0
 * @category constants
 */
export const PROXY_WINDOW = 512 * 1024
/**
 * The bytes the bridge side (inside the sandbox) takes per stream before the proxy must wait for credit.
 *
 * @since 0.3.0
 * @category constants
 */
export const BRIDGE_WINDOW = 4 * 1024 * 1024
/**
 * The streams the proxy side keeps open at once; later opens are closed at once.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_STREAMS = 128

const EMPTY = Buffer.alloc(0)

/**
 * Options of a `Mux`.
 *
 * @since 0.3.0
 * @category models
 */
export interface MuxOptions {
  /** `bridge` opens streams; `proxy` accepts them (at most `maxStreams` at once). */
  readonly side: "bridge" | "proxy"
  /** The windows of both sides (both sides must agree): `PROXY_WINDOW` and `BRIDGE_WINDOW` by default. */
  readonly windows?: { readonly proxy: number; readonly bridge: number }
  readonly maxStreams?: number
}

/**
 * One side of a multiplexed channel. Emits `stream` (proxy side) with each stream the bridge opened, and `close`
 * once the channel is gone (every stream is destroyed with it).
 *
 * @since 0.3.0
 * @category models
 */
export class Mux extends EventEmitter {
  /**
   * What this side takes per stream before its peer must wait.
   *
   * @since 0.3.0
   */
  readonly window: number
  /**
   * What the peer takes per stream before this side must wait.
   *
   * @since 0.3.0
   */
  readonly peerWindow: number
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
    const windows = options.windows ?? { proxy: PROXY_WINDOW, bridge: BRIDGE_WINDOW }
    this.window = options.side === "proxy" ? windows.proxy : windows.bridge
    this.peerWindow = options.side === "proxy" ? windows.bridge : windows.proxy
    channel.on("data", (chunk: Buffer) => this.receive(chunk))
    channel.on("drain", () => this.drained())
    channel.on("end", () => this.close())
    channel.on("close", () => this.close())
    channel.on("error", () => this.close())
  }

  /**
   * Opens a new stream (bridge side). On a closed channel the stream is returned already destroyed.
   *
   * @since 0.3.0
   */
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

  /**
   * Destroys every stream and the channel.
   *
   * @since 0.3.0
   */
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

  /**
   * Writes a frame; false when the channel asks the writer to wait for `whenDrained`.
   *
   * @since 0.3.0
   */
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

  /**
   * Runs `waiter` once the channel drained (or closed).
   *
   * @since 0.3.0
   */
  whenDrained(waiter: () => void): void {
    if (this.closed) waiter()
    else this.drainWaiters.push(waiter)
  }

  /**
   * Forgets a destroyed stream.
   *
   * @since 0.3.0
   */
  forget(stream: MuxStream): void {
    if (this.streams.get(stream.id) === stream) this.streams.delete(stream.id)
  }

  /** @since 0.3.0 */
  private drained(): void {
    for (const waiter of this.drainWaiters.splice(0)) waiter()
  }

  /** @since 0.3.0 */
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

  /** @since 0.3.0 */
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

/**
 * One connection on a `Mux`: a Duplex with half-close, flow-controlled by credit.
 *
 * @since 0.3.0
 * @category models
 */
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
    this.sendCredit = mux.peerWindow
  }

  // Socket-like no-ops, so `http.Server` can serve a stream as a connection.
  /** @since 0.3.0 */
  setTimeout(): this {
    return this
  }
  /** @since 0.3.0 */
  setNoDelay(): this {
    return this
  }
  /** @since 0.3.0 */
  setKeepAlive(): this {
    return this
  }

  /** @since 0.3.0 */
  override _read(): void {
    this.grant()
  }

  // Credit is returned after a read took bytes out of the buffer (`_read` runs before they are taken).
  /** @since 0.3.0 */
  override read(size?: number): unknown {
    const chunk: unknown = super.read(size)
    this.grant()
    return chunk
  }

  /** @since 0.3.0 */
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.blocked = { chunk, callback }
    this.flush()
  }

  /** @since 0.3.0 */
  override _final(callback: (error?: Error | null) => void): void {
    this.sentEnd = true
    this.mux.send({ kind: Kind.end, stream: this.id, payload: EMPTY })
    callback()
  }

  /** @since 0.3.0 */
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

  /**
   * Sends as much of the blocked write as credit allows; completes it when all is sent and the channel drained.
   *
   * @since 0.3.0
   */
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

  /**
   * Returns credit for what the consumer has taken, in batches of at least a quarter window.
   *
   * @since 0.3.0
   */
  private grant(): void {
    const consumed = this.outstanding - this.readableLength
    if (consumed <= 0 || this.peerClosed || this.destroyed || this.receivedEnd) return
    // A sender is only ever blocked with a whole window outstanding, so a quarter of it read always frees it.
    if (consumed < this.mux.window / 4) return
    this.outstanding -= consumed
    this.mux.send(credit(this.id, consumed))
  }

  /** @since 0.3.0 */
  receiveData(payload: Uint8Array): void {
    if (this.receivedEnd) throw new ProtocolError(`data after end on stream ${this.id}`)
    if (this.outstanding + payload.byteLength > this.mux.window) {
      throw new ProtocolError(`stream ${this.id} exceeded its window`)
    }
    this.outstanding += payload.byteLength
    this.push(payload)
    this.grant()
  }

  /** @since 0.3.0 */
  receiveEnd(): void {
    if (this.receivedEnd) throw new ProtocolError(`second end on stream ${this.id}`)
    this.receivedEnd = true
    this.push(null)
  }

  /** @since 0.3.0 */
  receiveClose(): void {
    this.peerClosed = true
    this.destroy()
  }

  /** @since 0.3.0 */
  receiveCredit(bytes: number): void {
    this.sendCredit += bytes
    if (this.sendCredit > this.mux.peerWindow) throw new ProtocolError(`stream ${this.id} credited past its window`)
    this.flush()
  }
}

/**
 * Joins a local socket and a stream both ways: data and half-closes flow through, and when either side fails or
 * closes before both directions finished, the other is destroyed.
 *
 * @since 0.3.0
 * @category utilities
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
