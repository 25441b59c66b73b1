/**
 * The transcript writer. Lines are permanent; the status line (live progress of a running tool) is redrawn in place
 * on a terminal and printed as ordinary lines otherwise, so piped output stays readable.
 *
 * @since 0.1.0
 */

/** Where the transcript goes. */
export interface Screen {
  /** True when stdout is a terminal (the status line is redrawn in place). */
  readonly interactive: boolean
  /** Prints a permanent line (clearing and then redrawing the status line around it). */
  readonly line: (text: string) => void
  /** Sets (or clears, with `undefined`) the status line. */
  readonly status: (text: string | undefined) => void
}

/** A screen on `stream` (default: stdout). */
export const make = (stream: NodeJS.WriteStream = process.stdout): Screen => {
  const interactive = stream.isTTY === true
  let current: string | undefined
  const clear = () => {
    if (interactive && current !== undefined) stream.write("\r\x1b[2K")
  }
  const draw = () => {
    if (interactive && current !== undefined) stream.write(current)
  }
  return {
    interactive,
    line: (text) => {
      clear()
      stream.write(`${text}\n`)
      draw()
    },
    status: (text) => {
      if (text === current) return
      clear()
      current = text
      if (!interactive) {
        if (text !== undefined) stream.write(`${text}\n`)
        return
      }
      draw()
    },
  }
}
