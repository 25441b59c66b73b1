/**
 * The approval page in real headless Chromium (Debian's `/usr/bin/chromium`, driven by playwright-core): a Runner
 * waits on an edit ask, the page shows the ask live with its whole diff (a bidi override and an escape sequence in
 * the new text shown as marked escapes), the test rejects it with a message by clicking "Reject", and the model's
 * next request carries that message; the file is unchanged. A screenshot goes to `.ci/artifacts/approval-page.png`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Redacted, Ref } from "effect"
import { chromium } from "playwright-core"
import { Core, Runner, ScriptedModel, SessionV2 } from "../src/index.js"
import { ApprovalServer } from "../src/entry/server.js"
import { tempDir } from "./support/location.js"

const CHROMIUM = "/usr/bin/chromium"
const available = fs.existsSync(CHROMIUM)
if (!available) console.log(`approval-page.test: skipped: ${CHROMIUM} is not installed (apt-get install chromium)`)
const artifacts = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../.ci/artifacts")

const MESSAGE = "Please keep the greeting; change the README instead."
const NEW_TEXT = "bye \u202Eevil\u202C \u001b[2J"

describe.skipIf(!available)("approval page (Chromium)", () => {
  it.scopedLive(
    "a Runner waits on an edit ask; the page shows its diff; Reject with a message reaches the model",
    () =>
      Effect.gen(function* () {
        const directory = yield* tempDir("toolgate-page-")
        const data = yield* tempDir("toolgate-page-data-")
        const file = path.join(directory, "greeting.txt")
        fs.writeFileSync(file, "hello world\n")
        const script: ScriptedModel.Script = [
          [
            {
              type: "tool-call",
              name: "edit",
              input: { path: file, oldString: "hello world", newString: NEW_TEXT },
            },
          ],
          [{ type: "text", text: "understood" }],
        ]
        const core = Core.layer({
          directory,
          data,
          discover: false,
          config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
        })
        const layer = Layer.mergeAll(Runner.layer, ApprovalServer.layer()).pipe(
          Layer.provideMerge(ScriptedModel.layer(script)),
          Layer.provideMerge(core),
        )
        const context = yield* Layer.build(layer)
        const server = (yield* Effect.provide(ApprovalServer.Service, context)) as ApprovalServer.Interface
        const session = yield* Effect.provide(
          Effect.flatMap(SessionV2.Service, (sessions) => sessions.create()),
          context,
        )
        const run = yield* Effect.fork(
          Effect.provide(
            Effect.flatMap(Runner.Service, (runner) => runner.run({ sessionID: session.id, prompt: "edit it" })),
            context,
          ),
        )

        const browser = yield* Effect.acquireRelease(
          Effect.promise(() =>
            chromium.launch({
              executablePath: CHROMIUM,
              args: process.getuid?.() === 0 ? ["--no-sandbox"] : [],
            }),
          ),
          (browser) => Effect.promise(() => browser.close()),
        )
        const page = yield* Effect.promise(() => browser.newPage())
        const external: Array<string> = []
        page.on("request", (request) => {
          if (!request.url().startsWith(server.url)) external.push(request.url())
        })
        const problems: Array<string> = []
        page.on("pageerror", (error) => problems.push(`page error: ${error.message}`))
        page.on("console", (message) => {
          if (message.type() === "error") problems.push(`console: ${message.text()}`)
        })
        yield* Effect.promise(() => page.goto(Redacted.value(server.pageURL)))
        const ask = page.locator("article.ask")
        yield* Effect.promise(() =>
          ask.waitFor({ timeout: 30_000 }).catch(async (error: unknown) => {
            const status = await page.locator("#status").innerText()
            const pending = await fetch(`${server.url}/api/asks`, {
              headers: { authorization: `Bearer ${Redacted.value(server.token)}` },
            }).then((reply) => reply.text())
            throw new Error(
              `${String(error)}; status: ${status}; pending: ${pending}; file: ${JSON.stringify(fs.readFileSync(file, "utf8"))}; run: ${JSON.stringify(run.unsafePoll())?.slice(0, 3000)}; ${problems.join("; ")}`,
            )
          }),
        )
        // The token left the address bar; the diff is shown whole, with the hostile characters escaped.
        expect(page.url()).not.toContain("token")
        const diff = yield* Effect.promise(() => ask.locator("pre.diff").innerText())
        expect(diff).toContain("-hello world")
        expect(diff).toContain("+bye \\u202eevil\\u202c \\x1b[2J")
        expect(diff).not.toContain("\u202E")
        const escapes = yield* Effect.promise(() => ask.locator("pre.diff .esc").allInnerTexts())
        expect(escapes).toEqual(expect.arrayContaining(["\\u202e", "\\u202c", "\\x1b"]))

        fs.mkdirSync(artifacts, { recursive: true })
        yield* Effect.promise(() =>
          page.screenshot({ path: path.join(artifacts, "approval-page.png"), fullPage: true }),
        )

        yield* Effect.promise(() => ask.getByRole("textbox", { name: /message to the model/ }).fill(MESSAGE))
        yield* Effect.promise(() => ask.getByRole("button", { name: "Reject" }).click())
        yield* Effect.promise(() => ask.waitFor({ state: "detached", timeout: 30_000 }))

        const result = yield* Fiber.join(run)
        expect(result.stopped).toBeUndefined()
        const requests = yield* Effect.provide(
          Effect.flatMap(ScriptedModel.Requests, (log) => Ref.get(log)),
          context,
        )
        expect(requests).toHaveLength(2)
        expect(JSON.stringify(requests[1])).toContain(MESSAGE)
        expect(fs.readFileSync(file, "utf8")).toBe("hello world\n")
        const log = yield* Effect.promise(() => page.locator("#log").innerText())
        expect(log).toContain("reject (http)")
        expect(external).toEqual([])
      }),
    120_000,
  )
})
