/**
 * Where the demo's answers come from: `--yes` (once / first option), lines read from a non-terminal stdin (so tests
 * and scripts can drive the prompts), or interactive prompts on a terminal.
 *
 * @since 0.1.0
 */
import * as readline from "node:readline"
import * as Prompt from "@effect/cli/Prompt"
import { type PermissionV2, Printable, type QuestionV2 } from "@toolgate/core"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Screen } from "./screen.js"

/**
 * An answer to a permission ask.
 *
 * @since 0.1.0
 */
export interface PermissionAnswer {
  readonly reply: PermissionV2.Reply
  readonly message?: string
}

/**
 * An answer to a question request: one list of labels per question, or a dismissal.
 *
 * @since 0.1.0
 */
export type QuestionAnswer =
  { readonly type: "answers"; readonly answers: ReadonlyArray<ReadonlyArray<string>> } | { readonly type: "dismiss" }

/**
 * A source of answers.
 *
 * @since 0.1.0
 */
export interface Answerer {
  /** How the transcript names who answered (`--yes`, `stdin`, `you`). */
  readonly name: string
  readonly permission: (
    request: PermissionV2.Request,
  ) => Effect.Effect<PermissionAnswer, never, Prompt.Prompt.Environment>
  readonly question: (
    question: QuestionV2.Info,
    index: number,
  ) => Effect.Effect<ReadonlyArray<string> | undefined, never, Prompt.Prompt.Environment>
}

/**
 * The help text of a permission prompt read from stdin.
 *
 * @since 0.1.0
 */
export const PERMISSION_HINT = "answer: once | always | reject [message]"

/**
 * Parses `once`, `always`, `reject`, `reject <message>` (also `o`, `a`, `r`, and `reject: <message>`).
 *
 * @since 0.1.0
 */
export const parsePermission = (line: string): PermissionAnswer | undefined => {
  const match = /^\s*(once|o|always|a|reject|r)(?:\s*:\s*|\s+|$)(.*)$/i.exec(line)
  if (match === null) return undefined
  const word = match[1]!.toLowerCase()
  const rest = match[2]!.trim()
  if (word.startsWith("o")) return { reply: "once" }
  if (word.startsWith("a")) return { reply: "always" }
  return rest === "" ? { reply: "reject" } : { reply: "reject", message: rest }
}

/**
 * Parses a question answer: option numbers (`1`, `1,3` when several are allowed), an option label, `dismiss`, or
 * (unless the question forbids it) free text. `undefined` means the line did not answer the question.
 *
 * @since 0.1.0
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
 */
export const lines = (screen: Screen, next: Effect.Effect<string | undefined>): Answerer => ({
  name: "stdin",
  permission: () =>
    Effect.gen(function* () {
      for (;;) {
        const line = yield* next
        if (line === undefined) {
          screen.line("    > (stdin ended: reject)")
          return { reply: "reject" } satisfies PermissionAnswer
        }
        const answer = parsePermission(line)
        if (answer !== undefined) {
          screen.line(`    > ${answer.reply}${answer.message === undefined ? "" : `: ${answer.message}`}`)
          return answer
        }
        screen.line(`    ! not an answer: ${JSON.stringify(line)} (${PERMISSION_HINT})`)
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
 */
export const terminal: Answerer = {
  name: "you",
  permission: () =>
    Effect.gen(function* () {
      const reply = yield* Prompt.run(
        Prompt.select<PermissionV2.Reply>({
          message: "Allow?",
          choices: [
            { title: "once", value: "once", description: "allow this call only" },
            { title: "always", value: "always", description: "allow and save what is shown above, where it says" },
            { title: "reject", value: "reject", description: "refuse; optionally tell the model why" },
          ],
        }),
      )
      if (reply !== "reject") return { reply } satisfies PermissionAnswer
      const message = yield* Prompt.run(Prompt.text({ message: "Message for the model (empty: stop the session)" }))
      return message.trim() === "" ? { reply } : { reply, message: message.trim() }
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
