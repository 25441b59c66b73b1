/**
 * What the process spawner does with a child's output bytes: capped collection and line splitting.
 *
 * @since 0.3.0
 */

/**
 * A byte collector with an optional cap: keeps bytes up to `max`, counts everything, never stops draining.
 *
 * @since 0.3.0
 * @category output
 */
export interface Collector {
  readonly push: (chunk: Uint8Array) => void
  readonly result: () => { readonly buffer: Buffer; readonly truncated: boolean; readonly total: number }
}

/**
 * Creates a collector. The chunk that crosses `max` is sliced; `truncated` becomes true only once the total exceeds
 * `max` (exactly `max` bytes is not truncated).
 *
 * @since 0.3.0
 * @category output
 */
export const collector = (max?: number): Collector => {
  const chunks: Array<Uint8Array> = []
  let kept = 0
  let total = 0
  return {
    push: (chunk) => {
      total += chunk.byteLength
      if (max === undefined) {
        chunks.push(chunk)
        kept += chunk.byteLength
        return
      }
      const remaining = max - kept
      if (remaining <= 0) return
      const part = chunk.byteLength <= remaining ? chunk : chunk.subarray(0, remaining)
      chunks.push(part)
      kept += part.byteLength
    },
    result: () => ({ buffer: Buffer.concat(chunks, kept), truncated: max !== undefined && total > max, total }),
  }
}

/**
 * Splits stdout into lines for `onLine`; `false` from the handler ends the stream (`stop` is called once). A line
 * longer than `maxLineBytes` is handed over unterminated at once and its rest dropped.
 *
 * @since 0.3.0
 * @category output
 */
export const lineSplitter = (
  onLine: (line: Buffer) => boolean | void,
  maxLineBytes: number | undefined,
  stop: () => void,
) => {
  let pending: Array<Buffer> = []
  let pendingBytes = 0
  /** Dropping the rest of a line that was already handed over as too long. */
  let skipping = false
  let stopped = false
  const emit = (line: Buffer) => {
    if (stopped) return
    if (onLine(line) === false) {
      stopped = true
      stop()
    }
  }
  const take = (piece: Buffer) => {
    if (pending.length === 0) return piece
    pending.push(piece)
    const whole = Buffer.concat(pending, pendingBytes + piece.length)
    pending = []
    pendingBytes = 0
    return whole
  }
  return {
    push: (chunk: Uint8Array) => {
      const data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
      let from = 0
      for (let newline = data.indexOf(10, from); newline !== -1 && !stopped; newline = data.indexOf(10, from)) {
        const piece = data.subarray(from, newline)
        from = newline + 1
        if (skipping) skipping = false
        else emit(take(piece))
      }
      if (stopped || skipping || from >= data.length) return
      const rest = data.subarray(from)
      pending.push(rest)
      pendingBytes += rest.length
      if (maxLineBytes !== undefined && pendingBytes > maxLineBytes) {
        skipping = true
        emit(take(Buffer.alloc(0)))
      }
    },
    end: () => {
      if (pending.length > 0 && !skipping) emit(take(Buffer.alloc(0)))
    },
  }
}
