/**
 * The built-in Node engine: the same results, in the same order, as the ripgrep engine, without `rg`. The
 * walk reads ignore files per directory; files are read with bounded concurrency and searched in path order, and
 * the search stops as soon as `limit + 1` rows were seen.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as nodePath from "node:path"
import * as Effect from "effect/Effect"
import * as Globs from "./globs.js"
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
  type Submatch,
} from "./schema.js"
import * as Walk from "./walk.js"

const toError = (error: unknown): SearchError | InvalidPatternError =>
  error instanceof SearchError || error instanceof InvalidPatternError
    ? error
    : new SearchError({ message: error instanceof globalThis.Error ? error.message : String(error), cause: error })

const readFile = (file: string): Promise<Buffer | undefined> =>
  new Promise((resolve) => fs.readFile(file, (error, data) => resolve(error ? undefined : data)))

const readFileSync = (file: string): Buffer | undefined => {
  try {
    return fs.readFileSync(file)
  } catch {
    return undefined
  }
}

const globRun = async (input: GlobInput, signal: AbortSignal): Promise<ReadonlyArray<Entry>> => {
  let overrides: Globs.Overrides
  try {
    overrides = Globs.overrides([input.pattern])
  } catch (error) {
    throw new SearchError({ message: (error as globalThis.Error).message, cause: error })
  }
  const rows: Array<Entry> = []
  const walk: Walk.Walk = { cwd: input.cwd, root: ".", overrides, hidden: false, signal, stopped: false }
  await Walk.run(walk, (path) => {
    rows.push({ path: normalizePath(path), type: "file" })
    if (rows.length > input.limit) walk.stopped = true
  })
  return rows.slice(0, input.limit)
}

/** True when a `m`-flag prefilter over the whole text cannot miss a line match (no lookaround assertions). */
const prefilterable = (pattern: string): boolean => !/\(\?<?[=!]/.test(pattern)

/** The byte length of the JSON record ripgrep would print for one match. */
const recordBytes = (path: string, lines: string, line: number, offset: number, submatches: ReadonlyArray<Submatch>) =>
  Buffer.byteLength(
    JSON.stringify({
      type: "match",
      data: {
        path: { text: path },
        lines: { text: lines },
        line_number: line,
        absolute_offset: offset,
        submatches: submatches.map((submatch) => ({
          match: { text: submatch.text },
          start: submatch.start,
          end: submatch.end,
        })),
      },
    }),
  )

/** Searches one file's bytes line by line, appending matches; returns false once `limit + 1` matches exist. */
const searchBuffer = (
  data: Buffer,
  path: string,
  printed: string,
  regex: RegExp,
  prefilter: RegExp | undefined,
  matches: Array<Match>,
  limit: number,
): boolean => {
  if (data.indexOf(0) !== -1) return true
  const text = data.toString("utf8")
  if (prefilter !== undefined && !prefilter.test(text)) return true
  const ascii = text.length === data.length
  const entry: Entry = { path, type: "file" }
  let start = 0
  let byteStart = 0
  let lineNumber = 0
  while (start < text.length) {
    const newline = text.indexOf("\n", start)
    const end = newline === -1 ? text.length : newline
    const line = text.slice(start, end)
    lineNumber++
    regex.lastIndex = 0
    let found = regex.exec(line)
    if (found !== null) {
      const all: Array<Submatch> = []
      let byteCursor = 0
      let charCursor = 0
      while (found !== null) {
        const index = found.index
        const value = found[0]
        let startByte: number
        let endByte: number
        if (ascii) {
          startByte = index
          endByte = index + value.length
        } else {
          byteCursor += Buffer.byteLength(line.slice(charCursor, index))
          charCursor = index
          startByte = byteCursor
          endByte = startByte + Buffer.byteLength(value)
        }
        all.push({ text: value, start: startByte, end: endByte })
        if (value.length === 0) {
          const code = line.codePointAt(index)
          regex.lastIndex = index + (code !== undefined && code > 0xffff ? 2 : 1)
          if (regex.lastIndex > line.length) break
        }
        found = regex.exec(line)
      }
      const lines = newline === -1 ? line : `${line}\n`
      const offset = ascii ? start : byteStart
      // Cheap bound first: JSON escaping grows a byte to at most six.
      const rough = 6 * (printed.length + lines.length) + all.reduce((sum, s) => sum + 6 * s.text.length + 64, 160)
      if (rough > MAX_RECORD_BYTES / 3 && recordBytes(printed, lines, lineNumber, offset, all) > MAX_RECORD_BYTES) {
        throw new SearchError({ message: RECORD_LIMIT_MESSAGE })
      }
      matches.push({
        entry,
        line: lineNumber,
        offset,
        text: boundText(lines),
        submatches: all.length > MAX_SUBMATCHES ? all.slice(0, MAX_SUBMATCHES) : all,
      })
      if (matches.length > limit) return false
    }
    if (newline === -1) break
    if (!ascii) byteStart += Buffer.byteLength(line) + 1
    start = newline + 1
  }
  return true
}

const grepRun = async (input: GrepInput, signal: AbortSignal): Promise<ReadonlyArray<Match>> => {
  let regex: RegExp
  try {
    regex = new RegExp(input.pattern, "gu")
  } catch (error) {
    throw new InvalidPatternError({ pattern: input.pattern, message: (error as globalThis.Error).message })
  }
  const prefilter = prefilterable(input.pattern) ? new RegExp(input.pattern, "mu") : undefined
  let overrides: Globs.Overrides
  try {
    overrides = Globs.overrides(input.include === undefined ? [] : [input.include])
  } catch {
    // ripgrep refuses the glob and exits 2 without rows, which the engine reports as an empty result.
    return []
  }
  const matches: Array<Match> = []
  const root = input.file ?? "."
  if (input.file !== undefined) {
    const absolute = nodePath.resolve(input.cwd, input.file)
    const stats = await new Promise<fs.Stats | undefined>((resolve) =>
      fs.stat(absolute, (error, value) => resolve(error ? undefined : value)),
    )
    if (stats === undefined) return []
    if (!stats.isDirectory()) {
      // An explicitly named file is always searched: no glob, ignore or hidden rule applies.
      const data = await readFile(absolute)
      if (data !== undefined)
        searchBuffer(data, normalizePath(input.file), input.file, regex, prefilter, matches, input.limit)
      return matches.slice(0, input.limit)
    }
  }
  const walk: Walk.Walk = { cwd: input.cwd, root, overrides, hidden: true, signal, stopped: false }
  const printedPrefix = root === "." ? "./" : ""
  await Walk.run(walk, (path, absolute) => {
    // Small files read synchronously cost far less than a thread-pool round trip per call; the walk yields to the
    // event loop every few files so interruption and other fibers still run.
    const data = readFileSync(absolute)
    if (data !== undefined) {
      const normalized = normalizePath(path)
      if (!searchBuffer(data, normalized, printedPrefix + normalized, regex, prefilter, matches, input.limit)) {
        walk.stopped = true
      }
    }
  })
  return matches.slice(0, input.limit)
}

/**
 * The Node engine.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (): Interface => ({
  glob: (input) =>
    Effect.tryPromise({ try: (signal) => globRun(input, signal), catch: toError }) as Effect.Effect<
      ReadonlyArray<Entry>,
      SearchError
    >,
  grep: (input) => Effect.tryPromise({ try: (signal) => grepRun(input, signal), catch: toError }),
})
