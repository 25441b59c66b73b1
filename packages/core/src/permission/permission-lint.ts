/**
 * PermissionLint: mistakes in permission rules that would otherwise fail silently — duplicates, rules that a later
 * rule fully shadows, rules that can never match (a relative pattern for `external_directory`, whose resources are
 * absolute; `~` in a pattern of an action that never expands it; an action no tool asks for), overly broad saved
 * approvals, unknown keys inside a rule, and configuration keys written in a deprecated camelCase spelling. Pure
 * over configuration documents as `Config` parsed them (the keys inside rules that the schema ignores and the
 * deprecated spellings are on each document, `Config.Document.unknownRuleKeys` and `deprecatedKeys`) and saved rows.
 * See docs/shell.md and docs/configuration.md.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Builtins from "../agent/builtins.js"
import * as Config from "../place/config.js"
import * as EventV2 from "../place/event.js"
import type * as PermissionSaved from "./permission-saved.js"
import * as Wildcard from "../values/wildcard.js"

/**
 * One finding. `error`s make `toolgate permissions lint` exit 1.
 *
 * @since 0.2.0
 * @category models
 */
export interface Finding {
  readonly level: "error" | "warning"
  readonly code:
    "duplicate" | "shadowed" | "never-matches" | "unknown-action" | "broad-approval" | "unknown-key" | "deprecated-key"
  /**
   * Where: `<file> permissions[i]`, `<file> agents.<id>.permissions[i]`, `<file> <key>` (a deprecated key) or
   * `saved approval <id>`.
   */
  readonly where: string
  readonly message: string
}

/**
 * The actions some tool or the gate asks for.
 *
 * @since 0.2.0
 * @category constants
 */
export const KNOWN_ACTIONS: ReadonlySet<string> = new Set([
  "read",
  "edit",
  "glob",
  "grep",
  "bash",
  "external_directory",
  "protected_path",
  "webfetch",
  "websearch",
  "question",
  "todowrite",
  "skill",
  "task",
  "plan_enter",
  "plan_exit",
  "mcp",
  "mcp_elicitation",
  "project_program",
])

/** Actions whose rule resources are home-expanded (`~/x`). */
const EXPANDED: ReadonlySet<string> = new Set(["read", "edit", "external_directory"])

interface Located {
  readonly rule: typeof Config.PermissionRule.Type
  readonly where: string
}

const isAbsolutePattern = (pattern: string) => pattern.startsWith("/") || /^[A-Za-z]:[\\/]/.test(pattern)

/** Does `later` cover every request `earlier` matches? (Its patterns match the earlier patterns as text.) */
const covers = (later: Located["rule"], earlier: Located["rule"]) =>
  Wildcard.match(earlier.action, later.action) && Wildcard.match(earlier.resource, later.resource)

/** Lints one ordered rule list (the rules of one scope, in evaluation order). */
const lintList = (rules: ReadonlyArray<Located>): Array<Finding> => {
  const out: Array<Finding> = []
  rules.forEach((item, i) => {
    const { rule, where } = item
    const later = rules.slice(i + 1)
    const duplicate = later.find(
      (other) =>
        other.rule.action === rule.action && other.rule.resource === rule.resource && other.rule.effect === rule.effect,
    )
    if (duplicate !== undefined) {
      out.push({ level: "warning", code: "duplicate", where, message: `the same rule again at ${duplicate.where}` })
    } else {
      const shadow = later.find((other) => covers(other.rule, rule))
      if (shadow !== undefined) {
        out.push({
          level: "warning",
          code: "shadowed",
          where,
          message: `never decides anything: ${shadow.where} (${shadow.rule.action} ${shadow.rule.resource} ${shadow.rule.effect}) comes later and matches everything it matches`,
        })
      }
    }
    if (
      rule.action === "external_directory" &&
      rule.resource !== "*" &&
      !isAbsolutePattern(rule.resource) &&
      !rule.resource.startsWith("~")
    ) {
      out.push({
        level: "error",
        code: "never-matches",
        where,
        message: `external_directory resources are absolute directories; the relative pattern ${rule.resource} never matches`,
      })
    }
    if (rule.resource.includes("~") && !(EXPANDED.has(rule.action) && rule.resource.startsWith("~"))) {
      out.push({
        level: "warning",
        code: "never-matches",
        where,
        message: `\`~\` is only expanded at the start of read, edit and external_directory patterns; here it matches a literal ~`,
      })
    }
    if (!rule.action.includes("*") && !rule.action.includes("?") && !KNOWN_ACTIONS.has(rule.action)) {
      out.push({
        level: "warning",
        code: "unknown-action",
        where,
        message: `no tool asks for the action ${rule.action}`,
      })
    }
  })
  return out
}

/**
 * Lints configuration documents (top-level rules, then each agent's rules on top of them, as they are evaluated) and
 * saved approvals.
 *
 * @since 0.2.0
 * @category utilities
 */
export const lint = (
  documents: ReadonlyArray<Config.Document>,
  saved: ReadonlyArray<PermissionSaved.Info> = [],
): ReadonlyArray<Finding> => {
  const name = (document: Config.Document) => document.path ?? "(config)"
  const top: Array<Located> = documents.flatMap((document) =>
    (document.info.permissions ?? []).map((rule, i) => ({ rule, where: `${name(document)} permissions[${i}]` })),
  )
  const findings: Array<Finding> = lintList(top)
  const agents = new Set(documents.flatMap((document) => Object.keys(document.info.agents ?? {})))
  const seen = new Set(findings.map((finding) => `${finding.code}\u0000${finding.where}`))
  for (const agent of agents) {
    const own: Array<Located> = documents.flatMap((document) =>
      (document.info.agents?.[agent]?.permissions ?? []).map((rule, i) => ({
        rule,
        where: `${name(document)} agents.${agent}.permissions[${i}]`,
      })),
    )
    for (const finding of lintList([...top, ...own])) {
      const key = `${finding.code}\u0000${finding.where}`
      if (seen.has(key)) continue
      seen.add(key)
      findings.push(finding)
    }
  }
  for (const document of documents) {
    for (const unknown of document.unknownRuleKeys ?? []) {
      findings.push({
        level: "error",
        code: "unknown-key",
        where: `${name(document)} ${unknown.where}`,
        message: `unknown key ${JSON.stringify(unknown.key)} in a rule (expected action, resource, effect)`,
      })
    }
    for (const deprecated of document.deprecatedKeys ?? []) {
      findings.push({
        level: "warning",
        code: "deprecated-key",
        where: `${name(document)} ${deprecated.key}`,
        message: `${deprecated.key} is a deprecated spelling of ${deprecated.canonical}; rename it to ${deprecated.canonical}`,
      })
    }
  }
  for (const row of saved) {
    const text = Wildcard.display(row.resource)
    if (row.resource === "*" || (!Wildcard.isLiteral(row.resource) && text.replace(/[\s*]/g, "").length <= 2)) {
      findings.push({
        level: "warning",
        code: "broad-approval",
        where: `saved approval ${row.id}`,
        message: `${row.action} ${text} allows almost every ${row.action} request (revoke with \`toolgate permissions revoke ${row.id}\`)`,
      })
    }
  }
  return findings
}

/**
 * Findings as readable lines, errors first.
 *
 * @since 0.2.0
 * @category utilities
 */
export const render = (findings: ReadonlyArray<Finding>): string =>
  findings.length === 0
    ? "No problems found."
    : [...findings]
        .sort((a, b) => (a.level === b.level ? 0 : a.level === "error" ? -1 : 1))
        .map((finding) => `${finding.level} ${finding.code}: ${finding.where}: ${finding.message}`)
        .join("\n")

/**
 * Lints configuration entries as discovered (markdown agent files in configuration folders included).
 *
 * @since 0.2.0
 * @category utilities
 */
export const lintEntries = (
  entries: ReadonlyArray<Config.Entry>,
  saved: ReadonlyArray<PermissionSaved.Info> = [],
): Effect.Effect<ReadonlyArray<Finding>> =>
  Effect.map(Builtins.loadDocuments(entries), (documents) => lint(documents, saved))

/**
 * Published once per finding when a Location is built (see `layerWarnings`).
 *
 * @since 0.2.0
 * @category models
 */
export const Warning = EventV2.define(
  "permission.lint.warning",
  Schema.Struct({
    level: Schema.Literal("error", "warning"),
    code: Schema.String,
    where: Schema.String,
    message: Schema.String,
  }),
)

/**
 * Lints the Location's configuration when the Location is built and reports every finding, never silently: as a
 * `permission.lint.warning` event and as a logged warning. A lint finding never stops the build (a malformed
 * configuration already does, with `Config.InvalidError`); `toolgate permissions lint` exits 1 on errors.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerWarnings: Layer.Layer<never, never, Config.Service | EventV2.Service> = Layer.effectDiscard(
  Effect.gen(function* () {
    const entries = yield* (yield* Config.Service).entries()
    const events = yield* EventV2.Service
    for (const finding of yield* lintEntries(entries)) {
      yield* Effect.logWarning(`permission lint ${finding.level} ${finding.code}: ${finding.where}: ${finding.message}`)
      yield* Effect.ignore(events.publish(Warning, finding))
    }
  }),
)
