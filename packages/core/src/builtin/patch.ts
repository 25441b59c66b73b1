/**
 * The `apply_patch` text format: `parse` turns a `*** Begin Patch … *** End Patch` envelope into add, delete and
 * update hunks, and `derive` applies an update's chunks to a file's text with progressively looser line matching.
 * `parse` throws `ParseError` on malformed input and `derive` throws `MatchError` when the file does not fit; both
 * carry the interface message the model needs to fix its patch.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A malformed patch; `message` is the interface's explanation (`Invalid patch line: …`).
 *
 * @since 0.3.0
 * @category errors
 */
export class ParseError extends Schema.TaggedError<ParseError>()("Patch.ParseError", {
  message: Schema.String,
}) {}

/**
 * An update whose context or old lines are not in the file; `detail` is the interface's explanation
 * (`Failed to find expected lines in …`).
 *
 * @since 0.3.0
 * @category errors
 */
export class MatchError extends Schema.TaggedError<MatchError>()("Patch.MatchError", {
  path: Schema.String,
  detail: Schema.String,
}) {
  override get message(): string {
    return this.detail
  }
}

const invalid = (message: string): ParseError => new ParseError({ message })

/**
 * One chunk of an update: old lines to find, new lines to put in their place.
 *
 * @since 0.1.0
 * @category models
 */
export interface UpdateChunk {
  readonly oldLines: ReadonlyArray<string>
  readonly newLines: ReadonlyArray<string>
  /** A single line to seek before matching `oldLines` (the text after `@@`). */
  readonly changeContext?: string
  /** The chunk is anchored at the end of the file (`*** End of File`). */
  readonly endOfFile?: boolean
}

/**
 * One file operation of a patch.
 *
 * @since 0.1.0
 * @category models
 */
export type Hunk =
  | { readonly type: "add"; readonly path: string; readonly contents: string }
  | { readonly type: "delete"; readonly path: string }
  | {
      readonly type: "update"
      readonly path: string
      readonly movePath?: string
      readonly chunks: ReadonlyArray<UpdateChunk>
    }

/**
 * The derived text of an update, without a BOM, and whether the file carries one.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileUpdate {
  readonly content: string
  readonly bom: boolean
}

const BEGIN = "*** Begin Patch"
const END = "*** End Patch"
const ADD = "*** Add File:"
const DELETE = "*** Delete File:"
const UPDATE = "*** Update File:"
const MOVE = "*** Move to:"
const END_OF_FILE = "*** End of File"
const HEREDOC = /^(?:cat\s+)?<<['"]?(\w+)['"]?\s*\n([\s\S]*?)\n\1\s*$/

/**
 * Removes a `cat <<'EOF' … EOF` style wrapper, keeping its body.
 *
 * @since 0.1.0
 * @category utilities
 * @internal
 */
export const stripHeredoc = (input: string): string => HEREDOC.exec(input)?.[2] ?? input

/** The header a line opens, ignoring leading whitespace (models indent headers), or `undefined`. */
const headerOf = (line: string): string | undefined => {
  const trimmed = line.trimStart()
  for (const header of [ADD, DELETE, UPDATE, MOVE]) if (trimmed.startsWith(header)) return header
  if (trimmed.trimEnd() === END_OF_FILE) return END_OF_FILE
  if (trimmed.trimEnd() === END) return END
  return undefined
}

/** True iff `line` can be a line of a chunk body: context, removal, addition, or blank (empty context). */
const isChunkLine = (line: string): boolean =>
  line === "" || line.startsWith(" ") || line.startsWith("-") || line.startsWith("+")

const isChunkHeader = (line: string): boolean => line.startsWith("@@")

/**
 * Parses a patch; throws `ParseError` with the interface message when it is malformed. Besides the strict grammar it
 * accepts the forms models trained on Codex write: indented `***` headers, a blank line inside a chunk (an empty
 * context line), a first chunk without `@@`, and blank lines before `*** End Patch` or between file operations.
 * An `@@` chunk with no lines is refused. See docs/built-ins.md.
 *
 * @since 0.1.0
 * @category utilities
 */
export const parse = (patchText: string): ReadonlyArray<Hunk> => {
  const lines = stripHeredoc(patchText.trim()).split("\n")
  const begin = lines.findIndex((line) => line.trim() === BEGIN)
  const end = lines.findIndex((line) => line.trim() === END)
  if (begin === -1 || end === -1 || begin >= end) throw invalid("Invalid patch format: missing Begin/End markers")
  const body = lines.slice(0, end)
  const hunks: Array<Hunk> = []
  let index = begin + 1
  while (index < end) {
    const line = body[index]!
    const header = headerOf(line)
    const argument = (name: string) => line.trimStart().slice(name.length).trim()
    if (header === undefined && line.trim() === "") {
      index++
    } else if (header === ADD) {
      const path = argument(ADD)
      if (path === "") throw invalid("Invalid add file path")
      const contents: Array<string> = []
      index++
      while (index < end && headerOf(body[index]!) === undefined) {
        const added = body[index]!
        if (added.startsWith("+")) contents.push(added.slice(1))
        // Blank lines are tolerated only at the very end of the file's body.
        else if (added.trim() !== "" || !onlyBlankBefore(body, nextNonBlank(body, index, end)))
          throw invalid(`Invalid add file line: ${added}`)
        index++
      }
      hunks.push({ type: "add", path, contents: contents.join("\n") })
    } else if (header === DELETE) {
      const path = argument(DELETE)
      if (path === "") throw invalid("Invalid delete file path")
      hunks.push({ type: "delete", path })
      index++
    } else if (header === UPDATE) {
      const path = argument(UPDATE)
      if (path === "") throw invalid("Invalid update file path")
      index++
      let movePath: string | undefined
      if (index < end && headerOf(body[index]!) === MOVE) {
        movePath = body[index]!.trimStart().slice(MOVE.length).trim()
        if (movePath === "") throw invalid("Invalid move file path")
        index++
      }
      const parsed = parseChunks(path, body, index, end)
      if (parsed.chunks.length === 0) throw invalid(`Invalid update hunk for ${path}: expected at least one @@ chunk`)
      index = parsed.next
      hunks.push(
        movePath === undefined
          ? { type: "update", path, chunks: parsed.chunks }
          : { type: "update", path, movePath, chunks: parsed.chunks },
      )
    } else {
      throw invalid(`Invalid patch line: ${line}`)
    }
  }
  return hunks
}

const parseChunks = (path: string, lines: ReadonlyArray<string>, start: number, end: number) => {
  const chunks: Array<UpdateChunk> = []
  let index = start
  while (index < end && headerOf(lines[index]!) === undefined) {
    const first = lines[index]!
    let context = ""
    if (isChunkHeader(first)) {
      context = first.slice(2).trim()
      index++
    } else if (chunks.length > 0 || first === "" || !isChunkLine(first)) {
      // A chunk without `@@` is accepted only first, and only when it starts with a change or context line.
      if (first.trim() === "" && chunks.length > 0) {
        index++
        continue
      }
      throw invalid(`Invalid update file line: ${first}`)
    }
    const oldLines: Array<string> = []
    const newLines: Array<string> = []
    let endOfFile = false
    while (index < end && !isChunkHeader(lines[index]!)) {
      const line = lines[index]!
      const header = headerOf(line)
      if (header === END_OF_FILE) {
        endOfFile = true
        index++
        break
      }
      if (header !== undefined) break
      if (line === "") {
        oldLines.push("")
        newLines.push("")
      } else if (line.startsWith(" ")) {
        oldLines.push(line.slice(1))
        newLines.push(line.slice(1))
      } else if (line.startsWith("-")) oldLines.push(line.slice(1))
      else if (line.startsWith("+")) newLines.push(line.slice(1))
      else throw invalid(`Invalid update chunk line: ${line}`)
      index++
    }
    // Blank lines that only separate this chunk from the next header are not context.
    while (oldLines.length > 0 && oldLines.at(-1) === "" && newLines.at(-1) === "" && onlyBlankBefore(lines, index)) {
      oldLines.pop()
      newLines.pop()
    }
    if (oldLines.length === 0 && newLines.length === 0) {
      throw invalid(`Invalid update hunk for ${path}: an @@ chunk must contain at least one line`)
    }
    chunks.push({
      oldLines,
      newLines,
      ...(context === "" ? {} : { changeContext: context }),
      ...(endOfFile ? { endOfFile: true } : {}),
    })
  }
  return { chunks, next: index }
}

/** The index of the first non-blank line at or after `index` (or `end`). */
const nextNonBlank = (lines: ReadonlyArray<string>, index: number, end: number): number => {
  let next = index
  while (next < end && lines[next]!.trim() === "") next++
  return next
}

/** True iff the chunk body just read ended with blank lines that run up to a header or the end of the patch. */
const onlyBlankBefore = (lines: ReadonlyArray<string>, index: number): boolean =>
  index >= lines.length || headerOf(lines[index]!) !== undefined || isChunkHeader(lines[index]!)

type Comparator = (actual: string, expected: string) => boolean

/**
 * Maps typographic punctuation to ASCII: single and double quotes, dashes, ellipsis and no-break space.
 *
 * @since 0.1.0
 * @category utilities
 */
export const normalizePunctuation = (value: string): string =>
  value
    .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
    .replace(/[\u2010-\u2015]/g, "-")
    .replace(/\u2026/g, "...")
    .replace(/\u00A0/g, " ")

/** Line comparators, strictest first. */
const COMPARATORS: ReadonlyArray<Comparator> = [
  (a, b) => a === b,
  (a, b) => a.trimEnd() === b.trimEnd(),
  (a, b) => a.trim() === b.trim(),
  (a, b) => normalizePunctuation(a.trim()) === normalizePunctuation(b.trim()),
]

const matchesAt = (lines: ReadonlyArray<string>, pattern: ReadonlyArray<string>, offset: number, compare: Comparator) =>
  pattern.every((line, index) => compare(lines[offset + index]!, line))

/** The first index ≥ `start` where `pattern` matches, trying each comparator in turn; -1 when none. */
const seek = (
  lines: ReadonlyArray<string>,
  pattern: ReadonlyArray<string>,
  start: number,
  endOfFile = false,
): number => {
  if (pattern.length === 0) return -1
  for (const compare of COMPARATORS) {
    if (endOfFile) {
      const offset = lines.length - pattern.length
      if (offset >= start && matchesAt(lines, pattern, offset, compare)) return offset
    }
    for (let offset = start; offset <= lines.length - pattern.length; offset++) {
      if (matchesAt(lines, pattern, offset, compare)) return offset
    }
  }
  return -1
}

const splitBom = (text: string): FileUpdate =>
  text.startsWith("\uFEFF") ? { bom: true, content: text.slice(1) } : { bom: false, content: text }

/**
 * Applies `chunks` to `original`; throws `MatchError` when a context or the old lines cannot be found.
 *
 * @since 0.1.0
 * @category utilities
 */
export const derive = (path: string, chunks: ReadonlyArray<UpdateChunk>, original: string): FileUpdate => {
  const source = splitBom(original)
  const lines = source.content.split("\n")
  const trailingNewline = lines.at(-1) === ""
  if (trailingNewline) lines.pop()
  const replacements: Array<readonly [start: number, remove: number, insert: ReadonlyArray<string>]> = []
  let cursor = 0
  for (const chunk of chunks) {
    if (chunk.changeContext !== undefined) {
      const found = seek(lines, [chunk.changeContext], cursor)
      if (found === -1)
        throw new MatchError({ path, detail: `Failed to find context '${chunk.changeContext}' in ${path}` })
      cursor = found + 1
    }
    if (chunk.oldLines.length === 0) {
      replacements.push([lines.length, 0, chunk.newLines])
      continue
    }
    let oldLines = chunk.oldLines
    let newLines = chunk.newLines
    let found = seek(lines, oldLines, cursor, chunk.endOfFile)
    if (found === -1 && oldLines.at(-1) === "") {
      oldLines = oldLines.slice(0, -1)
      if (newLines.at(-1) === "") newLines = newLines.slice(0, -1)
      found = seek(lines, oldLines, cursor, chunk.endOfFile)
    }
    if (found === -1)
      throw new MatchError({ path, detail: `Failed to find expected lines in ${path}:\n${chunk.oldLines.join("\n")}` })
    replacements.push([found, oldLines.length, newLines])
    cursor = found + oldLines.length
  }
  const updated = [...lines]
  const ordered = [...replacements].sort((a, b) => a[0] - b[0])
  for (let i = ordered.length - 1; i >= 0; i--) {
    const [start, remove, insert] = ordered[i]!
    updated.splice(start, remove, ...insert)
  }
  if (trailingNewline || updated.at(-1) !== "") updated.push("")
  const result = splitBom(updated.join("\n"))
  return { content: result.content, bom: source.bom || result.bom }
}

/**
 * `text` without leading BOM, prefixed with exactly one when `bom` is set.
 *
 * @since 0.1.0
 * @category utilities
 */
export const joinBom = (text: string, bom: boolean): string => {
  const stripped = splitBom(text).content
  return bom ? `\uFEFF${stripped}` : stripped
}
