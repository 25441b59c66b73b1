/**
 * Where the demo's answers come from: `--yes` (once / first option), lines read from a non-terminal stdin (so tests
 * and scripts can drive the prompts), or interactive prompts on a terminal.
 *
 * @since 0.1.0
 */
import * as readline from "node:readline"
import * as Prompt from "@effect/cli/Prompt"
import { Approvals, type PermissionV2, Printable, type QuestionV2 } from "@toolgate/core"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Screen } from "./screen.js"

/**
 * An answer to a permission prompt: one of the three replies (`always` is the widest `always` the prompt offers),
 * or one of the prompt's choices by id (`session`, `always:exact`, `always:directory`, `always:pattern`).
 *
 * @since 0.1.0
 * @category models
 */
export type PermissionAnswer =
  | { readonly reply: PermissionV2.Reply; readonly message?: string }
  | { readonly choice: string; readonly message?: string }

/**
 * The choice of `prompt` an answer names, or `undefined` when the prompt does not offer it. An `always` on a prompt
 * that offers none (it would save nothing) is `once`, as `PermissionV2.reply` treats it.
 *
 * @since 0.3.0
 * @category utilities
 */
export const choiceOf = (prompt: Approvals.Prompt, answer: PermissionAnswer): Approvals.Choice | undefined =>
  "choice" in answer
    ? prompt.choices.find((choice) => choice.id === answer.choice)
    : (Approvals.choiceOf(prompt, answer.reply) ??
      (answer.reply === "always" ? Approvals.choiceOf(prompt, "once") : undefined))

/**
 * What an answer says, as the transcript echoes it.
 *
 * @since 0.3.0
 * @category utilities
 */
export const spoken = (answer: PermissionAnswer): string =>
  `${"choice" in answer ? answer.choice : answer.reply}${answer.message === undefined ? "" : `: ${answer.message}`}`

/**
 * An answer to a question request: one list of labels per question, or a dismissal.
 *
 * @since 0.1.0
 * @category models
 */
export type QuestionAnswer =
  { readonly type: "answers"; readonly answers: ReadonlyArray<ReadonlyArray<string>> } | { readonly type: "dismiss" }

/**
 * A source of answers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Answerer {
  /** How the transcript names who answered (`--yes`, `stdin`, `you`). */
  readonly name: string
  readonly permission: (prompt: Approvals.Prompt) => Effect.Effect<PermissionAnswer, never, Prompt.Prompt.Environment>
  readonly question: (
    question: QuestionV2.Info,
    index: number,
  ) => Effect.Effect<ReadonlyArray<string> | undefined, never, Prompt.Prompt.Environment>
}

/**
 * The help text of a permission prompt read from stdin: the ids of the choices it offers (`always` alone is the
 * widest of them), and the rejection message.
 *
 * @since 0.1.0
 * @category utilities
 */
export const permissionHint = (prompt: Approvals.Prompt): string =>
  `answer: ${prompt.choices.map((choice) => (choice.id === "reject" ? "reject [message]" : choice.id)).join(" | ")}`

/**
 * Parses `once`, `always`, `reject`, `reject <message>` (also `o`, `a`, `r`, and `reject: <message>`), and a
 * choice by its id: `session` (`s`), `always:exact`, `always:directory`, `always:pattern`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const parsePermission = (line: string): PermissionAnswer | undefined => {
  const choice = /^\s*(session|s|always:exact|always:directory|always:pattern)\s*$/i.exec(line)
  if (choice !== null) {
    const id = choice[1]!.toLowerCase()
    return { choice: id === "s" ? "session" : id }
  }
  const match = /^\s*(once|o|always|a|reject|r)(?:\s*:\s*|\s+|$)(.*)$/i.exec(line)
  if (match === null) return undefined
  const word = match[1]!.toLowerCase()
  const rest = match[2]!.trim()
  if (word.startsWith("o")) return { reply: "once" }
  if (word.startsWith("a")) return rest === "" ? { reply: "always" } : undefined
  return rest === "" ? { reply: "reject" } : { reply: "reject", message: rest }
}

/**
 * Parses a question answer: option numbers (`1`, `1,3` when several are allowed), an option label, `dismiss`, or
 * (unless the question forbids it) free text. `undefined` means the line did not answer the question.
 *
 * @since 0.1.0
 * @category utilities
 */
export const parseQuestion = (
  question: QuestionV2.Info,
  line: string,
): ReadonlyArray<string> | "dismiss" | undefined => {
  const text = line.trim()
  if (text === "") return undefined
  if (text.toLowerCase() === "dismiss") return "dismiss"
  if (/^\d+(\s*,\s*\d+)*$/.test(text)) {
    const numbers = text.split(",").map((part) => Number(part.trim()))
    if (numbers.length > 1 && question.multiple !== true) return undefined
    const labels = numbers.map((number) => question.options[number - 1]?.label)
    return labels.every((label): label is string => label !== undefined) ? labels : undefined
  }
  const option = question.options.find((candidate) => candidate.label.toLowerCase() === text.toLowerCase())
  if (option !== undefined) return [option.label]
  return question.custom === false ? undefined : [text]
}

/**
 * `--yes`: every ask is answered `once`, every question with its first option.
 *
 * @since 0.1.0
 * @category utilities
 */
export const automatic: Answerer = {
  name: "--yes",
  permission: () => Effect.succeed({ reply: "once" }),
  question: (question) => Effect.succeed(question.options[0] === undefined ? [] : [question.options[0].label]),
}

/**
 * Lines of stdin, read on demand; `undefined` once stdin has ended. Closed with the scope.
 *
 * @since 0.1.0
 * @category utilities
 */
export const stdinLines = (
  input: NodeJS.ReadableStream = process.stdin,
): Effect.Effect<Effect.Effect<string | undefined>, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => {
        const reader = readline.createInterface({ input, terminal: false })
        const buffered: Array<string> = []
        const waiting: Array<(line: string | undefined) => void> = []
        let ended = false
        reader.on("line", (line) => {
          const next = waiting.shift()
          if (next === undefined) buffered.push(line)
          else next(line)
        })
        reader.on("close", () => {
          ended = true
          for (const next of waiting.splice(0)) next(undefined)
        })
        const next = Effect.async<string | undefined>((resume) => {
          if (buffered.length > 0) return resume(Effect.succeed(buffered.shift()))
          if (ended) return resume(Effect.succeed(undefined))
          const waiter = (line: string | undefined) => resume(Effect.succeed(line))
          waiting.push(waiter)
          return Effect.sync(() => {
            const at = waiting.indexOf(waiter)
            if (at !== -1) waiting.splice(at, 1)
          })
        })
        return { reader, next }
      }),
      ({ reader }) => Effect.sync(() => reader.close()),
    ),
    ({ next }) => next,
  )

/**
 * Answers read line by line; each prompt is printed first and the answer echoed, since stdin is not a terminal.
 *
 * @since 0.1.0
 * @category utilities
 */
export const lines = (screen: Screen, next: Effect.Effect<string | undefined>): Answerer => ({
  name: "stdin",
  permission: (prompt) =>
    Effect.gen(function* () {
      for (;;) {
        const line = yield* next
        if (line === undefined) {
          screen.line("    > (stdin ended: reject)")
          return { reply: "reject" } satisfies PermissionAnswer
        }
        const answer = parsePermission(line)
        if (answer !== undefined && choiceOf(prompt, answer) !== undefined) {
          screen.line(`    > ${spoken(answer)}`)
          return answer
        }
        screen.line(`    ! not an answer: ${JSON.stringify(line)} (${permissionHint(prompt)})`)
      }
    }),
  question: (question) =>
    Effect.gen(function* () {
      for (;;) {
        const line = yield* next
        if (line === undefined) {
          screen.line("    > (stdin ended: dismiss)")
          return undefined
        }
        const answer = parseQuestion(question, line)
        if (answer === "dismiss") {
          screen.line("    > dismiss")
          return undefined
        }
        if (answer !== undefined) {
          screen.line(`    > ${answer.join(", ")}`)
          return answer
        }
        screen.line(`    ! not an answer: ${JSON.stringify(line)} (an option number or label, or dismiss)`)
      }
    }),
})

const CUSTOM = "\u0000custom"

/**
 * Ctrl-C at a prompt: the prompt holds the terminal in raw mode, so the key arrives as a `QuitException`, not as a
 * signal. It is turned back into the SIGINT it stands for, so the command stops with exit code 130 exactly as Ctrl-C
 * during a tool run does (and the ask is left unanswered rather than rejected).
 *
 * @since 0.1.0
 * @category utilities
 */
export const quit: Effect.Effect<never> = Effect.zipRight(
  Effect.sync(() => process.kill(process.pid, "SIGINT")),
  Effect.never,
)

/** A prompt failure: Ctrl-C quits the command; any other failure gives `fallback`. */
const onPromptFailure =
  <A>(fallback: A) =>
  (error: { readonly _tag: string }): Effect.Effect<A> =>
    error._tag === "QuitException" ? quit : Effect.succeed(fallback)

/**
 * The choices of an interactive question prompt. The model wrote the labels and descriptions: they are shown
 * through `Printable.show` (a control character or bidi override appears as a visible escape), and the value
 * answered is the label as it is.
 *
 * @since 0.3.0
 * @category prompts
 */
export const questionChoices = (
  question: QuestionV2.Info,
): ReadonlyArray<{ readonly title: string; readonly value: string; readonly description?: string }> => [
  ...question.options.map((option) => ({
    title: Printable.show(option.label),
    value: option.label,
    description: Printable.show(option.description),
  })),
  ...(question.custom === false ? [] : [{ title: "Type an answer…", value: CUSTOM }]),
]

/**
 * Interactive prompts on a terminal (arrow keys). Ctrl-C at a prompt stops the command (exit 130). The question text
 * is printed by the transcript, so the prompt itself only says what to do.
 *
 * @since 0.1.0
 * @category utilities
 */
export const terminal: Answerer = {
  name: "you",
  permission: (prompt) =>
    Effect.gen(function* () {
      // What each choice saves is printed above the prompt (describe.ts); the prompt names the choices.
      const choice = yield* Prompt.run(
        Prompt.select<string>({
          message: "Allow?",
          choices: prompt.choices.map((option) => ({
            title: option.id,
            value: option.id,
            description: Printable.show(option.label),
          })),
        }),
      )
      if (choice !== "reject") return { choice } satisfies PermissionAnswer
      const message = yield* Prompt.run(Prompt.text({ message: "Message for the model (empty: stop the session)" }))
      return message.trim() === "" ? { choice } : { choice, message: message.trim() }
    }).pipe(Effect.catchAll(onPromptFailure<PermissionAnswer>({ reply: "reject" }))),
  question: (question) =>
    Effect.gen(function* () {
      const choices = questionChoices(question)
      const picked =
        question.multiple === true
          ? yield* Prompt.run(Prompt.multiSelect({ message: "Choose (space to toggle, enter to confirm)", choices }))
          : [yield* Prompt.run(Prompt.select({ message: "Choose", choices }))]
      if (!picked.includes(CUSTOM)) return picked
      const typed = yield* Prompt.run(Prompt.text({ message: "Your answer" }))
      return [...picked.filter((label) => label !== CUSTOM), typed]
    }).pipe(Effect.catchAll(onPromptFailure<ReadonlyArray<string> | undefined>(undefined))),
}
