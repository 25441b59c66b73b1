/**
 * Short human descriptions of tool inputs and results for the transcript and the summary.
 *
 * @since 0.1.0
 */
import { Approvals, type LLM, PermissionV2, Printable } from "@toolgate/core"
import { clip } from "./table.js"

const field = (input: unknown, key: string): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const value = (input as Record<string, unknown>)[key]
  return typeof value === "string" ? value : undefined
}

const patchFiles = (patch: string): string =>
  Array.from(
    patch.matchAll(/^\*\*\* (Add|Update|Delete) File: (.+)$/gm),
    (match) => `${match[1]!.toLowerCase()} ${match[2]!.trim()}`,
  ).join(", ")

/**
 * One line describing what a call was asked to do.
 *
 * @since 0.1.0
 * @category utilities
 */
export const input = (tool: string, value: unknown): string => {
  switch (tool) {
    case "read":
    case "write":
    case "edit":
      return field(value, "path") ?? ""
    case "glob":
    case "grep": {
      const where = field(value, "path")
      const include = field(value, "include")
      return [
        field(value, "pattern") ?? "",
        include === undefined ? "" : `in ${include}`,
        where === undefined ? "" : `under ${where}`,
      ]
        .filter((part) => part !== "")
        .join(" ")
    }
    case "apply_patch":
      return patchFiles(field(value, "patchText") ?? "")
    case "bash":
      return clip(field(value, "command") ?? "", 70)
    case "todowrite": {
      const todos = (value as { todos?: ReadonlyArray<unknown> } | null)?.todos
      return `${Array.isArray(todos) ? todos.length : 0} todos`
    }
    case "question": {
      const questions = (value as { questions?: ReadonlyArray<{ header?: unknown }> } | null)?.questions ?? []
      return questions.map((question) => String(question.header ?? "")).join(", ")
    }
    default:
      return clip(JSON.stringify(value) ?? "", 70)
  }
}

/**
 * `text` cut into lines of at most `width` characters, breaking after a space when there is one in reach and
 * mid-word otherwise; the text's own line breaks are kept. Nothing is dropped: joining the pieces of each line
 * gives it back.
 *
 * @since 0.2.0
 * @category utilities
 */
export const wrap = (text: string, width: number): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const line of text.replace(/\r\n/g, "\n").split("\n")) {
    let rest = line
    while (rest.length > width) {
      const space = rest.lastIndexOf(" ", width - 1)
      const cut = space > 0 ? space + 1 : width
      out.push(rest.slice(0, cut))
      rest = rest.slice(cut)
    }
    out.push(rest)
  }
  return out
}

/** The head of a permission prompt: the action and every resource, wrapped, then `rest` as indented blocks. */
const promptBlock = (
  request: PermissionV2.Request,
  rest: ReadonlyArray<string>,
  width: number,
): ReadonlyArray<string> => {
  const lines = [`  ? permission: ${Printable.show(request.action)}`]
  const block = (label: string, text: string) => {
    const pieces = wrap(text, Math.max(20, width - label.length))
    lines.push(`${label}${pieces[0] ?? ""}`, ...pieces.slice(1).map((piece) => `${" ".repeat(label.length)}${piece}`))
  }
  if (request.resources.length === 1) block("    resource: ", Printable.show(request.resources[0]!))
  else {
    lines.push(`    resources (${request.resources.length}):`)
    for (const resource of request.resources) block("      - ", Printable.show(resource))
  }
  for (const line of rest) block("    ", line)
  return lines
}

/**
 * The lines of a permission request: the action, every resource in full (wrapped, never clipped: the user approves
 * exactly what is shown; controls, escape sequences, bidi and invisible characters as visible escapes through
 * `Printable.show`), the full command of a shell ask and what `always` will save and where.
 *
 * @since 0.2.0
 * @category utilities
 */
export const permissionPrompt = (request: PermissionV2.Request, width = 100): ReadonlyArray<string> =>
  promptBlock(
    request,
    [...PermissionV2.describeCommand(request), ...PermissionV2.describeAlways(request.always)],
    width,
  )

/**
 * The lines of an approval prompt as the demo shows it: the action and every resource (as `permissionPrompt`), the
 * tool call and its full input (`Approvals.describeTool`), the full command of a shell ask, the diff of a write,
 * edit or apply_patch, every choice with what it saves and where (`Approvals.describeChoices`), and the deadline
 * when there is one.
 *
 * @since 0.3.0
 * @category utilities
 */
export const promptLines = (prompt: Approvals.Prompt, width = 100): ReadonlyArray<string> =>
  promptBlock(
    prompt.request,
    [
      ...Approvals.describeTool(prompt),
      ...PermissionV2.describeCommand(prompt.request),
      ...Approvals.describeDiff(prompt),
      "choices:",
      ...Approvals.describeChoices(prompt).map((line) => `  ${line}`),
      ...Approvals.describeDeadline(prompt),
    ],
    width,
  )

/**
 * The model-visible text of a result.
 *
 * @since 0.1.0
 * @category utilities
 */
export const resultText = (result: LLM.ToolResultValue): string => {
  switch (result.type) {
    case "text":
    case "error":
      return typeof result.value === "string" ? result.value : JSON.stringify(result.value)
    case "json": {
      // A structured result with a text body (read's file content) reads better as that body.
      const body = (result.value as { content?: unknown } | null)?.content
      return typeof body === "string" ? body : JSON.stringify(result.value)
    }
    case "content":
      return result.value.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n")
  }
}

/**
 * The first `lines` lines of `text` (each clipped), with a count of what was left out.
 *
 * @since 0.1.0
 * @category utilities
 */
export const preview = (text: string, lines = 4, width = 110): ReadonlyArray<string> => {
  const all = text.replace(/\r\n/g, "\n").replace(/\n+$/, "").split("\n")
  const shown = all.slice(0, lines).map((line) => (line.length <= width ? line : `${line.slice(0, width - 1)}…`))
  return all.length > lines ? [...shown, `… (${all.length - lines} more lines)`] : shown
}

const TODO_MARKS: Record<string, string> = { completed: "[x]", in_progress: "[~]", cancelled: "[-]" }

/**
 * The todo list of a todowrite input, one `[x] content` line per todo.
 *
 * @since 0.1.0
 * @category utilities
 */
export const todos = (value: unknown): ReadonlyArray<string> => {
  const list = (value as { todos?: ReadonlyArray<{ content?: unknown; status?: unknown }> } | null)?.todos
  if (!Array.isArray(list)) return []
  return list.map((todo) => `${TODO_MARKS[String(todo.status)] ?? "[ ]"} ${String(todo.content)}`)
}

/**
 * The transcript lines under a finished call.
 *
 * @since 0.1.0
 * @category utilities
 */
export const resultLines = (tool: string, value: unknown, result: LLM.ToolResultValue): ReadonlyArray<string> =>
  tool === "todowrite" && result.type !== "error"
    ? todos(value)
    : result.type === "error"
      ? preview(resultText(result), 3, 400)
      : preview(resultText(result))

/**
 * One line for the summary's outcome column.
 *
 * @since 0.1.0
 * @category utilities
 */
export const outcome = (tool: string, value: unknown, result: LLM.ToolResultValue): string => {
  if (tool === "todowrite" && result.type !== "error") {
    const list = todos(value)
    return `${list.filter((line) => line.startsWith("[x]")).length}/${list.length} done`
  }
  const text = resultText(result)
  // A read page ends with a trailer saying which lines it showed: the best one-line outcome.
  if (tool === "read" && result.type === "text") {
    const last = text.slice(text.lastIndexOf("\n") + 1)
    if (/^\(.*\)$/.test(last)) return clip(last.slice(1, -1), 72)
  }
  const first = text.split("\n").find((line) => line.trim() !== "") ?? ""
  return clip(first, 72)
}
