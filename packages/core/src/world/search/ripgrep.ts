/**
 * The ripgrep engine: runs `rg` with fixed arguments through the process spawner (`ProcessGroup`), parses its
 * output line by line and stops the run — killing `rg`'s process group — as soon as `limit + 1` rows were seen or a
 * line is malformed. Interruption kills the group too.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ProcessGroup from "../../system/process-group.js"
import { normalizePath } from "./order.js"
import {
  boundText,
  type Entry,
  type GlobInput,
  type GrepInput,
  type Interface,
  InvalidPatternError,
  type Match,
  MAX_RECORD_BYTES,
  MAX_SUBMATCHES,
  RECORD_LIMIT_MESSAGE,
  SearchError,
} from "./schema.js"

/** Stderr kept for error messages. */
const STDERR_BYTES = 8 * 1024

/**
 * The arguments of a glob search.
 *
 * @since 0.1.0
 * @category utilities
 */
export const globArgs = (pattern: string): ReadonlyArray<string> => [
  "--no-config",
  "--files",
  "--sort=path",
  `--glob=${pattern}`,
  "--glob=!**/.git/**",
  ".",
]

/**
 * The arguments of a grep search.
 *
 * @since 0.1.0
 * @category utilities
 */
export const grepArgs = (
  pattern: string,
  include: string | undefined,
  file: string | undefined,
): ReadonlyArray<string> => [
  "--no-config",
  "--json",
  "--hidden",
  "--no-messages",
  "--sort=path",
  ...(include === undefined ? [] : [`--glob=${include}`]),
  "--glob=!**/.git/**",
  "--",
  pattern,
  file ?? ".",
]

const NonNegativeInt = Schema.Int.pipe(Schema.nonNegative())

const RawMatch = Schema.Struct({
  type: Schema.Literal("match"),
  data: Schema.Struct({
    path: Schema.Struct({ text: Schema.String }),
    lines: Schema.Struct({ text: Schema.String }),
    line_number: Schema.Int.pipe(Schema.positive()),
    absolute_offset: NonNegativeInt,
    submatches: Schema.Array(
      Schema.Struct({ match: Schema.Struct({ text: Schema.String }), start: NonNegativeInt, end: NonNegativeInt }),
    ),
  }),
})
const decodeMatch = Schema.decodeUnknownEither(RawMatch)

const isInvalidPattern = (stderr: string) =>
  stderr.includes("regex parse error") || stderr.includes("error parsing regex")

/** Parses one stdout line: a row, `undefined` to skip it, or a failure. */
type Parse<A> = (line: Buffer) => Either.Either<A | undefined, SearchError>

interface Run<A> {
  readonly rgPath: string
  readonly cwd: string
  readonly args: ReadonlyArray<string>
  readonly limit: number
  readonly parse: Parse<A>
  /** Maps exit 2 with this stderr to a failure; otherwise exit 2 keeps the rows. */
  readonly onExit2: (stderr: string) => SearchError | InvalidPatternError | undefined
}

/** Why a spawn failed, without the command line (the cause's own text: `spawn rg ENOENT`, a NUL byte, …). */
const spawnFailure = (error: ProcessGroup.AppProcessError): SearchError => {
  const cause = error.cause
  return new SearchError({ message: cause instanceof globalThis.Error ? cause.message : error.message, cause })
}

const run = <A>(input: Run<A>): Effect.Effect<ReadonlyArray<A>, SearchError | InvalidPatternError> =>
  Effect.suspend(() => {
    const rows: Array<A> = []
    let failed: SearchError | undefined
    const onLine = (line: Buffer): boolean => {
      if (line.length === 0) return true
      const parsed = input.parse(line)
      if (Either.isLeft(parsed)) {
        failed = parsed.left
        return false
      }
      if (parsed.right !== undefined) rows.push(parsed.right)
      return rows.length <= input.limit
    }
    return ProcessGroup.run(
      { command: input.rgPath, args: input.args, cwd: input.cwd },
      // Rows are kept by `onLine`; a record already too long is handed over (and refused) before it is whole.
      { maxOutputBytes: 0, maxErrorBytes: STDERR_BYTES, onLine, maxLineBytes: MAX_RECORD_BYTES },
    ).pipe(
      Effect.catchTags({
        "AppProcess.AppProcessError": (error) => Effect.fail(spawnFailure(error)),
        // No timeout is given, so none can pass; the search's caller bounds the time.
        "AppProcess.TimeoutError": (error) => Effect.die(error),
      }),
      Effect.flatMap((result): Effect.Effect<ReadonlyArray<A>, SearchError | InvalidPatternError> => {
        if (failed !== undefined) return Effect.fail(failed)
        if (rows.length > input.limit) return Effect.succeed(rows.slice(0, input.limit))
        const text = Buffer.from(result.stderr).toString("utf8")
        if (result.exitCode === 0) return Effect.succeed(rows)
        if (result.exitCode === 1) return Effect.succeed([])
        if (result.exitCode === 2) {
          const failure = input.onExit2(text)
          return failure === undefined ? Effect.succeed(rows) : Effect.fail(failure)
        }
        return Effect.fail(new SearchError({ message: text.trim() || `ripgrep failed with code ${result.exitCode}` }))
      }),
    )
  })

const parseGlob: Parse<Entry> = (line) => Either.right({ path: normalizePath(line.toString("utf8")), type: "file" })

const parseGrep: Parse<Match> = (line) => {
  if (line.length > MAX_RECORD_BYTES) return Either.left(new SearchError({ message: RECORD_LIMIT_MESSAGE }))
  let json: unknown
  try {
    json = JSON.parse(line.toString("utf8"))
  } catch (cause) {
    return Either.left(new SearchError({ message: "Invalid ripgrep JSON output", cause }))
  }
  if (typeof json !== "object" || json === null || (json as { readonly type?: unknown }).type !== "match") {
    return Either.right(undefined)
  }
  const decoded = decodeMatch(json)
  if (Either.isLeft(decoded)) {
    return Either.left(new SearchError({ message: "Invalid ripgrep match output", cause: decoded.left }))
  }
  const data = decoded.right.data
  return Either.right({
    entry: { path: normalizePath(data.path.text), type: "file" },
    line: data.line_number,
    offset: data.absolute_offset,
    text: boundText(data.lines.text),
    submatches: data.submatches
      .slice(0, MAX_SUBMATCHES)
      .map((submatch) => ({ text: submatch.match.text, start: submatch.start, end: submatch.end })),
  })
}

/**
 * The ripgrep engine for the binary at `rgPath`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (rgPath: string): Interface => ({
  glob: (input: GlobInput) =>
    run({
      rgPath,
      cwd: input.cwd,
      args: globArgs(input.pattern),
      limit: input.limit,
      parse: parseGlob,
      // An invalid glob makes rg exit 2 with a glob parse error; glob reports it.
      onExit2: (stderr) =>
        stderr.includes("error parsing glob") ? new SearchError({ message: stderr.trim() }) : undefined,
    }) as Effect.Effect<ReadonlyArray<Entry>, SearchError>,
  grep: (input: GrepInput) =>
    run({
      rgPath,
      cwd: input.cwd,
      args: grepArgs(input.pattern, input.include, input.file),
      limit: input.limit,
      parse: parseGrep,
      onExit2: (stderr) =>
        isInvalidPattern(stderr)
          ? new InvalidPatternError({ pattern: input.pattern, message: stderr.trim() })
          : undefined,
    }),
})

/**
 * Resolves when `rgPath --version` exits 0.
 *
 * @since 0.1.0
 * @category utilities
 */
export const available = (rgPath: string): Effect.Effect<boolean> =>
  ProcessGroup.run({ command: rgPath, args: ["--version"] }, { maxOutputBytes: 0, maxErrorBytes: 0 }).pipe(
    Effect.map((result) => result.exitCode === 0),
    Effect.orElseSucceed(() => false),
  )
