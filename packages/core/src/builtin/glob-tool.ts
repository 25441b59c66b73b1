/**
 * Model-facing V2 glob leaf: lists files matching a glob under the active Location or under `path`. Results are in
 * path order and relative to the Location. Unlike the reference, `path` is confined like `read`: a relative path
 * stays inside the Location and an outside directory needs `external_directory` (see docs/trust/search.md).
 * Order: resolve → `external_directory` (outside targets) → `glob` → resolve again → search.
 *
 * @since 0.1.0
 */
import * as nodePath from "node:path"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as LLM from "../values/llm.js"
import * as LocationMutation from "../world/location-mutation.js"
import * as PermissionV2 from "../permission/permission.js"
import * as Search from "../world/search/search.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"

/**
 * The registered tool name.
 *
 * @since 0.1.0
 * @category utilities
 */
export const name = "glob"

/**
 * The model-facing description.
 *
 * @since 0.1.0
 * @category utilities
 */
export const description =
  "List files whose paths match a glob pattern inside the active Location, as short relative file resources. " +
  "Give a relative path to search a narrower directory, and a limit to cap how many results come back."

/**
 * The input.
 *
 * @since 0.1.0
 * @category models
 */
export const Input = Schema.Struct({
  pattern: Schema.String.annotations({ description: "The glob pattern file paths are matched against" }),
  path: Schema.optional(
    Schema.String.annotations({
      description:
        "A directory to search in, relative to the Location; an absolute directory outside it needs external_directory approval. When omitted, the active Location is searched.",
    }),
  ),
  limit: Schema.optional(
    Schema.Int.pipe(Schema.positive()).annotations({ description: "The largest number of results to return" }),
  ),
})
/**
 * @see Input
 *
 * @since 0.1.0
 * @category models
 */
export type Input = typeof Input.Type

/**
 * The output, which is also the structured output: entries relative to the Location directory.
 *
 * @since 0.1.0
 * @category models
 */
export const Output = Schema.Array(Search.Entry)
/**
 * @see Output
 *
 * @since 0.1.0
 * @category models
 */
export type Output = typeof Output.Type

/**
 * The model text: one absolute path per line, or `No files found`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toModelText = (directory: string, output: ReadonlyArray<Search.Entry>): string =>
  output.length === 0 ? "No files found" : output.map((entry) => nodePath.resolve(directory, entry.path)).join("\n")

/**
 * Builds the `glob` tool over the current Location's services.
 *
 * @since 0.1.0
 * @category utilities
 */
export const tool = Effect.gen(function* () {
  const permission = yield* PermissionV2.Service
  const mutation = yield* LocationMutation.Service
  const search = yield* Search.Service

  const execute = (input: Input, context: Tool.Context): Effect.Effect<Output, LLM.ToolFailure> => {
    const caller = PermissionV2.fromToolCall(context)
    const path = input.path ?? "."
    return Effect.gen(function* () {
      // Text no engine can take is refused before anything is asked.
      const invalid = Search.invalidInput("pattern", input.pattern)
      if (invalid !== undefined) return yield* invalid
      const target = yield* Search.confineRoot({
        mutation,
        permission,
        caller,
        path,
        authorize: permission.assert({
          ...caller,
          action: "glob",
          resources: [input.pattern],
          save: ["*"],
          // Keys stay present even when undefined, as in the reference.
          metadata: { root: path, path: input.path, limit: input.limit },
        }),
      }).pipe(
        Effect.mapError((error) =>
          Search.isRootFailure(error)
            ? new LLM.ToolFailure({ message: Search.rootFailureMessage(path, error), error })
            : error,
        ),
      )
      const cwd = target.canonical
      const entries = yield* search.glob({ cwd, pattern: input.pattern, limit: input.limit ?? Number.MAX_SAFE_INTEGER })
      return entries.map((entry): Search.Entry => ({
        path: nodePath.relative(mutation.root, nodePath.resolve(cwd, entry.path)),
        type: "file",
      }))
    }).pipe(
      Effect.mapError(
        PermissionV2.leafFailure((error) =>
          error instanceof Search.InvalidInputError
            ? new LLM.ToolFailure({ message: `Unable to find files: ${error.message.replace(/^The /, "the ")}`, error })
            : new LLM.ToolFailure({ message: `Unable to find files matching ${input.pattern}`, error }),
        ),
      ),
    )
  }

  return Tool.make({
    description,
    annotations: { title: "Find files", readOnlyHint: true, openWorldHint: false },
    input: Input,
    output: Output,
    execute,
    toModelOutput: ({ output }) => [{ type: "text", text: toModelText(mutation.root, output) }],
  })
})

/**
 * Registers `glob` in the Location for the lifetime of the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Tools.layer(name, tool)
