/**
 * Plain-text tables for the terminal: a header row, a rule, and left-aligned columns sized to their widest cell.
 *
 * @since 0.1.0
 */

/** Collapses whitespace runs (newlines included) and shortens `text` to `max` characters with an ellipsis. */
export const clip = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`
}

/** Renders rows under `headers`, each line prefixed with `indent`. */
export const render = (
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  indent = "",
): string => {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  )
  const line = (cells: ReadonlyArray<string>) =>
    indent +
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd()
  return [line(headers), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join("\n")
}
