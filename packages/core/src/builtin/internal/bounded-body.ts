/**
 * Reading an HTTP response body under a byte cap, with progress: what `webfetch` and `websearch` share.
 *
 * @since 0.3.0
 */
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/**
 * Progress is reported each time this many more bytes of a body have arrived.
 *
 * @since 0.3.0
 * @category constants
 */
export const PROGRESS_BYTES = 64 * 1024

/** A declared `Content-Length` when it is a safe non-negative integer. */
const declaredLength = (response: HttpClientResponse.HttpClientResponse): number | undefined => {
  const header = response.headers["content-length"]
  const declared = header === undefined || header === "" ? undefined : Number.parseInt(header, 10)
  return declared !== undefined && Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined
}

/**
 * Reads a response body of at most `max` bytes. A declared `Content-Length` (safe non-negative integer) above `max`
 * fails before reading; a stream that grows past `max` fails at the crossing chunk, which ends (cancels) the stream.
 *
 * @since 0.3.0
 * @category reading
 */
export const collectBoundedBody = <E>(
  response: HttpClientResponse.HttpClientResponse,
  max: number,
  tooLarge: () => E,
  onProgress?: (received: number, declared: number | undefined) => void,
): Effect.Effect<Uint8Array, E | HttpClientError.ResponseError> =>
  Effect.suspend(() => {
    const total = declaredLength(response)
    if (total !== undefined && total > max) return Effect.fail(tooLarge())
    const chunks: Array<Uint8Array> = []
    let size = 0
    let reported = 0
    return Stream.runForEach(response.stream, (chunk) => {
      if (size + chunk.byteLength > max) return Effect.fail(tooLarge())
      chunks.push(chunk)
      size += chunk.byteLength
      if (onProgress !== undefined && size - reported >= PROGRESS_BYTES) {
        reported = size
        onProgress(size, total)
      }
      return Effect.void
    }).pipe(Effect.map(() => Buffer.concat(chunks, size)))
  })
