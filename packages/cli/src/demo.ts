/**
 * `toolgate demo`: copies the bundled sample project, replays the scripted session through the real Runner on
 * `Core.layer`, shows every permission ask and question as a prompt, prints the transcript as events arrive and ends
 * with a summary of calls, permission decisions and bounded outputs.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type * as Prompt from "@effect/cli/Prompt"
import {
  type Approvals,
  type Config,
  Core,
  EventV2,
  Global,
  Model,
  QuestionV2,
  Runner,
  ScriptedModel,
  SessionV2,
} from "@toolgate/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Answers from "./answers.js"
import * as DemoApprovals from "./demo-approvals.js"
import * as Describe from "./describe.js"
import * as Paths from "./paths.js"
import { CliError, StoppedError } from "./errors.js"
import * as Screen from "./screen.js"
import * as Table from "./table.js"

/**
 * The bundled sample project.
 *
 * @since 0.1.0
 * @category constants
 */
export const SAMPLE_DIRECTORY = fileURLToPath(new URL("../demo/sample/", import.meta.url))
/**
 * The scripted session (JSONL, one turn per line).
 *
 * @since 0.1.0
 * @category constants
 */
export const SCRIPT_FILE = fileURLToPath(new URL("../demo/session.jsonl", import.meta.url))
/**
 * The user prompt the session starts from.
 *
 * @since 0.1.0
 * @category constants
 */
export const PROMPT = "Fix the TODOs in the shelf project, note the changes in a CHANGELOG and run the module check."

/**
 * What the demo runs with (`directory` is already prepared by `Paths.projectDirectory`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly directory: string
  readonly yes: boolean
  readonly data: Option.Option<string>
  /** Run bash inside the bubblewrap sandbox (`bash.sandbox.mode: "bubblewrap"`; fails when it is unavailable). */
  readonly sandbox?: boolean
}

/**
 * The configuration document the demo's Location gets on top of the discovered files: with `sandbox`, bash runs in
 * bubblewrap and refuses to run unsandboxed.
 *
 * @since 0.2.0
 * @category utilities
 */
export const locationConfig = (options: Pick<Options, "sandbox">): Config.Info | undefined =>
  options.sandbox === true ? { bash: { sandbox: { mode: "bubblewrap", fail_if_unavailable: true } } } : undefined

const describeError = (error: unknown): string => (error instanceof Error ? error.message : String(error))

type Call = DemoApprovals.Call
type Decision = DemoApprovals.Decision

type Ask =
  | { readonly type: "permission"; readonly prompt: Approvals.Prompt }
  | { readonly type: "question"; readonly request: QuestionV2.Request }

/** A Model that prints the assistant's text as it streams. */
const narrated = (screen: Screen.Screen) =>
  Layer.effect(
    Model.Service,
    Effect.map(Model.Service, (inner) =>
      Model.Service.of({
        stream: (request) =>
          inner
            .stream(request)
            .pipe(
              Stream.tap((event) =>
                event.type === "text" ? Effect.sync(() => screen.line(`\nassistant: ${event.text}`)) : Effect.void,
              ),
            ),
      }),
    ),
  )

/** The session: transcript, prompts, progress and the summary. Returns the runner's result. */
const session = (screen: Screen.Screen, answerer: Answers.Answerer) =>
  Effect.gen(function* () {
    const events = yield* EventV2.Service
    const questions = yield* QuestionV2.Service
    const calls: Array<Call> = []
    const decisions: Array<Decision> = []
    /** The headers of the questions the user dismissed. */
    const dismissed: Array<string> = []
    const truncated: Array<{ readonly tool: string; readonly callID: string; readonly path: string }> = []
    /** Calls whose prompt is on screen; their progress line is hidden. */
    const prompting = new Set<string>()
    const asks = yield* Queue.unbounded<Ask>()

    const watched = [Runner.Event.Called, Runner.Event.Success, Runner.Event.Failed, QuestionV2.Event.Asked] as const
    const onEvent = (envelope: EventV2.EnvelopeOf<(typeof watched)[number]>) => {
      switch (envelope.type) {
        case "session.next.tool.called": {
          const data = envelope.data
          calls.push({
            callID: data.callID,
            tool: data.tool,
            input: data.input,
            status: "running",
            outcome: "",
            started: Date.now(),
          })
          screen.line(`→ ${data.tool} ${Describe.input(data.tool, data.input)}`)
          return
        }
        case "session.next.tool.success":
        case "session.next.tool.failed": {
          const data = envelope.data
          const call = calls.find((candidate) => candidate.callID === data.callID)
          const result = data.result
          const failed = envelope.type === "session.next.tool.failed"
          const status = failed ? (call?.stoppedBy ?? "failed") : "completed"
          if (call !== undefined) {
            call.status = status
            call.outcome = Describe.outcome(data.tool, call.input, result)
          }
          screen.status(undefined)
          const lines = Describe.resultLines(data.tool, call?.input, result)
          screen.line(
            `  ${failed ? "✗" : "✓"} ${data.tool}${failed ? ` ${status}` : ""}${call === undefined ? "" : ` (${((Date.now() - call.started) / 1000).toFixed(1)}s)`}`,
          )
          for (const line of lines) screen.line(`    │ ${line}`)
          for (const saved of envelope.type === "session.next.tool.success" ? (envelope.data.outputPaths ?? []) : []) {
            truncated.push({ tool: data.tool, callID: data.callID, path: saved })
            screen.line(`    output bounded for the model; full output saved to ${saved}`)
          }
          return
        }
        case "question.v2.asked": {
          Queue.unsafeOffer(asks, { type: "question", request: envelope.data })
          return
        }
      }
    }
    yield* events.listen(
      (envelope) => {
        try {
          onEvent(envelope)
        } catch (error) {
          screen.line(`(transcript error: ${describeError(error)})`)
        }
      },
      ...watched,
    )

    const permissions = yield* DemoApprovals.make({
      screen,
      answerer,
      calls,
      decisions,
      enqueue: (prompt) => Queue.unsafeOffer(asks, { type: "permission", prompt }),
    })

    const askQuestion = (request: QuestionV2.Request): Effect.Effect<void, never, Prompt.Prompt.Environment> =>
      Effect.gen(function* () {
        screen.status(undefined)
        const answers: Array<Array<string>> = []
        for (const [index, question] of request.questions.entries()) {
          screen.line(`  ? question: ${question.question}`)
          // A terminal prompt lists the options itself.
          if (answerer !== Answers.terminal) {
            for (const [number, option] of question.options.entries()) {
              screen.line(`    ${number + 1}. ${option.label} - ${option.description}`)
            }
          }
          const answer = yield* answerer.question(question, index)
          if (answer === undefined) {
            const call = calls.find((candidate) => candidate.callID === request.tool?.callID)
            if (call !== undefined) call.stoppedBy = "dismissed"
            dismissed.push(question.header)
            yield* Effect.ignore(questions.reject(request.id))
            return
          }
          if (answerer.name === "--yes") screen.line(`    > ${answer.join(", ")} (--yes)`)
          answers.push([...answer])
        }
        yield* Effect.ignore(questions.reply({ requestID: request.id, answers }))
      })

    const prompt = (ask: Ask) => {
      const callID = ask.type === "permission" ? ask.prompt.request.source?.callID : ask.request.tool?.callID
      return Effect.acquireUseRelease(
        Effect.sync(() => callID !== undefined && prompting.add(callID)),
        () => (ask.type === "permission" ? permissions.ask(ask.prompt) : askQuestion(ask.request)),
        () => Effect.sync(() => callID !== undefined && prompting.delete(callID)),
      )
    }
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(asks), prompt)))

    // Live progress: the longest-running call that is not waiting for a prompt, once it has run for a second.
    const tick = Effect.sync(() => {
      const running = calls.filter((call) => call.status === "running" && !prompting.has(call.callID))
      const oldest = running.sort((a, b) => a.started - b.started)[0]
      const seconds = oldest === undefined ? 0 : Math.floor((Date.now() - oldest.started) / 1000)
      if (oldest === undefined || seconds < 1 || prompting.size > 0) return screen.status(undefined)
      screen.status(
        `  … running ${oldest.tool} ${Table.clip(Describe.input(oldest.tool, oldest.input), 40)} ${seconds}s`,
      )
    })
    yield* Effect.forkScoped(Effect.repeat(tick, Schedule.spaced(Duration.millis(screen.interactive ? 200 : 250))))

    const session = yield* (yield* SessionV2.Service).create()
    const result = yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: PROMPT })
    screen.status(undefined)
    return { result, calls, decisions, dismissed, truncated }
  })

/** Where the demo left its files. */
interface Places {
  readonly directory: string
  readonly data: string
}

/** Prints the closing summary. */
const summary = (screen: Screen.Screen, report: Effect.Effect.Success<ReturnType<typeof session>>, places: Places) => {
  const { result, calls, decisions, truncated } = report
  const count = (status: Call["status"]) => calls.filter((call) => call.status === status).length
  const stopped = [
    count("rejected") > 0 ? `, ${count("rejected")} rejected` : "",
    count("dismissed") > 0 ? `, ${count("dismissed")} dismissed` : "",
  ].join("")
  screen.line("")
  screen.line("Summary")
  screen.line("=======")
  screen.line(
    `Session ${result.stopped === "user" ? "stopped by the user" : "finished"} after ${result.steps} turns: ${calls.length} tool calls, ${count("completed")} completed, ${count("failed")} failed${stopped}.`,
  )
  screen.line("")
  screen.line("Calls")
  screen.line(
    Table.render(
      ["#", "tool", "input", "status", "outcome"],
      calls.map((call, index) => [
        String(index + 1),
        call.tool,
        Table.clip(Describe.input(call.tool, call.input), 40),
        call.status,
        call.outcome,
      ]),
      "  ",
    ),
  )
  screen.line("")
  screen.line("Permission decisions")
  screen.line(
    decisions.length === 0
      ? "  (none)"
      : Table.render(
          ["action", "resources", "reply", "by"],
          decisions.map((decision) => [
            decision.action,
            Table.clip(decision.resources.join(", "), 48),
            decision.message === undefined ? decision.reply : `${decision.reply}: ${decision.message}`,
            decision.by,
          ]),
          "  ",
        ),
  )
  screen.line("")
  screen.line("Truncated outputs")
  screen.line(
    truncated.length === 0
      ? "  (none)"
      : Table.render(
          ["tool", "call", "saved to"],
          truncated.map((entry) => [entry.tool, entry.callID, entry.path]),
          "  ",
        ),
  )
  screen.line("")
  screen.line("Where things are")
  screen.line(
    Table.render(
      ["what", "path"],
      [
        ["sample project (edited by the session)", places.directory],
        ["data directory", places.data],
        ["database (sessions, saved approvals)", path.join(places.data, "toolgate.db")],
        ["full tool output", path.join(places.data, "tool-output")],
        ["saved approvals", `toolgate permissions list --data ${places.data}`],
      ],
      "  ",
    ),
  )
}

/** Why the session stopped, for the closing `StoppedError`. */
const stopReason = (report: Effect.Effect.Success<ReturnType<typeof session>>): string => {
  const rejection = report.decisions.find((decision) => decision.reply === "reject" && decision.message === undefined)
  if (rejection !== undefined)
    return `the user rejected ${rejection.action} on ${Table.clip(rejection.resources.join(", "), 60)}`
  const question = report.dismissed[0]
  return question !== undefined ? `the user dismissed the question "${question}"` : "the user stopped it"
}

/**
 * Runs the demo. A session that the user stopped (a rejection without a message, a dismissed question) prints its
 * summary and then fails with `StoppedError` (exit code 3).
 *
 * @since 0.1.0
 * @category utilities
 */
export const run = (options: Options) =>
  Effect.gen(function* () {
    const screen = Screen.make()
    const directory = options.directory
    const data = yield* Paths.dataDirectory(options.data, () => Global.fromEnvironment().data)
    yield* Effect.try({
      try: () => fs.cpSync(SAMPLE_DIRECTORY, directory, { recursive: true }),
      catch: (error) =>
        new CliError({ message: `Cannot copy the sample project to ${directory}: ${describeError(error)}` }),
    })
    screen.line(`toolgate demo: sample project in ${directory}`)
    screen.line(`data directory: ${data} (database, saved approvals, full tool output)`)
    const config = locationConfig(options)
    if (config !== undefined) screen.line("bash: inside the bubblewrap sandbox (--sandbox)")
    screen.line(
      `answers: ${options.yes ? "--yes (once, first option)" : process.stdin.isTTY ? "interactive prompts" : "one line per prompt from stdin"}`,
    )
    screen.line(`\nuser: ${PROMPT}`)

    const answerer = options.yes
      ? Answers.automatic
      : process.stdin.isTTY
        ? Answers.terminal
        : Answers.lines(screen, yield* Answers.stdinLines())
    const model = narrated(screen).pipe(Layer.provide(ScriptedModel.layerFromFile(SCRIPT_FILE)))
    const layer = Runner.layer.pipe(
      Layer.provideMerge(model),
      Layer.provideMerge(Core.layer({ directory, data, ...(config === undefined ? {} : { config }) })),
    )
    const report = yield* session(screen, answerer).pipe(
      Effect.provide(layer),
      Effect.mapError((error) => new CliError({ message: `The demo session failed: ${describeError(error)}` })),
    )
    summary(screen, report, { directory, data })
    if (report.result.stopped === "user")
      return yield* new StoppedError({ message: `the demo session was stopped: ${stopReason(report)}` })
  }).pipe(Effect.scoped)
