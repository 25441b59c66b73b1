/**
 * Model-facing V2 file-write leaf. Relative paths resolve within the active Location. Absolute paths inside that
 * Location are accepted, while explicit absolute external paths retain mutation capability through a separate
 * external_directory approval before edit approval. A file `read` would not allow is asked for (or refused) as a
 * read first, and a protected path asks `protected_path` after edit (see `./mutation-gate.ts`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as FileDiff from "../values/file-diff.js"
import * as FileFailure from "./internal/file-failure.js"
import * as FileMutation from "../world/file-mutation.js"
import * as LLM from "../values/llm.js"
import * as LocationMutation from "../world/location-mutation.js"
import * as MutationGate from "./mutation-gate.js"
import * as PermissionV2 from "../permission/permission.js"
import * as ProtectedPath from "../place/protected-path.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"

/**
 * The registered tool name.
 *
 * @since 0.1.0
 * @category utilities
 */
export const name = "write"

/**
 * The model-facing description.
 *
 * @since 0.1.0
 * @category utilities
 */
export const description =
  "Create or overwrite a single file with the given content. A relative path is resolved inside the active Location, " +
  "and an absolute path that points inside the Location is accepted as well. An absolute path outside the Location " +
  "needs external_directory approval first, and edit approval after it."

// TODO: Revisit whether model-facing mutation schemas should prefer absolute `filePath` naming for trained-in compatibility after evaluating model behavior.
/**
 * The input: exactly `path` and `content`.
 *
 * @since 0.1.0
 * @category models
 */
export const Input = Schema.Struct({
  path: Schema.String.annotations({
    description:
      "Where to write. A relative path is resolved inside the active Location; an absolute path inside that " +
      "Location is fine too, and an absolute path outside it needs external_directory approval.",
  }),
  content: Schema.String.annotations({ description: "The full text the file should contain" }),
})
/**
 * @see Input
 *
 * @since 0.1.0
 * @category models
 */
export type Input = typeof Input.Type

/**
 * The output, which is also the structured output.
 *
 * @since 0.1.0
 * @category models
 */
export const Output = Schema.Struct({
  operation: Schema.Literal("write"),
  target: Schema.String,
  resource: Schema.String,
  existed: Schema.Boolean,
})
/**
 * @see Output
 *
 * @since 0.1.0
 * @category models
 */
export type Output = typeof Output.Type

/**
 * The model text: `Wrote file successfully: <resource>` or `Created file successfully: <resource>`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toModelText = (output: Output): string =>
  `${output.existed ? "Wrote" : "Created"} file successfully: ${output.resource}`

// Deferred V2 write integrations (the reference's markers, kept verbatim; docs/known-gaps.md is the one list):
// TODO: Add formatter integration after V2 formatter runtime exists.
// TODO: Publish watcher/file-edit events after V2 watcher integration exists.
// TODO: Add snapshots / undo after design exists.
// TODO: Add LSP notification and diagnostics after V2 LSP runtime exists.

/**
 * Builds the `write` tool (catalogue action `edit`) over the current Location's services.
 *
 * @since 0.1.0
 * @category utilities
 */
export const tool = Effect.gen(function* () {
  const permission = yield* PermissionV2.Service
  const mutation = yield* LocationMutation.Service
  const files = yield* FileMutation.Service
  const gate = { permission, protection: yield* ProtectedPath.Service }

  const execute = (input: Input, context: Tool.Context): Effect.Effect<Output, LLM.ToolFailure> => {
    const identity = PermissionV2.fromToolCall(context)
    return Effect.gen(function* () {
      const target = yield* mutation.resolve({ path: input.path, kind: "file" })
      // The prompt shows the diff against what is there now (a file that cannot be read: against nothing).
      const preview = files.read({ target }).pipe(
        Effect.map((bytes) => new TextDecoder().decode(FileMutation.hasBom(bytes) ? bytes.subarray(3) : bytes)),
        Effect.orElseSucceed(() => ""),
        Effect.map((before) => FileDiff.patch(target.resource, before, input.content)),
      )
      yield* MutationGate.authorize(gate, identity, [target], preview)
      return yield* files.writeTextPreservingBom({ target, content: input.content })
    }).pipe(
      Effect.mapError(
        // `Unable to write <path>: <cause>` (not found, outside the Location, a directory, the OS's refusal, …).
        PermissionV2.leafFailure(
          (error) =>
            new LLM.ToolFailure({ message: FileFailure.describe(`Unable to write ${input.path}`, error), error }),
        ),
      ),
    )
  }

  return Tool.withPermission(
    Tool.make({
      description,
      annotations: {
        title: "Write file",
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      },
      input: Input,
      output: Output,
      execute,
      toModelOutput: ({ output }) => [{ type: "text", text: toModelText(output) }],
    }),
    "edit",
  )
})

/**
 * Registers `write` in the Location for the lifetime of the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Tools.layer(name, tool)
