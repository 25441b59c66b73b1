/**
 * The filesystem part of `read`: inspect a path, read a file (media sniffing, binary detection, strict UTF-8,
 * line paging) and list a directory page. It is a service so `read` tests can substitute it. Files are opened without
 * following a final symlink and the descriptor is verified to be the canonical path asked for before a byte is read;
 * a directory is listed through its verified descriptor (see docs/trust/check-at-use.md).
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as mime from "mime-types"
import { isWithin } from "../world/location-mutation.js"
import * as VerifiedFile from "../world/verified-file.js"

/**
 * Most lines (and directory entries) in one page.
 *
 * @since 0.1.0
 */
export const MAX_READ_LINES = 2000
/**
 * Byte budget of one text page, and the size above which a file is always paged (50 KiB).
 *
 * @since 0.1.0
 */
export const MAX_READ_BYTES = 50 * 1024
/**
 * Largest image read into memory (20 MiB).
 *
 * @since 0.1.0
 */
export const MAX_MEDIA_INGEST_BYTES = 20 * 1024 * 1024
/**
 * Longest line kept, in UTF-16 code units.
 *
 * @since 0.1.0
 */
export const MAX_LINE_LENGTH = 2000
/**
 * Appended to a line cut at `MAX_LINE_LENGTH`.
 *
 * @since 0.1.0
 */
export const LINE_SUFFIX = `... (line truncated to ${MAX_LINE_LENGTH} chars)`

const CHUNK = 64 * 1024

/**
 * The file is binary (or a PDF, or an unsupported media type).
 *
 * @since 0.1.0
 */
export class BinaryFileError extends Schema.TaggedError<BinaryFileError>()("ReadTool.BinaryFileError", {
  resource: Schema.String,
}) {
  override get message(): string {
    return `Cannot read binary file: ${this.resource}`
  }
}

/**
 * An image is larger than `maximumBytes`.
 *
 * @since 0.1.0
 */
export class MediaIngestLimitError extends Schema.TaggedError<MediaIngestLimitError>()(
  "ReadTool.MediaIngestLimitError",
  {
    resource: Schema.String,
    maximumBytes: Schema.Number,
  },
) {
  override get message(): string {
    return `Media exceeds ${this.maximumBytes} byte ingestion limit: ${this.resource}`
  }
}

/**
 * The text is not valid UTF-8.
 *
 * @since 0.1.0
 */
export class MalformedUtf8Error extends Schema.TaggedError<MalformedUtf8Error>()("ReadTool.MalformedUtf8Error", {
  resource: Schema.String,
}) {
  override get message(): string {
    return `File is not valid UTF-8: ${this.resource}`
  }
}

/**
 * A text page was requested past the last line.
 *
 * @since 0.1.0
 */
export class OffsetOutOfRangeError extends Schema.TaggedError<OffsetOutOfRangeError>()(
  "ReadTool.OffsetOutOfRangeError",
  {
    offset: Schema.Number,
  },
) {
  override get message(): string {
    return `Offset ${this.offset} is out of range`
  }
}

/**
 * A `column` was given past the end of the line it names.
 *
 * @since 0.1.0
 */
export class ColumnOutOfRangeError extends Schema.TaggedError<ColumnOutOfRangeError>()(
  "ReadTool.ColumnOutOfRangeError",
  {
    line: Schema.Number,
    column: Schema.Number,
    length: Schema.Number,
  },
) {
  override get message(): string {
    return `Column ${this.column} is past the end of line ${this.line} (${this.length} chars)`
  }
}

/**
 * The path is not of the kind the operation needs.
 *
 * @since 0.1.0
 */
export class PathKindError extends Schema.TaggedError<PathKindError>()("ReadTool.PathKindError", {
  resource: Schema.String,
  expected: Schema.Literal("a file", "a file or directory"),
}) {
  override get message(): string {
    return `Path is not ${this.expected}: ${this.resource}`
  }
}

/**
 * The failures of `inspect`.
 *
 * @since 0.1.0
 */
export type InspectError = PlatformError | PathKindError
/**
 * The failures of `read`.
 *
 * @since 0.1.0
 */
export type ReadError =
  | PlatformError
  | BinaryFileError
  | MediaIngestLimitError
  | MalformedUtf8Error
  | OffsetOutOfRangeError
  | ColumnOutOfRangeError
  | PathKindError
  | VerifiedFile.PathChangedError

const PositiveInt = Schema.Int.pipe(Schema.positive())

/**
 * Where a cut line continues: `column` is the 1-based column of its first unshown character, `length` the
 * line's length in characters (UTF-16 units).
 *
 * @since 0.1.0
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
 */
export type Cut = typeof Cut.Type

/**
 * A whole file: UTF-8 text, or base64 media. `uri` is the `file://` URL of the real path.
 *
 * @since 0.1.0
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
 */
export type Content = typeof Content.Type

/**
 * One page of a text file; `next` is the 1-based line to continue from. `content` is the shown lines joined by
 * `\n` (a cut line ends with its `lineSuffix`); `column` is where the first line starts when not at 1, `last` the
 * number of the last line shown (`offset - 1` for none) and `cut` says where each cut line goes on.
 *
 * @since 0.1.0
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
 */
export type TextPage = typeof TextPage.Type

/**
 * One directory entry; directory paths end with the platform separator.
 *
 * @since 0.1.0
 */
export const Entry = Schema.Struct({
  path: Schema.String,
  type: Schema.Literal("file", "directory"),
})
/**
 * @see Entry
 *
 * @since 0.1.0
 */
export type Entry = typeof Entry.Type

/**
 * One page of a directory listing; `next` is the 1-based entry to continue from.
 *
 * @since 0.1.0
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
 */
export type ListPage = typeof ListPage.Type

/**
 * Which page to read: 1-based line (or entry) `offset` and count `limit`, the 1-based `column` within the first line,
 * and the output `limits` the page's model text must fit (`DEFAULT_LIMITS` when absent).
 *
 * @since 0.1.0
 */
export interface Page {
  readonly offset?: number | undefined
  readonly limit?: number | undefined
  readonly column?: number | undefined
  readonly limits?: Limits | undefined
}

/**
 * The read filesystem operations.
 *
 * @since 0.1.0
 */
export interface Interface {
  /** Stats `path` (following links): a file or a directory, else `PathKindError`. */
  readonly inspect: (path: string) => Effect.Effect<"file" | "directory", InspectError>
  /**
   * Reads the file at the canonical `path` as Content (small text, media) or a TextPage; `resource` names it in
   * errors. A symlink or a moved directory on the way fails with `PathChangedError` before anything is read.
   */
  readonly read: (path: string, resource: string, page?: Page) => Effect.Effect<Content | TextPage, ReadError>
  /** Lists one page of the directory at the canonical `path` (same check as `read`). */
  readonly list: (path: string, page?: Page) => Effect.Effect<ListPage, PlatformError | VerifiedFile.PathChangedError>
}

/**
 * The ReadToolFileSystem service.
 *
 * @since 0.1.0
 */
export class Service extends Context.Tag("@toolgate/ReadToolFileSystem")<Service, Interface>() {}

const BINARY_EXTENSIONS = new Set(
  ".zip .tar .gz .exe .dll .so .class .jar .war .7z .doc .docx .xls .xlsx .ppt .pptx .odt .ods .odp .bin .dat .obj .o .a .lib .wasm .pyc .pyo".split(
    " ",
  ),
)

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>, at = 0): boolean =>
  prefix.every((value, index) => bytes[at + index] === value)

/**
 * The image mime of `bytes` by magic number, if any.
 *
 * @since 0.1.0
 */
export const sniffImage = (bytes: Uint8Array): string | undefined => {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png"
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg"
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38])) return "image/gif"
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)) return "image/webp"
  return undefined
}

const isControl = (byte: number): boolean => byte < 9 || (byte > 13 && byte < 32)

/**
 * True iff `resource` has a binary extension, or `bytes` hold a NUL or more than 30% control bytes.
 *
 * @since 0.1.0
 */
export const binary = (resource: string, bytes: Uint8Array): boolean => {
  if (BINARY_EXTENSIONS.has(path.extname(resource).toLowerCase())) return true
  if (bytes.length === 0) return false
  let control = 0
  for (const byte of bytes) {
    if (byte === 0) return true
    if (isControl(byte)) control++
  }
  return control / bytes.length > 0.3
}

/**
 * Source extensions the IANA-based table gets wrong or lacks for text (`.ts` is MPEG transport stream there).
 *
 * @since 0.2.0
 */
export const TEXT_MIMES: Readonly<Record<string, string>> = {
  ".ts": "text/typescript",
  ".mts": "text/typescript",
  ".cts": "text/typescript",
  ".tsx": "text/tsx",
  ".jsx": "text/jsx",
  ".mjs": "text/javascript",
  ".cjs": "text/javascript",
  ".vue": "text/x-vue",
  ".svelte": "text/x-svelte",
  ".rs": "text/x-rust",
  ".go": "text/x-go",
  ".kt": "text/x-kotlin",
  ".swift": "text/x-swift",
  ".toml": "application/toml",
  ".jsonc": "application/json",
  ".json5": "application/json5",
}

const TEXTUAL_APPLICATION =
  /^application\/(json|json5|javascript|ecmascript|xml|toml|yaml|x-yaml|sql|graphql|x-sh|x-httpd-php|x-tex|x-latex|x-perl|x-python|x-ruby|rtf)$|^application\/.*\+(json|xml|yaml)$/

/**
 * The mime type of a file that was read as UTF-8 text: the source table above, else the extension table when it
 * names a textual type, else `text/plain` (the content already passed the binary check, whatever the name says).
 *
 * @since 0.2.0
 */
export const textMimeType = (file: string): string => {
  const known = TEXT_MIMES[path.extname(file).toLowerCase()]
  if (known !== undefined) return known
  const looked = mime.lookup(file)
  if (looked !== false && (looked.startsWith("text/") || TEXTUAL_APPLICATION.test(looked))) return looked
  return "text/plain"
}

/**
 * The mime type for a file name, by extension (text sources by `TEXT_MIMES`); `application/octet-stream` when unknown.
 *
 * @since 0.1.0
 */
export const mimeType = (file: string): string =>
  TEXT_MIMES[path.extname(file).toLowerCase()] ?? (mime.lookup(file) || "application/octet-stream")

const isDirectorySep = path.sep

/**
 * Builds the service on the platform FileSystem.
 *
 * @since 0.1.0
 */
export const make: Effect.Effect<Interface, never, FileSystem.FileSystem> = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem

  const inspect = Effect.fn("ReadToolFileSystem.inspect")(function* (input: string) {
    const info = yield* fs.stat(input)
    if (info.type === "File") return "file" as const
    if (info.type === "Directory") return "directory" as const
    return yield* new PathKindError({ resource: input, expected: "a file or directory" })
  })

  const read = Effect.fn("ReadToolFileSystem.read")(function* (input: string, resource: string, page: Page = {}) {
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const file = yield* Effect.acquireRelease(
          VerifiedFile.openFile(input, VerifiedFile.flags.read),
          VerifiedFile.close,
        )
        const info = yield* VerifiedFile.stat(file)
        if (!info.isFile()) return yield* new PathKindError({ resource, expected: "a file" })
        const size = info.size
        const next = (bytes: number) => VerifiedFile.readAt(file, bytes)
        const first = (yield* next(Math.min(CHUNK, size || 4 * 1024))) ?? new Uint8Array()
        const real = input
        const uri = pathToFileURL(real).href
        const name = path.basename(real)

        const image = sniffImage(first)
        if (image !== undefined) {
          const limit = new MediaIngestLimitError({ resource, maximumBytes: MAX_MEDIA_INGEST_BYTES })
          if (size > MAX_MEDIA_INGEST_BYTES) return yield* limit
          const chunks: Array<Uint8Array> = [first]
          let total = first.length
          while (total <= MAX_MEDIA_INGEST_BYTES) {
            const chunk = yield* next(Math.min(CHUNK, MAX_MEDIA_INGEST_BYTES + 1 - total))
            if (chunk === undefined) break
            chunks.push(chunk)
            total += chunk.length
          }
          if (total > MAX_MEDIA_INGEST_BYTES) return yield* limit
          const content = Buffer.concat(chunks, total).toString("base64")
          return { uri, name, content, encoding: "base64", mime: image } satisfies Content as Content
        }
        if (
          startsWith(first, [0x25, 0x50, 0x44, 0x46]) ||
          BINARY_EXTENSIONS.has(path.extname(resource).toLowerCase())
        ) {
          return yield* new BinaryFileError({ resource })
        }

        const limits = page.limits ?? DEFAULT_LIMITS
        const column = page.column ?? 1
        const offset = page.offset ?? 1
        const paged = size > MAX_READ_BYTES || page.offset !== undefined || page.limit !== undefined || column !== 1
        // Unpaged reads keep their bytes: a file whose numbered text would not fit is paged from them.
        const chunks: Array<Uint8Array> = [first]
        if (!paged) {
          if (binary(resource, first)) return yield* new BinaryFileError({ resource })
          const decoder = new TextDecoder("utf-8", { fatal: true })
          const decode = (bytes?: Uint8Array) =>
            Effect.try({
              try: () => (bytes === undefined ? decoder.decode() : decoder.decode(bytes, { stream: true })),
              catch: () => new MalformedUtf8Error({ resource }),
            })
          const text = [yield* decode(first)]
          while (true) {
            const chunk = yield* next(CHUNK)
            if (chunk === undefined) break
            if (chunk.includes(0)) return yield* new BinaryFileError({ resource })
            chunks.push(chunk)
            text.push(yield* decode(chunk))
          }
          text.push(yield* decode())
          const content = text.join("")
          if (fitsWhole(content, limits)) {
            return { uri, name, content, encoding: "utf8", mime: textMimeType(real) } satisfies Content as Content
          }
        }

        const pager = new Pager(resource, offset, column, limits, page.limit)
        let index = 0
        let chunk: Uint8Array | undefined = chunks[0]
        while (chunk !== undefined && pager.feed(chunk)) {
          index++
          chunk = index < chunks.length ? chunks[index] : paged ? yield* next(CHUNK) : undefined
        }
        if (chunk === undefined) pager.end()
        if (pager.failure !== undefined) return yield* pager.failure
        if (pager.kept.length === 0 && offset !== 1) return yield* new OffsetOutOfRangeError({ offset })
        const cut = pager.kept.flatMap((kept) => (kept.cut === undefined ? [] : [kept.cut]))
        const start = pager.kept[0]?.column ?? 1
        const result: TextPage = {
          type: "text-page",
          content: pager.kept.map((kept) => kept.text).join("\n"),
          mime: textMimeType(real),
          offset,
          truncated: pager.next !== undefined,
          ...(pager.next === undefined ? {} : { next: pager.next }),
          ...(start === 1 ? {} : { column: start }),
          last: offset + pager.kept.length - 1,
          ...(cut.length === 0 ? {} : { cut }),
        }
        return result
      }),
    )
  })

  const list = Effect.fn("ReadToolFileSystem.list")(function* (input: string, page: Page = {}) {
    const found = yield* Effect.acquireUseRelease(
      VerifiedFile.openDirectory(input, "readDirectory"),
      (directory) =>
        Effect.flatMap(VerifiedFile.readDirectory(directory), (names) =>
          Effect.forEach(
            names,
            (child) =>
              Effect.gen(function* () {
                // Looked up through the verified descriptor: an entry counts only if it really lies below it.
                const target = yield* Effect.option(fs.realPath(VerifiedFile.child(directory, child)))
                if (Option.isNone(target) || !isWithin(directory.path, target.value)) return undefined
                const info = yield* Effect.option(fs.stat(target.value))
                if (Option.isNone(info)) return undefined
                if (info.value.type === "Directory")
                  return { path: child + isDirectorySep, type: "directory" } satisfies Entry
                if (info.value.type === "File") return { path: child, type: "file" } satisfies Entry
                return undefined
              }),
            { concurrency: 16 },
          ),
        ),
      VerifiedFile.close,
    )
    const entries = found
      .filter((entry): entry is Entry => entry !== undefined)
      .sort((a, b) => (a.type === b.type ? a.path.localeCompare(b.path) : a.type === "directory" ? -1 : 1))
    const offset = page.offset ?? 1
    const space = room(page.limits ?? DEFAULT_LIMITS, page.limit)
    const selected: Array<Entry> = []
    let bytes = 0
    for (const entry of entries.slice(offset - 1, offset - 1 + space.lines)) {
      const size = Buffer.byteLength(entry.path) + (selected.length > 0 ? 1 : 0)
      if (selected.length > 0 && bytes + size > space.bytes) break
      selected.push(entry)
      bytes += size
    }
    const truncated = offset - 1 + selected.length < entries.length
    const result: ListPage = { entries: selected, truncated, ...(truncated ? { next: offset + selected.length } : {}) }
    return result
  })

  return Service.of({ inspect, read, list })
})

// ---------------------------------------------------------------------------------------------------------------
// The model's view of a page (see docs/built-ins.md, "read pages"). The pager measures every line with the same
// functions that render it, so a page always fits the output limits and `ToolOutputStore.bound` never cuts it.

/**
 * The suffix a line cut after `shown` characters gets (the `LINE_SUFFIX` text when `shown` is the cap).
 *
 * @since 0.1.0
 */
export const lineSuffix = (shown: number): string => `... (line truncated to ${shown} chars)`

/**
 * The model-facing hint after a cut line's suffix: how to read the rest of it.
 *
 * @since 0.1.0
 */
export const continuation = (cut: Cut): string =>
  ` [line ${cut.line} has ${cut.length} chars; read the rest with offset=${cut.line} column=${cut.column}]`

/**
 * One numbered line as the model reads it: `<n>: <text>`, or `<n> (from column <c>): <text>` mid-line.
 *
 * @since 0.1.0
 */
export const renderLine = (line: number, text: string, column?: number, cut?: Cut): string =>
  `${line}${column === undefined || column === 1 ? "" : ` (from column ${column})`}: ${text}${
    cut === undefined ? "" : continuation(cut)
  }`

/**
 * The last line of a text page: which lines it shows and where to continue.
 *
 * @since 0.1.0
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
 */
export interface Limits {
  readonly maxLines: number
  readonly maxBytes: number
}

/**
 * The default limits (those of `ToolOutputStore`).
 *
 * @since 0.1.0
 */
export const DEFAULT_LIMITS: Limits = { maxLines: 2000, maxBytes: 50 * 1024 }

/** The room a page's numbered lines have: lines and bytes (separators included) left after the trailer. */
const room = (limits: Limits, limit?: number): { readonly lines: number; readonly bytes: number } => ({
  lines: Math.max(1, Math.min(limit ?? MAX_READ_LINES, MAX_READ_LINES, limits.maxLines - TRAILER_LINES)),
  bytes: Math.max(1, Math.min(MAX_READ_BYTES, limits.maxBytes) - TRAILER_BYTES),
})

const withTrailer = (lines: ReadonlyArray<string>, trailer: string): string =>
  lines.length === 0 ? trailer : `${lines.join("\n")}\n\n${trailer}`

/** The lines of a whole text as pages count them: split on `\n`, a trailing `\r` dropped, no empty last line. */
const splitLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.split("\n")
  if (lines.at(-1) === "") lines.pop()
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line))
}

/**
 * The model's text of a whole small file: every line numbered, then the trailer.
 *
 * @since 0.1.0
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
 */
export const renderListPage = (page: ListPage, offset = 1): string =>
  withTrailer(
    page.entries.map((entry) => entry.path),
    listTrailer(offset, offset + page.entries.length - 1, page.next),
  )

/** True iff the whole `content` projected for the model fits `limits` with no line over the cap. */
const fitsWhole = (content: string, limits: Limits): boolean => {
  const lines = splitLines(content)
  const space = room(limits)
  if (lines.length > space.lines) return false
  if (lines.some((line) => line.length > MAX_LINE_LENGTH)) return false
  return Buffer.byteLength(renderContent(content)) <= space.bytes + TRAILER_BYTES
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** `units` shortened by one when cutting `text` there would split a surrogate pair. */
const safeCut = (text: string, units: number): number =>
  units > 0 &&
  units < text.length &&
  isHighSurrogate(text.charCodeAt(units - 1)) &&
  isLowSurrogate(text.charCodeAt(units))
    ? units - 1
    : units

/** A kept line: its number, its text (with the suffix when cut), the column it starts at, and where it goes on. */
interface Kept {
  readonly line: number
  readonly text: string
  readonly column: number
  readonly cut: Cut | undefined
}

/**
 * Splits a byte stream on `\n` into lines, checking each line with the binary heuristic and strict UTF-8 as it
 * streams. Memory per line stays bounded: only the window of `MAX_LINE_LENGTH + 2` characters a line can show is
 * kept (from `column` on the first line). Each line is measured as the model will read it; a line that does not fit
 * the rest of the page starts the next page, and a first line that does not fit alone is cut with a marker naming
 * the column to read on from. It stops at the first byte of a line that no longer fits, so bytes after a complete
 * page are never decoded.
 */
class Pager {
  readonly kept: Array<Kept> = []
  next: number | undefined
  failure: BinaryFileError | MalformedUtf8Error | ColumnOutOfRangeError | undefined
  private line = 1
  private bytes = 0
  private started = false
  private readonly decoder = new TextDecoder("utf-8", { fatal: true })
  /** The kept window of the current line, beginning at unit `windowStart` of the line. */
  private text = ""
  private windowStart = 0
  /** UTF-16 units decoded so far on the current line. */
  private seen = 0
  private lastUnit = -1
  private malformed = false
  private control = 0
  private total = 0
  private readonly space: { readonly lines: number; readonly bytes: number }

  constructor(
    private readonly resource: string,
    private readonly offset: number,
    private readonly column: number,
    limits: Limits,
    limit: number | undefined,
  ) {
    this.space = room(limits, limit)
  }

  /** Consumes a chunk; false when the page is complete or failed. */
  feed(chunk: Uint8Array): boolean {
    let position = 0
    while (position < chunk.length) {
      if (!this.started) {
        if (this.kept.length >= this.space.lines) {
          this.next = this.line
          return false
        }
        this.started = true
      }
      const newline = chunk.indexOf(0x0a, position)
      const end = newline === -1 ? chunk.length : newline
      if (!this.segment(chunk.subarray(position, end))) return false
      if (newline === -1) break
      position = newline + 1
      if (!this.finish()) return false
    }
    return true
  }

  /** The stream ended: a final line without a newline still counts. */
  end(): void {
    if (this.started) this.finish()
  }

  private get start(): number {
    return this.line === this.offset ? this.column - 1 : 0
  }

  private segment(bytes: Uint8Array): boolean {
    for (const byte of bytes) {
      if (byte === 0) {
        this.failure = new BinaryFileError({ resource: this.resource })
        return false
      }
      if (isControl(byte)) this.control++
    }
    this.total += bytes.length
    if (!this.malformed) {
      try {
        this.append(this.decoder.decode(bytes, { stream: true }))
      } catch {
        this.malformed = true
      }
    }
    return true
  }

  private append(decoded: string): void {
    if (decoded.length === 0) return
    const from = this.seen
    this.seen += decoded.length
    this.lastUnit = decoded.charCodeAt(decoded.length - 1)
    if (this.line < this.offset) return
    // One unit before the start (a pair split by `column` starts at its first half) and one past the cap.
    const low = Math.max(0, this.start - 1)
    const high = this.start + MAX_LINE_LENGTH + 2
    const a = Math.max(from, low)
    const b = Math.min(this.seen, high)
    if (a >= b) return
    if (this.text === "") this.windowStart = a
    this.text += decoded.slice(a - from, b - from)
  }

  private finish(): boolean {
    if (!this.malformed) {
      try {
        this.append(this.decoder.decode())
      } catch {
        this.malformed = true
      }
    }
    if (this.total > 0 && this.control / this.total > 0.3) {
      this.failure = new BinaryFileError({ resource: this.resource })
      return false
    }
    if (this.malformed) {
      this.failure = new MalformedUtf8Error({ resource: this.resource })
      return false
    }
    const length = this.lastUnit === 0x0d ? this.seen - 1 : this.seen
    const window = this.text
    const windowStart = this.windowStart
    const start = this.start
    this.text = ""
    this.windowStart = 0
    this.seen = 0
    this.lastUnit = -1
    this.control = 0
    this.total = 0
    this.started = false
    if (this.line < this.offset) {
      this.line++
      return true
    }
    if (start > 0 && start >= length) {
      this.failure = new ColumnOutOfRangeError({ line: this.line, column: start + 1, length })
      return false
    }
    let begin = start
    if (
      begin > 0 &&
      isLowSurrogate(window.charCodeAt(begin - windowStart)) &&
      isHighSurrogate(window.charCodeAt(begin - 1 - windowStart))
    ) {
      begin--
    }
    const available = window.slice(begin - windowStart, length - windowStart)
    const first = this.kept.length === 0
    const separator = first ? 0 : 1
    let shown = safeCut(available, Math.min(available.length, MAX_LINE_LENGTH))
    const measure = (units: number) => {
      const cut = begin + units < length ? { line: this.line, column: begin + units + 1, length } : undefined
      const text = cut === undefined ? available.slice(0, units) : available.slice(0, units) + lineSuffix(units)
      const rendered = renderLine(this.line, text, begin + 1, cut)
      return { text, cut, size: Buffer.byteLength(rendered) + separator }
    }
    let candidate = measure(shown)
    if (this.bytes + candidate.size > this.space.bytes && (shown > 0 || !first)) {
      if (!first) {
        this.next = this.line
        return false
      }
      // A first line that does not fit alone is cut to what fits (at least one character, so reading advances).
      let low = 1
      let high = shown
      while (low < high) {
        const middle = Math.ceil((low + high) / 2)
        if (measure(middle).size <= this.space.bytes) low = middle
        else high = middle - 1
      }
      shown = safeCut(available, low)
      if (shown === 0 && available.length > 0) shown = safeCut(available, 2) === 2 ? 2 : 1
      candidate = measure(shown)
    }
    this.kept.push({ line: this.line, text: candidate.text, column: begin + 1, cut: candidate.cut })
    this.bytes += candidate.size
    this.line++
    return true
  }
}

/**
 * The service on the platform FileSystem.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<Service, never, FileSystem.FileSystem> = Layer.effect(Service, make)
