/**
 * What every approval client shows of a prompt, in the same words (the CLI, MCP elicitation and the AI SDK bridge):
 * the tool call and its full input, the rendered diff of a write, edit or apply_patch and one block per choice with
 * what it saves and where; and which choice an old three-way reply (`once`, `always`, `reject`) stands for. Every value goes through `Printable`, so no
 * control, escape or invisible character of a command, path or diff reaches a screen raw. `Approvals` names
 * each of its functions.
 *
 * @since 0.3.0
 */
import * as Printable from "../../values/printable.js"
import { replyChoice } from "../../permission/internal/prompt.js"
import type { Reply, Request, SaveEntry, SaveScope } from "../../permission/internal/schema.js"

/**
 * The fields of `Approvals.Choice` read here (structural, so a client may pass any object that has them).
 *
 * @since 0.4.0
 * @category models
 */
export interface Choice {
  readonly id: string
  readonly lifetime: "once" | "session" | "always" | "reject"
  readonly scope?: "exact" | "directory" | "pattern" | undefined
  readonly label: string
  readonly action: string
  readonly saves: ReadonlyArray<SaveEntry>
  readonly where?: SaveScope | undefined
}

/**
 * The fields of `Approvals.Prompt` read here.
 *
 * @since 0.4.0
 * @category models
 */
export interface Prompt {
  readonly choices: ReadonlyArray<Choice>
  readonly diff?: string | undefined
  readonly deadline?: number | undefined
  readonly tool?: { readonly name: string; readonly callID: string; readonly input: unknown } | undefined
}

/** The wider an `always` scope, the later it comes: `always` of the three-way reply is the widest one offered. */
const WIDTH = { exact: 0, directory: 1, pattern: 2 } as const

/**
 * The choice a three-way reply stands for: `once` and `reject` by their ids; `always`, for a whole prompt, the choice
 * that saves exactly the tool's save patterns (as `PermissionV2.reply("always")` does — `Approvals.replyChoice`),
 * and for a bare list of choices the widest `always` offered. `undefined` when the prompt offers no such choice (an
 * `always` that would save nothing is not offered: answer `once`).
 *
 * @since 0.3.0
 * @category choices
 */
export const choiceOf = <C extends Choice>(
  prompt: { readonly request?: Request | undefined; readonly choices: ReadonlyArray<C> },
  reply: Reply,
): C | undefined => {
  if (reply !== "always") return prompt.choices.find((choice) => choice.lifetime === reply)
  // A whole prompt: `always` is what `PermissionV2.reply("always")` saves, the tool's own save patterns.
  if (prompt.request !== undefined) return replyChoice({ request: prompt.request, choices: prompt.choices }, reply)
  let widest: C | undefined
  for (const choice of prompt.choices) {
    if (choice.lifetime !== "always") continue
    if (widest === undefined || WIDTH[choice.scope ?? "pattern"] > WIDTH[widest.scope ?? "pattern"]) widest = choice
  }
  return widest
}

const where = (scope: SaveScope | undefined): string =>
  scope === undefined
    ? ""
    : scope.kind === "directory"
      ? ` for the directory ${Printable.show(scope.directory)} only (no git repository)`
      : ` for project ${Printable.show(scope.projectID)} (${Printable.show(scope.directory)}, all its directories)`

/**
 * The lines of one choice: `<id> — <label>`, then what it saves (a `session` choice: what it allows until the
 * session ends) and where, one pattern or exact value per line.
 *
 * @since 0.3.0
 * @category rendering
 */
export const describeChoice = (choice: Choice): ReadonlyArray<string> => {
  const head = `${choice.id} — ${Printable.show(choice.label)}`
  if (choice.saves.length === 0) return [head]
  const what =
    choice.lifetime === "session"
      ? `  allows ${Printable.show(choice.action)} until the session ends:`
      : `  saves ${Printable.show(choice.action)}${where(choice.where)}:`
  return [
    head,
    what,
    ...choice.saves.map((entry) =>
      entry.literal ? `    exactly: ${Printable.quote(entry.text)}` : `    pattern: ${Printable.show(entry.text)}`,
    ),
  ]
}

/**
 * The lines of every choice a prompt offers, in its order.
 *
 * @since 0.3.0
 * @category rendering
 */
export const describeChoices = (prompt: Pick<Prompt, "choices">): ReadonlyArray<string> =>
  prompt.choices.flatMap(describeChoice)

/** One input value on one line: a string quoted (`Printable.quote`), anything else as its JSON, escaped. */
const inputValue = (value: unknown): string =>
  typeof value === "string" ? Printable.quote(value) : Printable.show(JSON.stringify(value) ?? "undefined")

/**
 * The lines of the tool call a prompt came from: `tool: <name> (call <id>)`, then `input:` and the call's full input
 * (the input the digest covers), one `key: value` line per property of an object input (strings quoted, other
 * values as JSON, everything escaped), or the whole input as JSON. Empty for an ask raised outside a tool call.
 *
 * @since 0.3.0
 * @category rendering
 */
export const describeTool = (prompt: Pick<Prompt, "tool">): ReadonlyArray<string> => {
  const tool = prompt.tool
  if (tool === undefined) return []
  const input = tool.input
  const head = `tool: ${Printable.show(tool.name)} (call ${Printable.show(tool.callID)})`
  if (typeof input !== "object" || input === null || Array.isArray(input)) return [head, `input: ${inputValue(input)}`]
  return [
    head,
    "input:",
    ...Object.entries(input).map(([key, value]) => `  ${Printable.show(key)}: ${inputValue(value)}`),
  ]
}

/**
 * The lines of a prompt's diff (`diff:` and the diff, one escaped line per line); empty when it has none.
 *
 * @since 0.3.0
 * @category rendering
 */
export const describeDiff = (prompt: Pick<Prompt, "diff">): ReadonlyArray<string> =>
  prompt.diff === undefined || prompt.diff === ""
    ? []
    : [
        "diff:",
        ...prompt.diff
          .replace(/\n$/, "")
          .split("\n")
          .map((line) => `  ${Printable.show(line)}`),
      ]

/**
 * The deadline line of a prompt (`answer by <ISO time>`), or nothing when it waits until answered.
 *
 * @since 0.3.0
 * @category rendering
 */
export const describeDeadline = (prompt: Pick<Prompt, "deadline">): ReadonlyArray<string> =>
  prompt.deadline === undefined ? [] : [`answer by ${new Date(prompt.deadline).toISOString()}`]
