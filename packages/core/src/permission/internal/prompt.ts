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
import { EXPLICIT_ACTIONS, EXPLICIT_RESOURCE_PREFIXES } from "./evaluate.js"
import { saveEntry } from "./leaf.js"
import type { Request, SaveEntry } from "./schema.js"

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

const sameSaves = (a: ReadonlyArray<SaveEntry>, b: ReadonlyArray<SaveEntry>): boolean => {
  if (a.length !== b.length) return false
  const left = new Set(a.map((entry) => entry.pattern))
  return b.every((entry) => left.has(entry.pattern))
}

/**
 * The choices of `request`, in the order a client shows them: `once`, `session`, `always:exact`,
 * `always:directory`, `always:pattern`, `reject`. `session` and the `always` choices are offered only when the
 * request saves something (a `protected_path` ask saves nothing); `always:exact` and `always:directory` only when
 * no resource carries an explicit prefix (`unresolved:`, `private:`, `net:`) and the action is not explicit; a
 * choice whose saves equal a narrower one's is left out (the narrower id stays). `session` holds the tool's save
 * patterns (what `always:pattern` would save) for this session only.
 *
 * @since 0.3.0
 * @category choices
 */
export const choices = (request: Request): ReadonlyArray<Choice> => {
  const action = request.action
  const pattern = request.always?.entries ?? (request.save ?? []).map(saveEntry)
  const where = request.always?.scope
  const once: Choice = { id: "once", lifetime: "once", label: "Allow once", action, saves: [] }
  const reject: Choice = { id: "reject", lifetime: "reject", label: "Reject", action, saves: [] }
  if (pattern.length === 0) return [once, reject]
  const out: Array<Choice> = [once]
  out.push({ id: "session", lifetime: "session", label: "Allow for this session", action, saves: pattern })
  const always = (scope: "exact" | "directory" | "pattern", label: string, saves: ReadonlyArray<SaveEntry>) => {
    if (out.some((choice) => choice.lifetime === "always" && sameSaves(choice.saves, saves))) return
    out.push({
      id: `always:${scope}`,
      lifetime: "always",
      scope,
      label,
      action,
      saves,
      ...(where === undefined ? {} : { where }),
    })
  }
  const narrowable =
    !EXPLICIT_ACTIONS.has(action) && request.resources.every((resource) => !EXPLICIT_RESOURCE_PREFIXES.some((prefix) => resource.startsWith(prefix)))
  if (narrowable) {
    always("exact", "Always allow exactly this", unique(request.resources.map(Wildcard.literal)).map(saveEntry))
    if (PATH_ACTIONS.has(action)) {
      always("directory", "Always allow in this directory", unique(request.resources.map(directoryPattern)).map(saveEntry))
    }
  }
  always("pattern", `Always allow ${pattern.map((entry) => entry.text).join(", ")}`, pattern)
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
