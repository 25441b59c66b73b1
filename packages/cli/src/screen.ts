/**
 * The transcript writer. Lines are permanent; the status line (live progress of a running tool) is redrawn in place
 * on a terminal and printed as ordinary lines otherwise, so piped output stays readable. Everything written goes
 * through `Printable.safe`: a control character, escape sequence or bidi override in a tool's input or output (or a
 * model's text) is shown as a visible escape and never acts on the terminal. Prompts render what a person approves
 * with `Printable.show` first (see `describe.ts`).
 *
 * @since 0.1.0
 */
import { stripVTControlCharacters } from "node:util"
import { Printable } from "@toolgate/core"
import * as Console from "effect/Console"

/**
 * Where the transcript goes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Screen {
  /** True when stdout is a terminal (the status line is redrawn in place). */
  readonly interactive: boolean
  /** Prints a permanent line (clearing and then redrawing the status line around it). */
  readonly line: (text: string) => void
  /** Sets (or clears, with `undefined`) the status line. */
  readonly status: (text: string | undefined) => void
}

/**
 * A screen on `stream` (default: stdout).
 *
 * @since 0.1.0
 * @category constructors
 */
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
      stream.write(`${Printable.safe(text)}\n`)
      draw()
    },
    status: (raw) => {
      // A status line is one line: its own line breaks are shown too.
      const text = raw === undefined ? undefined : Printable.show(raw)
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

/**
 * True when colour and other styling escapes may be written to `stream`: it is a terminal and `NO_COLOR` is unset
 * or empty (see no-color.org).
 *
 * @since 0.2.0
 * @category utilities
 */
export const colour = (stream: NodeJS.WriteStream = process.stdout): boolean =>
  stream.isTTY === true && (process.env.NO_COLOR ?? "") === ""

/**
 * Removes ANSI escape sequences (colours, cursor moves) from `text`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const plain = (text: string): string => stripVTControlCharacters(text)

const strip = (args: ReadonlyArray<unknown>) => args.map((arg) => (typeof arg === "string" ? plain(arg) : arg))

/**
 * `base`, except that text for stdout (`log`, `info`, `debug`) loses its escapes unless `colour()`
 * holds for stdout, and text for stderr (`error`, `warn`) unless it holds for stderr. `@effect/cli` styles its help
 * and usage errors this way, so `toolgate --help | less` and `NO_COLOR=1 toolgate` print plain text.
 *
 * @since 0.2.0
 * @category utilities
 */
export const plainConsole = (base: Console.Console): Console.Console => {
  const out = colour(process.stdout)
  const err = colour(process.stderr)
  const wrapOut = (args: ReadonlyArray<unknown>) => (out ? args : strip(args))
  const wrapErr = (args: ReadonlyArray<unknown>) => (err ? args : strip(args))
  return {
    ...base,
    log: (...args) => base.log(...wrapOut(args)),
    info: (...args) => base.info(...wrapOut(args)),
    debug: (...args) => base.debug(...wrapOut(args)),
    error: (...args) => base.error(...wrapErr(args)),
    warn: (...args) => base.warn(...wrapErr(args)),
    unsafe: {
      ...base.unsafe,
      log: (...args) => base.unsafe.log(...wrapOut(args)),
      info: (...args) => base.unsafe.info(...wrapOut(args)),
      debug: (...args) => base.unsafe.debug(...wrapOut(args)),
      error: (...args) => base.unsafe.error(...wrapErr(args)),
      warn: (...args) => base.unsafe.warn(...wrapErr(args)),
    },
  }
}
