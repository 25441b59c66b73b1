/**
 * The compiled evaluator: last match wins, no match asks, an explicit action or resource prefix is allowed only by a
 * rule naming it. Rulesets compile once per value (see docs/performance.md). `PermissionV2` re-exports everything
 * here.
 *
 * @since 0.3.0
 */
import * as ProtectedPath from "../../place/protected-path.js"
import * as Wildcard from "../../values/wildcard.js"
import type { Rule, Ruleset } from "./schema.js"
import {
  DEFINITION_PREFIX,
  MCP_ELICITATION_ACTION,
  NET_PREFIX,
  PRIVATE_PREFIX,
  PROJECT_PROGRAM_ACTION,
  UNRESOLVED_PREFIX,
} from "../../values/internal/resource-prefix.js"

/**
 * The action of the ask a plugin's `tool.before` hook makes (resource `<plugin>/<tool>`): an explicit action, so a
 * hook's ask is asked unless a rule naming `hook` says otherwise. See docs/plugins.md.
 *
 * @since 0.4.0
 * @category constants
 */
export const HOOK_ACTION = "hook"

/**
 * Actions only a rule naming them exactly can allow: an allow whose action is a wildcard (`* * allow`) counts as ask
 * for them. Denies and asks apply as usual. See docs/trust/protected-paths.md, for `project_program`
 * and `mcp_elicitation` docs/mcp-tools.md, and for `hook` docs/plugins.md.
 *
 * @since 0.2.0
 * @category constants
 */
export const EXPLICIT_ACTIONS: ReadonlySet<string> = new Set([
  ProtectedPath.ACTION,
  PROJECT_PROGRAM_ACTION,
  MCP_ELICITATION_ACTION,
  HOOK_ACTION,
])

export {
  /**
   * The prefix of an MCP tool approval bound to the tool's definition (`definition:<server>/<tool>@<digest>`).
   *
   * @since 0.4.0
   * @category constants
   */
  DEFINITION_PREFIX,
  /**
   * The action of an MCP server's elicitation request.
   *
   * @since 0.4.0
   * @category constants
   */
  MCP_ELICITATION_ACTION,
  /**
   * The prefix of a sandboxed command's outgoing connection (`net:<host>:<port>`).
   *
   * @since 0.3.0
   * @category constants
   */
  NET_PREFIX,
  /**
   * The prefix of a resource that reaches a loopback, private, link-local or metadata address.
   *
   * @since 0.3.0
   * @category constants
   */
  PRIVATE_PREFIX,
  /**
   * The prefix of a shell command that cannot be resolved statically.
   *
   * @since 0.3.0
   * @category constants
   */
  UNRESOLVED_PREFIX,
} from "../../values/internal/resource-prefix.js"

/**
 * Resource prefixes only a rule naming them can allow: for a resource that starts with one of them, an allow whose
 * resource pattern does not start with the same prefix is passed over (so `webfetch * allow` never allows
 * `private:…`, `bash * allow` never allows a shell command that cannot be resolved statically, `unresolved:…`, and
 * neither lets a sandboxed command's connection out, `net:…`, nor an MCP tool's definition-bound approval,
 * `definition:…`). Denies and asks apply as usual. See docs/trust/webfetch.md, docs/shell.md, docs/egress.md and
 * docs/mcp-tools.md.
 *
 * @since 0.2.0
 * @category constants
 */
export const EXPLICIT_RESOURCE_PREFIXES: ReadonlyArray<string> = [
  PRIVATE_PREFIX,
  UNRESOLVED_PREFIX,
  NET_PREFIX,
  DEFINITION_PREFIX,
]

const explicitPrefixOf = (resource: string): string | undefined => {
  for (const prefix of EXPLICIT_RESOURCE_PREFIXES) if (resource.startsWith(prefix)) return prefix
  return undefined
}

/**
 * A ruleset compiled for `evaluate`, once per ruleset value (see docs/performance.md). Resource patterns compile
 * lazily the first time a rule is reached; for each action seen, the rules whose action pattern matches it are
 * listed once, so an evaluation visits only those. Rules with `ignore_case` compile their lower-cased pattern and are
 * tested against the lower-cased resource (every platform); see docs/trust/secrets.md.
 */
interface CompiledRuleset {
  readonly rules: Ruleset
  readonly first: Rule
  readonly last: Rule
  readonly resources: Array<Wildcard.Pattern | undefined>
  /** The distinct action patterns, and for each rule the index of its pattern. */
  readonly actionPatterns: ReadonlyArray<Wildcard.Pattern>
  readonly actionOf: Int32Array
  readonly byAction: Map<string, Int32Array>
}

/** Compiled rulesets by identity: a ruleset value is compiled once and dropped with it. */
const compiledRulesets = new WeakMap<Ruleset, CompiledRuleset>()
/** How many distinct actions one compiled ruleset lists before starting over (actions are tool names: few). */
const MAX_ACTIONS_PER_RULESET = 1024
const matcher = Wildcard.platform

const compileRuleset = (rules: Ruleset): CompiledRuleset => {
  const index = new Map<string, number>()
  const actionPatterns: Array<Wildcard.Pattern> = []
  const actionOf = new Int32Array(rules.length)
  for (let i = 0; i < rules.length; i++) {
    const source = rules[i]!.action
    let at = index.get(source)
    if (at === undefined) {
      at = actionPatterns.length
      index.set(source, at)
      actionPatterns.push(matcher.compile(source))
    }
    actionOf[i] = at
  }
  return {
    rules,
    first: rules[0]!,
    last: rules[rules.length - 1]!,
    resources: new Array<Wildcard.Pattern | undefined>(rules.length),
    actionPatterns,
    actionOf,
    byAction: new Map(),
  }
}

/** The compiled form of `rules`; recompiled if the array was changed in place since (rulesets are meant immutable). */
const compiledRuleset = (rules: Ruleset): CompiledRuleset => {
  const hit = compiledRulesets.get(rules)
  if (
    hit !== undefined &&
    hit.rules.length === rules.length &&
    hit.first === rules[0] &&
    hit.last === rules[rules.length - 1]
  )
    return hit
  const compiled = compileRuleset(rules)
  compiledRulesets.set(rules, compiled)
  return compiled
}

/** The indices (ascending) of the rules whose action pattern matches `action`. */
const rulesFor = (compiled: CompiledRuleset, action: string, normalized: string): Int32Array => {
  const hit = compiled.byAction.get(action)
  if (hit !== undefined) return hit
  const patterns = compiled.actionPatterns
  const matches = new Uint8Array(patterns.length)
  for (let p = 0; p < patterns.length; p++) matches[p] = matcher.test(normalized, patterns[p]!) ? 1 : 0
  const actionOf = compiled.actionOf
  let count = 0
  for (let i = 0; i < actionOf.length; i++) count += matches[actionOf[i]!]!
  const indices = new Int32Array(count)
  for (let i = 0, k = 0; i < actionOf.length; i++) if (matches[actionOf[i]!] === 1) indices[k++] = i
  if (compiled.byAction.size >= MAX_ACTIONS_PER_RULESET) compiled.byAction.clear()
  compiled.byAction.set(action, indices)
  return indices
}

const resourcePattern = (compiled: CompiledRuleset, i: number): Wildcard.Pattern => {
  let pattern = compiled.resources[i]
  if (pattern === undefined) {
    const rule = compiled.rules[i]!
    pattern = matcher.compile(rule.ignore_case === true ? rule.resource.toLowerCase() : rule.resource)
    compiled.resources[i] = pattern
  }
  return pattern
}

/**
 * Last match wins; no match gives `{ action, resource: "*", effect: "ask" }`. A rule with `ignore_case` matches its
 * resource without regard to letter case; an `EXPLICIT_ACTIONS` action is allowed only by a rule naming it, and a
 * resource with an `EXPLICIT_RESOURCE_PREFIXES` prefix only by a rule whose resource starts with that prefix.
 * The resource is prepared once per call and each ruleset compiled once (see docs/performance.md).
 *
 * @since 0.1.0
 * @category utilities
 */
export const evaluate = (action: string, resource: string, ...rulesets: ReadonlyArray<Ruleset>): Rule => {
  let normalizedAction: string | undefined
  let input: string | undefined
  let lowered: string | undefined
  const explicit = explicitPrefixOf(resource)
  for (let set = rulesets.length - 1; set >= 0; set--) {
    const rules = rulesets[set]!
    if (rules.length === 0) continue
    const compiled = compiledRuleset(rules)
    const indices = rulesFor(compiled, action, (normalizedAction ??= matcher.normalize(action)))
    for (let k = indices.length - 1; k >= 0; k--) {
      const i = indices[k]!
      const rule = rules[i]!
      const pattern = resourcePattern(compiled, i)
      const subject =
        rule.ignore_case === true
          ? (lowered ??= matcher.normalize(resource.toLowerCase()))
          : (input ??= matcher.normalize(resource))
      if (!matcher.test(subject, pattern)) continue
      if (explicit !== undefined && rule.effect === "allow" && !rule.resource.startsWith(explicit)) continue
      if (rule.effect === "allow" && rule.action !== action && EXPLICIT_ACTIONS.has(action)) {
        return { action, resource: rule.resource, effect: "ask" }
      }
      return rule
    }
  }
  return { action, resource: "*", effect: "ask" }
}

/**
 * Concatenates rulesets in argument order.
 *
 * @since 0.1.0
 * @category utilities
 */
export const merge = (...rulesets: ReadonlyArray<Ruleset>): Ruleset => rulesets.flat()

/**
 * All rules, in order, whose action pattern matches `action` (the `rules` payload of `BlockedError`).
 *
 * @since 0.1.0
 * @category utilities
 */
export const relevant = (action: string, rules: Ruleset): Ruleset =>
  rules.filter((rule) => Wildcard.match(action, rule.action))

/**
 * The configured rules used when no agent resolves: everything is denied.
 *
 * @since 0.1.0
 * @category utilities
 */
export const denyAll: Ruleset = [{ action: "*", resource: "*", effect: "deny" }]
