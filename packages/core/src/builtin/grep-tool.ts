/**
 * Model-facing V2 grep leaf: searches file contents by regular expression under the active Location, under a
 * directory `path`, or in one file `path` (such as an absolute managed tool-output file); a missing `path` searches
 * its parent directory, as in the reference. Unlike the reference, `path` is confined like `read` and the content
 * returned obeys the agent's `read` rules (see docs/trust/search.md). Order: resolve → `external_directory` (outside
 * targets) → `grep` → resolve again → search → `read` rules on the matched files (one ask for those that ask).
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
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
export const name = "grep"

/**
 * The model-facing description.
 *
 * @since 0.1.0
 * @category utilities
 */
export const description =
  "Search the contents of files with a regular expression, inside the active Location or in an absolute managed " +
  "tool-output file. Narrow the search with path, filter the files searched with an include glob, and cap the " +
  "number of matches with limit. Results are short file resources with line numbers and bounded previews of the lines."

/**
 * The input.
 *
 * @since 0.1.0
 * @category models
 */
export const Input = Schema.Struct({
  pattern: Schema.String.annotations({ description: "The regular expression to look for in file contents" }),
  path: Schema.optional(
    Schema.String.annotations({
      description:
        "A directory to search in, relative to the Location; an absolute directory outside it needs external_directory approval. When omitted, the active Location is searched.",
    }),
  ),
  include: Schema.optional(
    Schema.String.annotations({
      description: 'A glob selecting which files to search (for example, "*.js" or "*.{ts,tsx}")',
    }),
  ),
  limit: Schema.optional(
    Schema.Int.pipe(Schema.positive()).annotations({ description: "The largest number of matches to return" }),
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
 * The structured output: matches with paths relative to the Location directory.
 *
 * @since 0.1.0
 * @category models
 */
export const Structured = Schema.Array(Search.Match)
/**
 * @see Structured
 *
 * @since 0.1.0
 * @category models
 */
export type Structured = typeof Structured.Type

/**
 * The output: the matches that may be shown, and the files whose matches were withheld (with why).
 *
 * @since 0.1.0
 * @category models
 */
export const Output = Schema.Struct({
  matches: Structured,
  withheld: Schema.Array(Search.Withheld),
})
/**
 * @see Output
 *
 * @since 0.1.0
 * @category models
 */
export type Output = typeof Output.Type

/**
 * The model text: `Found <n> matches`, then each file's matches under its absolute path; or `No files found`. A
 * sentence on withheld files follows after a blank line.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toModelText = (
  directory: string,
  output: ReadonlyArray<Search.Match>,
  withheld: ReadonlyArray<Search.Withheld> = [],
): string => {
  const note = Search.withheldText(withheld)
  if (output.length === 0) return note === undefined ? "No files found" : `No files found\n\n${note}`
  const lines = [`Found ${output.length} matches`]
  let current: string | undefined
  for (const match of output) {
    if (match.entry.path !== current) {
      if (current !== undefined) lines.push("")
      current = match.entry.path
      lines.push(`${nodePath.resolve(directory, match.entry.path)}:`)
    }
    lines.push(`  Line ${match.line}: ${match.text}`)
  }
  if (note !== undefined) lines.push("", note)
  return lines.join("\n")
}

const statTarget = (target: string): Effect.Effect<fs.Stats | undefined> =>
  Effect.async<fs.Stats | undefined>((resume) => {
    fs.stat(target, (error, stats) => resume(Effect.succeed(error ? undefined : stats)))
  })

/**
 * Builds the `grep` tool over the current Location's services.
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
      const invalid =
        Search.invalidInput("pattern", input.pattern) ??
        (input.include === undefined ? undefined : Search.invalidInput("include", input.include))
      if (invalid !== undefined) return yield* invalid
      const target = yield* Search.confineRoot({
        mutation,
        permission,
        caller,
        path,
        authorize: permission.assert({
          ...caller,
          action: "grep",
          resources: [input.pattern],
          save: ["*"],
          // Keys stay present even when undefined, as in the reference.
          metadata: { root: ".", path: input.path, include: input.include, limit: input.limit },
        }),
      }).pipe(Effect.mapError((error) => (Search.isRootFailure(error) ? rootFailure(path, error) : error)))
      const stats = yield* statTarget(target.canonical)
      // A FIFO, socket or device is never opened: reading one may block forever. The walk skips them the same way.
      if (stats !== undefined && !stats.isDirectory() && !stats.isFile())
        return { matches: [], withheld: [{ files: 1, reason: "special" as const }] }
      const isDirectory = stats?.isDirectory() ?? false
      const cwd = isDirectory ? target.canonical : nodePath.dirname(target.canonical)
      const file = stats !== undefined && !isDirectory ? nodePath.basename(target.canonical) : undefined
      const found = yield* search.grep({
        cwd,
        pattern: input.pattern,
        file,
        include: input.include,
        limit: input.limit ?? Number.MAX_SAFE_INTEGER,
      })
      const shown = yield* Search.readable({
        permission,
        caller,
        root: mutation.root,
        cwd,
        matches: found,
        metadata: { tool: name, pattern: input.pattern },
      })
      return {
        matches: shown.matches.map((match): Search.Match => ({
          ...match,
          entry: { path: nodePath.relative(mutation.root, nodePath.resolve(cwd, match.entry.path)), type: "file" },
        })),
        withheld: shown.withheld,
      }
    }).pipe(
      Effect.mapError(
        PermissionV2.leafFailure((error) =>
          error instanceof Search.InvalidInputError
            ? new LLM.ToolFailure({ message: `Unable to grep: ${error.message.replace(/^The /, "the ")}`, error })
            : new LLM.ToolFailure({ message: `Unable to grep for ${input.pattern}`, error }),
        ),
      ),
    )
  }

  return Tool.make({
    description,
    annotations: { title: "Search file contents", readOnlyHint: true, openWorldHint: false },
    input: Input,
    output: Output,
    structured: Structured,
    toStructuredOutput: ({ output }) => output.matches,
    execute,
    toModelOutput: ({ output }) => [
      { type: "text", text: toModelText(mutation.root, output.matches, output.withheld) },
    ],
  })
})

const rootFailure = (path: string, error: { readonly _tag: string }): LLM.ToolFailure =>
  new LLM.ToolFailure({ message: Search.rootFailureMessage(path, error), error })

/**
 * Registers `grep` in the Location for the lifetime of the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Tools.layer(name, tool)
