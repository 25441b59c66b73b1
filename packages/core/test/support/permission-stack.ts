/**
 * The real permission stack for PermissionV2 tests: SQLite (memory or file), a real Location (project `global` in
 * a temp directory), EventV2, SessionV2, PermissionSaved and an AgentV2 whose agents the test controls.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Queue, type Scope } from "effect"
import { AgentV2, Database, EventV2, Location, PermissionSaved, PermissionV2, SessionV2 } from "../../src/index.js"

/** Everything a permission test can reach. */
export type Services =
  | PermissionV2.Service
  | EventV2.Service
  | AgentV2.Service
  | SessionV2.Service
  | PermissionSaved.Service
  | Location.Service
  | SqlClient.SqlClient

/** The whole stack on one Location directory over a given database. */
export const stack = (directory: string, database: Layer.Layer<Database.Client>) =>
  PermissionV2.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(EventV2.layer, AgentV2.layerEmpty, SessionV2.layer, PermissionSaved.layer)),
    Layer.provideMerge(Location.layer({ directory }).pipe(Layer.orDie)),
    Layer.provideMerge(database),
  )

/** Builds the stack into the current scope and returns its context. */
export const buildStack = (directory: string, database: Layer.Layer<Database.Client>) =>
  Layer.build(stack(directory, database))

/** Agent rules controlled by the test: `null` removes the agent. Returns `setRules`. */
export const agentControl = Effect.gen(function* () {
  const agents = yield* AgentV2.Service
  const table = new Map<string, ReadonlyArray<PermissionV2.Rule> | null>([["test", []]])
  yield* agents.transform((draft) => {
    for (const [id, rules] of table) {
      if (rules === null) draft.remove(id)
      else draft.update(id, (agent) => void (agent.permissions = rules.map((rule) => ({ ...rule }))))
    }
  })
  return (id: string, rules: ReadonlyArray<PermissionV2.Rule> | null) =>
    Effect.suspend(() => {
      table.delete(id)
      table.set(id, rules)
      return agents.reload()
    })
})

/** Fixture: session `ses_test` with agent `test`, a recorded event log and an Asked waiter. */
export const fixture = Effect.gen(function* () {
  const permission = yield* PermissionV2.Service
  const events = yield* EventV2.Service
  const sessions = yield* SessionV2.Service
  const setAgentRules = yield* agentControl
  yield* sessions.create({ id: "ses_test", agent: "test" })
  const log: Array<EventV2.Envelope> = []
  yield* events.listen((envelope) => void log.push(envelope))
  const queue = yield* events.queue(PermissionV2.Event.Asked)
  const setRules = (rules: ReadonlyArray<PermissionV2.Rule>) => setAgentRules("test", rules)

  /** Forks an assert and waits until its Asked event has been published. */
  const waitForRequest = (input: PermissionV2.AssertInput) =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(permission.assert(input))
      while (true) {
        const envelope = yield* Queue.take(queue)
        if (envelope.data.id === input.id) break
      }
      return fiber
    })

  const replied = () => log.filter(EventV2.is(PermissionV2.Event.Replied)).map((envelope) => envelope.data)
  const asked = () => log.filter(EventV2.is(PermissionV2.Event.Asked)).map((envelope) => envelope.data)

  return { permission, events, sessions, setRules, setAgentRules, waitForRequest, log, replied, asked }
})

/** Runs `body` on a fresh in-memory stack in `directory`. */
export const withMemoryStack = <A, E>(
  directory: string,
  body: Effect.Effect<A, E, Services | Scope.Scope>,
): Effect.Effect<A, E, Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* buildStack(directory, Database.layerMemory)
    return yield* Effect.provide(body, context)
  })

/** Reads a service out of a built context. */
export const service = <I, S>(context: Context.Context<Services>, tag: Context.Tag<I, S>) =>
  Context.get(context as Context.Context<I>, tag)
