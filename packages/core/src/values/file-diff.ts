/**
 * The per-file change summary that mutating tools (edit, apply_patch) report: a unified two-file patch plus the
 * added and removed line counts of a line diff, as produced by the `diff` library.
 *
 * @since 0.1.0
 */
import { createTwoFilesPatch, diffLines } from "diff"
import * as Schema from "effect/Schema"

/**
 * How a file changed.
 *
 * @since 0.1.0
 * @category models
 */
export const Status = Schema.Literal("added", "deleted", "modified")
/**
 * @see Status
 *
 * @since 0.1.0
 * @category models
 */
export type Status = typeof Status.Type

/**
 * One file's change summary.
 *
 * @since 0.1.0
 * @category models
 */
export const Info = Schema.Struct({
  file: Schema.optional(Schema.String),
  patch: Schema.optional(Schema.String),
  additions: Schema.Number,
  deletions: Schema.Number,
  status: Schema.optional(Status),
})
/**
 * @see Info
 *
 * @since 0.1.0
 * @category models
 */
export type Info = typeof Info.Type

/**
 * Added and removed line counts of a line diff of `before` against `after`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const counts = (before: string, after: string): { readonly additions: number; readonly deletions: number } => {
  let additions = 0
  let deletions = 0
  for (const change of diffLines(before, after)) {
    if (change.added) additions += change.count ?? 0
    else if (change.removed) deletions += change.count ?? 0
  }
  return { additions, deletions }
}

/**
 * The unified patch of `before` → `after`, with `file` as both the old and the new file name.
 *
 * @since 0.1.0
 * @category utilities
 */
export const patch = (file: string, before: string, after: string): string =>
  createTwoFilesPatch(file, file, before, after)

/**
 * Builds the full `Info` of one file: `file`, its patch, its status and its line counts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (input: {
  readonly file: string
  readonly before: string
  readonly after: string
  readonly status: Status
}): Info => ({
  file: input.file,
  patch: patch(input.file, input.before, input.after),
  status: input.status,
  ...counts(input.before, input.after),
})
