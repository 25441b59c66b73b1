/**
 * The line pager of `read`: splits a byte stream into the lines of one page, checking each for binary content and
 * strict UTF-8 as it streams, and cutting a line too long for the page at a column the model can read on from.
 *
 * @since 0.3.0
 */
import * as Path from "../../values/path.js"
import { BinaryFileError, ColumnOutOfRangeError, MalformedUtf8Error } from "./read-errors.js"
import { type Cut, type Limits, lineSuffix, MAX_LINE_LENGTH, renderLine, room } from "./read-page.js"
import { isControl } from "./read-sniff.js"

/** `units` shortened by one when cutting `text` there would split a surrogate pair. */
const safeCut = (text: string, units: number): number =>
  units > 0 &&
  units < text.length &&
  Path.isHighSurrogate(text.charCodeAt(units - 1)) &&
  Path.isLowSurrogate(text.charCodeAt(units))
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
 *
 * @since 0.3.0
 * @category pages
 */
export class Pager {
  /** @since 0.3.0 */
  readonly kept: Array<Kept> = []
  /** @since 0.3.0 */
  next: number | undefined
  /** @since 0.3.0 */
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

  /**
   * Consumes a chunk; false when the page is complete or failed.
   *
   * @since 0.3.0
   */
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

  /**
   * The stream ended: a final line without a newline still counts.
   *
   * @since 0.3.0
   */
  end(): void {
    if (this.started) this.finish()
  }

  private get start(): number {
    return this.line === this.offset ? this.column - 1 : 0
  }

  /** @since 0.3.0 */
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

  /** @since 0.3.0 */
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

  /** @since 0.3.0 */
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
      Path.isLowSurrogate(window.charCodeAt(begin - windowStart)) &&
      Path.isHighSurrogate(window.charCodeAt(begin - 1 - windowStart))
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
