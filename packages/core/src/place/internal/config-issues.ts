/**
 * How a configuration error is told: the line and column of a syntax error, and every offending field path of a
 * decode failure.
 *
 * @since 0.3.0
 * @internal
 */
import * as ParseResult from "effect/ParseResult"
import * as AST from "effect/SchemaAST"

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
 * `issue` without the members `Schema.optional` adds to each field's union: a `Type` issue against the `undefined`
 * keyword says only "Expected undefined", which is noise beside the member that was meant. Decided on the schema's
 * AST node, never on the message text. `undefined` when nothing else is left.
 */
const withoutOptionalNoise = (issue: ParseResult.ParseIssue): ParseResult.ParseIssue | undefined => {
  switch (issue._tag) {
    case "Type":
      return AST.isUndefinedKeyword(issue.ast) ? undefined : issue
    case "Pointer": {
      const inner = withoutOptionalNoise(issue.issue)
      return inner === undefined ? undefined : new ParseResult.Pointer(issue.path, issue.actual, inner)
    }
    case "Refinement": {
      const inner = withoutOptionalNoise(issue.issue)
      return inner === undefined ? undefined : new ParseResult.Refinement(issue.ast, issue.actual, issue.kind, inner)
    }
    case "Transformation": {
      const inner = withoutOptionalNoise(issue.issue)
      return inner === undefined
        ? undefined
        : new ParseResult.Transformation(issue.ast, issue.actual, issue.kind, inner)
    }
    case "Composite": {
      const kept = (Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]).flatMap(
        (member) => {
          const inner = withoutOptionalNoise(member)
          return inner === undefined ? [] : [inner]
        },
      )
      const [first, ...rest] = kept
      return first === undefined ? undefined : new ParseResult.Composite(issue.ast, issue.actual, [first, ...rest])
    }
    default:
      return issue
  }
}

/**
 * Every offending field path of a decode failure, `; `-separated.
 *
 * @internal
 * @category utilities
 */
export const describeIssues = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatIssueSync(withoutOptionalNoise(error.issue) ?? error.issue)
    .map((issue) => `${fieldPath(issue.path)}: ${issue.message}`)
    .join("; ")
