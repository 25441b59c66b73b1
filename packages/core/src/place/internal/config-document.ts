/**
 * The configuration document model: parsed documents and directory entries, the service that serves them, and
 * `parseDocument`, which reads a document's JSONC text once — what it decodes to, its rule examples checked, and the
 * keys inside rules that the schema ignores, kept on the document for `PermissionLint`. `Config` re-exports
 * everything here.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as jsonc from "jsonc-parser"
import * as Wildcard from "../../values/wildcard.js"
import { describeIssues, lineAndColumn } from "./config-issues.js"
import { canonicalKeys, type DeprecatedKey } from "./config-keys.js"
import { Info, PermissionRule } from "./config-schema.js"

/**
 * A parsed configuration document.
 *
 * @since 0.1.0
 * @category models
 */
export interface Document {
  readonly type: "document"
  readonly path?: string
  readonly info: Info
  /**
   * Keys inside rule objects that the schema ignores (a misspelt `efect`), found when `parseDocument` read the text;
   * absent when there are none or the document was not parsed from text. `PermissionLint` reports them.
   *
   * @since 0.3.0
   */
  readonly unknownRuleKeys?: ReadonlyArray<UnknownRuleKey>
  /**
   * The deprecated (camelCase) spellings of keys the document used, each read as its canonical snake_case key;
   * absent when there are none. `PermissionLint` reports them.
   *
   * @since 0.4.0
   */
  readonly deprecatedKeys?: ReadonlyArray<DeprecatedKey>
}

/**
 * A key inside a rule object that the schema ignores: the rule (`permissions[4]`, `agents.<id>.permissions[0]`) and
 * the key.
 *
 * @since 0.3.0
 * @category models
 */
export interface UnknownRuleKey {
  readonly where: string
  readonly key: string
}

/**
 * A configuration directory (e.g. `.toolgate/`), for agent markdown files and skills.
 *
 * @since 0.1.0
 * @category models
 */
export interface Directory {
  readonly type: "directory"
  readonly path: string
}

/**
 * One configuration entry.
 *
 * @since 0.1.0
 * @category models
 */
export type Entry = Document | Directory

/**
 * The Config service: entries from lowest to highest priority.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  readonly entries: () => Effect.Effect<ReadonlyArray<Entry>>
}

/**
 * The Config service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Config")<Service, Interface>() {}

/**
 * The documents among `entries`, in priority order.
 *
 * @since 0.1.0
 * @category utilities
 */
export const documents = (entries: ReadonlyArray<Entry>): ReadonlyArray<Document> =>
  entries.filter((entry): entry is Document => entry.type === "document")

/**
 * The value of `key` from the last document that defines it.
 *
 * @since 0.1.0
 * @category utilities
 */
export const latest = <K extends keyof Info>(entries: ReadonlyArray<Entry>, key: K): Info[K] | undefined => {
  let value: Info[K] | undefined
  for (const document of documents(entries)) if (document.info[key] !== undefined) value = document.info[key]
  return value
}

/**
 * A fixed configuration, for tests and embedders.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromEntries = (entries: ReadonlyArray<Entry>): Layer.Layer<Service> =>
  Layer.succeed(Service, Service.of({ entries: () => Effect.succeed(entries) }))

/**
 * A configuration with no entries.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEmpty: Layer.Layer<Service> = layerFromEntries([])

/**
 * A configuration file that exists but cannot be read, parsed as JSONC, or decoded as `Info`.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidError extends Schema.TaggedError<InvalidError>()("Config.InvalidError", {
  path: Schema.String,
  message: Schema.String,
}) {}

interface RawRule {
  readonly action?: unknown
  readonly resource?: unknown
  readonly effect?: unknown
  readonly ignore_case?: unknown
  readonly examples?: { readonly match?: unknown; readonly not_match?: unknown }
}

/** The raw rule lists of a parsed document, in evaluation order: the top-level rules, then each agent's. */
const rawRuleLists = (
  value: unknown,
): ReadonlyArray<{ readonly rules: ReadonlyArray<unknown>; readonly where: string }> => {
  if (value === null || typeof value !== "object") return []
  const document = value as { readonly permissions?: unknown; readonly agents?: unknown }
  const out: Array<{ readonly rules: ReadonlyArray<unknown>; readonly where: string }> = []
  if (Array.isArray(document.permissions)) out.push({ rules: document.permissions, where: "permissions" })
  if (document.agents === null || typeof document.agents !== "object") return out
  for (const [id, agent] of Object.entries(document.agents as Record<string, { readonly permissions?: unknown }>)) {
    const rules = agent?.permissions
    if (Array.isArray(rules)) out.push({ rules, where: `agents.${id}.permissions` })
  }
  return out
}

const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : []

const exampleMatcher = Wildcard.make({ caseInsensitive: true })

/**
 * The first failing rule example of a document (`examples: { match: [...], not_match: [...] }` on a rule, resources
 * the rule must and must not match), read from the raw document: where, and why. See docs/shell.md.
 */
const failingExample = (value: unknown): string | undefined => {
  for (const { rules, where } of rawRuleLists(value)) {
    for (const [i, raw] of rules.entries()) {
      if (raw === null || typeof raw !== "object") continue
      const rule = raw as RawRule
      if (typeof rule.resource !== "string" || rule.examples === undefined || rule.examples === null) continue
      const pattern = rule.resource
      const matches = (resource: string) =>
        rule.ignore_case === true ? exampleMatcher.match(resource, pattern) : Wildcard.match(resource, pattern)
      const describe = `${String(rule.action)} ${JSON.stringify(pattern)} ${String(rule.effect)}`
      for (const example of strings(rule.examples.match)) {
        if (!matches(example))
          return `${where}.${i}.examples.match: the rule ${describe} does not match ${JSON.stringify(example)}`
      }
      for (const example of strings(rule.examples.not_match)) {
        if (matches(example))
          return `${where}.${i}.examples.not_match: the rule ${describe} matches ${JSON.stringify(example)}`
      }
    }
  }
  return undefined
}

/** The keys a rule object may hold: the schema's fields and `examples`. */
const RULE_KEYS: ReadonlySet<string> = new Set([...Object.keys(PermissionRule.fields), "examples"])

/** Every key inside a rule object that is not a rule key, in document order. */
const unknownRuleKeys = (value: unknown): ReadonlyArray<UnknownRuleKey> => {
  const out: Array<UnknownRuleKey> = []
  for (const { rules, where } of rawRuleLists(value)) {
    rules.forEach((rule, i) => {
      if (rule === null || typeof rule !== "object") return
      for (const key of Object.keys(rule)) if (!RULE_KEYS.has(key)) out.push({ where: `${where}[${i}]`, key })
    })
  }
  return out
}

const KNOWN_KEYS: ReadonlySet<string> = new Set(Object.keys(Info.fields))

/**
 * Parses and decodes one document's text. JSONC: comments and trailing commas are allowed. The error message names
 * the file and either the syntax error position, the unknown top-level keys, both spellings of one key, or every
 * offending field path. A deprecated camelCase key is read as its snake_case name (`Config.ALIASES`). Keys inside
 * rules that the schema ignores and the deprecated spellings used are kept on the document (`unknownRuleKeys`,
 * `deprecatedKeys`), so nothing reads the text again.
 *
 * @since 0.1.0
 * @category utilities
 */
export const parseDocument = (file: string, text: string): Either.Either<Document, InvalidError> => {
  const errors: Array<jsonc.ParseError> = []
  const value: unknown = jsonc.parse(text, errors, { allowTrailingComma: true, disallowComments: false })
  const syntax = errors[0]
  if (syntax !== undefined) {
    const { line, column } = lineAndColumn(text, syntax.offset)
    return Either.left(
      new InvalidError({
        path: file,
        message: `Invalid JSONC in ${file} at line ${line}, column ${column} (offset ${syntax.offset}): ${jsonc.printParseErrorCode(syntax.error)}`,
      }),
    )
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const unknown = Object.keys(value).filter((key) => !KNOWN_KEYS.has(key))
    if (unknown.length > 0) {
      return Either.left(
        new InvalidError({
          path: file,
          message: `Invalid config in ${file}: unknown top-level ${unknown.length === 1 ? "key" : "keys"} ${unknown.map((key) => JSON.stringify(key)).join(", ")}`,
        }),
      )
    }
  }
  const canonical = canonicalKeys(value)
  if (Either.isLeft(canonical))
    return Either.left(new InvalidError({ path: file, message: `Invalid config in ${file}: ${canonical.left}` }))
  const { document, deprecated } = canonical.right
  return Schema.decodeUnknownEither(Info)(document, { errors: "all", onExcessProperty: "ignore" }).pipe(
    Either.mapLeft(
      (error) => new InvalidError({ path: file, message: `Invalid config in ${file} at ${describeIssues(error)}` }),
    ),
    Either.flatMap((info) => {
      const failed = failingExample(document)
      if (failed !== undefined) {
        return Either.left(new InvalidError({ path: file, message: `Invalid config in ${file} at ${failed}` }))
      }
      const unknown = unknownRuleKeys(document)
      return Either.right<Document>({
        type: "document",
        path: file,
        info,
        ...(unknown.length === 0 ? {} : { unknownRuleKeys: unknown }),
        ...(deprecated.length === 0 ? {} : { deprecatedKeys: deprecated }),
      })
    }),
  )
}
