/**
 * Values shared by the `Search` service and its two engines: result rows, tagged errors and the engine contract.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * A listed file: `path` is relative to the search `cwd`, with `/` separators.
 *
 * @since 0.1.0
 * @category models
 */
export const Entry = Schema.Struct({
  path: Schema.String,
  type: Schema.Literal("file"),
})
/**
 * @see Entry
 *
 * @since 0.1.0
 * @category models
 */
export type Entry = typeof Entry.Type

/**
 * One matched span inside a line; `start` and `end` are UTF-8 byte offsets within the line.
 *
 * @since 0.1.0
 * @category models
 */
export const Submatch = Schema.Struct({
  text: Schema.String,
  start: Schema.Int,
  end: Schema.Int,
})
/**
 * @see Submatch
 *
 * @since 0.1.0
 * @category models
 */
export type Submatch = typeof Submatch.Type

/**
 * One matching line. `line` is 1-based, `offset` is the UTF-8 byte offset of the line start in its file, and
 * `text` is the line including its terminator (bounded to 2000 code units plus `...`).
 *
 * @since 0.1.0
 * @category models
 */
export const Match = Schema.Struct({
  entry: Entry,
  line: Schema.Int.pipe(Schema.positive()),
  offset: Schema.Int.pipe(Schema.nonNegative()),
  text: Schema.String,
  submatches: Schema.Array(Submatch),
})
/**
 * @see Match
 *
 * @since 0.1.0
 * @category models
 */
export type Match = typeof Match.Type

/**
 * A search could not run, or its engine produced unusable output.
 *
 * @since 0.1.0
 * @category errors
 */
export class SearchError extends Schema.TaggedError<SearchError>()("Search.Error", {
  message: Schema.String,
  cause: Schema.optional(Schema.Unknown),
}) {}

/**
 * The grep pattern is not a valid regular expression for the engine.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidPatternError extends Schema.TaggedError<InvalidPatternError>()("Search.InvalidPatternError", {
  pattern: Schema.String,
  message: Schema.String,
}) {}

/**
 * A search input the operating system cannot take: a NUL byte, or text that is not well-formed Unicode (a lone
 * surrogate), in the glob `pattern`, the grep `pattern`, the `include` glob, or a path.
 *
 * @since 0.2.0
 * @category errors
 */
export class InvalidInputError extends Schema.TaggedError<InvalidInputError>()("Search.InvalidInputError", {
  field: Schema.Literal("pattern", "include", "path"),
  value: Schema.String,
  reason: Schema.Literal("nul_byte", "malformed_unicode"),
}) {
  override get message(): string {
    return `The ${this.field} ${this.reason === "nul_byte" ? "contains a NUL byte" : "is not well-formed Unicode text"}`
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Checks one search input; `undefined` when it can be passed to either engine. Cheap enough for every call.
 *
 * @since 0.2.0
 * @category utilities
 */
export const invalidInput = (field: InvalidInputError["field"], value: string): InvalidInputError | undefined =>
  value.includes("\0")
    ? new InvalidInputError({ field, value, reason: "nul_byte" })
    : LONE_SURROGATE.test(value)
      ? new InvalidInputError({ field, value, reason: "malformed_unicode" })
      : undefined

/**
 * The input of `glob`. `limit` bounds the rows returned; the search stops once `limit + 1` rows were seen.
 *
 * @since 0.1.0
 * @category models
 */
export interface GlobInput {
  readonly cwd: string
  readonly pattern: string
  readonly limit: number
}

/**
 * The input of `grep`. `file` names one path (relative to `cwd`) to search instead of `.`.
 *
 * @since 0.1.0
 * @category models
 */
export interface GrepInput {
  readonly cwd: string
  readonly pattern: string
  readonly file?: string | undefined
  readonly include?: string | undefined
  readonly limit: number
}

/**
 * What an engine (and the service) offers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  readonly glob: (input: GlobInput) => Effect.Effect<ReadonlyArray<Entry>, SearchError | InvalidInputError>
  readonly grep: (
    input: GrepInput,
  ) => Effect.Effect<ReadonlyArray<Match>, SearchError | InvalidPatternError | InvalidInputError>
}

/**
 * Longest `Match.text`, in UTF-16 code units, before it is cut and `...` appended.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LINE_TEXT = 2000
/**
 * Longest JSON record (UTF-8 bytes) a grep match may produce.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_RECORD_BYTES = 65536
/**
 * Submatches kept per line.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_SUBMATCHES = 100
/**
 * The message when a match record is too large.
 *
 * @since 0.1.0
 * @category constants
 */
export const RECORD_LIMIT_MESSAGE = `Ripgrep JSON record exceeded ${MAX_RECORD_BYTES} bytes`

/**
 * Bounds a line text as both engines do.
 *
 * @since 0.1.0
 * @category utilities
 */
export const boundText = (text: string): string =>
  text.length > MAX_LINE_TEXT ? `${text.slice(0, MAX_LINE_TEXT)}...` : text
