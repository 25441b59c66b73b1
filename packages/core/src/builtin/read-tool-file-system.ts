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
import * as Path from "../values/path.js"
import * as VerifiedFile from "../world/verified-file.js"
import {
  BinaryFileError,
  type InspectError,
  MalformedUtf8Error,
  MediaIngestLimitError,
  OffsetOutOfRangeError,
  PathKindError,
  type ReadError,
} from "./internal/read-errors.js"
import {
  type Content,
  DEFAULT_LIMITS,
  type Entry,
  fitsWhole,
  type Limits,
  type ListPage,
  MAX_MEDIA_INGEST_BYTES,
  MAX_READ_BYTES,
  room,
  type TextPage,
} from "./internal/read-page.js"
import { Pager } from "./internal/read-pager.js"
import { BINARY_EXTENSIONS, binary, sniffImage, startsWith, textMimeType } from "./internal/read-sniff.js"

export {
  /**
   * Most lines (and directory entries) in one page.
   *
   * @since 0.1.0
   * @category constants
   */
  MAX_READ_LINES,
  /**
   * Byte budget of one text page, and the size above which a file is always paged (50 KiB).
   *
   * @since 0.1.0
   * @category constants
   */
  MAX_READ_BYTES,
  /**
   * Largest image read into memory (20 MiB).
   *
   * @since 0.1.0
   * @category constants
   */
  MAX_MEDIA_INGEST_BYTES,
  /**
   * Longest line kept, in UTF-16 code units.
   *
   * @since 0.1.0
   * @category constants
   */
  MAX_LINE_LENGTH,
  /**
   * Appended to a line cut at `MAX_LINE_LENGTH`.
   *
   * @since 0.1.0
   * @category constants
   */
  LINE_SUFFIX,
  /**
   * Where a cut line continues: `column` is the 1-based column of its first unshown character, `length` the
   * line's length in characters (UTF-16 units).
   *
   * @since 0.1.0
   * @category schemas
   */
  Cut,
  /**
   * A whole file: UTF-8 text, or base64 media. `uri` is the `file://` URL of the real path.
   *
   * @since 0.1.0
   * @category schemas
   */
  Content,
  /**
   * One page of a text file; `next` is the 1-based line to continue from. `content` is the shown lines joined by
   * `\n` (a cut line ends with its `lineSuffix`); `column` is where the first line starts when not at 1, `last` the
   * number of the last line shown (`offset - 1` for none) and `cut` says where each cut line goes on.
   *
   * @since 0.1.0
   * @category schemas
   */
  TextPage,
  /**
   * One directory entry; directory paths end with the platform separator.
   *
   * @since 0.1.0
   * @category schemas
   */
  Entry,
  /**
   * One page of a directory listing; `next` is the 1-based entry to continue from.
   *
   * @since 0.1.0
   * @category schemas
   */
  ListPage,
  /**
   * The output limits a page must fit (`tool_output.max_lines` / `max_bytes`).
   *
   * @since 0.1.0
   * @category pages
   */
  type Limits,
  /**
   * The default limits (those of `ToolOutputStore`).
   *
   * @since 0.1.0
   * @category pages
   */
  DEFAULT_LIMITS,
  /**
   * The suffix a line cut after `shown` characters gets (the `LINE_SUFFIX` text when `shown` is the cap).
   *
   * @since 0.1.0
   * @category pages
   */
  lineSuffix,
  /**
   * The model's text of a whole small file: every line numbered, then the trailer.
   *
   * @since 0.1.0
   * @category pages
   */
  renderContent,
  /**
   * The model's text of a text page: its numbered lines (cut lines say how to read on), then the trailer.
   *
   * @since 0.1.0
   * @category pages
   */
  renderTextPage,
  /**
   * The model's text of a directory page: one entry per line, then the trailer.
   *
   * @since 0.1.0
   * @category pages
   */
  renderListPage,
} from "./internal/read-page.js"

export {
  /**
   * The file is binary (or a PDF, or an unsupported media type).
   *
   * @since 0.1.0
   * @category errors
   */
  BinaryFileError,
  /**
   * An image is larger than `maximumBytes`.
   *
   * @since 0.1.0
   * @category errors
   */
  MediaIngestLimitError,
  /**
   * The text is not valid UTF-8.
   *
   * @since 0.1.0
   * @category errors
   */
  MalformedUtf8Error,
  /**
   * A text page was requested past the last line.
   *
   * @since 0.1.0
   * @category errors
   */
  OffsetOutOfRangeError,
  /**
   * A `column` was given past the end of the line it names.
   *
   * @since 0.1.0
   * @category errors
   */
  ColumnOutOfRangeError,
  /**
   * The path is not of the kind the operation needs.
   *
   * @since 0.1.0
   * @category errors
   */
  PathKindError,
  /**
   * The failures of `inspect`.
   *
   * @since 0.1.0
   * @category errors
   */
  type InspectError,
  /**
   * The failures of `read`.
   *
   * @since 0.1.0
   * @category errors
   */
  type ReadError,
} from "./internal/read-errors.js"

export {
  /**
   * True iff `resource` has a binary extension, or `bytes` hold a NUL or more than 30% control bytes.
   *
   * @since 0.1.0
   * @category sniffing
   */
  binary,
  /**
   * The mime type for a file name, by extension (text sources by `TEXT_MIMES`); `application/octet-stream` when unknown.
   *
   * @since 0.1.0
   * @category sniffing
   */
  mimeType,
} from "./internal/read-sniff.js"

/**
 * Which page to read: 1-based line (or entry) `offset` and count `limit`, the 1-based `column` within the first line,
 * and the output `limits` the page's model text must fit (`DEFAULT_LIMITS` when absent).
 *
 * @since 0.1.0
 * @category models
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
 * @category models
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
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/ReadToolFileSystem")<Service, Interface>() {}

const CHUNK = 64 * 1024

const isDirectorySep = path.sep

/**
 * Builds the service on the platform FileSystem.
 *
 * @since 0.1.0
 * @category constructors
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
                if (Option.isNone(target) || !Path.isWithin(directory.path, target.value)) return undefined
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

/**
 * The service on the platform FileSystem.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, FileSystem.FileSystem> = Layer.effect(Service, make)
