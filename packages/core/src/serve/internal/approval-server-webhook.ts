/**
 * The optional webhook: every `Asked` the server sees is POSTed as JSON to the configured URL so a chat bot can
 * notify a person. The body is signed with HMAC-SHA256 under the configured secret: header
 * `x-toolgate-signature: t=<epoch ms>,v1=<hex>` where `v1` is the HMAC of `<t>.<body>` (the timestamp is signed so a
 * receiver can refuse replays). A delivery is tried three times (1 s, 2 s apart, 10 s each); a failure is logged and
 * never holds up the ask. The body carries the prompt as `Approvals.Prompt` encodes it and the page's address (no
 * token).
 *
 * @since 0.3.0
 */
import * as crypto from "node:crypto"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Approvals from "../../approvals/approvals.js"

/**
 * Where and with what secret asks are posted.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options {
  readonly url: string
  readonly secret: Redacted.Redacted<string>
}

/**
 * The signature header's name.
 *
 * @since 0.3.0
 * @category constants
 */
export const SIGNATURE_HEADER = "x-toolgate-signature"

/**
 * The signature header value of `body` sent at `timestamp` (epoch ms).
 *
 * @since 0.3.0
 * @category utilities
 */
export const sign = (secret: string, timestamp: number, body: string): string =>
  `t=${timestamp},v1=${crypto.createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`

const encodePrompt = Schema.encodeSync(Approvals.Prompt)

/**
 * Posts every `Asked` of `events` until the stream ends (run it forked in the server's scope).
 *
 * @since 0.3.0
 * @category utilities
 */
export const run = (
  options: Options,
  events: Stream.Stream<Approvals.PromptEvent>,
  page: string,
): Effect.Effect<void, never, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)
    const deliver = (prompt: Approvals.Prompt) =>
      Effect.gen(function* () {
        const body = JSON.stringify({ type: "asked", page, prompt: encodePrompt(prompt) })
        const timestamp = yield* Clock.currentTimeMillis
        const request = HttpClientRequest.post(options.url).pipe(
          HttpClientRequest.bodyText(body, "application/json"),
          HttpClientRequest.setHeader(SIGNATURE_HEADER, sign(Redacted.value(options.secret), timestamp, body)),
        )
        yield* client.execute(request).pipe(Effect.scoped, Effect.timeout(Duration.seconds(10)))
      }).pipe(
        Effect.retry(Schedule.exponential(Duration.seconds(1)).pipe(Schedule.intersect(Schedule.recurs(2)))),
        Effect.catchAll((error) =>
          Effect.logWarning(`approval webhook: could not deliver ask ${prompt.request.id}`, error),
        ),
      )
    yield* Stream.runForEach(events, (event) =>
      event._tag === "Asked" ? Effect.fork(deliver(event.prompt)) : Effect.void,
    )
  })
