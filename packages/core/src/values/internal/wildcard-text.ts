/**
 * How `Wildcard` prepares texts: backslashes read as `/` and, for the win32 rules, every UTF-16 unit folded the way a
 * regular expression's `i` flag folds it. Both sides of a match go through here (the pattern once when compiled, the
 * input once per evaluation), in time linear in the text: resources come from the model and may be megabytes long.
 *
 * @since 0.3.0
 */

/**
 * ECMAScript's non-Unicode case canonicalisation for one UTF-16 unit: upper-case when that yields one unit, but a
 * non-ASCII unit never maps into ASCII.
 */
const foldUnit = (code: number): number => {
  if (code < 128) return code >= 97 && code <= 122 ? code - 32 : code
  const upper = String.fromCharCode(code).toUpperCase()
  if (upper.length !== 1) return code
  const mapped = upper.charCodeAt(0)
  return mapped < 128 ? code : mapped
}

/** Texts at least this long are rewritten through a unit array instead of by concatenation or `replaceAll`. */
const LONG_INPUT = 4096

/** The string of `units` (passed to `fromCharCode` in slices: it takes its units as arguments). */
const fromUnits = (units: Uint16Array): string => {
  let out = ""
  for (let i = 0; i < units.length; i += 8192) {
    out += String.fromCharCode.apply(null, units.subarray(i, i + 8192) as unknown as Array<number>)
  }
  return out
}

/** `foldUnit` of every UTF-16 unit, built the first time a long text with non-ASCII units is folded. */
let foldTable: Uint16Array | undefined

/**
 * `text` with every unit folded by `foldUnit`, in time linear in its length (a model-chosen resource of a megabyte is
 * folded once per evaluation on win32).
 *
 * @since 0.3.0
 * @category input
 */
export const fold = (text: string): string => {
  if (text.length < LONG_INPUT) {
    let out = ""
    for (let i = 0; i < text.length; i++) out += String.fromCharCode(foldUnit(text.charCodeAt(i)))
    return out
  }
  // ASCII only: `toUpperCase` changes exactly `a`–`z`, as `foldUnit` does.
  if (Buffer.byteLength(text, "utf8") === text.length) return text.toUpperCase()
  const table = (foldTable ??= Uint16Array.from({ length: 0x10000 }, (_, code) => foldUnit(code)))
  const units = new Uint16Array(text.length)
  for (let i = 0; i < text.length; i++) units[i] = table[text.charCodeAt(i)]!
  return fromUnits(units)
}

/**
 * `input` with every backslash read as `/`, in time linear in its length whatever the share of backslashes.
 *
 * @since 0.3.0
 * @category input
 */
export const slashes = (input: string): string => {
  if (!input.includes("\\")) return input
  if (input.length < LONG_INPUT) return input.replaceAll("\\", "/")
  if (Buffer.byteLength(input, "utf8") === input.length) {
    // ASCII only: rewrite the bytes in place.
    const bytes = Buffer.from(input, "latin1")
    for (let at = bytes.indexOf(92); at !== -1; at = bytes.indexOf(92, at + 1)) bytes[at] = 47
    return bytes.toString("latin1")
  }
  const units = new Uint16Array(input.length)
  for (let i = 0; i < input.length; i++) {
    const code = input.charCodeAt(i)
    units[i] = code === 92 ? 47 : code
  }
  return fromUnits(units)
}
