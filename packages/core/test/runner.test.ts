import * as fs from "node:fs"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Logger, Queue, Ref, Schema, Stream } from "effect"
import {
  AgentV2,
  ApplicationTools,
  Config,
  Database,
  EventV2,
  Global,
  Location,
  Model,
  PermissionSaved,
  PermissionV2,
  Runner,
  ScriptedModel,
  SessionV2,
  Tool,
  ToolOutputStore,
  ToolRegistry,
} from "../src/index.js"
import { tempDir } from "./support/location.js"

/** The Location services a runner needs, over `database`. */
const runnerLayer = (options: {
  readonly directory: string
  readonly data: string
  readonly script: ScriptedModel.Script
  readonly database: Layer.Layer<Database.Client>
  readonly config?: Config.Info
  /** Replaces the scripted model (its request log is then empty). */
  readonly model?: Layer.Layer<Model.Service>
  readonly store?: Layer.Layer<ToolOutputStore.Service>
}) => {
  const process = Layer.mergeAll(
    Global.layerWith({ data: options.data, tmp: path.join(options.data, "tmp") }),
    ApplicationTools.layer,
    options.store ?? ToolOutputStore.layerPassthrough,
    PermissionSaved.layer,
  ).pipe(Layer.provideMerge(options.database))
  const place = Location.layer({ directory: options.directory }).pipe(
    Layer.provideMerge(
      Config.layerFromEntries(options.config === undefined ? [] : [{ type: "document", info: options.config }]),
    ),
  )
  return Runner.layer.pipe(
    Layer.provideMerge(
      options.model === undefined
        ? ScriptedModel.layer(options.script)
        : Layer.merge(options.model, Layer.effect(ScriptedModel.Requests, Ref.make<ReadonlyArray<Model.Request>>([]))),
    ),
    Layer.provideMerge(PermissionV2.layer),
    Layer.provideMerge(ToolRegistry.layer),
    Layer.provideMerge(Layer.mergeAll(AgentV2.layer, SessionV2.layer, EventV2.layer)),
    Layer.provideMerge(place),
    Layer.provideMerge(process),
  )
}

const Text = Schema.Struct({ text: Schema.String })

const recordingTool = (log: Array<string>, onExecute: Effect.Effect<void> = Effect.void) =>
  Tool.make({
    description: "Records its execution",
    input: Text,
    output: Schema.String,
    execute: (input, context) =>
      Effect.as(
        Effect.zipRight(
          Effect.sync(() => log.push(`execute:${context.toolCallID}`)),
          onExecute,
        ),
        input.text,
      ),
  })

/** A tool that asserts permission `guarded` on resource `input.text`, with the model-visible mapping. */
const guardedTool = Effect.map(PermissionV2.Service, (permission) =>
  Tool.make({
    description: "Needs permission",
    input: Text,
    output: Schema.String,
    execute: (input, context) =>
      permission
        .assert({ sessionID: context.sessionID, agent: context.agent, action: "guarded", resources: [input.text] })
        .pipe(
          Effect.catchTags({
            "PermissionV2.BlockedError": (error) => Effect.fail(PermissionV2.toToolFailure(error)),
            "Approvals.TimedOutError": (error) => Effect.fail(PermissionV2.toToolFailure(error)),
            "PermissionV2.CorrectedError": (error) => Effect.fail(PermissionV2.toToolFailure(error)),
            "Hooks.HookError": (error) => Effect.fail(PermissionV2.toToolFailure(error)),
            "Session.NotFoundError": () => Effect.fail(new Tool.Failure({ message: "no session" })),
          }),
          Effect.as(`done ${input.text}`),
        ),
  }),
)

/** Answers every permission ask with `reply` (and `message`). */
const autoReply = (reply: PermissionV2.Reply, message?: string) =>
  Effect.gen(function* () {
    const events = yield* EventV2.Service
    const permission = yield* PermissionV2.Service
    const queue = yield* events.queue(PermissionV2.Event.Asked)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(queue), (envelope) =>
          permission
            .reply({ requestID: envelope.data.id, reply, ...(message === undefined ? {} : { message }) })
            .pipe(Effect.ignore),
        ),
      ),
    )
  })

const toolRows = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{
      call_id: string
      status: string
      error: string | null
    }>`SELECT call_id, status, error FROM tool_call ORDER BY time_created, call_id`,
)

const setup = (
  script: ScriptedModel.Script,
  config?: Config.Info,
  extra: { readonly model?: Layer.Layer<Model.Service>; readonly store?: Layer.Layer<ToolOutputStore.Service> } = {},
) =>
  Effect.gen(function* () {
    const directory = yield* tempDir()
    const data = yield* tempDir()
    return runnerLayer({
      directory,
      data,
      script,
      database: Database.layerMemory,
      ...(config === undefined ? {} : { config }),
      ...extra,
    })
  })

/** A model that streams `events` on every request. */
const fixedModel = (events: ReadonlyArray<Model.Event>) =>
  Layer.succeed(Model.Service, Model.Service.of({ stream: () => Stream.fromIterable(events) }))

const call = (id: string, name: string, extra: { readonly providerExecuted?: boolean } = {}): Model.Event => ({
  type: "tool-call",
  id,
  name,
  input: { text: id },
  ...extra,
})

/** Runs one session over `layer` and returns the exit plus the recorded rows. */
const runOnce = (layer: Layer.Layer<any, any, never>, tools: Record<string, Tool.AnyTool> = {}) =>
  Effect.gen(function* () {
    if (Object.keys(tools).length > 0) yield* (yield* ToolRegistry.Service).register(tools)
    const session = yield* (yield* SessionV2.Service).create()
    const exit = yield* Effect.exit((yield* Runner.Service).run({ sessionID: session.id, prompt: "go" }))
    return { exit, rows: yield* toolRows }
  }).pipe(
    Effect.provide(
      layer as Layer.Layer<ToolRegistry.Service | SessionV2.Service | Runner.Service | SqlClient.SqlClient>,
    ),
  )

describe("Runner", () => {
  it.live("publishes and records tool.called before the tool's side effect", () =>
    Effect.gen(function* () {
      const layer = yield* setup([
        [{ type: "tool-call", id: "c1", name: "probe", input: { text: "a" } }],
        [{ type: "text", text: "done" }],
      ])
      yield* Effect.gen(function* () {
        const log: Array<string> = []
        const events = yield* EventV2.Service
        yield* events.listen(
          (envelope) => {
            if (envelope.type === "session.next.tool.called") log.push(`called:${envelope.data.callID}`)
            if (envelope.type === "session.next.tool.success") log.push(`success:${envelope.data.callID}`)
          },
          Runner.Event.Called,
          Runner.Event.Success,
        )
        const sql = yield* SqlClient.SqlClient
        const recorded = recordingTool(
          log,
          Effect.flatMap(sql<{ status: string }>`SELECT status FROM tool_call WHERE call_id = 'c1'`, (rows) =>
            Effect.sync(() => log.push(`row:${rows[0]?.status}`)),
          ).pipe(Effect.orDie),
        )
        yield* (yield* ToolRegistry.Service).register({ probe: recorded })
        const session = yield* (yield* SessionV2.Service).create()
        const result = yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "go" })
        expect(log).toEqual(["called:c1", "execute:c1", "row:running", "success:c1"])
        expect(result.steps).toBe(2)
        expect(yield* toolRows).toEqual([{ call_id: "c1", status: "completed", error: null }])
        const requests = yield* Effect.flatMap(ScriptedModel.Requests, Ref.get)
        const second = requests[1]!.messages
        expect(second.at(-1)).toMatchObject({ role: "tool", callID: "c1", result: { type: "text", value: "a" } })
        expect(requests[0]!.tools.map((tool) => tool.name)).toEqual(["probe"])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped),
  )

  it.live("settles tool calls eagerly and concurrently", () =>
    Effect.gen(function* () {
      const layer = yield* setup([
        [
          { type: "tool-call", id: "a", name: "left", input: { text: "l" } },
          { type: "tool-call", id: "b", name: "right", input: { text: "r" } },
        ],
      ])
      yield* Effect.gen(function* () {
        const leftStarted = yield* Deferred.make<void>()
        const rightStarted = yield* Deferred.make<void>()
        const log: Array<string> = []
        // Each tool waits for the other to have started: only concurrent settlement completes.
        yield* (yield* ToolRegistry.Service).register({
          left: recordingTool(
            log,
            Effect.zipRight(Deferred.succeed(leftStarted, undefined), Deferred.await(rightStarted)),
          ),
          right: recordingTool(
            log,
            Effect.zipRight(Deferred.succeed(rightStarted, undefined), Deferred.await(leftStarted)),
          ),
        })
        const session = yield* (yield* SessionV2.Service).create()
        yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "go" }).pipe(Effect.timeout("5 seconds"))
        expect(log.sort()).toEqual(["execute:a", "execute:b"])
        expect((yield* toolRows).map((row) => row.status)).toEqual(["completed", "completed"])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped),
  )

  it.live(
    "a declined permission stops the loop: the rejected call says so, the other unsettled calls are interrupted",
    () =>
      Effect.gen(function* () {
        const layer = yield* setup(
          [
            [
              { type: "tool-call", id: "guard", name: "guarded", input: { text: "secret" } },
              { type: "tool-call", id: "hang", name: "hang", input: { text: "x" } },
            ],
            [{ type: "text", text: "never requested" }],
          ],
          { permissions: [{ action: "guarded", resource: "*", effect: "ask" }] },
        )
        yield* Effect.gen(function* () {
          const registry = yield* ToolRegistry.Service
          yield* registry.register({ guarded: yield* guardedTool, hang: recordingTool([], Effect.never) })
          yield* autoReply("reject")
          const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
          const result = yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "go" })
          expect(result.stopped).toBe("user")
          expect(result.steps).toBe(1)
          expect(yield* toolRows).toEqual([
            {
              call_id: "guard",
              status: "failed",
              error: "The user rejected permission to use this specific tool call.",
            },
            { call_id: "hang", status: "failed", error: "Tool execution interrupted" },
          ])
          // The messages a continuation would send carry the same texts.
          expect(
            result.messages.flatMap((message) =>
              message.role === "tool" ? [[message.callID, message.result.value] as const] : [],
            ),
          ).toEqual([
            ["guard", Runner.USER_REJECTED],
            ["hang", Runner.INTERRUPTED],
          ])
          expect(yield* Effect.flatMap(ScriptedModel.Requests, Ref.get)).toHaveLength(1)
        }).pipe(Effect.provide(layer))
      }).pipe(Effect.scoped),
  )

  it.live("a correction continues with the feedback visible in the next request", () =>
    Effect.gen(function* () {
      const layer = yield* setup(
        [
          [{ type: "tool-call", id: "guard", name: "guarded", input: { text: "secret" } }],
          [{ type: "text", text: "ok" }],
        ],
        { permissions: [{ action: "guarded", resource: "*", effect: "ask" }] },
      )
      yield* Effect.gen(function* () {
        yield* (yield* ToolRegistry.Service).register({ guarded: yield* guardedTool })
        yield* autoReply("reject", "use the public file")
        const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
        const result = yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "go" })
        expect(result.stopped).toBeUndefined()
        expect(result.steps).toBe(2)
        const requests = yield* Effect.flatMap(ScriptedModel.Requests, Ref.get)
        expect(requests[1]!.messages.at(-1)).toMatchObject({
          role: "tool",
          callID: "guard",
          result: {
            type: "error",
            value:
              "The user rejected permission to use this specific tool call with the following feedback: use the public file",
          },
        })
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped),
  )

  it.live("tool calls on the agent's last allowed step fail without running", () =>
    Effect.gen(function* () {
      const layer = yield* setup([[{ type: "tool-call", id: "late", name: "probe", input: { text: "a" } }]], {
        agents: { build: { steps: 1 } },
      })
      yield* Effect.gen(function* () {
        const log: Array<string> = []
        yield* (yield* ToolRegistry.Service).register({ probe: recordingTool(log) })
        const session = yield* (yield* SessionV2.Service).create()
        const result = yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "go" })
        expect(result.steps).toBe(1)
        expect(log).toEqual([])
        expect(yield* toolRows).toEqual([{ call_id: "late", status: "failed", error: Runner.TOOLS_DISABLED }])
        const requests = yield* Effect.flatMap(ScriptedModel.Requests, Ref.get)
        expect(requests[0]!.tools).toEqual([])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped),
  )

  it.live("interrupting a run marks its running calls interrupted", () =>
    Effect.gen(function* () {
      const layer = yield* setup([[{ type: "tool-call", id: "stuck", name: "hang", input: { text: "x" } }]])
      yield* Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        yield* (yield* ToolRegistry.Service).register({
          hang: recordingTool([], Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)),
        })
        const session = yield* (yield* SessionV2.Service).create()
        const fiber = yield* Effect.fork((yield* Runner.Service).run({ sessionID: session.id, prompt: "go" }))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        expect(yield* toolRows).toEqual([{ call_id: "stuck", status: "failed", error: Runner.INTERRUPTED }])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped),
  )

  it.live("a new runner marks calls left running by a previous process as interrupted", () =>
    Effect.gen(function* () {
      const directory = yield* tempDir()
      const data = yield* tempDir()
      const file = path.join(data, "toolgate.db")
      const database = Database.layerFile(file)
      const first = runnerLayer({ directory, data, database, script: [] })
      const sessionID = yield* Effect.gen(function* () {
        const session = yield* (yield* SessionV2.Service).create()
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO tool_call (session_id, assistant_message_id, call_id, name, input, status, time_created, time_updated)
          VALUES (${session.id}, 'msg_old', 'left', 'bash', '{}', 'running', 1, 1)`
        return session.id
      }).pipe(Effect.provide(first), Effect.scoped)
      expect(fs.existsSync(file)).toBe(true)
      const second = runnerLayer({ directory, data, database: Database.layerFile(file), script: [] })
      const rows = yield* Effect.gen(function* () {
        yield* Runner.Service
        return yield* toolRows
      }).pipe(Effect.provide(second), Effect.scoped)
      expect(rows).toEqual([{ call_id: "left", status: "failed", error: Runner.INTERRUPTED }])
      expect(sessionID.startsWith("ses_")).toBe(true)
    }).pipe(Effect.scoped),
  )

  it.live("a provider result for an unknown call dies with Tool result before call", () =>
    Effect.gen(function* () {
      const layer = yield* setup([], undefined, {
        model: fixedModel([{ type: "tool-result", id: "ghost", name: "probe", result: { type: "text", value: "x" } }]),
      })
      const { exit } = yield* runOnce(layer)
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain("Tool result before call: ghost")
    }).pipe(Effect.scoped),
  )

  it.live("a provider result whose tool name changed dies", () =>
    Effect.gen(function* () {
      const layer = yield* setup([], undefined, {
        model: fixedModel([
          call("web", "search", { providerExecuted: true }),
          { type: "tool-result", id: "web", name: "fetch", result: { type: "text", value: "x" } },
        ]),
      })
      const { exit } = yield* runOnce(layer)
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain("Tool result name changed for web")
    }).pipe(Effect.scoped),
  )

  it.live("after a settled provider result a late error is ignored and a second success dies", () =>
    Effect.gen(function* () {
      const result = { type: "text", value: "found" } as const
      const ignored = yield* setup([], undefined, {
        model: fixedModel([
          call("web", "search", { providerExecuted: true }),
          { type: "tool-result", id: "web", name: "search", result },
          { type: "tool-result", id: "web", name: "search", result: { type: "error", value: "late" } },
        ]),
      })
      const first = yield* runOnce(ignored)
      expect(Exit.isSuccess(first.exit)).toBe(true)
      expect(first.rows).toEqual([{ call_id: "web", status: "completed", error: null }])

      const duplicate = yield* setup([], undefined, {
        model: fixedModel([
          call("web", "search", { providerExecuted: true }),
          { type: "tool-result", id: "web", name: "search", result },
          { type: "tool-result", id: "web", name: "search", result },
        ]),
      })
      const second = yield* runOnce(duplicate)
      expect(Exit.isFailure(second.exit) && Cause.pretty(second.exit.cause)).toContain("Duplicate tool result: web")
    }).pipe(Effect.scoped),
  )

  it.live("a provider error interrupts calls still in flight and fails the run with the model error", () =>
    Effect.gen(function* () {
      const failing = Layer.succeed(
        Model.Service,
        Model.Service.of({
          stream: () =>
            Stream.concat(
              Stream.make(call("stuck", "hang")),
              Stream.fail(new Model.ModelError({ message: "provider went away" })),
            ),
        }),
      )
      const layer = yield* setup([], undefined, { model: failing })
      const { exit, rows } = yield* runOnce(layer, { hang: recordingTool([], Effect.never) }).pipe(
        Effect.timeout("10 seconds"),
      )
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain("provider went away")
      expect(rows).toEqual([{ call_id: "stuck", status: "failed", error: Runner.INTERRUPTED }])
    }).pipe(Effect.scoped),
  )

  it.live("a provider-executed call without a result fails with Provider did not return a tool result", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const layer = yield* setup([[{ type: "tool-call", id: "web", name: "probe", input: {}, providerExecuted: true }]])
      const { exit, rows } = yield* runOnce(layer, { probe: recordingTool(log) })
      expect(Exit.isSuccess(exit) && exit.value.steps).toBe(1)
      expect(log).toEqual([])
      expect(rows).toEqual([{ call_id: "web", status: "failed", error: "Provider did not return a tool result" }])
    }).pipe(Effect.scoped),
  )

  it.live("a failing settlement fails the unsettled calls with Tool execution failed and fails the run", () =>
    Effect.gen(function* () {
      const disk = new ToolOutputStore.StorageError({ operation: "write", cause: new Error("disk full") })
      const store = Layer.succeed(
        ToolOutputStore.Service,
        ToolOutputStore.Service.of({
          limits: () => Effect.succeed({ maxLines: 1, maxBytes: 1 }),
          bound: () => Effect.fail(disk),
          cleanup: () => Effect.void,
          capture: ToolOutputStore.captureNothing,
        }),
      )
      const layer = yield* setup([[{ type: "tool-call", id: "big", name: "probe", input: { text: "a" } }]], undefined, {
        store,
      })
      const { exit, rows } = yield* runOnce(layer, { probe: recordingTool([]) })
      expect(exit).toEqual(Exit.fail(disk))
      expect(rows).toEqual([
        { call_id: "big", status: "failed", error: "Tool execution failed: Failed to write tool output: disk full" },
      ])
    }).pipe(Effect.scoped),
  )

  it.live("a crashing executor becomes its call's tool error, logged with the cause; the sibling settles and the run goes on", () =>
    Effect.gen(function* () {
      const layer = yield* setup([
        [
          { type: "tool-call", id: "boom", name: "crash", input: { text: "x" } },
          { type: "tool-call", id: "die", name: "dies", input: { text: "y" } },
          { type: "tool-call", id: "ok", name: "probe", input: { text: "fine" } },
        ],
        [{ type: "text", text: "carried on" }],
      ])
      const logged: Array<{ message: unknown; cause: Cause.Cause<unknown> }> = []
      const logger = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message, cause }) => void logged.push({ message, cause })),
      )
      yield* Effect.gen(function* () {
        const log: Array<string> = []
        yield* (yield* ToolRegistry.Service).register({
          crash: Tool.make({
            description: "Throws",
            input: Text,
            output: Schema.String,
            execute: () => {
              throw new Error("executor exploded")
            },
          }),
          dies: Tool.make({
            description: "Dies",
            input: Text,
            output: Schema.String,
            execute: () => Effect.die(new TypeError("cannot read properties of undefined")),
          }),
          probe: recordingTool(log),
        })
        const session = yield* (yield* SessionV2.Service).create()
        const result = yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "go" })
        expect(result.steps).toBe(2)
        expect(result.stopped).toBeUndefined()
        expect(log).toEqual(["execute:ok"])
        const rows = yield* toolRows
        expect(Object.fromEntries(rows.map((row) => [row.call_id, [row.status, row.error]]))).toEqual({
          boom: ["failed", "Tool crashed: executor exploded"],
          die: ["failed", "Tool crashed: cannot read properties of undefined"],
          ok: ["completed", null],
        })
        const second = (yield* Effect.flatMap(ScriptedModel.Requests, Ref.get))[1]!.messages
        const results = second.filter((message) => message.role === "tool")
        expect(results).toEqual([
          expect.objectContaining({ callID: "boom", result: { type: "error", value: "Tool crashed: executor exploded" } }),
          expect.objectContaining({
            callID: "die",
            result: { type: "error", value: "Tool crashed: cannot read properties of undefined" },
          }),
          expect.objectContaining({ callID: "ok", result: { type: "text", value: "fine" } }),
        ])
        // The model sees the message, never a stack; the log keeps the whole cause.
        for (const message of results) expect(JSON.stringify(message)).not.toContain("    at ")
        const crashes = logged.filter((entry) => String(entry.message).includes("crashed"))
        expect(crashes.map((entry) => String(entry.message)).sort()).toEqual([
          "Runner: tool crash (call boom) crashed",
          "Runner: tool dies (call die) crashed",
        ])
        const defects = crashes.flatMap((entry) => [...Cause.defects(entry.cause)]) as Array<Error>
        expect(defects.map((defect) => defect.message).sort()).toEqual([
          "cannot read properties of undefined",
          "executor exploded",
        ])
        expect(defects.every((defect) => typeof defect.stack === "string")).toBe(true)
      }).pipe(Effect.provide(layer), Effect.provide(logger))
    }).pipe(Effect.scoped),
  )

  it.live("an agent without a step limit keeps its tools until the runner limit of 25 turns fails the run", () =>
    Effect.gen(function* () {
      const script = Array.from({ length: 30 }, (_, turn) => [
        { type: "tool-call" as const, id: `c${turn}`, name: "probe", input: { text: "a" } },
      ])
      const layer = yield* setup(script)
      const log: Array<string> = []
      const exit = yield* Effect.gen(function* () {
        yield* (yield* ToolRegistry.Service).register({ probe: recordingTool(log) })
        const session = yield* (yield* SessionV2.Service).create()
        const exit = yield* Effect.exit((yield* Runner.Service).run({ sessionID: session.id, prompt: "go" }))
        const requests = yield* Effect.flatMap(ScriptedModel.Requests, Ref.get)
        expect(requests).toHaveLength(Runner.STEP_LIMIT)
        expect(requests.every((request) => request.tools.length === 1)).toBe(true)
        return exit
      }).pipe(Effect.provide(layer))
      expect(log).toHaveLength(Runner.STEP_LIMIT)
      expect(exit).toEqual(Exit.fail(new Runner.StepLimitExceeded({ steps: Runner.STEP_LIMIT })))
    }).pipe(Effect.scoped),
  )
})

describe("Runner progress and text deltas", () => {
  it.live("publishes a tool's progress reports and the streamed text, typed, in order", () =>
    Effect.gen(function* () {
      const layer = yield* setup([
        [
          { type: "text", text: "Let me " },
          { type: "text", text: "check." },
          { type: "tool-call", id: "c1", name: "slow", input: { text: "a" } },
        ],
        [{ type: "text", text: "done" }],
      ])
      const slow = Tool.make({
        description: "Reports progress",
        input: Text,
        output: Schema.String,
        execute: (input, context) =>
          Effect.sync(() => {
            context.progress?.({ message: "half way", progress: 1, total: 2 })
            context.progress?.({ message: "output", output: "chunk\n" })
            return input.text
          }),
      })
      yield* Effect.gen(function* () {
        const events = yield* EventV2.Service
        const seen: Array<string> = []
        yield* events.listen(
          (envelope) => {
            switch (envelope.type) {
              case "session.next.text.delta":
                seen.push(`text:${envelope.data.text}`)
                break
              case "session.next.tool.progress":
                seen.push(`progress:${envelope.data.callID}:${envelope.data.message}:${envelope.data.progress ?? "-"}`)
                if (envelope.data.output !== undefined) seen.push(`output:${envelope.data.output}`)
                break
              case "session.next.tool.success":
                seen.push(`success:${envelope.data.callID}`)
            }
          },
          Runner.Event.TextDelta,
          Runner.Event.Progress,
          Runner.Event.Success,
        )
        yield* (yield* ToolRegistry.Service).register({ slow })
        const session = yield* (yield* SessionV2.Service).create()
        yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "go" })
        expect(seen).toEqual([
          "text:Let me ",
          "text:check.",
          "progress:c1:half way:1",
          "progress:c1:output:-",
          "output:chunk\n",
          "success:c1",
          "text:done",
        ])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped),
  )

  it.live("a settlement without a progress sink gives the tool no sink (absence costs nothing)", () =>
    Effect.gen(function* () {
      let sink: unknown = "unset"
      const probe = Tool.make({
        description: "Looks at its context",
        input: Text,
        output: Schema.String,
        execute: (input, context) => Effect.sync(() => ((sink = context.progress), input.text)),
      })
      const layer = ToolRegistry.layer.pipe(
        Layer.provideMerge(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
      )
      yield* Effect.gen(function* () {
        const registry = yield* ToolRegistry.Service
        yield* registry.register({ probe })
        const turn = yield* registry.materialize()
        yield* turn.settle({
          sessionID: "s",
          agent: "build",
          assistantMessageID: "m",
          call: { id: "c", name: "probe", input: { text: "x" } },
        })
        expect(sink).toBeUndefined()
      }).pipe(Effect.provide(layer), Effect.scoped)
    }),
  )
})
