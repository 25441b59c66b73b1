/**
 * The ripgrep engine: runs `rg` with fixed arguments, parses its output line by line and stops the child as soon
 * as `limit + 1` rows were seen. Interruption kills the child.
 *
 * @since 0.1.0
 */
import { spawn } from "node:child_process"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
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

const spawnRg = (input: { readonly rgPath: string; readonly cwd: string; readonly args: ReadonlyArray<string> }) =>
  spawn(input.rgPath, input.args as Array<string>, { cwd: input.cwd, stdio: ["ignore", "pipe", "pipe"] })

const run = <A>(input: Run<A>): Effect.Effect<ReadonlyArray<A>, SearchError | InvalidPatternError> =>
  Effect.async<ReadonlyArray<A>, SearchError | InvalidPatternError>((resume) => {
    const rows: Array<A> = []
    const stderr: Array<Buffer> = []
    let stderrBytes = 0
    let pending: Array<Buffer> = []
    let pendingBytes = 0
    let done = false
    let child: ReturnType<typeof spawnRg>
    try {
      child = spawnRg(input)
    } catch (error) {
      // Node refuses some arguments synchronously (a NUL byte, say); that is a failed search, not a defect.
      resume(Effect.fail(new SearchError({ message: (error as globalThis.Error).message, cause: error })))
      return
    }
    const finish = (result: Effect.Effect<ReadonlyArray<A>, SearchError | InvalidPatternError>) => {
      if (done) return
      done = true
      if (child.exitCode === null && child.signalCode === null) child.kill()
      resume(result)
    }
    const line = (data: Buffer) => {
      if (data.length === 0 || done) return
      const parsed = input.parse(data)
      if (Either.isLeft(parsed)) return finish(Effect.fail(parsed.left))
      if (parsed.right === undefined) return
      rows.push(parsed.right)
      if (rows.length > input.limit) finish(Effect.succeed(rows.slice(0, input.limit)))
    }
    child.stdout.on("data", (chunk: Buffer) => {
      let from = 0
      for (let newline = chunk.indexOf(10, from); newline !== -1 && !done; newline = chunk.indexOf(10, from)) {
        const piece = chunk.subarray(from, newline)
        from = newline + 1
        if (pending.length === 0) line(piece)
        else {
          pending.push(piece)
          const whole = Buffer.concat(pending, pendingBytes + piece.length)
          pending = []
          pendingBytes = 0
          line(whole)
        }
      }
      if (done || from >= chunk.length) return
      const rest = chunk.subarray(from)
      pending.push(rest)
      pendingBytes += rest.length
      // A record that is already too long fails now rather than after it is buffered whole.
      if (pendingBytes > MAX_RECORD_BYTES) line(Buffer.concat(pending, pendingBytes))
    })
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderrBytes >= STDERR_BYTES) return
      const kept = chunk.subarray(0, STDERR_BYTES - stderrBytes)
      stderr.push(kept)
      stderrBytes += kept.length
    })
    child.on("error", (error) => finish(Effect.fail(new SearchError({ message: error.message, cause: error }))))
    child.on("close", (code, signal) => {
      if (done) return
      if (pending.length > 0) line(Buffer.concat(pending, pendingBytes))
      if (done) return
      const text = Buffer.concat(stderr).toString("utf8")
      if (code === 0) return finish(Effect.succeed(rows))
      if (code === 1) return finish(Effect.succeed([]))
      if (code === 2) {
        const failure = input.onExit2(text)
        return finish(failure === undefined ? Effect.succeed(rows) : Effect.fail(failure))
      }
      finish(Effect.fail(new SearchError({ message: text.trim() || `ripgrep failed with code ${code ?? signal}` })))
    })
    return Effect.sync(() => {
      done = true
      if (child.exitCode === null && child.signalCode === null) child.kill()
    })
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
 */
export const available = (rgPath: string): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    let settled = false
    const settle = (value: boolean) => {
      if (settled) return
      settled = true
      resume(Effect.succeed(value))
    }
    let child: ReturnType<typeof spawn>
    try {
      child = spawn(rgPath, ["--version"], { stdio: "ignore" })
    } catch {
      return settle(false)
    }
    child.on("error", () => settle(false))
    child.on("close", (code) => settle(code === 0))
    return Effect.sync(() => {
      if (child.exitCode === null) child.kill()
    })
  })
