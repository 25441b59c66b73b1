/**
 * A plain node:http client for loopback servers, with full control of the headers (Host and Origin included), and
 * a reader of a Server-Sent Events response.
 */
import * as http from "node:http"
import { Effect } from "effect"

export interface Reply {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly json: unknown
}

/** One request to `url` (`http://127.0.0.1:port/path`). */
export const request = (
  url: string,
  options: { readonly method?: string; readonly headers?: Record<string, string>; readonly body?: unknown } = {},
): Effect.Effect<Reply> =>
  Effect.async<Reply>((resume) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body)
    const req = http.request(
      url,
      {
        method: options.method ?? "GET",
        headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...options.headers },
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          let json: unknown = undefined
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body: text, json }))
        })
      },
    )
    req.on("error", (error) => resume(Effect.die(error)))
    req.end(body)
    return Effect.sync(() => req.destroy())
  })

export interface SseFrame {
  readonly event: string
  readonly data: unknown
}

/**
 * Opens an event stream; `next` waits for the next frame (comments skipped), `status` is the response status.
 * The connection closes with the scope.
 */
export const eventStream = (url: string, headers: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.async<{ status: number; next: () => Promise<SseFrame>; close: () => void }>((resume) => {
      const req = http.request(url, { headers }, (res) => {
        let buffer = ""
        const frames: Array<SseFrame> = []
        const waiting: Array<(frame: SseFrame) => void> = []
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          buffer += chunk
          let end = buffer.indexOf("\n\n")
          while (end !== -1) {
            const block = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            const lines = block.split("\n")
            const event = lines.find((line) => line.startsWith("event: "))?.slice(7)
            const data = lines.find((line) => line.startsWith("data: "))?.slice(6)
            if (event !== undefined && data !== undefined) {
              const frame = { event, data: JSON.parse(data) as unknown }
              const waiter = waiting.shift()
              if (waiter === undefined) frames.push(frame)
              else waiter(frame)
            }
            end = buffer.indexOf("\n\n")
          }
        })
        resume(
          Effect.succeed({
            status: res.statusCode ?? 0,
            next: () => {
              const frame = frames.shift()
              return frame === undefined ? new Promise<SseFrame>((ok) => waiting.push(ok)) : Promise.resolve(frame)
            },
            close: () => req.destroy(),
          }),
        )
      })
      req.on("error", () => undefined)
      req.end()
    }),
    (stream) => Effect.sync(() => stream.close()),
  )
