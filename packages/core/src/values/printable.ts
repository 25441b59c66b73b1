/**
 * Text as a person must see it before approving it. A command or path shown in a prompt may hold characters a
 * terminal or a UI acts on instead of showing — a carriage return or an ANSI erase sequence that paints `ls -la`
 * over `rm -f x`, a right-to-left override that reverses what follows, a zero-width space — so every prompt shows
 * them as visible escapes instead: `\x1b`, `\r`, `\u202e`.
 *
 * Escaped (`UNSAFE`): every C0 and C1 control and DEL (`\p{Cc}`), every format character (`\p{Cf}`: the bidi
 * embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F and U+061C, the
 * zero-width characters U+200B–U+200D and U+2060–U+2064, U+FEFF, the soft hyphen, the tag characters …), the line and
 * paragraph separators, lone surrogates, every space other than U+0020 (U+00A0, U+1680, U+2000–U+200A, U+202F,
 * U+205F, U+3000), and the
 * invisible letters and marks outside those classes (the Hangul fillers, U+034F, U+17B4–U+17B5, U+180B–U+180F and
 * the variation selectors).
 *
 * `show` writes `\n`, `\r`, `\t`, `\xHH` (up to U+00FF), `\uHHHH` or `\u{HHHHH}`, lower-case. A backslash of the
 * text stays a single backslash unless what follows it would read as an escape (`\`, `n`, `r`, `t`, `x`, `u` or an
 * escaped character): then it is doubled. Read back: `\\` is one backslash, `\n` `\r` `\t` `\x…` `\u…` are escapes,
 * and any other backslash is itself — so Windows paths and shell escapes (`C:\Users`, `grep 'a\|b'`) read as
 * typed and the display is never ambiguous (`parse` is its inverse).
 *
 * @since 0.3.0
 */

/**
 * The characters a prompt never prints as they are.
 *
 * @since 0.3.0
 * @category constants
 */
export const UNSAFE =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/u

const ANY_UNSAFE = new RegExp(UNSAFE.source, "u")
const SHOW_SPECIAL = new RegExp(`\\\\|${UNSAFE.source}`, "u")
const ESCAPE_LETTERS: ReadonlySet<string> = new Set(["\\", "n", "r", "t", "x", "u"])

const hex = (code: number, width: number): string => code.toString(16).padStart(width, "0")

/** The escape of one unsafe code point. */
const escapeOf = (code: number): string => {
  switch (code) {
    case 0x0a:
      return "\\n"
    case 0x0d:
      return "\\r"
    case 0x09:
      return "\\t"
  }
  if (code <= 0xff) return `\\x${hex(code, 2)}`
  if (code <= 0xffff) return `\\u${hex(code, 4)}`
  return `\\u{${code.toString(16)}}`
}

const isUnsafe = (char: string): boolean => ANY_UNSAFE.test(char)

/**
 * True iff `text` holds no character `show` would escape (a backslash aside).
 *
 * @since 0.3.0
 * @category rendering
 * @internal
 */
export const isPlain = (text: string): boolean => !ANY_UNSAFE.test(text)

/**
 * `text` on one line, every unsafe character as a visible escape and backslashes doubled only where they would
 * read as one. See the module documentation for the rules; `parse(show(text)) === text` for every string.
 *
 * @since 0.3.0
 * @category rendering
 */
export const show = (text: string): string => {
  if (!SHOW_SPECIAL.test(text)) return text
  const chars = Array.from(text)
  let out = ""
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!
    if (char === "\\") {
      const next = chars[i + 1]
      out += next !== undefined && (ESCAPE_LETTERS.has(next) || isUnsafe(next)) ? "\\\\" : "\\"
    } else if (isUnsafe(char)) out += escapeOf(char.codePointAt(0)!)
    else out += char
  }
  return out
}

/**
 * `text` between double quotes, JSON-style: `"` as `\"`, every backslash as `\\`, and every unsafe character as in
 * `show`. For values whose start and end matter (leading or trailing spaces), such as saved patterns.
 *
 * @since 0.3.0
 * @category rendering
 */
export const quote = (text: string): string => {
  let out = '"'
  for (const char of text) {
    if (char === '"') out += '\\"'
    else if (char === "\\") out += "\\\\"
    else if (isUnsafe(char)) out += escapeOf(char.codePointAt(0)!)
    else out += char
  }
  return `${out}"`
}

/**
 * `text` safe to write to a terminal or a log, keeping its line breaks and tabs: every other unsafe character is
 * escaped as in `show`, backslashes are left alone. For transcripts and output previews, not for what a person
 * approves (use `show` there: it is unambiguous).
 *
 * @since 0.3.0
 * @category rendering
 */
export const safe = (text: string): string => {
  if (!ANY_UNSAFE.test(text)) return text
  let out = ""
  for (const char of text)
    out += char !== "\n" && char !== "\t" && isUnsafe(char) ? escapeOf(char.codePointAt(0)!) : char
  return out
}

const HEX = /^[0-9a-f]+$/

/**
 * The inverse of `show`: the text a shown string stands for.
 *
 * @since 0.3.0
 * @category rendering
 * @internal
 */
export const parse = (shown: string): string => {
  let out = ""
  for (let i = 0; i < shown.length; i++) {
    const char = shown[i]!
    if (char !== "\\") {
      out += char
      continue
    }
    const next = shown[i + 1]
    const code = (digits: string, length: number | undefined, skip: number): boolean => {
      if (!HEX.test(digits) || (length !== undefined && digits.length !== length)) return false
      const value = parseInt(digits, 16)
      if (value > 0x10ffff) return false
      out += String.fromCodePoint(value)
      i += skip
      return true
    }
    switch (next) {
      case "\\":
        out += "\\"
        i++
        continue
      case "n":
        out += "\n"
        i++
        continue
      case "r":
        out += "\r"
        i++
        continue
      case "t":
        out += "\t"
        i++
        continue
      case "x":
        if (code(shown.slice(i + 2, i + 4), 2, 3)) continue
        break
      case "u":
        if (shown[i + 2] === "{") {
          const end = shown.indexOf("}", i + 3)
          if (end !== -1 && end - i - 3 <= 6 && code(shown.slice(i + 3, end), undefined, end - i)) continue
        } else if (code(shown.slice(i + 2, i + 6), 4, 5)) continue
        break
    }
    out += "\\"
  }
  return out
}
