/**
 * Plain-text tables for the terminal: a header row, a rule, and left-aligned columns sized to their widest cell.
 * A table wider than the terminal shrinks its widest columns and wraps their cells onto continuation lines, so
 * nothing is cut (an id or a path stays whole, only spread over lines).
 *
 * @since 0.1.0
 */

/**
 * Collapses whitespace runs (newlines included) and shortens `text` to `max` characters with an ellipsis.
 *
 * @since 0.1.0
 * @category utilities
 */
export const clip = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`
}

/**
 * The width tables must fit: the terminal's columns when stdout is a terminal, else `COLUMNS` when set, else no
 * limit (piped output is not reflowed).
 *
 * @since 0.2.0
 * @category utilities
 */
export const terminalWidth = (stream: NodeJS.WriteStream = process.stdout): number => {
  if (stream.isTTY === true && typeof stream.columns === "number" && stream.columns > 0) return stream.columns
  const columns = Number(process.env.COLUMNS)
  return Number.isInteger(columns) && columns > 0 ? columns : Number.POSITIVE_INFINITY
}

/** The narrowest a column is shrunk to. */
const MIN_WIDTH = 6

/**
 * Splits `text` into pieces of at most `width` characters, breaking after a space, `/`, `,` or `-` when one is close
 * enough, else hard.
 *
 * @since 0.2.0
 * @category utilities
 */
export const wrap = (text: string, width: number): Array<string> => {
  if (text.length <= width) return [text]
  const pieces: Array<string> = []
  let rest = text
  while (rest.length > width) {
    let at = width
    for (let index = width; index > width / 2; index--) {
      if (" /,-".includes(rest[index - 1]!)) {
        at = index
        break
      }
    }
    pieces.push(rest.slice(0, at).trimEnd())
    rest = rest.slice(at).trimStart()
  }
  if (rest !== "") pieces.push(rest)
  return pieces
}

/**
 * Renders rows under `headers`, each line prefixed with `indent`, fitting `width` (default: `terminalWidth()`).
 *
 * @since 0.1.0
 * @category utilities
 */
export const render = (
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  indent = "",
  width = terminalWidth(),
): string => {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  )
  const total = () => indent.length + widths.reduce((sum, value) => sum + value, 0) + 2 * (widths.length - 1)
  // Shrink the widest column one character at a time until the table fits or nothing can shrink.
  while (total() > width) {
    let widest = -1
    for (const [column, value] of widths.entries()) {
      if (value > MIN_WIDTH && (widest === -1 || value > widths[widest]!)) widest = column
    }
    if (widest === -1) break
    widths[widest]!--
  }
  const line = (cells: ReadonlyArray<string>) =>
    indent +
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd()
  const row = (cells: ReadonlyArray<string>): Array<string> => {
    const wrapped = widths.map((value, column) => wrap(cells[column] ?? "", value))
    const height = Math.max(...wrapped.map((pieces) => pieces.length))
    return Array.from({ length: height }, (_, index) => line(wrapped.map((pieces) => pieces[index] ?? "")))
  }
  return [...row(headers), line(widths.map((value) => "-".repeat(value))), ...rows.flatMap(row)].join("\n")
}
