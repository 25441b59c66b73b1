/**
 * The approval server bounds what it reads, in a server process of its own: a 200,000-deep JSON array as an answer
 * body (and as the digest) is 413 (it is past the size limit), a 20,000-deep one 400 naming the nesting limit,
 * malformed JSON 400, a 100 MB body with a valid token is 413 whether it
 * declares its length or arrives chunked, and the server's resident memory stays bounded while it refuses them.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ApprovalServer } from "../../src/entry/server.js"
import * as Children from "../support/children.js"
import { request } from "../support/http-client.js"
import { tempDir } from "../support/location.js"

const TOKEN = "limits-test-token-0123456789abcdef"
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }
const HUNDRED_MB = 100 * 1024 * 1024

/** The resident set of a process, in bytes, from /proc. */
const rss = (pid: number): number => {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("VmRSS:"))
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? Number.NaN) * 1024
}

/** Posts the raw text `body`; the answer's status and JSON body. */
const post = (url: string, body: string) =>
  Effect.async<{ status: number; json: unknown }>((resume) => {
    const req = http.request(url, { method: "POST", headers: auth }, (res) => {
      let text = ""
      res.on("data", (data: Buffer) => (text += data.toString()))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, json: JSON.parse(text) as unknown })))
    })
    req.on("error", (error) => resume(Effect.die(error)))
    req.end(body)
    return Effect.sync(() => req.destroy())
  })

/** Sends `total` bytes of `[` (64 KiB at a time, as the socket drains) and resolves with the answer. */
const sendLarge = (url: string, total: number, chunked: boolean) =>
  Effect.async<{ status: number; body: string }>((resume) => {
    const chunk = Buffer.alloc(64 * 1024, "[")
    const req = http.request(url, {
      method: "POST",
      headers: { ...auth, ...(chunked ? {} : { "content-length": String(total) }) },
    })
    let sent = 0
    let answered = false
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length
        if (!req.write(chunk)) return void req.once("drain", pump)
      }
      if (!answered) req.end()
    }
    req.on("response", (res) => {
      answered = true
      let body = ""
      res.on("data", (data: Buffer) => (body += data.toString()))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body })))
    })
    // The server closes the connection after refusing: writes past that point fail, the answer already came.
    req.on("error", (error) => {
      if (!answered) resume(Effect.die(error))
    })
    pump()
    return Effect.sync(() => req.destroy())
  })

describe("approval server body limits (a server process)", () => {
  it.live(
    "deep bodies are 413 or 400 naming the limit, malformed JSON is 400, 100 MB declared or chunked is 413; the server's memory stays bounded",
    () =>
      Effect.gen(function* () {
        const data = yield* tempDir()
        const directory = yield* tempDir()
        fs.mkdirSync(path.join(directory, "src"))
        const child = yield* Children.scoped(Children.fixture("approval-server-child.ts"), [data, directory, TOKEN])
        const { url } = JSON.parse(yield* Children.nextLine(child)) as { url: string }
        const answer = `${url}/api/asks/per_none/answer`
        const pid = child.process.pid!

        // Warm up the paths, so the baseline includes what any first request loads.
        const small = yield* request(answer, { method: "POST", headers: auth, body: { digest: "x", choice: "once" } })
        expect(small.status).toBe(404)
        const before = rss(pid)

        // 200,000 levels are 400,000 bytes: past the size limit first.
        const deep = "[".repeat(200_000) + "]".repeat(200_000)
        for (const body of [deep, `{"digest":${deep},"choice":"once"}`])
          expect((yield* post(answer, body)).status).toBe(413)

        // 20,000 levels fit in the size limit and are refused for their depth, before any parsing.
        const deepSmall = "[".repeat(20_000) + "]".repeat(20_000)
        for (const body of [deepSmall, `{"digest":${deepSmall},"choice":"once"}`]) {
          const reply = yield* post(answer, body)
          expect(reply.status).toBe(400)
          expect(reply.json).toEqual({
            _tag: "ApprovalServer.BodyTooDeep",
            message: `The request body nests arrays and objects deeper than ${ApprovalServer.MAX_BODY_DEPTH} levels, the most this server reads.`,
          })
        }

        // Malformed JSON is a 400 that says so (not a defect).
        expect((yield* post(answer, '{"digest":')).json).toEqual({
          _tag: "ApprovalServer.BodyNotJson",
          message: "The request body is not valid JSON.",
        })

        for (const chunked of [false, true]) {
          const reply = yield* sendLarge(answer, HUNDRED_MB, chunked)
          expect(reply.status).toBe(413)
          expect(JSON.parse(reply.body)).toEqual({
            _tag: "ApprovalServer.BodyTooLarge",
            message: `The request body is larger than ${ApprovalServer.MAX_BODY_BYTES} bytes, the most this server reads.`,
          })
        }
        // Generous: a server that reads the 100 MB body grows by far more than this.
        expect(rss(pid) - before).toBeLessThan(48 * 1024 * 1024)

        // Still serving.
        const after = yield* request(answer, { method: "POST", headers: auth, body: { digest: "x", choice: "once" } })
        expect(after.status).toBe(404)
      }).pipe(Effect.scoped),
    60_000,
  )
})
