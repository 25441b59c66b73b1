/**
 * The model's view of a `read` page (see docs/built-ins.md, "read pages"): the limits, the page schemas and the
 * functions that render a page. The pager measures every line with the same functions that render it, so a page
 * always fits the output limits and `ToolOutputStore.bound` never cuts it. The line and byte limits are
 * `ToolOutputStore`'s.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import * as ToolOutputStore from "../../tool/tool-output-store.js"

/**
 * Most lines (and directory entries) in one page.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_READ_LINES: number = ToolOutputStore.MAX_LINES
/**
 * Byte budget of one text page, and the size above which a file is always paged (50 KiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_READ_BYTES: number = ToolOutputStore.MAX_BYTES
/**
 * Largest image read into memory (20 MiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_MEDIA_INGEST_BYTES = 20 * 1024 * 1024
/**
 * Longest line kept, in UTF-16 code units.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LINE_LENGTH = 2000
/**
 * Appended to a line cut at `MAX_LINE_LENGTH`.
 *
 * @since 0.1.0
 * @category constants
 */
export const LINE_SUFFIX = `... (line truncated to ${MAX_LINE_LENGTH} chars)`

const PositiveInt = Schema.Int.pipe(Schema.positive())

/**
 * Where a cut line continues: `column` is the 1-based column of its first unshown character, `length` the
 * line's length in characters (UTF-16 units).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Cut = Schema.Struct({
  line: PositiveInt,
  column: PositiveInt,
  length: Schema.Int,
})
/**
 * @see Cut
 *
 * @since 0.1.0
 * @category schemas
 */
export type Cut = typeof Cut.Type

/**
 * A whole file: UTF-8 text, or base64 media. `uri` is the `file://` URL of the real path.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Content = Schema.Struct({
  uri: Schema.String,
  name: Schema.optional(Schema.String),
  content: Schema.String,
  encoding: Schema.Literal("utf8", "base64"),
  mime: Schema.String,
})
/**
 * @see Content
 *
 * @since 0.1.0
 * @category schemas
 */
export type Content = typeof Content.Type

/**
 * One page of a text file; `next` is the 1-based line to continue from. `content` is the shown lines joined by
 * `\n` (a cut line ends with its `lineSuffix`); `column` is where the first line starts when not at 1, `last` the
 * number of the last line shown (`offset - 1` for none) and `cut` says where each cut line goes on.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TextPage = Schema.Struct({
  type: Schema.Literal("text-page"),
  content: Schema.String,
  mime: Schema.String,
  offset: PositiveInt,
  truncated: Schema.Boolean,
  next: Schema.optional(PositiveInt),
  column: Schema.optional(PositiveInt),
  last: Schema.optional(Schema.Int),
  cut: Schema.optional(Schema.Array(Cut)),
})
/**
 * @see TextPage
 *
 * @since 0.1.0
 * @category schemas
 */
export type TextPage = typeof TextPage.Type

/**
 * One directory entry; directory paths end with the platform separator.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Entry = Schema.Struct({
  path: Schema.String,
  type: Schema.Literal("file", "directory"),
})
/**
 * @see Entry
 *
 * @since 0.1.0
 * @category schemas
 */
export type Entry = typeof Entry.Type

/**
 * One page of a directory listing; `next` is the 1-based entry to continue from.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListPage = Schema.Struct({
  entries: Schema.Array(Entry),
  truncated: Schema.Boolean,
  next: Schema.optional(PositiveInt),
})
/**
 * @see ListPage
 *
 * @since 0.1.0
 * @category schemas
 */
export type ListPage = typeof ListPage.Type

/**
 * The suffix a line cut after `shown` characters gets (the `LINE_SUFFIX` text when `shown` is the cap).
 *
 * @since 0.1.0
 * @category pages
 */
export const lineSuffix = (shown: number): string => `... (line truncated to ${shown} chars)`

/**
 * The model-facing hint after a cut line's suffix: how to read the rest of it.
 *
 * @since 0.1.0
 * @category pages
 */
export const continuation = (cut: Cut): string =>
  ` [line ${cut.line} has ${cut.length} chars; read the rest with offset=${cut.line} column=${cut.column}]`

/**
 * One numbered line as the model reads it: `<n>: <text>`, or `<n> (from column <c>): <text>` mid-line.
 *
 * @since 0.1.0
 * @category pages
 */
export const renderLine = (line: number, text: string, column?: number, cut?: Cut): string =>
  `${line}${column === undefined || column === 1 ? "" : ` (from column ${column})`}: ${text}${
    cut === undefined ? "" : continuation(cut)
  }`

/**
 * The last line of a text page: which lines it shows and where to continue.
 *
 * @since 0.1.0
 * @category pages
 */
export const textTrailer = (first: number, last: number, next?: number): string =>
  last < first
    ? "(empty file)"
    : next === undefined
      ? `(lines ${first}-${last} shown; end of file)`
      : `(lines ${first}-${last} shown; the file continues: read with offset=${next})`

/**
 * The last line of a directory page.
 *
 * @since 0.1.0
 * @category pages
 */
export const listTrailer = (first: number, last: number, next?: number): string =>
  last < first
    ? first === 1
      ? "(empty directory)"
      : `(no entries from ${first})`
    : next === undefined
      ? `(entries ${first}-${last} shown; end of directory)`
      : `(entries ${first}-${last} shown; more follow: read with offset=${next})`

const WORST = Number.MAX_SAFE_INTEGER
/** Bytes and lines a trailer may take after the content: a blank line, then the trailer line. */
const TRAILER_BYTES =
  Math.max(Buffer.byteLength(textTrailer(WORST, WORST, WORST)), Buffer.byteLength(listTrailer(WORST, WORST, WORST))) + 2
const TRAILER_LINES = 2

/**
 * The output limits a page must fit (`tool_output.max_lines` / `max_bytes`).
 *
 * @since 0.1.0
 * @category pages
 */
export type Limits = ToolOutputStore.Limits

/**
 * The default limits (those of `ToolOutputStore`).
 *
 * @since 0.1.0
 * @category pages
 */
export const DEFAULT_LIMITS: Limits = { maxLines: ToolOutputStore.MAX_LINES, maxBytes: ToolOutputStore.MAX_BYTES }

/**
 * The room a page's numbered lines have: lines and bytes (separators included) left after the trailer.
 *
 * @since 0.3.0
 * @category pages
 */
export const room = (limits: Limits, limit?: number): { readonly lines: number; readonly bytes: number } => ({
  lines: Math.max(1, Math.min(limit ?? MAX_READ_LINES, MAX_READ_LINES, limits.maxLines - TRAILER_LINES)),
  bytes: Math.max(1, Math.min(MAX_READ_BYTES, limits.maxBytes) - TRAILER_BYTES),
})

/**
 * `lines` and, after a blank line, `trailer`.
 *
 * @since 0.3.0
 * @category pages
 */
export const withTrailer = (lines: ReadonlyArray<string>, trailer: string): string =>
  lines.length === 0 ? trailer : `${lines.join("\n")}\n\n${trailer}`

/**
 * The lines of a whole text as pages count them: split on `\n`, a trailing `\r` dropped, no empty last line.
 *
 * @since 0.3.0
 * @category pages
 */
export const splitLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.split("\n")
  if (lines.at(-1) === "") lines.pop()
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line))
}

/**
 * The model's text of a whole small file: every line numbered, then the trailer.
 *
 * @since 0.1.0
 * @category pages
 */
export const renderContent = (content: string): string => {
  const lines = splitLines(content)
  return withTrailer(
    lines.map((line, index) => renderLine(index + 1, line)),
    textTrailer(1, lines.length),
  )
}

/**
 * The model's text of a text page: its numbered lines (cut lines say how to read on), then the trailer.
 *
 * @since 0.1.0
 * @category pages
 */
export const renderTextPage = (page: TextPage): string => {
  const texts = page.content === "" && page.last === page.offset - 1 ? [] : page.content.split("\n")
  const cuts = new Map((page.cut ?? []).map((cut) => [cut.line, cut]))
  const rendered = texts.map((text, index) => {
    const line = page.offset + index
    return renderLine(line, text, index === 0 ? page.column : undefined, cuts.get(line))
  })
  return withTrailer(rendered, textTrailer(page.offset, page.offset + texts.length - 1, page.next))
}

/**
 * The model's text of a directory page: one entry per line, then the trailer.
 *
 * @since 0.1.0
 * @category pages
 */
export const renderListPage = (page: ListPage, offset = 1): string =>
  withTrailer(
    page.entries.map((entry) => entry.path),
    listTrailer(offset, offset + page.entries.length - 1, page.next),
  )

/**
 * True iff the whole `content` projected for the model fits `limits` with no line over the cap.
 *
 * @since 0.3.0
 * @category pages
 */
export const fitsWhole = (content: string, limits: Limits): boolean => {
  const lines = splitLines(content)
  const space = room(limits)
  if (lines.length > space.lines) return false
  if (lines.some((line) => line.length > MAX_LINE_LENGTH)) return false
  return Buffer.byteLength(renderContent(content)) <= space.bytes + TRAILER_BYTES
}
