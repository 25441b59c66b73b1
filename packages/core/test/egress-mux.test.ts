/**
 * The egress channel's frame format and multiplexer (world/egress/internal/mux.ts): encode/decode round trips for
 * any frames cut into any chunks, the malformed frames that end a channel, and the streams over a real socket pair
 * (half-close, abort, flow control with a consumer that does not read, many streams at once).
 */
import * as net from "node:net"
import { Duplex, PassThrough } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import * as Frame from "../src/world/egress/internal/frame.js"
import * as Mux from "../src/world/egress/internal/mux.js"

const frameArbitrary: FastCheck.Arbitrary<Frame.Frame> = FastCheck.oneof(
  FastCheck.record({
    kind: FastCheck.constant(Frame.Kind.data),
    stream: FastCheck.integer({ min: 1, max: 0xffffffff }),
    payload: FastCheck.uint8Array({ minLength: 1, maxLength: 2048 }),
  }),
  FastCheck.record({
    kind: FastCheck.constantFrom(Frame.Kind.open, Frame.Kind.end, Frame.Kind.close),
    stream: FastCheck.integer({ min: 1, max: 0xffffffff }),
    payload: FastCheck.constant(new Uint8Array(0)),
  }),
  FastCheck.tuple(FastCheck.integer({ min: 1, max: 0xffffffff }), FastCheck.integer({ min: 0, max: 0xffffffff })).map(
    ([stream, bytes]) => Frame.credit(stream, bytes),
  ),
)

/** `bytes` cut at the given (sorted, deduplicated) offsets. */
const cut = (bytes: Buffer, offsets: ReadonlyArray<number>): Array<Buffer> => {
  const points = [...new Set(offsets.map((offset) => offset % (bytes.length + 1)))].sort((a, b) => a - b)
  const pieces: Array<Buffer> = []
  let at = 0
  for (const point of points) {
    pieces.push(bytes.subarray(at, point))
    at = point
  }
  pieces.push(bytes.subarray(at))
  return pieces
}

const plain = (frame: Frame.Frame) => ({ kind: frame.kind, stream: frame.stream, payload: [...frame.payload] })

describe("frame format", () => {
  it("decodes any frames, however the bytes are split or merged, to the frames encoded", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(frameArbitrary, { maxLength: 20 }),
        FastCheck.array(FastCheck.nat(), { maxLength: 30 }),
        (frames, offsets) => {
          const bytes = Buffer.concat(frames.map(Frame.encode))
          const decoder = new Frame.Decoder()
          const decoded = cut(bytes, offsets).flatMap((piece) => decoder.push(piece))
          expect(decoded.map(plain)).toEqual(frames.map(plain))
          expect(decoder.pending).toBe(0)
        },
      ),
    )
  })

  it("holds back an incomplete frame until its last byte arrives", () => {
    const bytes = Frame.encode({ kind: Frame.Kind.data, stream: 7, payload: Buffer.from("hello") })
    const decoder = new Frame.Decoder()
    for (let i = 0; i < bytes.length - 1; i++) expect(decoder.push(bytes.subarray(i, i + 1))).toEqual([])
    expect(decoder.pending).toBe(bytes.length - 1)
    const [frame] = decoder.push(bytes.subarray(bytes.length - 1))
    expect(Buffer.from(frame!.payload).toString()).toBe("hello")
  })

  it("has a 9-byte big-endian header", () => {
    expect([...Frame.encode({ kind: Frame.Kind.data, stream: 0x01020304, payload: Buffer.from("ab") })]).toEqual([
      2, 1, 2, 3, 4, 0, 0, 0, 2, 97, 98,
    ])
  })

  const header = (kind: number, stream: number, size: number) => {
    const bytes = Buffer.alloc(Frame.HEADER_BYTES)
    bytes.writeUInt8(kind, 0)
    bytes.writeUInt32BE(stream, 1)
    bytes.writeUInt32BE(size, 5)
    return bytes
  }

  it.each([
    ["an unknown kind", Buffer.concat([header(9, 1, 0)])],
    ["stream id 0", header(Frame.Kind.open, 0, 0)],
    ["a payload on open", Buffer.concat([header(Frame.Kind.open, 1, 1), Buffer.from("x")])],
    ["an empty data frame", header(Frame.Kind.data, 1, 0)],
    ["a credit of 3 bytes", Buffer.concat([header(Frame.Kind.credit, 1, 3), Buffer.from("abc")])],
  ])("refuses %s", (_, bytes) => {
    expect(() => new Frame.Decoder().push(bytes)).toThrow(Frame.ProtocolError)
  })

  it("refuses an announced payload above the limit before it arrives", () => {
    expect(() => new Frame.Decoder().push(header(Frame.Kind.data, 1, Frame.MAX_PAYLOAD + 1))).toThrow(
      "payload of 65537 bytes announced",
    )
    expect(() =>
      Frame.encode({ kind: Frame.Kind.data, stream: 1, payload: new Uint8Array(Frame.MAX_PAYLOAD + 1) }),
    ).toThrow(Frame.ProtocolError)
  })
})

/** A connected pair of real sockets (a loopback TCP connection), closed with the scope. */
const socketPair = Effect.acquireRelease(
  Effect.async<readonly [net.Socket, net.Socket, net.Server]>((resume) => {
    const server = net.createServer({ allowHalfOpen: true })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      const client = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true })
      server.once("connection", (accepted) => resume(Effect.succeed([client, accepted, server] as const)))
    })
  }),
  ([a, b, server]) =>
    Effect.sync(() => {
      a.destroy()
      b.destroy()
      server.close()
    }),
)

/** A bridge-side and a proxy-side mux over one socket pair; resolves the proxy's streams in order. */
const muxPair = Effect.gen(function* () {
  const [a, b] = yield* socketPair
  const bridge = new Mux.Mux(a, { side: "bridge" })
  const proxy = new Mux.Mux(b, { side: "proxy" })
  const accepted: Array<Mux.MuxStream> = []
  const waiting: Array<(stream: Mux.MuxStream) => void> = []
  proxy.on("stream", (stream: Mux.MuxStream) => {
    const waiter = waiting.shift()
    if (waiter === undefined) accepted.push(stream)
    else waiter(stream)
  })
  const nextStream = Effect.async<Mux.MuxStream>((resume) => {
    const ready = accepted.shift()
    if (ready !== undefined) resume(Effect.succeed(ready))
    else waiting.push((stream) => resume(Effect.succeed(stream)))
  })
  return { bridge, proxy, nextStream, a, b }
})

const readAll = (stream: Duplex) =>
  Effect.async<Buffer>((resume) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.once("end", () => resume(Effect.succeed(Buffer.concat(chunks))))
  })

const closed = (stream: Duplex) =>
  Effect.async<void>((resume) => {
    if (stream.destroyed) resume(Effect.void)
    else stream.once("close", () => resume(Effect.void))
  })

describe("Mux", () => {
  it.scoped("carries both directions with half-close, and frees both ends once both are done", () =>
    Effect.gen(function* () {
      const { bridge, proxy, nextStream } = yield* muxPair
      const local = bridge.open()
      const remote = yield* nextStream
      local.end("request")
      expect((yield* readAll(remote)).toString()).toBe("request")
      // The other direction still works after the half-close.
      remote.end("response")
      expect((yield* readAll(local)).toString()).toBe("response")
      yield* Effect.all([closed(local), closed(remote)])
      expect(bridge.size).toBe(0)
      expect(proxy.size).toBe(0)
    }),
  )

  it.scoped("an abort on one side destroys the other", () =>
    Effect.gen(function* () {
      const { bridge, proxy, nextStream } = yield* muxPair
      const local = bridge.open()
      const remote = yield* nextStream
      remote.destroy()
      yield* closed(local)
      expect(local.readableEnded).toBe(false)
      expect(proxy.size).toBe(0)
      expect(bridge.size).toBe(0)
    }),
  )

  for (const direction of ["to the proxy", "to the bridge"] as const) {
    it.scoped(
      `a reader ${direction} that does not read holds the sender at its window; the rest flows once it reads`,
      () =>
        Effect.gen(function* () {
          const { bridge, nextStream } = yield* muxPair
          const bridgeEnd = bridge.open()
          const proxyEnd = yield* nextStream
          const [sender, receiver, window] =
            direction === "to the proxy"
              ? [bridgeEnd, proxyEnd, Mux.PROXY_WINDOW]
              : [proxyEnd, bridgeEnd, Mux.BRIDGE_WINDOW]
          const payload = Buffer.alloc(window * 3, 7)
          // `receiver` is not read: it buffers exactly one window (more would be a protocol error).
          sender.end(payload)
          yield* Effect.async<void>((resume) => {
            const check = () => (receiver.readableLength >= window ? resume(Effect.void) : setTimeout(check, 5))
            check()
          })
          expect(receiver.readableLength).toBe(window)
          expect(sender.writableFinished).toBe(false)
          const received = yield* readAll(receiver)
          expect(received.equals(payload)).toBe(true)
        }),
    )
  }

  it.scoped("a stalled stream does not stall another one", () =>
    Effect.gen(function* () {
      const { bridge, nextStream } = yield* muxPair
      const stalled = bridge.open()
      const stalledRemote = yield* nextStream
      const moving = bridge.open()
      const movingRemote = yield* nextStream
      stalled.write(Buffer.alloc(Mux.PROXY_WINDOW * 2))
      moving.end(Buffer.alloc(Mux.PROXY_WINDOW * 3, 1))
      expect((yield* readAll(movingRemote)).length).toBe(Mux.PROXY_WINDOW * 3)
      expect(stalledRemote.readableLength).toBe(Mux.PROXY_WINDOW)
    }),
  )

  it.scoped("many concurrent streams each arrive intact", () =>
    Effect.gen(function* () {
      const { bridge, nextStream } = yield* muxPair
      const count = 64
      const locals = Array.from({ length: count }, () => bridge.open())
      const remotes = yield* Effect.all(Array.from({ length: count }, () => nextStream))
      locals.forEach((local, i) => local.end(Buffer.alloc(10_000 + i * 997, i)))
      const bodies = yield* Effect.all(remotes.map(readAll), { concurrency: "unbounded" })
      bodies.forEach((body, i) => expect(body.equals(Buffer.alloc(10_000 + i * 997, i))).toBe(true))
    }),
  )

  it.scoped("the proxy side closes opens beyond its stream limit at once", () =>
    Effect.gen(function* () {
      const [a, b] = yield* socketPair
      const bridge = new Mux.Mux(a, { side: "bridge" })
      const proxy = new Mux.Mux(b, { side: "proxy", maxStreams: 2 })
      const accepted: Array<Duplex> = []
      proxy.on("stream", (stream: Duplex) => accepted.push(stream))
      const streams = [bridge.open(), bridge.open(), bridge.open()]
      yield* closed(streams[2]!)
      expect(accepted.length).toBe(2)
      expect(streams[0]!.destroyed).toBe(false)
    }),
  )

  it.scoped("a peer that breaks the format loses the whole channel", () =>
    Effect.gen(function* () {
      const [a, b] = yield* socketPair
      const proxy = new Mux.Mux(b, { side: "proxy" })
      const streams: Array<Duplex> = []
      proxy.on("stream", (stream: Duplex) => streams.push(stream))
      const errors: Array<Error> = []
      proxy.on("protocolError", (error: Error) => errors.push(error))
      a.write(Frame.encode({ kind: Frame.Kind.open, stream: 1, payload: new Uint8Array(0) }))
      // More data than the window grants.
      for (let sent = 0; sent <= Mux.PROXY_WINDOW; sent += Frame.MAX_PAYLOAD) {
        a.write(Frame.encode({ kind: Frame.Kind.data, stream: 1, payload: new Uint8Array(Frame.MAX_PAYLOAD) }))
      }
      yield* Effect.async<void>((resume) => {
        if (proxy.isClosed) resume(Effect.void)
        else proxy.once("close", () => resume(Effect.void))
      })
      expect(errors.map((error) => error.message)).toEqual(["stream 1 exceeded its window"])
      expect(streams[0]!.destroyed).toBe(true)
    }),
  )

  it("refuses a reused stream id and an open from the proxy side", () => {
    const wire = new PassThrough()
    const proxy = new Mux.Mux(wire, { side: "proxy" })
    const errors: Array<string> = []
    proxy.on("protocolError", (error: Error) => errors.push(error.message))
    wire.emit("data", Frame.encode({ kind: Frame.Kind.open, stream: 5, payload: new Uint8Array(0) }))
    wire.emit("data", Frame.encode({ kind: Frame.Kind.open, stream: 5, payload: new Uint8Array(0) }))
    expect(errors).toEqual(["stream 5 reused or out of order"])
    expect(() => new Mux.Mux(new PassThrough(), { side: "proxy" }).open()).toThrow("only the bridge opens streams")
  })
})
