/**
 * Permission wildcard matching with the reference semantics (`*` any run, `?` one UTF-16 unit, `\` read as `/`,
 * optional trailing `" *"`, anchored, dot-all, case-insensitive only on win32), in time linear in the input for a
 * compiled pattern. Patterns are compiled once into star-separated segments and kept in a bounded cache (oldest
 * compiled pattern evicted first).
 *
 * One addition to the reference: the escape character `ESCAPE` (U+0000) makes the character after it literal, so a
 * saved approval can name a command or path that contains `*` or `?` without turning them into wildcards
 * (`literal`). No resource ever contains U+0000 (paths and process arguments cannot), so every pattern that could
 * be written before keeps its meaning. See docs/trust/approvals.md.
 *
 * @since 0.1.0
 */

/** A compiled, star-separated piece of a pattern; `holes[i]` marks a `?` position that matches any single unit. */
interface Segment {
  readonly text: string
  readonly holes: Uint8Array | undefined
}

/** A compiled pattern: `first` anchored at the start, `last` anchored at the end, `middle` found greedily. */
interface Compiled {
  readonly star: boolean
  readonly first: Segment
  readonly middle: ReadonlyArray<Segment>
  readonly last: Segment
  /** The same pattern without its optional trailing `" *"` (matching either one suffices). */
  readonly optional?: Compiled
}

/** A matcher for one platform's case rules, with its own compiled-pattern cache. */
export interface Matcher {
  readonly match: (input: string, pattern: string) => boolean
}

/** How many compiled patterns a matcher keeps. */
export const CACHE_SIZE = 1000

/**
 * The escape character: in a pattern, U+0000 followed by any character stands for that character literally (`*` and
 * `?` lose their wildcard meaning); a final lone U+0000 stands for itself. Build escaped text with `literal`.
 *
 * @since 0.2.0
 */
export const ESCAPE = "\u0000"

/**
 * The pattern that matches exactly `text` (under the same backslash and case rules as any pattern): every `*`, `?`
 * and U+0000 in it is escaped. Escaped pieces compose with wildcards: `literal("git commit") + " *"` is the prefix
 * pattern for `git commit` with any arguments (or none).
 *
 * @since 0.2.0
 */
export const literal = (text: string): string => {
  let out = ""
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    out += c === "*" || c === "?" || c === ESCAPE ? ESCAPE + c : c
  }
  return out
}

/**
 * True iff `pattern` has no wildcard left once its escapes are read (it matches exactly one text, `unescape`).
 *
 * @since 0.2.0
 */
export const isLiteral = (pattern: string): boolean => {
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === ESCAPE) i++
    else if (c === "*" || c === "?") return false
  }
  return true
}

/**
 * The text of `pattern` with its escapes removed: for a literal pattern, exactly the text it matches. Wildcards
 * stay as written.
 *
 * @since 0.2.0
 */
export const unescape = (pattern: string): string => {
  if (!pattern.includes(ESCAPE)) return pattern
  let out = ""
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === ESCAPE && i + 1 < pattern.length) out += pattern[++i]!
    else out += c
  }
  return out
}

/**
 * A human rendering of `pattern` for prompts and listings: a literal pattern is its text; otherwise wildcards stay
 * `*`/`?` and escaped `*`/`?` are shown as `[*]`/`[?]` so the two cannot be confused.
 *
 * @since 0.2.0
 */
export const display = (pattern: string): string => {
  if (isLiteral(pattern)) return unescape(pattern)
  let out = ""
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === ESCAPE && i + 1 < pattern.length) {
      const next = pattern[++i]!
      out += next === "*" || next === "?" ? `[${next}]` : next
    } else out += c
  }
  return out
}

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

const fold = (text: string): string => {
  let out = ""
  for (let i = 0; i < text.length; i++) out += String.fromCharCode(foldUnit(text.charCodeAt(i)))
  return out
}

/** One token of a pattern: literal text, a `?` hole, or a `*`. */
type Token = { readonly type: "text"; readonly text: string } | { readonly type: "hole" } | { readonly type: "star" }

const tokenize = (pattern: string): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === ESCAPE) tokens.push({ type: "text", text: i + 1 < pattern.length ? pattern[++i]! : c })
    else if (c === "*") tokens.push({ type: "star" })
    else if (c === "?") tokens.push({ type: "hole" })
    else tokens.push({ type: "text", text: c })
  }
  return tokens
}

const segment = (tokens: ReadonlyArray<Token>): Segment => {
  let text = ""
  let holes: Uint8Array | undefined
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    if (token.type === "hole") {
      holes ??= new Uint8Array(tokens.length)
      holes[i] = 1
      text += "?"
    } else if (token.type === "text") text += token.text
  }
  return { text, holes }
}

const compileCore = (tokens: ReadonlyArray<Token>): Compiled => {
  const parts: Array<Array<Token>> = [[]]
  for (const token of tokens) {
    if (token.type === "star") parts.push([])
    else parts[parts.length - 1]!.push(token)
  }
  if (parts.length === 1) {
    const only = segment(parts[0]!)
    return { star: false, first: only, middle: [], last: only }
  }
  return {
    star: true,
    first: segment(parts[0]!),
    middle: parts
      .slice(1, -1)
      .filter((part) => part.length > 0)
      .map(segment),
    last: segment(parts[parts.length - 1]!),
  }
}

const compile = (raw: string, caseInsensitive: boolean): Compiled => {
  let pattern = raw.replaceAll("\\", "/")
  if (caseInsensitive) pattern = fold(pattern)
  const tokens = tokenize(pattern)
  const core = compileCore(tokens)
  const last = tokens[tokens.length - 1]
  const beforeLast = tokens[tokens.length - 2]
  if (last?.type === "star" && beforeLast?.type === "text" && beforeLast.text === " ") {
    return { ...core, optional: compileCore(tokens.slice(0, -2)) }
  }
  return core
}

/** Does `seg` match `input` at `at` (the caller guarantees it fits)? */
const matchesAt = (input: string, at: number, seg: Segment): boolean => {
  const holes = seg.holes
  if (holes === undefined) return input.startsWith(seg.text, at)
  const text = seg.text
  for (let i = 0; i < text.length; i++) {
    if (holes[i] !== 1 && text.charCodeAt(i) !== input.charCodeAt(at + i)) return false
  }
  return true
}

/** Leftmost position `>= from` where `seg` matches and ends by `end`, or -1. */
const find = (input: string, seg: Segment, from: number, end: number): number => {
  const limit = end - seg.text.length
  if (seg.holes === undefined) {
    const at = input.indexOf(seg.text, from)
    return at !== -1 && at <= limit ? at : -1
  }
  for (let at = from; at <= limit; at++) if (matchesAt(input, at, seg)) return at
  return -1
}

const run = (input: string, compiled: Compiled): boolean => {
  const { first, last } = compiled
  if (!compiled.star) return input.length === first.text.length && matchesAt(input, 0, first)
  if (input.length < first.text.length + last.text.length) return false
  if (!matchesAt(input, 0, first)) return false
  const end = input.length - last.text.length
  if (!matchesAt(input, end, last)) return false
  let position = first.text.length
  for (const seg of compiled.middle) {
    const at = find(input, seg, position, end)
    if (at === -1) return false
    position = at + seg.text.length
  }
  return true
}

/** Builds a matcher; `caseInsensitive` selects the win32 rules. */
export const make = (options: { readonly caseInsensitive: boolean }): Matcher => {
  const cache = new Map<string, Compiled>()
  const lookup = (pattern: string): Compiled => {
    const hit = cache.get(pattern)
    if (hit !== undefined) return hit
    const compiled = compile(pattern, options.caseInsensitive)
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!)
    cache.set(pattern, compiled)
    return compiled
  }
  return {
    match: (rawInput, pattern) => {
      const compiled = lookup(pattern)
      let input = rawInput.replaceAll("\\", "/")
      if (options.caseInsensitive) input = fold(input)
      return run(input, compiled) || (compiled.optional !== undefined && run(input, compiled.optional))
    },
  }
}

const platformMatcher = make({ caseInsensitive: process.platform === "win32" })

/** Matches `input` against a permission `pattern` with this platform's rules. */
export const match = (input: string, pattern: string): boolean => platformMatcher.match(input, pattern)
