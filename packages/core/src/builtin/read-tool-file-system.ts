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
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Context, Effect, Layer, Option, Schema } from "effect"
import * as mime from "mime-types"
import { isWithin } from "../world/location-mutation.js"
import * as VerifiedFile from "../world/verified-file.js"

/** Most lines (and directory entries) in one page. */
export const MAX_READ_LINES = 2000
/** Byte budget of one text page, and the size above which a file is always paged (50 KiB). */
export const MAX_READ_BYTES = 50 * 1024
/** Largest image read into memory (20 MiB). */
export const MAX_MEDIA_INGEST_BYTES = 20 * 1024 * 1024
/** Longest line kept, in UTF-16 code units. */
export const MAX_LINE_LENGTH = 2000
/** Appended to a line cut at `MAX_LINE_LENGTH`. */
export const LINE_SUFFIX = `... (line truncated to ${MAX_LINE_LENGTH} chars)`

const CHUNK = 64 * 1024

/** The file is binary (or a PDF, or an unsupported media type). */
export class BinaryFileError extends Schema.TaggedError<BinaryFileError>()("ReadTool.BinaryFileError", {
  resource: Schema.String,
}) {
  override get message(): string {
    return `Cannot read binary file: ${this.resource}`
  }
}

/** An image is larger than `maximumBytes`. */
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

/** The text is not valid UTF-8. */
export class MalformedUtf8Error extends Schema.TaggedError<MalformedUtf8Error>()("ReadTool.MalformedUtf8Error", {
  resource: Schema.String,
}) {
  override get message(): string {
    return `File is not valid UTF-8: ${this.resource}`
  }
}

/** A text page was requested past the last line. */
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

/** The path is not of the kind the operation needs. */
export class PathKindError extends Schema.TaggedError<PathKindError>()("ReadTool.PathKindError", {
  resource: Schema.String,
  expected: Schema.Literal("a file", "a file or directory"),
}) {
  override get message(): string {
    return `Path is not ${this.expected}: ${this.resource}`
  }
}

/** The failures of `inspect`. */
export type InspectError = PlatformError | PathKindError
/** The failures of `read`. */
export type ReadError =
  | PlatformError
  | BinaryFileError
  | MediaIngestLimitError
  | MalformedUtf8Error
  | OffsetOutOfRangeError
  | PathKindError
  | VerifiedFile.PathChangedError

const PositiveInt = Schema.Int.pipe(Schema.positive())

/** A whole file: UTF-8 text, or base64 media. `uri` is the `file://` URL of the real path. */
export const Content = Schema.Struct({
  uri: Schema.String,
  name: Schema.optional(Schema.String),
  content: Schema.String,
  encoding: Schema.Literal("utf8", "base64"),
  mime: Schema.String,
})
/** @see Content */
export type Content = typeof Content.Type

/** One page of a text file; `next` is the 1-based line to continue from. */
export const TextPage = Schema.Struct({
  type: Schema.Literal("text-page"),
  content: Schema.String,
  mime: Schema.String,
  offset: PositiveInt,
  truncated: Schema.Boolean,
  next: Schema.optional(PositiveInt),
})
/** @see TextPage */
export type TextPage = typeof TextPage.Type

/** One directory entry; directory paths end with the platform separator. */
export const Entry = Schema.Struct({
  path: Schema.String,
  type: Schema.Literal("file", "directory"),
})
/** @see Entry */
export type Entry = typeof Entry.Type

/** One page of a directory listing; `next` is the 1-based entry to continue from. */
export const ListPage = Schema.Struct({
  entries: Schema.Array(Entry),
  truncated: Schema.Boolean,
  next: Schema.optional(PositiveInt),
})
/** @see ListPage */
export type ListPage = typeof ListPage.Type

/** Which page to read; both are 1-based line (or entry) counts. */
export interface Page {
  readonly offset?: number | undefined
  readonly limit?: number | undefined
}

/** The read filesystem operations. */
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

/** The ReadToolFileSystem service. */
export class Service extends Context.Tag("@toolgate/ReadToolFileSystem")<Service, Interface>() {}

const BINARY_EXTENSIONS = new Set(
  ".zip .tar .gz .exe .dll .so .class .jar .war .7z .doc .docx .xls .xlsx .ppt .pptx .odt .ods .odp .bin .dat .obj .o .a .lib .wasm .pyc .pyo".split(
    " ",
  ),
)

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>, at = 0): boolean =>
  prefix.every((value, index) => bytes[at + index] === value)

/** The image mime of `bytes` by magic number, if any. */
export const sniffImage = (bytes: Uint8Array): string | undefined => {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png"
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg"
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38])) return "image/gif"
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)) return "image/webp"
  return undefined
}

const isControl = (byte: number): boolean => byte < 9 || (byte > 13 && byte < 32)

/** True iff `resource` has a binary extension, or `bytes` hold a NUL or more than 30% control bytes. */
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

/** The mime type for a file name, by extension; `application/octet-stream` when unknown. */
export const mimeType = (file: string): string => mime.lookup(file) || "application/octet-stream"

const isDirectorySep = path.sep

/** Builds the service on the platform FileSystem. */
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

        const paged = size > MAX_READ_BYTES || page.offset !== undefined || page.limit !== undefined
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
            text.push(yield* decode(chunk))
          }
          text.push(yield* decode())
          return {
            uri,
            name,
            content: text.join(""),
            encoding: "utf8",
            mime: mimeType(real),
          } satisfies Content as Content
        }

        const offset = page.offset ?? 1
        const pager = new Pager(resource, offset, Math.min(page.limit ?? MAX_READ_LINES, MAX_READ_LINES))
        let chunk: Uint8Array | undefined = first
        while (chunk !== undefined && pager.feed(chunk)) chunk = yield* next(CHUNK)
        if (chunk === undefined) pager.end()
        if (pager.failure !== undefined) return yield* pager.failure
        if (pager.lines.length === 0 && offset !== 1) return yield* new OffsetOutOfRangeError({ offset })
        const result: TextPage = {
          type: "text-page",
          content: pager.lines.join("\n"),
          mime: mimeType(real),
          offset,
          truncated: pager.next !== undefined,
          ...(pager.next === undefined ? {} : { next: pager.next }),
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
    const limit = Math.min(page.limit ?? MAX_READ_LINES, MAX_READ_LINES)
    const selected = entries.slice(offset - 1, offset - 1 + limit)
    const truncated = offset - 1 + selected.length < entries.length
    const result: ListPage = { entries: selected, truncated, ...(truncated ? { next: offset + selected.length } : {}) }
    return result
  })

  return Service.of({ inspect, read, list })
})

/**
 * Splits a byte stream on `\n` into lines, checking each line with the binary heuristic and strict UTF-8 as it
 * streams (memory per line stays bounded: characters past `MAX_LINE_LENGTH + 1` are dropped). It stops at the first
 * byte of a line that no longer fits, so bytes after a complete page are never decoded.
 */
class Pager {
  readonly lines: Array<string> = []
  next: number | undefined
  failure: BinaryFileError | MalformedUtf8Error | undefined
  private line = 1
  private bytes = 0
  private started = false
  private readonly decoder = new TextDecoder("utf-8", { fatal: true })
  private text = ""
  private malformed = false
  private control = 0
  private total = 0

  constructor(
    private readonly resource: string,
    private readonly offset: number,
    private readonly limit: number,
  ) {}

  /** Consumes a chunk; false when the page is complete or failed. */
  feed(chunk: Uint8Array): boolean {
    let position = 0
    while (position < chunk.length) {
      if (!this.started) {
        if (this.lines.length >= this.limit) {
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
    if (this.text.length > MAX_LINE_LENGTH) return
    this.text += decoded
    if (this.text.length > MAX_LINE_LENGTH + 1) this.text = this.text.slice(0, MAX_LINE_LENGTH + 1)
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
    let text = this.text.endsWith("\r") ? this.text.slice(0, -1) : this.text
    if (text.length > MAX_LINE_LENGTH) text = text.slice(0, MAX_LINE_LENGTH) + LINE_SUFFIX
    this.text = ""
    this.control = 0
    this.total = 0
    this.started = false
    if (this.line < this.offset) {
      this.line++
      return true
    }
    const size = Buffer.byteLength(text, "utf8") + (this.lines.length > 0 ? 1 : 0)
    if (this.bytes + size > MAX_READ_BYTES) {
      this.next = this.line
      return false
    }
    this.lines.push(text)
    this.bytes += size
    this.line++
    return true
  }
}

/** The service on the platform FileSystem. */
export const layer: Layer.Layer<Service, never, FileSystem.FileSystem> = Layer.effect(Service, make)
