/**
 * Model-facing V2 grep leaf: searches file contents by regular expression under the active Location, under a
 * directory `path`, or in one file `path` (such as an absolute managed tool-output file). `path` is not confined
 * to the Location, as in the reference; a missing `path` searches its parent directory.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { Effect, Schema } from "effect"
import * as LLM from "../values/llm.js"
import * as Location from "../place/location.js"
import * as PermissionV2 from "../policy/permission.js"
import * as Search from "../world/search/search.js"
import * as Tool from "../tool/tool.js"
import * as Tools from "../tool/tools.js"

/** The registered tool name. */
export const name = "grep"

/** The model-facing description. */
export const description =
  "Search the contents of files with a regular expression, inside the active Location or in an absolute managed " +
  "tool-output file. Narrow the search with path, filter the files searched with an include glob, and cap the " +
  "number of matches with limit. Results are short file resources with line numbers and bounded previews of the lines."

/** The input. */
export const Input = Schema.Struct({
  pattern: Schema.String.annotations({ description: "The regular expression to look for in file contents" }),
  path: Schema.optional(
    Schema.String.annotations({
      description: "A relative directory to search in. When omitted, the active Location is searched.",
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
/** @see Input */
export type Input = typeof Input.Type

/** The output, which is also the structured output: matches with paths relative to the Location directory. */
export const Output = Schema.Array(Search.Match)
/** @see Output */
export type Output = typeof Output.Type

/** The model text: `Found <n> matches`, then each file's matches under its absolute path; or `No files found`. */
export const toModelText = (directory: string, output: ReadonlyArray<Search.Match>): string => {
  if (output.length === 0) return "No files found"
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
  return lines.join("\n")
}

const statTarget = (target: string): Effect.Effect<fs.Stats | undefined> =>
  Effect.async<fs.Stats | undefined>((resume) => {
    fs.stat(target, (error, stats) => resume(Effect.succeed(error ? undefined : stats)))
  })

/** Builds the `grep` tool over the current Location's services. */
export const tool = Effect.gen(function* () {
  const permission = yield* PermissionV2.Service
  const location = yield* Location.Service
  const search = yield* Search.Service

  const execute = (input: Input, context: Tool.Context): Effect.Effect<Output, LLM.ToolFailure> =>
    Effect.gen(function* () {
      yield* permission.assert({
        ...PermissionV2.fromToolCall(context),
        action: "grep",
        resources: [input.pattern],
        save: ["*"],
        // Keys stay present even when undefined, as in the reference.
        metadata: { root: ".", path: input.path, include: input.include, limit: input.limit },
      })
      const target = nodePath.resolve(location.directory, input.path ?? ".")
      const stats = yield* statTarget(target)
      const isDirectory = stats?.isDirectory() ?? false
      const cwd = isDirectory ? target : nodePath.dirname(target)
      const file = stats !== undefined && !isDirectory ? nodePath.basename(target) : undefined
      const matches = yield* search.grep({
        cwd,
        pattern: input.pattern,
        file,
        include: input.include,
        limit: input.limit ?? Number.MAX_SAFE_INTEGER,
      })
      return matches.map((match): Search.Match => ({
        ...match,
        entry: { path: nodePath.relative(location.directory, nodePath.resolve(cwd, match.entry.path)), type: "file" },
      }))
    }).pipe(
      Effect.mapError(
        PermissionV2.leafFailure(
          (error) => new LLM.ToolFailure({ message: `Unable to grep for ${input.pattern}`, error }),
        ),
      ),
    )

  return Tool.make({
    description,
    input: Input,
    output: Output,
    execute,
    toModelOutput: ({ output }) => [{ type: "text", text: toModelText(location.directory, output) }],
  })
})

/** Registers `grep` in the Location for the lifetime of the layer. */
export const layer = Tools.layer(name, tool)
