/**
 * Why one `webfetch` call failed, as typed errors. The model sees only `Unable to fetch <url>` for these; the
 * message is the reference's inner text, kept on the failure for the user and the logs.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"

/**
 * The server answered with a status outside 2xx that is not a followed redirect.
 *
 * @since 0.3.0
 * @category errors
 */
export class StatusError extends Schema.TaggedError<StatusError>()("WebFetchTool.StatusError", {
  status: Schema.Number,
}) {
  override get message(): string {
    return `Request failed with status ${this.status}`
  }
}

/**
 * The response's content type is an image or not textual.
 *
 * @since 0.3.0
 * @category errors
 */
export class ContentTypeError extends Schema.TaggedError<ContentTypeError>()("WebFetchTool.ContentTypeError", {
  mime: Schema.String,
  image: Schema.Boolean,
}) {
  override get message(): string {
    return `Unsupported fetched ${this.image ? "image" : "file"} content type: ${this.mime}`
  }
}

/**
 * The body is (or declares to be) larger than `limit` bytes.
 *
 * @since 0.3.0
 * @category errors
 */
export class TooLargeError extends Schema.TaggedError<TooLargeError>()("WebFetchTool.TooLargeError", {
  limit: Schema.Number,
}) {
  override get message(): string {
    return `Response too large (exceeds ${this.limit} byte limit)`
  }
}

/**
 * The call's time budget (resolution, transfer and conversion together) ran out.
 *
 * @since 0.3.0
 * @category errors
 */
export class TimeoutError extends Schema.TaggedError<TimeoutError>()("WebFetchTool.TimeoutError", {
  seconds: Schema.Number,
}) {
  override get message(): string {
    return "Request timed out"
  }
}

/**
 * More redirects than `limit` in one call.
 *
 * @since 0.3.0
 * @category errors
 */
export class RedirectLimitError extends Schema.TaggedError<RedirectLimitError>()("WebFetchTool.RedirectLimitError", {
  limit: Schema.Number,
}) {
  override get message(): string {
    return `Too many redirects (more than ${this.limit})`
  }
}

/**
 * HTML could not be converted: nested too deeply, or the converter threw or its worker stopped.
 *
 * @since 0.3.0
 * @category errors
 */
export class ConversionError extends Schema.TaggedError<ConversionError>()("WebFetchTool.ConversionError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect),
}) {}
