/**
 * The typed failures of `read`'s filesystem part.
 *
 * @since 0.3.0
 */
import type { PlatformError } from "@effect/platform/Error"
import * as Schema from "effect/Schema"
import type * as VerifiedFile from "../../world/verified-file.js"

/**
 * The file is binary (or a PDF, or an unsupported media type).
 *
 * @since 0.1.0
 * @category errors
 */
export class BinaryFileError extends Schema.TaggedError<BinaryFileError>()("ReadTool.BinaryFileError", {
  resource: Schema.String,
}) {
  override get message(): string {
    return `Cannot read binary file: ${this.resource}`
  }
}

/**
 * An image is larger than `maximumBytes`.
 *
 * @since 0.1.0
 * @category errors
 */
export class MediaIngestLimitError extends Schema.TaggedError<MediaIngestLimitError>()(
  "ReadTool.MediaIngestLimitError",
  {
    resource: Schema.String,
    maximumBytes: Schema.Number,
  },
) {
  override get message(): string {
    return `Media exceeds ${this.maximumBytes} byte ingestion limit: ${this.resource}`
  }
}

/**
 * The text is not valid UTF-8.
 *
 * @since 0.1.0
 * @category errors
 */
export class MalformedUtf8Error extends Schema.TaggedError<MalformedUtf8Error>()("ReadTool.MalformedUtf8Error", {
  resource: Schema.String,
}) {
  override get message(): string {
    return `File is not valid UTF-8: ${this.resource}`
  }
}

/**
 * A text page was requested past the last line.
 *
 * @since 0.1.0
 * @category errors
 */
export class OffsetOutOfRangeError extends Schema.TaggedError<OffsetOutOfRangeError>()(
  "ReadTool.OffsetOutOfRangeError",
  {
    offset: Schema.Number,
  },
) {
  override get message(): string {
    return `Offset ${this.offset} is out of range`
  }
}

/**
 * A `column` was given past the end of the line it names.
 *
 * @since 0.1.0
 * @category errors
 */
export class ColumnOutOfRangeError extends Schema.TaggedError<ColumnOutOfRangeError>()(
  "ReadTool.ColumnOutOfRangeError",
  {
    line: Schema.Number,
    column: Schema.Number,
    length: Schema.Number,
  },
) {
  override get message(): string {
    return `Column ${this.column} is past the end of line ${this.line} (${this.length} chars)`
  }
}

/**
 * The path is not of the kind the operation needs.
 *
 * @since 0.1.0
 * @category errors
 */
export class PathKindError extends Schema.TaggedError<PathKindError>()("ReadTool.PathKindError", {
  resource: Schema.String,
  expected: Schema.Literal("a file", "a file or directory"),
}) {
  override get message(): string {
    return `Path is not ${this.expected}: ${this.resource}`
  }
}

/**
 * The failures of `inspect`.
 *
 * @since 0.1.0
 * @category errors
 */
export type InspectError = PlatformError | PathKindError
/**
 * The failures of `read`.
 *
 * @since 0.1.0
 * @category errors
 */
export type ReadError =
  | PlatformError
  | BinaryFileError
  | MediaIngestLimitError
  | MalformedUtf8Error
  | OffsetOutOfRangeError
  | ColumnOutOfRangeError
  | PathKindError
  | VerifiedFile.PathChangedError
