/**
 * Permission wildcard matching with the reference semantics (`*` any run, `?` one UTF-16 unit, `\` read as `/`,
 * optional trailing `" *"`, anchored, dot-all, case-insensitive only on win32), in time linear in the input for a
 * compiled pattern. Patterns are compiled once into star-separated segments; `match` keeps them in a two-generation
 * cache, and callers with many patterns (PermissionV2.evaluate) compile their own once with `Matcher.compile` and
 * prepare each input once with `Matcher.normalize`. See docs/performance.md.
 *
 * One addition to the reference: the escape character `ESCAPE` (U+0000) makes the character after it literal, so a
 * saved approval can name a command or path that contains `*` or `?` without turning them into wildcards
 * (`literal`). No resource ever contains U+0000 (paths and process arguments cannot), so every pattern that could
 * be written before keeps its meaning. See docs/trust/approvals.md.
 *
 * @since 0.1.0
 */
import { fold, slashes } from "./internal/wildcard-text.js"

/** A literal run of a segment: `text` must appear at `offset` from the segment's start. */
interface Piece {
  readonly offset: number
  readonly text: string
}

/**
 * A compiled, star-separated piece of a pattern: `length` units, of which the `pieces` are literal and the rest are
 * `?` holes. `run` is the longest literal piece (searched with `indexOf` when the segment floats); `holes` is false
 * for a segment that is one literal piece.
 */
interface Segment {
  readonly length: number
  readonly text: string
  readonly holes: boolean
  readonly pieces: ReadonlyArray<Piece>
  readonly run: Piece | undefined
  /** The positions outside `run` that are not holes, and the UTF-16 unit expected at each. */
  readonly checks: Int32Array
  readonly codes: Int32Array
  /** The source of the scan a floating segment with holes falls back to when its `run` is too frequent (`find`). */
  readonly source: string
  /** That scan, built on first use. */
  scanner: RegExp | undefined
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

/**
 * A pattern compiled once for one matcher's rules; test it with `Matcher.test` against input prepared once by
 * `Matcher.normalize`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Pattern {
  readonly source: string
  /** @internal */
  readonly compiled: Compiled
}

/**
 * A matcher for one platform's case rules, with its own compiled-pattern cache.
 *
 * @since 0.1.0
 * @category models
 */
export interface Matcher {
  readonly match: (input: string, pattern: string) => boolean
  /**
   * Compiles `pattern` for this matcher (no cache): keep the result and test many inputs with it.
   *
   * @since 0.2.0
   */
  readonly compile: (pattern: string) => Pattern
  /**
   * Prepares an input once (backslashes read as `/`, case folded on win32) for any number of `test` calls.
   *
   * @since 0.2.0
   */
  readonly normalize: (input: string) => string
  /**
   * `match` for an input already prepared by `normalize` and a pattern from `compile`.
   *
   * @since 0.2.0
   */
  readonly test: (normalized: string, pattern: Pattern) => boolean
}

/**
 * How many compiled patterns a matcher's `match` cache holds per generation. The cache keeps two generations: a
 * pattern used in the current or the previous one stays compiled, so a working set of up to this many patterns
 * never recompiles, and a larger one degrades gradually instead of all at once.
 *
 * @since 0.1.0
 * @category constants
 * @internal
 */
export const CACHE_SIZE = 4096

/**
 * The escape character: in a pattern, U+0000 followed by any character stands for that character literally (`*` and
 * `?` lose their wildcard meaning); a final lone U+0000 stands for itself. Build escaped text with `literal`.
 *
 * @since 0.2.0
 * @category constants
 */
export const ESCAPE = "\u0000"

/**
 * The pattern that matches exactly `text` (under the same backslash and case rules as any pattern): every `*`, `?`
 * and U+0000 in it is escaped. Escaped pieces compose with wildcards: `literal("git commit") + " *"` is the prefix
 * pattern for `git commit` with any arguments (or none).
 *
 * @since 0.2.0
 * @category utilities
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
 * @category guards
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
 * @category utilities
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
 * @category utilities
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

/**
 * A segment's tokens as a regular expression over UTF-16 units: each literal unit as `\uXXXX`, each hole as `[^]`.
 * It has no quantifier, alternation or group, so an attempt at one position takes at most the segment's length in
 * steps and never backtracks into an earlier one: a search is linear in the input for the pattern's fixed length,
 * and runs as V8's compiled matcher instead of a JavaScript loop.
 */
const scannerSource = (tokens: ReadonlyArray<Token>): string => {
  let source = ""
  for (const token of tokens) {
    if (token.type === "hole") source += "[^]"
    else if (token.type === "text") source += "\\u" + token.text.charCodeAt(0).toString(16).padStart(4, "0")
  }
  return source
}

const segment = (tokens: ReadonlyArray<Token>): Segment => {
  let text = ""
  let holes = false
  const pieces: Array<Piece> = []
  let current = ""
  let currentAt = 0
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    if (token.type === "hole") {
      holes = true
      text += "?"
      if (current.length > 0) pieces.push({ offset: currentAt, text: current })
      current = ""
      currentAt = i + 1
    } else if (token.type === "text") {
      text += token.text
      current += token.text
    }
  }
  if (current.length > 0) pieces.push({ offset: currentAt, text: current })
  let run: Piece | undefined
  for (const piece of pieces) if (run === undefined || piece.text.length > run.text.length) run = piece
  const positions: Array<number> = []
  for (let i = 0; i < tokens.length; i++) {
    const inRun = run !== undefined && i >= run.offset && i < run.offset + run.text.length
    if (tokens[i]!.type !== "hole" && !inRun) positions.push(i)
  }
  const checks = Int32Array.from(positions)
  const codes = Int32Array.from(positions, (i) => text.charCodeAt(i))
  const source = holes ? scannerSource(tokens) : ""
  return { length: text.length, text, holes, pieces, run, checks, codes, source, scanner: undefined }
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
  if (!seg.holes) return input.startsWith(seg.text, at)
  const pieces = seg.pieces
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i]!
    if (!input.startsWith(piece.text, at + piece.offset)) return false
  }
  return true
}

/**
 * How many candidates of a segment's `run` may fail before `find` asks whether the run is too frequent, and the
 * fewest units per failed candidate that keep it on `indexOf`. Below that density one `indexOf` call per candidate
 * costs more than scanning every unit.
 */
const PREFILTER_MISSES = 16
const PREFILTER_SPACING = 32

/** Leftmost match of `seg`'s scanner at or after `from`, ending by `end`, or -1. */
const scan = (input: string, seg: Segment, from: number, end: number): number => {
  const scanner = (seg.scanner ??= new RegExp(seg.source, "g"))
  scanner.lastIndex = from
  if (!scanner.test(input)) return -1
  // Every match is `length` units long; a later one would end later still.
  return scanner.lastIndex <= end ? scanner.lastIndex - seg.length : -1
}

/**
 * Leftmost position `>= from` where `seg` matches and ends by `end`, or -1. A segment with holes is first found
 * through its longest literal run (`indexOf`, then the other pieces checked in place), which skips most of a text at
 * native speed; when that run keeps turning up without the rest of the segment (an input built to defeat it, such
 * as `x` at every third unit for `x?z`), the rest of the text is searched with the segment's scanner. Either way no
 * shape scans position by position in JavaScript, and there is no backtracking across segments.
 */
const find = (input: string, seg: Segment, from: number, end: number): number => {
  const limit = end - seg.length
  if (from > limit) return -1
  if (!seg.holes) {
    const at = input.indexOf(seg.text, from)
    return at !== -1 && at <= limit ? at : -1
  }
  const anchor = seg.run
  if (anchor === undefined) return from
  const checks = seg.checks
  const codes = seg.codes
  const count = checks.length
  let misses = 0
  let hit = input.indexOf(anchor.text, from + anchor.offset)
  while (hit !== -1) {
    const at = hit - anchor.offset
    if (at > limit) return -1
    let i = 0
    while (i < count && input.charCodeAt(at + checks[i]!) === codes[i]) i++
    if (i === count) return at
    if (++misses === PREFILTER_MISSES) {
      if (at - from < PREFILTER_MISSES * PREFILTER_SPACING) return scan(input, seg, at + 1, end)
      misses = 0
      from = at
    }
    hit = input.indexOf(anchor.text, hit + 1)
  }
  return -1
}

const run = (input: string, compiled: Compiled): boolean => {
  const { first, last } = compiled
  if (!compiled.star) return input.length === first.length && matchesAt(input, 0, first)
  if (input.length < first.length + last.length) return false
  if (!matchesAt(input, 0, first)) return false
  const end = input.length - last.length
  if (!matchesAt(input, end, last)) return false
  let position = first.length
  const middle = compiled.middle
  for (let i = 0; i < middle.length; i++) {
    const seg = middle[i]!
    const at = find(input, seg, position, end)
    if (at === -1) return false
    position = at + seg.length
  }
  return true
}

const test = (input: string, compiled: Compiled): boolean =>
  run(input, compiled) || (compiled.optional !== undefined && run(input, compiled.optional))

/**
 * Builds a matcher; `caseInsensitive` selects the win32 rules.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: { readonly caseInsensitive: boolean }): Matcher => {
  const caseInsensitive = options.caseInsensitive
  let young = new Map<string, Compiled>()
  let old = new Map<string, Compiled>()
  const lookup = (pattern: string): Compiled => {
    const hit = young.get(pattern)
    if (hit !== undefined) return hit
    const compiled = old.get(pattern) ?? compile(pattern, caseInsensitive)
    if (young.size >= CACHE_SIZE) {
      old = young
      young = new Map()
    }
    young.set(pattern, compiled)
    return compiled
  }
  const normalize = (input: string): string => (caseInsensitive ? fold(slashes(input)) : slashes(input))
  return {
    match: (input, pattern) => test(normalize(input), lookup(pattern)),
    compile: (pattern) => ({ source: pattern, compiled: compile(pattern, caseInsensitive) }),
    normalize,
    test: (normalized, pattern) => test(normalized, pattern.compiled),
  }
}

/**
 * The matcher with this platform's rules (the one `match` uses).
 *
 * @since 0.2.0
 * @category utilities
 */
export const platform: Matcher = make({ caseInsensitive: process.platform === "win32" })

/**
 * Matches `input` against a permission `pattern` with this platform's rules.
 *
 * @example
 * ```ts
 * import { Wildcard } from "@toolgate/core"
 * import { strictEqual } from "node:assert"
 *
 * strictEqual(Wildcard.match("git commit -m fix", "git commit *"), true)
 * // The optional trailing " *" also matches the command alone.
 * strictEqual(Wildcard.match("git commit", "git commit *"), true)
 * strictEqual(Wildcard.match("git push", "git commit *"), false)
 * // An escaped star is a literal star.
 * strictEqual(Wildcard.match("rm a*", Wildcard.literal("rm a*")), true)
 * strictEqual(Wildcard.match("rm ab", Wildcard.literal("rm a*")), false)
 * ```
 *
 * @since 0.1.0
 * @category utilities
 */
export const match = (input: string, pattern: string): boolean => platform.match(input, pattern)
