/**
 * Shell words after quote removal, read from tree-sitter word nodes: backslash escapes, single quotes, `$'…'` and
 * double quotes without expansions become literal text; anything the shell only knows when it runs (an expansion, a
 * substitution, a brace expansion, a translated `$"…"` string, an unknown node) keeps its source text and is marked
 * dynamic. Unquoted `*`, `?` and `[` mark a glob; an unquoted leading `~` or `~/` marks a home-relative word; an
 * assignment-looking word with an unquoted `~` after its `=` or a `:` (`of=~/x`) is dynamic, since bash expands that
 * tilde and sh does not.
 *
 * @since 0.3.0
 */
import type { Node } from "web-tree-sitter"

/**
 * A word of a command after quote removal. `text` is the word as the command will see it when `literal`, else the
 * word as written (it holds an expansion, a substitution or a brace expansion).
 *
 * @since 0.3.0
 * @category models
 */
export interface Word {
  readonly text: string
  readonly literal: boolean
  /** An unquoted `*`, `?` or `[` that the shell may expand into file names. */
  readonly glob: boolean
  /** An unquoted leading `~` (alone or before `/`): the text is relative to the home directory. */
  readonly home?: boolean
}

/** A piece of a word: text and whether quoting protects it from globbing, brace and tilde expansion. */
interface Piece {
  readonly text: string
  readonly quoted: boolean
}

/**
 * A literal word from text.
 *
 * @since 0.3.0
 * @category utilities
 */
export const literal = (text: string): Word => ({ text, literal: true, glob: false })

/**
 * A dynamic word: known only when the shell runs.
 *
 * @since 0.3.0
 * @category utilities
 */
export const dynamic = (raw: string): Word => ({ text: raw, literal: false, glob: false })

/**
 * The named and unnamed children of a node.
 *
 * @since 0.3.0
 * @category utilities
 */
export const childrenOf = (node: Node): ReadonlyArray<Node> => {
  const out: Array<Node> = []
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i)
    if (child !== null) out.push(child)
  }
  return out
}

/** An unquoted word's pieces: backslash escapes are quoted characters, line continuations vanish. */
const bare = (raw: string): Array<Piece> => {
  const out: Array<Piece> = []
  let plain = ""
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!
    if (c !== "\\") {
      plain += c
      continue
    }
    const next = raw[i + 1]
    if (next === undefined) break
    i++
    if (next === "\n") continue
    if (plain !== "") out.push({ text: plain, quoted: false })
    plain = ""
    out.push({ text: next, quoted: true })
  }
  if (plain !== "") out.push({ text: plain, quoted: false })
  return out
}

/** The literal text between double quotes: only `\$`, `` \` ``, `\"`, `\\` and `\<newline>` are escapes there. */
const doubleQuoted = (raw: string): string => {
  let text = ""
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!
    const next = raw[i + 1]
    if (c === "\\" && next !== undefined && '$`"\\\n'.includes(next)) {
      i++
      if (next !== "\n") text += next
      continue
    }
    text += c
  }
  return text
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
}

/**
 * `$'…'`: the escapes bash decodes; `undefined` for one this does not decode (`\c`, `\u`, `\U`, a backslash before
 * a newline), which keeps the word dynamic.
 *
 * @since 0.3.0
 * @category utilities
 */
export const ansiC = (body: string): string | undefined => {
  let text = ""
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!
    if (c !== "\\") {
      text += c
      continue
    }
    const next = body[++i]
    if (next === undefined) return undefined
    const simple = SIMPLE_ESCAPES[next]
    if (simple !== undefined) {
      text += simple
      continue
    }
    if (next === "x") {
      const hex = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 1))
      if (hex === null) return undefined
      text += String.fromCharCode(parseInt(hex[0], 16))
      i += hex[0].length
      continue
    }
    if (next >= "0" && next <= "7") {
      const octal = /^[0-7]{1,3}/.exec(body.slice(i))!
      text += String.fromCharCode(parseInt(octal[0], 8) & 0xff)
      i += octal[0].length - 1
      continue
    }
    return undefined
  }
  return text
}

/** The pieces of a word node, or `undefined` when it holds something only known at run time. */
const piecesOf = (node: Node): Array<Piece> | undefined => {
  switch (node.type) {
    case "word":
    case "number":
      return bare(node.text)
    case "raw_string":
      return [{ text: node.text.slice(1, -1), quoted: true }]
    case "ansi_c_string": {
      const decoded = ansiC(node.text.slice(2, -1))
      return decoded === undefined ? undefined : [{ text: decoded, quoted: true }]
    }
    case "string": {
      for (const child of childrenOf(node)) {
        if (child.type !== '"' && child.type !== "string_content" && child.type !== "$") return undefined
      }
      return [{ text: doubleQuoted(node.text.slice(1, node.text.length - 1)), quoted: true }]
    }
    case "concatenation": {
      const out: Array<Piece> = []
      for (const child of childrenOf(node)) {
        // A concatenation holds only word parts; anything else (a `$` token, a nested concatenation) is dynamic.
        if (child.type === "concatenation") return undefined
        const parts = piecesOf(child)
        if (parts === undefined) return undefined
        out.push(...parts)
      }
      return out
    }
    default:
      return undefined
  }
}

/** An unquoted `*` or `?`, or an unquoted `[` with a `]` after it: a pattern the shell may expand into file names. */
const isGlob = (pieces: ReadonlyArray<Piece>): boolean => {
  const all = pieces.map((piece) => piece.text).join("")
  let at = 0
  for (const piece of pieces) {
    if (!piece.quoted) {
      for (let i = 0; i < piece.text.length; i++) {
        const c = piece.text[i]!
        if (c === "*" || c === "?") return true
        if (c === "[" && all.indexOf("]", at + i + 1) !== -1) return true
      }
    }
    at += piece.text.length
  }
  return false
}

/** An unquoted `{` … unquoted `,` or `..` … unquoted `}`: a brace expansion, which changes the words. */
const hasBrace = (pieces: ReadonlyArray<Piece>): boolean => {
  let open = false
  let separated = false
  for (const piece of pieces) {
    if (piece.quoted) continue
    const t = piece.text
    for (let i = 0; i < t.length; i++) {
      const c = t[i]!
      if (c === "{") {
        open = true
        separated = false
      } else if (open && (c === "," || (c === "." && t[i + 1] === "."))) separated = true
      else if (open && c === "}" && separated) return true
    }
  }
  return false
}

/**
 * A word that looks like an assignment (`of=~/x`, `a=b:~/y`) with an unquoted `~` after its `=` or an unquoted `:`:
 * bash expands that tilde (outside POSIX mode), sh does not, so the word the command sees depends on the shell.
 */
const assignmentTilde = (pieces: ReadonlyArray<Piece>): boolean => {
  const chars = pieces.flatMap((piece) => [...piece.text].map((c) => ({ c, quoted: piece.quoted })))
  let i = 0
  while (i < chars.length && !chars[i]!.quoted && /[A-Za-z0-9_]/.test(chars[i]!.c)) i++
  if (i === 0 || /[0-9]/.test(chars[0]!.c) || chars[i]?.c !== "=" || chars[i]!.quoted) return false
  for (let j = i + 1; j < chars.length; j++) {
    const at = chars[j]!
    if (at.quoted || at.c !== "~") continue
    const before = chars[j - 1]!
    if (j === i + 1 || (before.c === ":" && !before.quoted)) return true
  }
  return false
}

/**
 * Normalises one word node (a command name, an argument, a redirection target).
 *
 * @since 0.3.0
 * @category utilities
 */
export const word = (node: Node): Word => {
  const pieces = piecesOf(node)
  if (pieces === undefined || hasBrace(pieces)) return dynamic(node.text)
  const text = pieces.map((piece) => piece.text).join("")
  if (text.includes("~") && text.includes("=") && assignmentTilde(pieces)) return dynamic(node.text)
  const glob = isGlob(pieces)
  const first = pieces[0]
  if (first !== undefined && !first.quoted && first.text.startsWith("~")) {
    // The tilde prefix runs to the first unquoted `/`; only `~` alone is the home directory we know.
    const slash = first.text.indexOf("/")
    const prefix = slash === -1 ? (pieces.length === 1 ? first.text : undefined) : first.text.slice(0, slash)
    if (prefix !== "~") return dynamic(node.text)
    return { text, literal: true, glob, home: true }
  }
  return { text, literal: true, glob }
}

/**
 * A word from plain text that the shell would read unquoted (a `-c` string's words are nodes, not this): used for
 * the words of an assignment-looking argument.
 *
 * @since 0.3.0
 * @category utilities
 */
export const bareWord = (raw: string): Word => {
  const pieces = bare(raw)
  return {
    text: pieces.map((piece) => piece.text).join(""),
    literal: true,
    glob: isGlob(pieces),
  }
}

/**
 * Words joined by single spaces (a segment's resource).
 *
 * @since 0.3.0
 * @category utilities
 */
export const join = (words: ReadonlyArray<Word>): string => words.map((w) => w.text).join(" ")
