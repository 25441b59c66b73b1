/**
 * Where each of an agent's configured rules came from: a built-in default, a configuration file and index, an agent
 * entry or a markdown agent file. `PermissionExplain` shows it in its trace; the permission service journals it with
 * every evaluation (docs/decisions.md).
 *
 * @since 0.3.0
 * @internal
 */
import * as Builtins from "../../agent/builtins.js"
import * as Config from "../../place/config.js"
import type { Rule, Ruleset } from "./schema.js"

/**
 * Where a rule came from.
 *
 * @internal
 * @category models
 */
export type Origin =
  | { readonly type: "builtin" }
  | { readonly type: "config"; readonly path: string | undefined; readonly index: number }
  | {
      readonly type: "agent"
      readonly path: string | undefined
      readonly agent: string
      readonly index: number
      /** True when the entry came from a markdown agent file. */
      readonly file: boolean
    }
  | { readonly type: "saved"; readonly id: string; readonly timeCreated: number }
  | { readonly type: "unknown" }

const same = (a: Rule, b: Rule) => a.action === b.action && a.resource === b.resource && a.effect === b.effect

/**
 * The origins of an agent's configured rules. The configuration's rules are the tail of the list (top-level rules
 * of every document, then each document's entry for the agent); what comes before them is built in. When the tail
 * does not match (a plugin changed the rules), the rules are marked `unknown`.
 *
 * @internal
 * @category utilities
 */
export const origins = (
  agent: string,
  permissions: Ruleset,
  documents: ReadonlyArray<Config.Document>,
  home: string,
): ReadonlyArray<Origin> => {
  const tail: Array<{ readonly rule: Rule; readonly origin: Origin }> = []
  for (const document of documents) {
    Builtins.expandPermissions(document.info.permissions ?? [], home).forEach((rule, index) =>
      tail.push({ rule, origin: { type: "config", path: document.path, index } }),
    )
  }
  for (const document of documents) {
    const entry = document.info.agents?.[agent]
    if (entry?.permissions === undefined) continue
    const file = document.path?.endsWith(".md") === true
    Builtins.expandPermissions(entry.permissions, home).forEach((rule, index) =>
      tail.push({ rule, origin: { type: "agent", path: document.path, agent, index, file } }),
    )
  }
  const start = permissions.length - tail.length
  const fits = start >= 0 && tail.every((item, i) => same(item.rule, permissions[start + i]!))
  if (!fits) return permissions.map((): Origin => ({ type: "unknown" }))
  return permissions.map((_, i): Origin => (i < start ? { type: "builtin" } : tail[i - start]!.origin))
}

/**
 * The configuration documents of `entries` in priority order, each directory entry replaced by its markdown agents,
 * read now. Files left out are not reported here: `AgentV2` warns about them when it loads the agents.
 *
 * @internal
 * @category utilities
 */
export const documentsOf = (entries: ReadonlyArray<Config.Entry>): ReadonlyArray<Config.Document> =>
  entries.flatMap((entry) => (entry.type === "document" ? [entry] : Config.agentFiles(entry.path).documents))
