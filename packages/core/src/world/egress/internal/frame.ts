/**
 * The frame format of the egress channel between the bridge (inside the sandbox) and the egress proxy:
 *
 * | bytes | field |
 * |---|---|
 * | 1 | kind: 1 open, 2 data, 3 end, 4 close, 5 credit |
 * | 4 | stream id (unsigned, big-endian; never 0) |
 * | 4 | payload length (unsigned, big-endian) |
 * | n | payload: data bytes (1 to `MAX_PAYLOAD`), a 4-byte credit for `credit`, nothing otherwise |
 *
 * Dependency-free (Node built-ins only): the bridge loads it in a fresh Node process inside the sandbox. See
 * docs/egress.md.
 *
 * @since 0.3.0
 */
import { Buffer } from "node:buffer"

/**
 * The bytes before each payload.
 *
 * @since 0.3.0
 * @category constants
 */
export const HEADER_BYTES = 9
/**
 * The largest data payload of one frame.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_PAYLOAD = 64 * 1024
/**
 * The frame kinds.
 *
 * @since 0.3.0
 * @category models
 */
export const Kind = { open: 1, data: 2, end: 3, close: 4, credit: 5 } as const
/**
 * @see Kind
 *
 * @since 0.3.0
 * @category models
 */
export type Kind = (typeof Kind)[keyof typeof Kind]

/**
 * One frame.
 *
 * @since 0.3.0
 * @category models
 */
export interface Frame {
  readonly kind: Kind
  readonly stream: number
  readonly payload: Uint8Array
}

/**
 * A frame or a sequence of frames that breaks the format; the channel carrying it is closed.
 *
 * @since 0.3.0
 * @category errors
 */
export class ProtocolError extends Error {
  /** @since 0.3.0 */
  override readonly name = "EgressFrame.ProtocolError"
}

const MAX_ID = 0xffffffff

/**
 * Whether `frame` is well formed: a known kind, a stream id in 1..2^32-1, and the payload size its kind requires.
 *
 * @since 0.3.0
 * @category utilities
 */
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

/**
 * The bytes of `frame`; throws `ProtocolError` for a malformed one.
 *
 * @since 0.3.0
 * @category utilities
 */
export const encode = (frame: Frame): Buffer => {
  const invalid = validate(frame)
  if (invalid !== undefined) throw new ProtocolError(invalid)
  const bytes = Buffer.allocUnsafe(HEADER_BYTES + frame.payload.byteLength)
  headerOf(frame.kind, frame.stream, frame.payload.byteLength).copy(bytes, 0)
  bytes.set(frame.payload, HEADER_BYTES)
  return bytes
}

/**
 * A `credit` frame returning `bytes` to the sender of `stream`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const credit = (stream: number, bytes: number): Frame => {
  const payload = Buffer.allocUnsafe(4)
  payload.writeUInt32BE(bytes, 0)
  return { kind: Kind.credit, stream, payload }
}

/**
 * The 9-byte header of a frame of `kind` on `stream` with a `size`-byte payload.
 *
 * @since 0.3.0
 * @category utilities
 */
export const headerOf = (kind: Kind, stream: number, size: number): Buffer => {
  const bytes = Buffer.allocUnsafe(HEADER_BYTES)
  bytes.writeUInt8(kind, 0)
  bytes.writeUInt32BE(stream, 1)
  bytes.writeUInt32BE(size, 5)
  return bytes
}

/**
 * Reassembles frames from chunks split or merged anywhere. Chunks are queued and a frame is copied only when it
 * spans chunks; a payload inside one chunk is a view of it.
 *
 * @since 0.3.0
 * @category models
 */
export class Decoder {
  private readonly chunks: Array<Buffer> = []
  private size = 0

  /**
   * The frames completed by `chunk`, in order; throws `ProtocolError` on the first malformed one.
   *
   * @since 0.3.0
   */
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

  /**
   * The first `n` queued bytes as one buffer, without consuming them.
   *
   * @since 0.3.0
   */
  private peek(n: number): Buffer {
    const first = this.chunks[0]!
    if (first.length >= n) return first
    const joined = Buffer.concat(this.chunks, this.size)
    this.chunks.length = 0
    this.chunks.push(joined)
    return joined
  }

  /**
   * Removes and returns the first `n` queued bytes (a view when they lie in one chunk).
   *
   * @since 0.3.0
   */
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
