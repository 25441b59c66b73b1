/**
 * The HTTP side of the egress proxy: a `node:http` server that is never bound to a port — it serves the streams
 * that bridges carry in over their channels. `CONNECT host:port` becomes a TCP tunnel (TLS stays end to end, nothing
 * is decrypted); an absolute-form `http://` request is forwarded. Either waits for the verdict on its destination
 * first: a refused one gets a short 403 (or 502) and no byte goes out; an allowed one connects to exactly the
 * addresses the verdict carries.
 *
 * @since 0.3.0
 */
import * as http from "node:http"
import * as net from "node:net"
import type { Duplex } from "node:stream"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as WebAddress from "../../web-address.js"
import * as Decision from "./decision.js"
import { link, Mux } from "./mux.js"

/** Headers that describe one hop, never forwarded (plus those a `Connection` header names). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
])

/** `rawHeaders` without hop-by-hop entries, as a flat `[name, value, …]` list. */
const endToEnd = (raw: ReadonlyArray<string>): Array<string> => {
  const named = new Set<string>()
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === "connection") {
      for (const token of raw[i + 1]!.split(",")) named.add(token.trim().toLowerCase())
    }
  }
  const kept: Array<string> = []
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase()
    if (HOP_BY_HOP.has(name) || named.has(name)) continue
    kept.push(raw[i]!, raw[i + 1]!)
  }
  return kept
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  501: "Not Implemented",
  502: "Bad Gateway",
  504: "Gateway Timeout",
}

/**
 * The body of every answer the proxy itself gives.
 *
 * @since 0.3.0
 * @category utilities
 */
export const answerText = (status: number, text: string): string => `toolgate egress proxy (${status}): ${text}\n`

/** A complete raw HTTP/1.1 answer that closes the connection (for CONNECT and malformed requests). */
const rawAnswer = (status: number, text: string): string => {
  const body = answerText(status, text)
  return [
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Error"}`,
    "Content-Type: text/plain; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
    "",
    body,
  ].join("\r\n")
}

const answer = (response: http.ServerResponse, status: number, text: string): void => {
  if (response.headersSent) {
    response.destroy()
    return
  }
  const body = answerText(status, text)
  response.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    connection: "close",
  })
  response.end(body)
}

const refusalText = (target: Decision.Target, verdict: Extract<Decision.Verdict, { _tag: "refused" }>) =>
  `${Decision.resourceOf(target)} ${verdict.detail}`

const failureText = (target: Decision.Target, error: NodeJS.ErrnoException) =>
  `could not connect to ${Decision.authorityOf(target)}: ${error.code ?? error.message}`

/**
 * Options of `make`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options {
  readonly memo: Decision.Memo
  /** Runs an effect in the proxy's scope (interrupted when it closes). */
  readonly run: (effect: Effect.Effect<void>) => void
  readonly connectTimeoutMs: number
}

/**
 * A running forwarder.
 *
 * @since 0.3.0
 * @category models
 */
export interface Forwarder {
  /** Serves the bridge at the other end of `channel`. */
  readonly attach: (channel: Duplex) => void
  /** Ends every channel, stream and outgoing connection. */
  readonly close: () => void
}

/**
 * Builds the forwarder.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (options: Options): Forwarder => {
  const muxes = new Set<Mux>()
  const outgoing = new Set<net.Socket>()
  const agent = new http.Agent({ keepAlive: true })
  let closed = false

  /** Destroys `request`'s socket if it has not connected within the timeout. */
  const connectTimer = (socket: net.Socket, onTimeout: () => void) => {
    // A kept-alive socket comes back for later requests: tracked once, and already connected.
    if (outgoing.has(socket)) return
    outgoing.add(socket)
    socket.once("close", () => outgoing.delete(socket))
    if (!socket.connecting) return
    const timer = setTimeout(onTimeout, options.connectTimeoutMs)
    socket.once("connect", () => clearTimeout(timer))
    socket.once("close", () => clearTimeout(timer))
  }

  const forward = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
    target: Decision.Target,
    path: string,
    addresses: ReadonlyArray<WebAddress.Resolved>,
  ) => {
    const upstream = http.request({
      host: target.host,
      port: target.port,
      method: request.method ?? "GET",
      path,
      headers: ["Host", Decision.hostHeaderOf(target), ...endToEnd(request.rawHeaders)],
      setHost: false,
      lookup: WebAddress.pinnedLookup(addresses),
      agent,
    })
    upstream.on("socket", (socket) =>
      connectTimer(socket.setNoDelay(true), () => {
        if (!response.headersSent) answer(response, 504, `no connection to ${Decision.authorityOf(target)} in time`)
        upstream.destroy()
      }),
    )
    upstream.on("response", (incoming) => {
      response.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, endToEnd(incoming.rawHeaders))
      incoming.pipe(response)
      incoming.on("error", () => response.destroy())
    })
    upstream.on("error", (error) => answer(response, 502, failureText(target, error)))
    response.on("close", () => {
      if (!response.writableFinished) upstream.destroy()
    })
    request.pipe(upstream)
  }

  const tunnel = (
    client: Duplex,
    head: Buffer,
    target: Decision.Target,
    addresses: ReadonlyArray<WebAddress.Resolved>,
  ) => {
    if (client.destroyed) return
    const upstream = net.connect({
      host: target.host,
      port: target.port,
      lookup: WebAddress.pinnedLookup(addresses),
      allowHalfOpen: true,
      noDelay: true,
    })
    let connected = false
    connectTimer(upstream, () => {
      client.end(rawAnswer(504, `no connection to ${Decision.authorityOf(target)} in time`))
      upstream.destroy()
    })
    const abandon = () => {
      if (!connected) upstream.destroy()
    }
    client.once("close", abandon)
    upstream.once("connect", () => {
      connected = true
      client.off("close", abandon)
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n")
      if (head.length > 0) upstream.write(head)
      link(client, upstream)
    })
    upstream.once("error", (error) => {
      if (!connected) client.end(rawAnswer(502, failureText(target, error)))
    })
  }

  const server = http.createServer({ requestTimeout: 0 })

  server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
    const parsed = Decision.parseAbsolute(request.url ?? "")
    if (Either.isLeft(parsed)) return answer(response, 400, parsed.left)
    const { target, path } = parsed.right
    const line = `${request.method ?? "GET"} http://${Decision.authorityOf(target)}${path}`
    options.run(
      Effect.map(options.memo.verdict(target, line), (verdict) => {
        if (response.destroyed) return
        if (verdict._tag === "refused") answer(response, verdict.status, refusalText(target, verdict))
        else forward(request, response, target, path, verdict.addresses)
      }),
    )
  })

  server.on("connect", (request: http.IncomingMessage, client: Duplex, head: Buffer) => {
    client.on("error", () => undefined)
    const parsed = Decision.parseAuthority(request.url ?? "")
    if (Either.isLeft(parsed)) {
      client.end(rawAnswer(400, parsed.left))
      return
    }
    const target = parsed.right
    options.run(
      Effect.map(options.memo.verdict(target, `CONNECT ${Decision.authorityOf(target)}`), (verdict) => {
        if (verdict._tag === "refused") client.end(rawAnswer(verdict.status, refusalText(target, verdict)))
        else tunnel(client, head, target, verdict.addresses)
      }),
    )
  })

  server.on("upgrade", (_request: http.IncomingMessage, client: Duplex) => {
    client.end(rawAnswer(501, "protocol upgrades are not proxied as plain requests; use CONNECT"))
  })

  server.on("clientError", (_error: Error, client: Duplex) => {
    if (client.writable) client.end(rawAnswer(400, "malformed proxy request"))
    else client.destroy()
  })

  return {
    attach: (channel) => {
      if (closed) {
        channel.destroy()
        return
      }
      const mux = new Mux(channel, { side: "proxy" })
      muxes.add(mux)
      mux.on("close", () => muxes.delete(mux))
      mux.on("stream", (stream: Duplex) => server.emit("connection", stream))
    },
    close: () => {
      if (closed) return
      closed = true
      for (const mux of [...muxes]) mux.close()
      for (const socket of [...outgoing]) socket.destroy()
      agent.destroy()
      server.closeAllConnections()
      server.close(() => undefined)
    },
  }
}
