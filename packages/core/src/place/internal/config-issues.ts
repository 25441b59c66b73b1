/**
 * How a configuration error is told: the line and column of a syntax error, and every offending field path of a
 * decode failure.
 *
 * @since 0.3.0
 * @internal
 */
import * as ParseResult from "effect/ParseResult"

/**
 * The 1-based line and column of `offset` in `text`.
 *
 * @internal
 * @category utilities
 */
export const lineAndColumn = (text: string, offset: number): { readonly line: number; readonly column: number } => {
  let line = 1
  let start = 0
  for (let at = text.indexOf("\n"); at !== -1 && at < offset; at = text.indexOf("\n", at + 1)) {
    line++
    start = at + 1
  }
  return { line, column: offset - start + 1 }
}

const fieldPath = (segments: ReadonlyArray<PropertyKey>): string =>
  segments.length === 0 ? "(root)" : segments.map((segment) => String(segment)).join(".")

/**
 * Every offending field path of a decode failure, `; `-separated.
 *
 * @internal
 * @category utilities
 */
export const describeIssues = (error: ParseResult.ParseError): string => {
  const all = ParseResult.ArrayFormatter.formatErrorSync(error)
  // `Schema.optional` adds an `undefined` member to each field's union; its "Expected undefined" issue is noise.
  const meaningful = all.filter((issue) => !issue.message.startsWith("Expected undefined"))
  return (meaningful.length > 0 ? meaningful : all)
    .map((issue) => `${fieldPath(issue.path)}: ${issue.message}`)
    .join("; ")
}
