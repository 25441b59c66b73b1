/**
 * The pure text budgeting of `ToolOutputStore`: whether a text is within the line and byte limits, and the bounded
 * preview the model reads (head, marker, tail), cut on whole code points in UTF-8 bytes. No I/O here.
 *
 * @since 0.3.0
 */
import * as Path from "../../values/path.js"

/** 1 + the number of `"\n"` in `text`, counting no further than `stopAbove` (returns `stopAbove + 1` past it). */
const countLines = (text: string, stopAbove = Number.POSITIVE_INFINITY): number => {
  let lines = 1
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) {
    if (++lines > stopAbove) return lines
  }
  return lines
}

/** UTF-8 size of one UTF-16 unit outside a surrogate pair; a lone surrogate encodes as U+FFFD (3 bytes). */
const unitBytes = (code: number) => (code < 0x80 ? 1 : code < 0x800 ? 2 : 3)

/**
 * True iff `text` has at most `maxLines` lines and `maxBytes` UTF-8 bytes (both inclusive).
 *
 * @since 0.1.0
 * @category utilities
 */
export const withinLimits = (text: string, maxLines: number, maxBytes: number): boolean => {
  // Every UTF-16 unit takes 1 to 3 UTF-8 bytes, so the length alone often decides the byte bound.
  if (text.length > maxBytes) return false
  if (text.length * 3 > maxBytes && Buffer.byteLength(text, "utf8") > maxBytes) return false
  return countLines(text, maxLines) <= maxLines
}

/** Below this many UTF-16 units a cut proceeds one code point at a time. */
const CHUNK = 16

/**
 * How many units from `from` (forward, or backward when `backward`) fit in `room` bytes, taking whole chunks when
 * they fit (one native `Buffer.byteLength` each, halving the chunk on a miss) and single code points near the edge.
 * Returns the units taken and their bytes. A surrogate pair is never split.
 */
const fit = (
  piece: string,
  from: number,
  room: number,
  backward: boolean,
): { readonly units: number; readonly bytes: number } => {
  let units = 0
  let bytes = 0
  let available = backward ? from : piece.length - from
  let chunk = Math.min(room, available)
  while (available > 0 && bytes < room) {
    chunk = Math.min(chunk, room - bytes, available)
    if (chunk >= CHUNK) {
      let start = backward ? from - units - chunk : from + units
      let stop = start + chunk
      // Never end a forward chunk between the halves of a pair, nor start a backward one there.
      if (!backward && Path.isHighSurrogate(piece.charCodeAt(stop - 1)) && Path.isLowSurrogate(piece.charCodeAt(stop)))
        stop--
      if (backward && Path.isLowSurrogate(piece.charCodeAt(start)) && Path.isHighSurrogate(piece.charCodeAt(start - 1)))
        start++
      const size = Buffer.byteLength(piece.slice(start, stop), "utf8")
      if (bytes + size <= room) {
        units += stop - start
        bytes += size
        available -= stop - start
      } else chunk = chunk >> 1
      continue
    }
    const at = backward ? from - units - 1 : from + units
    const code = piece.charCodeAt(at)
    const pair = backward
      ? Path.isLowSurrogate(code) && at - 1 >= 0 && Path.isHighSurrogate(piece.charCodeAt(at - 1))
      : Path.isHighSurrogate(code) && at + 1 < piece.length && Path.isLowSurrogate(piece.charCodeAt(at + 1))
    const size = pair ? 4 : unitBytes(code)
    if (bytes + size > room) break
    units += pair ? 2 : 1
    bytes += size
    available -= pair ? 2 : 1
  }
  return { units, bytes }
}

/** The longest prefix of the concatenated `pieces` within `budget` UTF-8 bytes, cut on whole code points. */
const takePrefix = (pieces: ReadonlyArray<string>, budget: number): string => {
  let result = ""
  let used = 0
  for (const piece of pieces) {
    const taken = fit(piece, 0, budget - used, false)
    if (taken.units < piece.length) return result + piece.slice(0, taken.units)
    result += piece
    used += taken.bytes
  }
  return result
}

/** The longest suffix of the concatenated `pieces` within `budget` UTF-8 bytes, cut on whole code points. */
const takeSuffix = (pieces: ReadonlyArray<string>, budget: number): string => {
  let result = ""
  let used = 0
  for (let p = pieces.length - 1; p >= 0; p--) {
    const piece = pieces[p]!
    const taken = fit(piece, piece.length, budget - used, true)
    if (taken.units < piece.length) return piece.slice(piece.length - taken.units) + result
    result = piece + result
    used += taken.bytes
  }
  return result
}

/** Offset of the `count`-th `"\n"` from the start (count >= 1); the text has at least that many. */
const nthNewline = (text: string, count: number): number => {
  let at = -1
  for (let i = 0; i < count; i++) at = text.indexOf("\n", at + 1)
  return at
}

/** Offset of the `count`-th `"\n"` from the end (count >= 1); the text has at least that many. */
const nthNewlineFromEnd = (text: string, count: number): number => {
  let at = text.length
  for (let i = 0; i < count; i++) at = text.lastIndexOf("\n", at - 1)
  return at
}

/**
 * The head and tail of `text` within `maxLines` lines and `maxBytes` bytes: line-sample the first
 * `ceil(L/2)` and last `floor(L/2)` lines; if that is still too large, cut it half and half by bytes on whole code
 * points.
 *
 * @since 0.1.0
 * @category utilities
 */
export const preview = (
  text: string,
  maxLines: number,
  maxBytes: number,
): { readonly head: string; readonly tail: string } => {
  const headLines = Math.ceil(maxLines / 2)
  const tailLines = Math.floor(maxLines / 2)
  const lines = countLines(text, maxLines)
  // `pieces` concatenated is the sampled text; kept apart so a huge sample is never copied into one string.
  let head = text
  let tail = ""
  let pieces: ReadonlyArray<string> = [text]
  if (lines > maxLines) {
    head = text.slice(0, nthNewline(text, headLines))
    tail = tailLines > 0 ? text.slice(nthNewlineFromEnd(text, tailLines) + 1) : ""
    pieces = tailLines > 0 ? [head, "\n", tail] : [head]
  }
  // Bytes >= UTF-16 units, so a sample longer than the budget in units cannot fit; skip measuring it.
  let sampledUnits = 0
  for (const piece of pieces) sampledUnits += piece.length
  let sampledBytes = sampledUnits
  if (sampledUnits <= maxBytes) {
    sampledBytes = 0
    for (const piece of pieces) sampledBytes += Buffer.byteLength(piece, "utf8")
  }
  if (sampledBytes <= maxBytes) return { head, tail }
  return { head: takePrefix(pieces, Math.ceil(maxBytes / 2)), tail: takeSuffix(pieces, Math.floor(maxBytes / 2)) }
}

/**
 * The marker line naming the managed file that keeps the complete text.
 *
 * @since 0.1.0
 * @category utilities
 */
export const marker = (file: string): string => `... output truncated; full content saved to ${file} ...`

/**
 * The model-facing preview of an over-limit `text`: head, a blank line, the marker, a blank line, tail.
 * It never exceeds `maxLines` lines or `maxBytes` bytes; when even the frame does not fit, only the (cut) marker.
 *
 * @since 0.1.0
 * @category utilities
 */
export const boundedPreview = (text: string, markerLine: string, maxLines: number, maxBytes: number): string => {
  const markerBytes = Buffer.byteLength(markerLine, "utf8")
  if (maxLines <= 4 || maxBytes <= markerBytes + 4) {
    const cut = takePrefix([markerLine], maxBytes)
    return cut.split("\n").slice(0, maxLines).join("\n")
  }
  const { head, tail } = preview(text, maxLines - 4, maxBytes - markerBytes - 4)
  return tail !== "" ? `${head}\n\n${markerLine}\n\n${tail}` : `${head}\n\n${markerLine}`
}
