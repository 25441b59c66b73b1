/**
 * The `apply_patch` leaf. Every hunk target is resolved and approved (external directories first, then `read` for
 * targets `read` would not allow, one `edit` request for the whole batch, then `protected_path` for protected
 * targets; see `./mutation-gate.ts`) before any target is read; every hunk is prepared before anything is written; then
 * the hunks commit one by one through FileMutation. There is no rollback: a later failure reports what was already
 * applied. Moves are refused up front.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Approvals from "../approvals/approvals.js"
import * as FileDiff from "../values/file-diff.js"
import * as FileFailure from "./internal/file-failure.js"
import * as FileMutation from "../world/file-mutation.js"
import * as LLM from "../values/llm.js"
import * as LocationMutation from "../world/location-mutation.js"
import * as MutationGate from "./mutation-gate.js"
import * as PermissionV2 from "../permission/permission.js"
import * as ProtectedPath from "../place/protected-path.js"
import * as Patch from "./patch.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"

/**
 * The registered tool name; its permission action is `edit`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const name = "apply_patch"

/**
 * What the model is told about `apply_patch`.
 *
 * @since 0.1.0
 * @category constants
 */
export const DESCRIPTION =
  "Apply a single patch made of add, update and delete file operations. Every target is resolved and approved before any target file is read. Operations run one after another; when a later one fails, the earlier ones stay applied and the failure names them. Moving files and atomic rollback are not supported yet."

/**
 * The tool input.
 *
 * @since 0.1.0
 * @category models
 */
export const Input = Schema.Struct({
  patchText: Schema.String.annotations({
    description: "The complete patch text, with its add, update and delete operations",
  }),
})
/**
 * @see Input
 *
 * @since 0.1.0
 * @category models
 */
export type Input = typeof Input.Type

/**
 * One applied operation.
 *
 * @since 0.1.0
 * @category models
 */
export const Applied = Schema.Struct({
  type: Schema.Literal("add", "update", "delete"),
  resource: Schema.String,
  target: Schema.String,
})
/**
 * @see Applied
 *
 * @since 0.1.0
 * @category models
 */
export type Applied = typeof Applied.Type

/**
 * The tool output (also its structured output).
 *
 * @since 0.1.0
 * @category models
 */
export const Output = Schema.Struct({
  applied: Schema.Array(Applied),
  files: Schema.Array(FileDiff.Info),
})
/**
 * @see Output
 *
 * @since 0.1.0
 * @category models
 */
export type Output = typeof Output.Type

/**
 * The model text: a header, then `A`/`M`/`D <resource>` per applied operation.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toModelText = (output: Output): string =>
  [
    "Applied patch sequentially:",
    ...output.applied.map(
      (item) => `${item.type === "add" ? "A" : item.type === "delete" ? "D" : "M"} ${item.resource}`,
    ),
  ].join("\n")

type Prepared =
  | { readonly type: "add"; readonly path: string; readonly target: LocationMutation.Target; readonly after: string }
  | {
      readonly type: "delete"
      readonly path: string
      readonly target: LocationMutation.Target
      readonly before: string
    }
  | {
      readonly type: "update"
      readonly path: string
      readonly target: LocationMutation.Target
      readonly source: Uint8Array
      readonly before: string
      readonly after: string
      readonly content: string
    }

const failure = (message: string, error?: unknown) =>
  new LLM.ToolFailure(error === undefined ? { message } : { message, error })

/** `message` with the cause of `error`: a file failure's cause, or a hunk's mismatch. */
const caused = (message: string, error: unknown): LLM.ToolFailure =>
  failure(
    error instanceof Patch.MatchError ? `${message}: ${error.detail}` : FileFailure.describe(message, error),
    error,
  )

/** Runs a throwing `Patch` function: its typed error fails the effect; anything else thrown is a defect. */
const attempt = <A, E extends Patch.ParseError | Patch.MatchError>(
  run: () => A,
  expected: new (...args: never) => E,
): Effect.Effect<A, E> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(run())
    } catch (error) {
      return error instanceof expected ? Effect.fail(error) : Effect.die(error)
    }
  })

const isPermission = (error: unknown): error is PermissionV2.Error =>
  error instanceof PermissionV2.BlockedError ||
  error instanceof PermissionV2.CorrectedError ||
  error instanceof Approvals.TimedOutError

const diffOf = (change: Prepared): FileDiff.Info => {
  const file = change.target.resource
  switch (change.type) {
    case "add":
      return FileDiff.make({ file, before: "", after: change.after, status: "added" })
    case "delete":
      return FileDiff.make({ file, before: change.before, after: "", status: "deleted" })
    case "update":
      return FileDiff.make({ file, before: change.before, after: change.after, status: "modified" })
  }
}

/**
 * Builds the `apply_patch` tool (already decorated with the `edit` action) from the Location's services.
 *
 * @since 0.1.0
 * @category utilities
 */
export const tool = Effect.gen(function* () {
  const mutation = yield* LocationMutation.Service
  const files = yield* FileMutation.Service
  const permission = yield* PermissionV2.Service
  const fs = yield* FileSystem.FileSystem
  const gate = { permission, protection: yield* ProtectedPath.Service }

  const prepare = (hunk: Patch.Hunk, target: LocationMutation.Target) =>
    Effect.gen(function* () {
      if (hunk.type === "add") {
        const after = hunk.contents === "" || hunk.contents.endsWith("\n") ? hunk.contents : `${hunk.contents}\n`
        return { type: "add", path: hunk.path, target, after } satisfies Prepared as Prepared
      }
      const info = yield* fs.stat(target.canonical)
      if (info.type !== "File") {
        return yield* failure(`Unable to apply patch at ${hunk.path}: it is not a regular file (${info.type})`)
      }
      // Through a verified descriptor: a path swapped for a link after approval cannot feed outside bytes in.
      const source = yield* files.read({ target })
      const original = new TextDecoder("utf-8", { ignoreBOM: true }).decode(source)
      const before = original.replace(/^\uFEFF/, "")
      if (hunk.type === "delete")
        return { type: "delete", path: hunk.path, target, before } satisfies Prepared as Prepared
      const update = yield* attempt(() => Patch.derive(hunk.path, hunk.chunks, original), Patch.MatchError)
      return {
        type: "update",
        path: hunk.path,
        target,
        source,
        before,
        after: update.content,
        content: Patch.joinBom(update.content, update.bom),
      } satisfies Prepared as Prepared
    }).pipe(
      Effect.mapError((error) =>
        error instanceof LLM.ToolFailure ? error : caused(`Unable to apply patch at ${hunk.path}`, error),
      ),
    )

  const commit = (change: Prepared): Effect.Effect<Applied, unknown> => {
    const done = (result: FileMutation.WriteResult | FileMutation.RemoveResult): Applied => ({
      type: change.type,
      resource: result.resource,
      target: result.target,
    })
    switch (change.type) {
      case "add":
        return Effect.map(files.create({ target: change.target, content: change.after }), done)
      case "delete":
        return Effect.map(files.remove({ target: change.target }), done)
      case "update":
        return Effect.map(
          files.writeIfUnchanged({ target: change.target, expected: change.source, content: change.content }),
          done,
        )
    }
  }

  const execute = (input: Input, context: Tool.Context): Effect.Effect<Output, LLM.ToolFailure> =>
    Effect.gen(function* () {
      const identity = PermissionV2.fromToolCall(context)
      if (input.patchText.trim() === "") return yield* failure("patchText is required")
      const hunks = yield* attempt(() => Patch.parse(input.patchText), Patch.ParseError).pipe(
        // The reference prints the thrown `Error` itself, so the text keeps its `Error: ` prefix.
        Effect.mapError((error) => failure(`apply_patch verification failed: Error: ${error.message}`, error)),
      )
      if (hunks.length === 0) return yield* failure("patch rejected: empty patch")
      if (hunks.some((hunk) => hunk.type === "update" && hunk.movePath !== undefined)) {
        return yield* failure("apply_patch moves are not supported yet")
      }

      const targets = yield* Effect.gen(function* () {
        const resolved: Array<LocationMutation.Target> = []
        for (const hunk of hunks) {
          resolved.push(
            yield* mutation
              .resolve({ path: hunk.path, kind: "file" })
              .pipe(Effect.mapError((error) => caused(`Unable to apply patch at ${hunk.path}`, error))),
          )
        }
        // The prompt shows the patch as it would apply now (nothing when a hunk cannot be prepared yet).
        const preview = Effect.forEach(hunks, (hunk, index) => prepare(hunk, resolved[index]!)).pipe(
          Effect.map((changes) => changes.map((change) => diffOf(change).patch ?? "").join("")),
          Effect.orElseSucceed(() => undefined),
        )
        yield* MutationGate.authorize(gate, identity, resolved, preview)
        return resolved
      }).pipe(
        Effect.mapError((error) =>
          error instanceof LLM.ToolFailure
            ? error
            : isPermission(error)
              ? PermissionV2.toToolFailure(error)
              : caused("Unable to apply patch at patch", error),
        ),
      )

      const prepared: Array<Prepared> = []
      for (const [index, hunk] of hunks.entries()) prepared.push(yield* prepare(hunk, targets[index]!))

      const applied: Array<Applied> = []
      for (const change of prepared) {
        const result = yield* commit(change).pipe(
          Effect.mapError((error) =>
            applied.length === 0
              ? caused(`Unable to apply patch at ${change.path}`, error)
              : failure(
                  `${FileFailure.describe(`Patch partially applied before failing at ${change.path}`, error)}. Applied: ${applied.map((item) => item.resource).join(", ")}`,
                  error,
                ),
          ),
        )
        applied.push(result)
      }
      return { applied, files: prepared.map(diffOf) } satisfies Output
    })

  return Tool.withPermission(
    Tool.make({
      description: DESCRIPTION,
      annotations: {
        title: "Apply patch",
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
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
 * Registers `{ apply_patch }` in the Location until its scope closes.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Tools.layer(name, tool)
