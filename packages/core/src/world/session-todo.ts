/**
 * SessionTodo: a session's todo list in the SQLite `todo` table, one row per position. `update` replaces the whole
 * list in one transaction and then announces it with `todo.updated`. Database errors are defects.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as EventV2 from "../place/event.js"
import * as Database from "../system/database.js"

/**
 * Where a task stands: the only values `todowrite` accepts.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Status = Schema.Literal("pending", "in_progress", "completed", "cancelled").annotations({
  description: "Where the task stands: pending, in_progress, completed or cancelled",
})

/**
 * How important a task is: the only values `todowrite` accepts.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Priority = Schema.Literal("high", "medium", "low").annotations({
  description: "How important the task is: high, medium or low",
})

/**
 * One todo item. Status and priority take only their documented values (`Status`, `Priority`), so a model that
 * sends `done` or `urgent` is told what is allowed instead of having it stored.
 *
 * @since 0.1.0
 * @category models
 */
export const Todo = Schema.Struct({
  content: Schema.String.annotations({ description: "A short statement of the task" }),
  status: Status,
  priority: Priority,
})
/**
 * @see Todo
 *
 * @since 0.1.0
 * @category models
 */
export type Todo = typeof Todo.Type

/**
 * Events (live only).
 *
 * @since 0.1.0
 * @category models
 */
export const Event = {
  Updated: EventV2.define("todo.updated", Schema.Struct({ sessionID: Schema.String, todos: Schema.Array(Todo) })),
} as const

/**
 * The input of `update`.
 *
 * @since 0.1.0
 * @category models
 */
export interface UpdateInput {
  readonly sessionID: string
  readonly todos: ReadonlyArray<Todo>
}

/**
 * The todo store, one per Location.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /** Replaces the session's list (positions follow array order), then publishes `todo.updated`. */
  readonly update: (input: UpdateInput) => Effect.Effect<void>
  /** The session's list, ordered by position. */
  readonly get: (sessionID: string) => Effect.Effect<ReadonlyArray<Todo>>
}

/**
 * The SessionTodo service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/SessionTodo")<Service, Interface>() {}

/**
 * Builds the store over the current SQL client and bus.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Interface, never, SqlClient.SqlClient | EventV2.Service> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const events = yield* EventV2.Service

  const update = Effect.fn("SessionTodo.update")(function* (input: UpdateInput) {
    const now = Date.now()
    const rows = input.todos.map((todo, position) => ({
      session_id: input.sessionID,
      content: todo.content,
      status: todo.status,
      priority: todo.priority,
      position,
      time_created: now,
      time_updated: now,
    }))
    yield* sql
      .withTransaction(
        Effect.gen(function* () {
          yield* sql`DELETE FROM todo WHERE session_id = ${input.sessionID}`
          if (rows.length > 0) yield* sql`INSERT INTO todo ${sql.insert(rows)}`
        }),
      )
      .pipe(Database.orDie(sql))
    yield* Effect.orDie(events.publish(Event.Updated, { sessionID: input.sessionID, todos: input.todos }))
  })

  const get = Effect.fn("SessionTodo.get")(function* (sessionID: string) {
    const rows = yield* sql<Todo>`SELECT content, status, priority FROM todo
      WHERE session_id = ${sessionID} ORDER BY position`.pipe(Database.orDie(sql))
    return rows.map((row): Todo => ({ content: row.content, status: row.status, priority: row.priority }))
  })

  return Service.of({ update, get })
})

/**
 * The Location-scoped layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, SqlClient.SqlClient | EventV2.Service> = Layer.effect(Service, make)
