/**
 * How `ToolOutputStore` writes a managed file: one exclusive create, then the text encoded a chunk at a time, never
 * splitting a surrogate pair, and the partial file removed when the write fails.
 *
 * @since 0.3.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Path from "../../values/path.js"

/** The most and the fewest UTF-8 bytes a spill encodes per write. */
const SPILL_CHUNK_MAX = 1024 * 1024
const SPILL_CHUNK_MIN = 256 * 1024

/**
 * The spill's chunk for a text of `units` UTF-16 units: a power of two near 1/16 of the text, 256 KiB to 1 MiB. Each
 * chunk is one asynchronous write (about 0.3 ms of fixed cost), so small spills take few, large chunks.
 */
const spillChunk = (units: number): number => {
  let size = SPILL_CHUNK_MIN
  while (size < SPILL_CHUNK_MAX && size * 32 <= units) size *= 2
  // Never more than the whole text can take (at most 3 bytes per unit): a small text is encoded in one go.
  return Math.min(size, units * 3)
}

/**
 * Creates `file` (`wx`: never an existing file) and writes `text` into it as UTF-8 through that one handle, a chunk
 * at a time, so only one chunk's bytes are in memory besides the text. No chunk ends between the halves of a
 * surrogate pair, so the file holds exactly the bytes of encoding the whole text at once (a lone surrogate becomes
 * U+FFFD either way). A write that fails or is interrupted removes the partial file it created.
 *
 * @since 0.3.0
 * @internal
 */
export const writeChunked = (
  fs: FileSystem.FileSystem,
  file: string,
  text: string,
): Effect.Effect<void, PlatformError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const handle = yield* fs.open(file, { flag: "wx" })
      // Registered after the exclusive create succeeded, so only a file this call made is ever removed (unlinked
      // before its handle closes; the space is freed with the close).
      yield* Effect.addFinalizer((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.ignore(fs.remove(file))))
      // `allocUnsafeSlow`: no zero fill and no pool, so only the pages actually written become resident.
      const buffer = Buffer.allocUnsafeSlow(spillChunk(text.length))
      const encoder = new TextEncoder()
      let at = 0
      while (at < text.length) {
        let end = Math.min(at + buffer.length, text.length)
        // Never hand the encoder half a pair. (A slice as long in units as the buffer is in bytes cannot be encoded
        // whole up to a trailing half anyway, but this does not lean on that.)
        if (Path.splitsPair(text, end)) end--
        // `encodeInto` stops before a code point that does not fit and reports how many units it consumed; the
        // buffer always has room for at least one (>= 3 bytes per remaining unit, >= 6 for a pair).
        const { read, written } = encoder.encodeInto(text.slice(at, end), buffer)
        yield* handle.writeAll(buffer.subarray(0, written))
        at += read
      }
    }),
  )
