/**
 * The Server-Sent Events response of `/api/events`: `Approvals.prompts` encoded one event per frame (`event:` the
 * tag, `data:` the `PromptEvent` encoding as one line of JSON), with a comment line every 15 s so an idle connection
 * stays open through proxies. The stream ends when the client goes away (the server interrupts the response).
 *
 * @since 0.3.0
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Duration from "effect/Duration"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Approvals from "../../approvals/approvals.js"

const encodeEvent = Schema.encodeSync(Approvals.PromptEvent)

/**
 * One SSE frame for `event`. JSON.stringify escapes every line break, so `data:` is one line.
 *
 * @since 0.3.0
 * @category utilities
 */
export const frame = (event: Approvals.PromptEvent): string =>
  `event: ${event._tag}\ndata: ${JSON.stringify(encodeEvent(event))}\n\n`

/**
 * How often an idle stream sends a comment line.
 *
 * @since 0.3.0
 * @category constants
 */
export const HEARTBEAT = Duration.seconds(15)

const encoder = new TextEncoder()

/**
 * The event-stream response over `events`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const response = (
  events: Stream.Stream<Approvals.PromptEvent>,
  headers: Readonly<Record<string, string>>,
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.stream(
    Stream.concat(
      Stream.make(": toolgate approval events\n\n"),
      Stream.merge(
        Stream.map(events, frame),
        Stream.as(Stream.fromSchedule(Schedule.spaced(HEARTBEAT)), ": keep-alive\n\n"),
        { haltStrategy: "left" },
      ),
    ).pipe(Stream.map((text) => encoder.encode(text))),
    {
      contentType: "text/event-stream",
      headers: { ...headers, "cache-control": "no-store", "x-accel-buffering": "no" },
    },
  )
