/**
 * Path form and path order shared by both search engines.
 *
 * @since 0.1.0
 */

/**
 * Strips leading `./` (repeatedly) and leading slashes, then turns `\` into `/`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const normalizePath = (text: string): string =>
  text
    .replace(/^(?:\.[\\/])+/, "")
    .replace(/^[\\/]+/, "")
    .replaceAll("\\", "/")

/**
 * Compares two names by UTF-8 byte order. UTF-8 byte order equals code point order, which differs from
 * JavaScript's UTF-16 order only when a surrogate pair meets a code unit at or above U+E000.
 *
 * @since 0.1.0
 * @category utilities
 */
export const compareNames = (a: string, b: string): number => {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    if (x < 0xd800 && y < 0xd800) return x - y
    const cx = a.codePointAt(i)!
    const cy = b.codePointAt(i)!
    return cx - cy
  }
  return a.length - b.length
}

/**
 * Path order: component by component, each by UTF-8 byte order; a prefix sorts first.
 *
 * @since 0.1.0
 * @category utilities
 */
export const comparePaths = (a: string, b: string): number => {
  const left = a.split("/")
  const right = b.split("/")
  const length = Math.min(left.length, right.length)
  for (let i = 0; i < length; i++) {
    const order = compareNames(left[i]!, right[i]!)
    if (order !== 0) return order
  }
  return left.length - right.length
}
