import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Queue } from "effect"
import {
  ApplicationTools,
  Database,
  EventV2,
  Location,
  PermissionV2,
  SessionTodo,
  SessionV2,
  TodoWriteTool,
  Tool,
  ToolOutputStore,
  ToolRegistry,
} from "../src/index.js"
import * as Engines from "./support/engines.js"
import { tempDir } from "./support/location.js"
import * as Permission from "./support/permission.js"
import { ToolTest } from "../src/entry/testing.js"

const registry = ToolRegistry.layer.pipe(
  Layer.provide(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
)

/** A real database (in-memory SQLite by default), a real Location on `directory`, sessions, todos, the bus and the tool. */
const environment = (directory: string, database: Layer.Layer<Database.Client> = Database.layerMemory) => {
  const core = Location.layer({ directory }).pipe(Layer.orDie, Layer.provideMerge(database))
  const services = Layer.mergeAll(SessionV2.layer, SessionTodo.layer).pipe(
    Layer.provideMerge(EventV2.layer),
    Layer.provideMerge(core),
  )
  return TodoWriteTool.layer.pipe(Layer.provideMerge(Layer.mergeAll(registry, Permission.layer, services)))
}

const withEnvironment = <A, E, R>(effect: Effect.Effect<A, E, R>, engine?: Engines.Engine) =>
  Effect.flatMap(tempDir("toolgate-todo-"), (directory) =>
    Effect.provide(effect, environment(directory, engine?.layer())),
  )

const session = Effect.flatMap(SessionV2.Service, (sessions) => sessions.create())

const settle = (sessionID: string, input: unknown) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize()).pipe(
    Effect.flatMap((turn) =>
      turn.settle({
        sessionID,
        agent: "build",
        assistantMessageID: "msg_tool_test",
        call: { id: "call-todowrite", name: "todowrite", input },
      }),
    ),
  )

const todos: ReadonlyArray<SessionTodo.Todo> = [{ content: "Port the todo tool", status: "in_progress", priority: "high" }]

describe("todowrite tool", () => {
  it.scoped("registers, approves the wildcard resource, persists todos, and returns typed output", () =>
    withEnvironment(
      Effect.gen(function* () {
        const { id } = yield* session
        const turn = yield* Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize())
        expect(turn.definitions.map((d) => d.name)).toEqual(["todowrite"])
        expect(turn.definitions[0]!.description).toBe(TodoWriteTool.description)

        const settlement = yield* settle(id, { todos })
        expect(settlement.result).toEqual({ type: "text", value: JSON.stringify(todos, null, 2) })
        expect(settlement.output?.structured).toEqual({ todos })
        const asserts = yield* Permission.asserts
        expect(asserts).toEqual([
          {
            sessionID: id,
            agent: "build",
            action: "todowrite",
            resources: ["*"],
            save: ["*"],
            source: { type: "tool", messageID: "msg_tool_test", callID: "call-todowrite" },
          },
        ])
        expect(yield* Effect.flatMap(SessionTodo.Service, (store) => store.get(id))).toEqual(todos)
      }),
    ),
  )

  it.scoped("does not update persisted todos when permission is denied", () =>
    withEnvironment(
      Effect.gen(function* () {
        const { id } = yield* session
        const store = yield* SessionTodo.Service
        const existing: ReadonlyArray<SessionTodo.Todo> = [{ content: "Keep me", status: "pending", priority: "low" }]
        yield* store.update({ sessionID: id, todos: existing })
        yield* Permission.deny("todowrite")
        const settlement = yield* settle(id, { todos })
        expect(settlement).toEqual({
          result: { type: "error", value: "Permission denied by configured rules for todowrite: *" },
        })
        expect(yield* store.get(id)).toEqual(existing)
      }),
    ),
  )

  it.scoped("status and priority take only their documented values; anything else is refused and nothing stored", () =>
    withEnvironment(
      Effect.gen(function* () {
        const { id } = yield* session
        const store = yield* SessionTodo.Service
        const every = SessionTodo.Status.literals.flatMap((status) =>
          SessionTodo.Priority.literals.map((priority) => ({ content: `${status} ${priority}`, status, priority })),
        )
        expect((yield* settle(id, { todos: every })).output?.structured).toEqual({ todos: every })
        for (const odd of [
          { content: "Odd", status: "blocked-on-review", priority: "high" },
          { content: "Odd", status: "pending", priority: "someday" },
          { content: "Odd", status: "PENDING", priority: "high" },
          { content: "Odd", status: "done", priority: "high" },
        ]) {
          const refused = yield* settle(id, { todos: [odd] })
          expect(refused.result.type).toBe("error")
          expect(String(refused.result.value)).toMatch(/^Invalid tool input: /)
        }
        expect(yield* store.get(id)).toEqual(every)
        expect((yield* settle(id, { todos: [{ content: "x" }] })).result.type).toBe("error")
      }),
    ),
  )
})

describe("todowrite tool errors", () => {
  it.effect("maps another typed permission-call error (a missing session) to `Unable to update todos`", () =>
    Effect.gen(function* () {
      const updates: Array<unknown> = []
      const permission = PermissionV2.Service.of({
        ...(yield* Permission.makeFake).service,
        assert: () => Effect.fail(new SessionV2.NotFoundError({ sessionID: "ses_missing" })),
      })
      const store = SessionTodo.Service.of({
        update: (input) => Effect.sync(() => void updates.push(input)),
        get: () => Effect.succeed([]),
      })
      const tool = TodoWriteTool.make({ permission, todos: store })
      const failure = yield* Effect.flip(
        ToolTest.settle(
          tool,
          { todos },
          {
            name: "todowrite",
            context: { sessionID: "ses_missing", assistantMessageID: "msg_tool_test", toolCallID: "call-missing" },
          },
        ),
      )
      expect(failure.message).toBe("Unable to update todos")
      expect(updates).toEqual([])
    }),
  )
})

Engines.describeEach("SessionTodo", (engine) => {
  it.scoped("update replaces the whole list in order, clears on empty, and publishes todo.updated", () =>
    withEnvironment(
      Effect.gen(function* () {
        const { id } = yield* session
        const other = yield* session
        const store = yield* SessionTodo.Service
        const events = yield* Effect.flatMap(EventV2.Service, (bus) => bus.queue())
        const three = ["a", "b", "c"].map(
          (content, i): SessionTodo.Todo => ({
            content,
            status: "pending",
            priority: (["high", "medium", "low"] as const)[i]!,
          }),
        )
        yield* store.update({ sessionID: id, todos: three })
        yield* store.update({ sessionID: other.id, todos: [three[0]!] })
        expect(yield* store.get(id)).toEqual(three)
        const reversed = [...three].reverse().slice(0, 2)
        yield* store.update({ sessionID: id, todos: reversed })
        expect(yield* store.get(id)).toEqual(reversed)
        yield* store.update({ sessionID: id, todos: [] })
        expect(yield* store.get(id)).toEqual([])
        expect(yield* store.get(other.id)).toEqual([three[0]])

        const published = Array.from(yield* Queue.takeAll(events))
        expect(published.map((event) => event.type)).toEqual(Array(4).fill("todo.updated"))
        expect(published[2]!.data).toEqual({ sessionID: id, todos: reversed })
        expect(published[3]!.data).toEqual({ sessionID: id, todos: [] })
      }),
      engine,
    ),
  )

  it.scoped("database errors are defects (a todo for an unknown session violates the foreign key)", () =>
    withEnvironment(
      Effect.gen(function* () {
        const store = yield* SessionTodo.Service
        const exit = yield* Effect.exit(store.update({ sessionID: "ses_missing", todos }))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        expect(yield* store.get("ses_missing")).toEqual([])
      }),
      engine,
    ),
  )
})
