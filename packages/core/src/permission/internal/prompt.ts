/**
 * What a pending ask offers and shows: its choices, each with exactly what it would save and where, and the prompt
 * a client renders. Pure functions of the request; the permission service computes a prompt once per ask, the
 * first time a client reads it.
 *
 * @since 0.3.0
 */
import * as Printable from "../../values/printable.js"
import * as Wildcard from "../../values/wildcard.js"
import type { Choice, Prompt, ToolCall } from "./protocol.js"
import { digest } from "./protocol.js"
import { EXPLICIT_ACTIONS, EXPLICIT_RESOURCE_PREFIXES, evaluate } from "./evaluate.js"
import { saveEntry } from "./leaf.js"
import type { Request, Ruleset, SaveEntry } from "./schema.js"

/**
 * The actions whose resources are paths (relative to the Location, or absolute outside it), for which
 * `always:directory` is offered. Every other action's resources are commands, URLs or hosts: no directory.
 *
 * @since 0.3.0
 * @category constants
 */
export const PATH_ACTIONS: ReadonlySet<string> = new Set(["read", "edit"])

/** The directory of a path resource, as a save pattern: the directory taken literally, then everything below it. */
const directoryPattern = (resource: string): string => {
  const slash = resource.lastIndexOf("/")
  if (slash < 0) return "*" // a file at the top of the Location: the Location's directory
  if (slash === 0) return Wildcard.literal("/") + "*"
  return Wildcard.literal(resource.slice(0, slash + 1)) + "*"
}

const unique = (patterns: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(patterns)]

/**
 * True when every resource `save` matches is matched by `rule` too, by a check that only answers yes when that is
 * certain: the same pattern, `*`, a literal the rule matches, a literal prefix followed by a rule that starts with
 * `*`, or a pattern that starts with the literal prefix of a rule ending in `*`.
 */
const within = (save: string, rule: string): boolean => {
  if (rule === "*" || save === rule) return true
  if (Wildcard.isLiteral(save)) return Wildcard.match(Wildcard.unescape(save), rule)
  if (rule.startsWith("*") && save.endsWith(rule) && Wildcard.isLiteral(save.slice(0, save.length - rule.length)))
    return true
  const head = rule.slice(0, -1)
  return rule.endsWith("*") && head !== "" && Wildcard.isLiteral(head) && save.startsWith(head)
}

/**
 * What an ask may save, cut to the rules that raised it. When a configured or built-in rule narrower than `*` asked
 * for a resource (the secret-file rules, a configured `ask` rule), only the tool's save patterns that stay inside
 * that rule are kept, or else the rule's own pattern (and the resource exactly, when the rule matched it only
 * ignoring case); the request's other resources are then saved exactly. An answer never reaches beyond the rule that
 * asked. `save` is returned as given when every resource was asked by a `*` rule.
 *
 * @since 0.4.0
 * @category choices
 */
export const cutSaves = (
  action: string,
  resources: ReadonlyArray<string>,
  save: ReadonlyArray<string> | undefined,
  configured: Ruleset,
): ReadonlyArray<string> | undefined => {
  if (save === undefined || save.length === 0) return save
  const out: Array<string> = []
  let cut = false
  for (const resource of resources) {
    const rule = evaluate(action, resource, configured)
    if (rule.effect !== "ask" || rule.resource === "*") {
      out.push(Wildcard.literal(resource))
      continue
    }
    cut = true
    const kept = save.filter((pattern) => within(pattern, rule.resource))
    const saves = kept.length > 0 ? kept : [rule.resource]
    out.push(...saves)
    if (!saves.some((pattern) => Wildcard.match(resource, pattern))) out.push(Wildcard.literal(resource))
  }
  return cut ? unique(out) : save
}

/**
 * The `always:directory` saves of a path ask: for each resource, each save pattern that is `*` or starts with `*`,
 * put under the resource's directory (so a directory answer stays inside what the pattern answer would save);
 * `undefined` when some resource has none that matches it (the choice is then not offered).
 */
const directorySaves = (
  resources: ReadonlyArray<string>,
  saves: ReadonlyArray<SaveEntry>,
): ReadonlyArray<string> | undefined => {
  const out: Array<string> = []
  for (const resource of resources) {
    const directory = directoryPattern(resource).slice(0, -1)
    const candidates = saves
      .filter((entry) => !entry.literal && entry.pattern.startsWith("*"))
      .map((entry) => directory + entry.pattern)
      .filter((pattern) => Wildcard.match(resource, pattern))
    if (candidates.length === 0) return undefined
    out.push(...candidates)
  }
  return unique(out)
}

/** The plain sentence of what saving `entries` for `action` grants (raw text: a client escapes a label). */
const grants = (action: string, entries: ReadonlyArray<SaveEntry>): string =>
  entries
    .map((entry) =>
      entry.literal ? `${action} "${entry.text}" exactly` : `${action} ${entry.text}`,
    )
    .join(", ")

const sameSaves = (a: ReadonlyArray<SaveEntry>, b: ReadonlyArray<SaveEntry>): boolean => {
  if (a.length !== b.length) return false
  const left = new Set(a.map((entry) => entry.pattern))
  return b.every((entry) => left.has(entry.pattern))
}

/**
 * The choices of `request`, narrowest first, in the order a client shows them: `once`, `always:exact`,
 * `always:directory`, `session`, `always:pattern`, `reject`. `session` and the `always` choices are offered only when
 * the request saves something (a `protected_path` ask saves nothing); `always:exact` and `always:directory` only
 * when no resource carries an explicit prefix (`unresolved:`, `private:`, `net:`) and the action is not explicit;
 * `always:directory` only for path actions and only inside the patterns the request saves; a choice whose saves
 * equal a narrower one's is left out (the narrower id stays). `session` holds the request's save patterns (what
 * `always:pattern` would save) for this session only. Every label names what the choice grants: the action and
 * each pattern, and for how long (`for this session only, nothing saved`, or `saved`).
 *
 * @since 0.3.0
 * @category choices
 */
export const choices = (request: Request): ReadonlyArray<Choice> => {
  const action = request.action
  const pattern = request.always?.entries ?? (request.save ?? []).map(saveEntry)
  const where = request.always?.scope
  const once: Choice = { id: "once", lifetime: "once", label: "Allow once (this call only)", action, saves: [] }
  const reject: Choice = { id: "reject", lifetime: "reject", label: "Reject", action, saves: [] }
  if (pattern.length === 0) return [once, reject]
  const out: Array<Choice> = [once]
  const always = (scope: "exact" | "directory" | "pattern", sentence: string, saves: ReadonlyArray<SaveEntry>) => {
    if (out.some((choice) => choice.lifetime === "always" && sameSaves(choice.saves, saves))) return
    out.push({
      id: `always:${scope}`,
      lifetime: "always",
      scope,
      label: `Always allow ${sentence}: saved, grants ${grants(action, saves)}`,
      action,
      saves,
      ...(where === undefined ? {} : { where }),
    })
  }
  const narrowable =
    !EXPLICIT_ACTIONS.has(action) && request.resources.every((resource) => !EXPLICIT_RESOURCE_PREFIXES.some((prefix) => resource.startsWith(prefix)))
  if (narrowable) {
    always("exact", "exactly this", unique(request.resources.map(Wildcard.literal)).map(saveEntry))
    const directory = PATH_ACTIONS.has(action) ? directorySaves(request.resources, pattern) : undefined
    if (directory !== undefined) always("directory", "in this directory", directory.map(saveEntry))
  }
  out.push({
    id: "session",
    lifetime: "session",
    label: `Allow for this session: grants ${grants(action, pattern)} until the session ends, nothing saved`,
    action,
    saves: pattern,
  })
  always("pattern", "this pattern", pattern)
  out.push(reject)
  return out
}

/**
 * The choice a three-way `PermissionV2.Reply` stands for: `once` and `reject` by their ids; `always` the `always`
 * choice that saves exactly the tool's save patterns (`always:pattern`, or the narrower id offered in its place when
 * it saves the same). `undefined` for an `always` when the ask saves nothing (answer `once`: nothing to save).
 *
 * @since 0.3.0
 * @category choices
 */
export const replyChoice = <C extends Choice>(
  prompt: { readonly request: Request; readonly choices: ReadonlyArray<C> },
  reply: "once" | "always" | "reject",
): C | undefined => {
  if (reply !== "always") return prompt.choices.find((choice) => choice.id === reply)
  const pattern = prompt.request.always?.entries ?? (prompt.request.save ?? []).map(saveEntry)
  if (pattern.length === 0) return undefined
  return prompt.choices.find((choice) => choice.lifetime === "always" && sameSaves(choice.saves, pattern))
}

/**
 * The prompt of a pending ask: the request, its digest, the tool call it came from (when known), the command of a
 * shell ask (escaped), the rendered diff of a write, edit or apply_patch (`metadata.diff`, as the tool rendered it:
 * a client escapes it when it shows it), the choices, when it was asked and its deadline.
 *
 * @since 0.3.0
 * @category prompts
 */
export const prompt = (
  request: Request,
  tool: ToolCall | undefined,
  askedAt: number,
  deadline: number | undefined,
): Prompt => {
  const command = request.metadata?.["command"]
  const diff = request.metadata?.["diff"]
  return {
    request,
    digest: digest(request, tool),
    ...(tool === undefined ? {} : { tool }),
    ...(typeof command === "string" ? { command: Printable.show(command) } : {}),
    ...(typeof diff === "string" ? { diff } : {}),
    choices: choices(request),
    askedAt,
    ...(deadline === undefined ? {} : { deadline }),
  }
}
