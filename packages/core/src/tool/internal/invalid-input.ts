/**
 * The model-visible text of an input that failed its schema: `Invalid tool input: ` and one line per offending
 * property, each naming the property, what was expected and what was sent (`timeout: expected a positive number,
 * got -1`; `extra: unexpected property, expected one of command, workdir, timeout`). It never prints the schema as
 * a type (`{ readonly command: string; … }`): a model needs the property to fix, not Effect's rendering of the whole
 * schema. A schema's own `message` annotations are kept as Effect formats them.
 *
 * @since 0.3.0
 */
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as SchemaAST from "effect/SchemaAST"

/**
 * The prefix of every invalid-input failure.
 *
 * @since 0.3.0
 * @category constants
 */
export const PREFIX = "Invalid tool input: "

/** At most this many problems are listed; the rest are counted. */
const MAX_PROBLEMS = 20
/** Sent values are shown up to this many characters. */
const MAX_SHOWN = 60

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

const pathText = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else if (typeof key === "string" && IDENTIFIER.test(key)) out += out === "" ? key : `.${key}`
    else out += `[${typeof key === "string" ? JSON.stringify(key) : String(key)}]`
  }
  return out
}

/** A short rendering of a sent value. */
const shown = (value: unknown): string => {
  let text: string
  if (value === undefined) return "undefined"
  if (typeof value === "bigint") text = `${value}n`
  else if (typeof value === "symbol" || typeof value === "function") return typeof value
  else {
    try {
      text = JSON.stringify(value) ?? String(value)
    } catch {
      return Array.isArray(value) ? "an array" : "an object"
    }
  }
  return text.length <= MAX_SHOWN ? text : `${text.slice(0, MAX_SHOWN - 1)}…`
}

/** The keyword constraints of a refinement's JSON Schema annotation (`maximum 600000`, `minLength 2`). */
const constraints = (ast: SchemaAST.Refinement): string | undefined => {
  const json = ast.annotations[SchemaAST.JSONSchemaAnnotationId]
  if (typeof json !== "object" || json === null) return undefined
  const parts = Object.entries(json).flatMap(([key, value]) =>
    typeof value === "number" || typeof value === "string" || typeof value === "boolean"
      ? [key === "type" ? String(value) : `${key} ${String(value)}`]
      : [],
  )
  return parts.length === 0 ? undefined : parts.join(", ")
}

/** What `ast` accepts, in words (`a string`, `"a" or "b"`, `an array`, `a positive number`). */
const expected = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "a boolean"
    case "BigIntKeyword":
      return "a bigint"
    case "SymbolKeyword":
    case "UniqueSymbol":
      return "a symbol"
    case "UndefinedKeyword":
    case "VoidKeyword":
      return "undefined"
    case "NeverKeyword":
      return "no value"
    case "UnknownKeyword":
    case "AnyKeyword":
      return "any value"
    case "ObjectKeyword":
    case "TypeLiteral":
      return "an object"
    case "Literal":
      return ast.literal === null ? "null" : shown(ast.literal)
    case "Enums":
      return ast.enums.map(([, value]) => shown(value)).join(" or ")
    case "TemplateLiteral":
      return "a string of the documented form"
    case "TupleType":
      return ast.elements.length === 0 ? "an array" : `an array of ${ast.elements.length} elements`
    case "Union":
      return [...new Set(ast.types.map(expected))].join(" or ")
    case "Suspend":
      return expected(ast.f())
    case "Transformation":
      return expected(ast.from)
    case "Refinement": {
      // Effect's own filters describe themselves as "a positive number", "an integer", …; a description in other
      // words is the tool author's documentation, so the constraint is named instead.
      const description = Option.getOrUndefined(SchemaAST.getDescriptionAnnotation(ast))
      if (description !== undefined && /^an? /.test(description)) return description
      const named = constraints(ast)
      return named === undefined ? expected(ast.from) : `${expected(ast.from)} with ${named}`
    }
    case "Declaration":
      return (
        Option.getOrUndefined(SchemaAST.getDescriptionAnnotation(ast)) ??
        Option.getOrUndefined(SchemaAST.getTitleAnnotation(ast)) ??
        "a valid value"
      )
  }
}

const hasMessage = (ast: SchemaAST.AST): boolean => Option.isSome(SchemaAST.getMessageAnnotation(ast))

/** Effect's message for one issue (custom `message` annotations, transformation failures), without its path. */
const effectMessage = (issue: ParseResult.ParseIssue): string =>
  ParseResult.ArrayFormatter.formatIssueSync(issue)
    .map((entry) => entry.message)
    .join("; ")

interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly text: string
}

const issues = (value: ParseResult.SingleOrNonEmpty<ParseResult.ParseIssue>): ReadonlyArray<ParseResult.ParseIssue> =>
  Array.isArray(value) ? value : [value as ParseResult.ParseIssue]

/** The problems under `issue`, at `path`; `object` is the struct being checked, if any. */
const collect = (
  issue: ParseResult.ParseIssue,
  path: ReadonlyArray<PropertyKey>,
  object: SchemaAST.TypeLiteral | undefined,
  out: Array<Problem>,
): void => {
  switch (issue._tag) {
    case "Pointer": {
      const segment = Array.isArray(issue.path) ? issue.path : [issue.path as PropertyKey]
      return collect(issue.issue, [...path, ...segment], object, out)
    }
    case "Missing": {
      const key = path[path.length - 1]
      const signature = object?.propertySignatures.find((candidate) => candidate.name === key)
      out.push({
        path,
        text:
          issue.message ?? `missing, expected ${expected(signature?.type ?? (issue.ast as unknown as SchemaAST.AST))}`,
      })
      return
    }
    case "Unexpected": {
      const keys = object?.propertySignatures.map((signature) => String(signature.name)) ?? []
      const known = keys.length === 0 ? "" : `, expected one of ${keys.join(", ")}`
      out.push({ path, text: `unexpected property${known}` })
      return
    }
    case "Forbidden":
      out.push({ path, text: issue.message ?? "cannot be checked here" })
      return
    case "Type":
      out.push({
        path,
        text:
          issue.message !== undefined || hasMessage(issue.ast)
            ? effectMessage(issue)
            : `expected ${expected(issue.ast)}, got ${shown(issue.actual)}`,
      })
      return
    case "Refinement":
      if (issue.kind === "From") return collect(issue.issue, path, object, out)
      out.push({
        path,
        text: hasMessage(issue.ast)
          ? effectMessage(issue)
          : `expected ${expected(issue.ast)}, got ${shown(issue.actual)}`,
      })
      return
    case "Transformation":
      if (issue.kind === "Transformation" && hasMessage(issue.ast)) {
        out.push({ path, text: effectMessage(issue) })
        return
      }
      return collect(issue.issue, path, object, out)
    case "Composite": {
      const ast = issue.ast
      if (hasMessage(ast)) {
        out.push({ path, text: effectMessage(issue) })
        return
      }
      if (ast._tag === "Union") return union(issue, ast, path, out)
      const inner = ast._tag === "TypeLiteral" ? ast : object
      for (const each of issues(issue.issues)) collect(each, path, inner, out)
      return
    }
  }
}

/**
 * A union's failure: the members the value could not be (an optional property's `undefined` is left out when a
 * value was sent). One member left is explained as that member; several become one line naming them all.
 */
const union = (
  issue: ParseResult.Composite,
  ast: SchemaAST.Union,
  path: ReadonlyArray<PropertyKey>,
  out: Array<Problem>,
): void => {
  const members = issues(issue.issues).filter(
    (member) => !(issue.actual !== undefined && member._tag === "Type" && member.ast._tag === "UndefinedKeyword"),
  )
  if (members.length === 1) return collect(members[0]!, path, undefined, out)
  const types = ast.types.filter((type) => issue.actual === undefined || type._tag !== "UndefinedKeyword")
  const alternatives = [...new Set(types.map(expected))].join(" or ")
  out.push({ path, text: `expected ${alternatives}, got ${shown(issue.actual)}` })
}

/**
 * The model-visible message for an input that failed to decode: the prefix, then one problem per line.
 *
 * @since 0.3.0
 * @category formatting
 */
export const message = (issue: ParseResult.ParseIssue): string => {
  const problems: Array<Problem> = []
  collect(issue, [], undefined, problems)
  const lines = problems
    .filter((problem) => problem.text !== "")
    .map((problem) => (problem.path.length === 0 ? problem.text : `${pathText(problem.path)}: ${problem.text}`))
  if (lines.length === 0) lines.push(effectMessage(issue))
  const listed = lines.slice(0, MAX_PROBLEMS)
  if (lines.length > MAX_PROBLEMS) listed.push(`… and ${lines.length - MAX_PROBLEMS} more problems`)
  return PREFIX + listed.join("\n")
}
