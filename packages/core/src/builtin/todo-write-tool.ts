/**
 * The `todowrite` built-in: replaces the session's todo list and echoes it back.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as LLM from "../values/llm.js"
import * as PermissionV2 from "../permission/permission.js"
import * as SessionTodo from "../world/session-todo.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"

/**
 * The registered name and permission action.
 *
 * @since 0.1.0
 * @category utilities
 */
export const name = "todowrite"

/**
 * The model-facing description.
 *
 * @since 0.1.0
 * @category utilities
 */
export const description =
  "Creates and updates a structured task list for the current coding session. Use it to follow progress through multi-step work, and keep each todo's status up to date."

/**
 * The input: the complete new list.
 *
 * @since 0.1.0
 * @category models
 */
export const Input = Schema.Struct({
  todos: Schema.Array(SessionTodo.Todo).annotations({ description: "The complete, updated todo list" }),
})

/**
 * The output, also the structured output: an echo of the input list.
 *
 * @since 0.1.0
 * @category models
 */
export const Output = Schema.Struct({ todos: Schema.Array(SessionTodo.Todo) })

/**
 * Builds the tool over the given services.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (services: {
  readonly permission: PermissionV2.Interface
  readonly todos: SessionTodo.Interface
}) =>
  Tool.make({
    description,
    annotations: {
      title: "Update todo list",
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    input: Input,
    output: Output,
    toModelOutput: ({ output }) => [{ type: "text", text: JSON.stringify(output.todos, null, 2) }],
    execute: (input, context) =>
      Effect.gen(function* () {
        yield* services.permission
          .assert({
            action: name,
            resources: ["*"],
            save: ["*"],
            ...PermissionV2.fromToolCall(context),
          })
          .pipe(
            Effect.mapError((error) =>
              error._tag === "Session.NotFoundError"
                ? new LLM.ToolFailure({ message: "Unable to update todos", error })
                : PermissionV2.toToolFailure(error),
            ),
          )
        yield* services.todos.update({ sessionID: context.sessionID, todos: input.todos })
        return { todos: input.todos }
      }),
  })

/**
 * Registers `todowrite` in the Location for the lifetime of the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, never, Tools.Service | PermissionV2.Service | SessionTodo.Service> = Tools.layer(
  name,
  Effect.gen(function* () {
    const tool = make({ permission: yield* PermissionV2.Service, todos: yield* SessionTodo.Service })
    return tool
  }),
)
