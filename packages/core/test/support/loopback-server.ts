/**
 * A real HTTP server on a loopback address for the scope's lifetime. Every request is recorded (path, headers,
 * the connection's address) before the handler runs, so a test can prove that no request reached it.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Queue } from "effect"

/** One request the server received. */
export interface Hit {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  /** The local address the connection arrived on. */
  readonly localAddress: string
}

/** A running server. */
export interface Loopback {
  /** `http://<host>:<port>` (IPv6 hosts bracketed). */
  readonly base: string
  readonly port: number
  /** Every request so far, in arrival order. */
  readonly hits: Array<Hit>
  /** Waits for the next request (in arrival order, each one once). */
  readonly nextHit: Effect.Effect<Hit>
}

/** What a handler does with a request. */
export type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void

/** Starts a server on `host` (default 127.0.0.1) on a free port; it is closed with the scope. */
export const loopbackServer = (handler: Handler, host = "127.0.0.1") =>
  Effect.gen(function* () {
    const hits: Array<Hit> = []
    const arrivals = yield* Queue.unbounded<Hit>()
    const server = yield* Effect.acquireRelease(
      Effect.async<http.Server, Error>((resume) => {
        const instance = http.createServer((request, response) => {
          const hit: Hit = {
            method: request.method ?? "",
            url: request.url ?? "",
            headers: request.headers,
            localAddress: request.socket.localAddress ?? "",
          }
          hits.push(hit)
          Queue.unsafeOffer(arrivals, hit)
          handler(request, response)
        })
        instance.once("error", (error) => resume(Effect.fail(error)))
        instance.listen(0, host, () => resume(Effect.succeed(instance)))
      }),
      (instance) =>
        Effect.async<void>((resume) => {
          instance.closeAllConnections()
          instance.close(() => resume(Effect.void))
        }),
    )
    const { port } = server.address() as AddressInfo
    const base = host.includes(":") ? `http://[${host}]:${port}` : `http://${host}:${port}`
    return { base, port, hits, nextHit: Queue.take(arrivals) } satisfies Loopback
  })

/** Answers 200 with `body` and `contentType`. */
export const respond =
  (body: string | Buffer, contentType = "text/plain"): Handler =>
  (_, response) => {
    response.writeHead(200, { "content-type": contentType })
    response.end(body)
  }
