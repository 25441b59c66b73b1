/**
 * The matching engine of `edit`: exact matching first, then seven fuzzy candidate generators ("replacers")
 * tried in a fixed order. A replacer yields strings that are exact substrings of the content or derived search
 * strings; `replace` keeps the first candidate that occurs exactly once (or, with `replaceAll`, the first that
 * occurs at all) and refuses ambiguous ones.
 *
 * @since 0.1.0
 */

/**
 * A candidate generator: `(content, find)` → candidate search strings, in preference order.
 *
 * @since 0.1.0
 * @category models
 */
export type Replacer = (content: string, find: string) => Iterable<string>

const lines = (text: string): Array<string> => text.split("\n")

/** Lines `start` .. `start + count - 1` of `all`, joined: the exact text without the final newline. */
const block = (all: ReadonlyArray<string>, start: number, count: number): string =>
  all.slice(start, start + count).join("\n")

/** The lines of `find`, without a trailing empty line. */
const withoutTrailingEmpty = (find: string): Array<string> => {
  const result = lines(find)
  if (result.length > 0 && result[result.length - 1] === "") result.pop()
  return result
}

/** Every window of `count` consecutive content lines, as text. */
function* windows(content: ReadonlyArray<string>, count: number): Generator<string> {
  for (let i = 0; i + count <= content.length; i++) yield block(content, i, count)
}

/**
 * Levenshtein edit distance (two-row dynamic programme).
 *
 * @since 0.1.0
 * @category utilities
 */
export const levenshtein = (a: string, b: string): number => {
  if (a === b) return 0
  if (a.length === 0) return b.length
  if (b.length === 0) return a.length
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  let current = new Array<number>(b.length + 1)
  for (let i = 1; i <= a.length; i++) {
    current[0] = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
    }
    ;[previous, current] = [current, previous]
  }
  return previous[b.length]!
}

/**
 * 1. Blocks whose lines equal `find`'s lines after `trim()`.
 *
 * @since 0.1.0
 */
export function* lineTrimmed(content: string, find: string): Generator<string> {
  const all = lines(content)
  const search = withoutTrailingEmpty(find)
  for (let i = 0; i + search.length <= all.length; i++) {
    if (search.every((line, k) => all[i + k]!.trim() === line.trim())) yield block(all, i, search.length)
  }
}

/**
 * 2. Blocks anchored by `find`'s first and last trimmed lines; the most similar of several must reach 0.3.
 *
 * @since 0.1.0
 */
export function* blockAnchor(content: string, find: string): Generator<string> {
  if (lines(find).length < 3) return
  const all = lines(content)
  const search = withoutTrailingEmpty(find)
  const first = search[0]!.trim()
  const last = search[search.length - 1]!.trim()
  const candidates: Array<{ readonly start: number; readonly end: number }> = []
  for (let i = 0; i < all.length; i++) {
    if (all[i]!.trim() !== first) continue
    for (let j = i + 2; j < all.length; j++) {
      if (all[j]!.trim() === last) {
        candidates.push({ start: i, end: j })
        break
      }
    }
  }
  if (candidates.length === 0) return
  if (candidates.length === 1) {
    const only = candidates[0]!
    yield block(all, only.start, only.end - only.start + 1)
    return
  }
  const similarity = ({ start, end }: { readonly start: number; readonly end: number }): number => {
    const blockLength = end - start + 1
    const divisor = Math.min(search.length - 2, blockLength - 2)
    if (divisor <= 0) return 1
    let sum = 0
    for (let k = 1; k < search.length - 1 && k < blockLength - 1; k++) {
      const a = search[k]!.trim()
      const b = all[start + k]!.trim()
      if (a.length === 0 && b.length === 0) continue
      sum += 1 - levenshtein(a, b) / Math.max(a.length, b.length)
    }
    return sum / divisor
  }
  let best = candidates[0]!
  let bestScore = similarity(best)
  for (const candidate of candidates.slice(1)) {
    const score = similarity(candidate)
    if (score > bestScore) {
      best = candidate
      bestScore = score
    }
  }
  if (bestScore >= 0.3) yield block(all, best.start, best.end - best.start + 1)
}

const normalizeWhitespace = (text: string): string => text.replace(/\s+/g, " ").trim()
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * 3. Lines, in-line matches or line windows equal to `find` once whitespace runs collapse to one space.
 *
 * @since 0.1.0
 */
export function* whitespaceNormalized(content: string, find: string): Generator<string> {
  const target = normalizeWhitespace(find)
  const all = lines(content)
  for (const line of all) {
    const normalized = normalizeWhitespace(line)
    if (normalized === target) {
      yield line
    } else if (normalized.includes(target)) {
      const pattern = find.trim().split(/\s+/).map(escapeRegExp).join("\\s+")
      const match = new RegExp(pattern).exec(line)
      if (match !== null) yield match[0]
    }
  }
  const count = lines(find).length
  if (count > 1) {
    for (const window of windows(all, count)) if (normalizeWhitespace(window) === target) yield window
  }
}

const dedent = (text: string): string => {
  const all = lines(text)
  const indents = all.filter((line) => line.trim().length > 0).map((line) => /^\s*/.exec(line)![0].length)
  if (indents.length === 0) return text
  const minimum = indents.reduce((a, b) => Math.min(a, b))
  return all.map((line) => (line.trim().length === 0 ? line : line.slice(minimum))).join("\n")
}

/**
 * 4. Line windows equal to `find` once both lose their common leading indentation.
 *
 * @since 0.1.0
 */
export function* indentationFlexible(content: string, find: string): Generator<string> {
  const target = dedent(find)
  for (const window of windows(lines(content), lines(find).length)) if (dedent(window) === target) yield window
}

const ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "'": "'",
  '"': '"',
  "`": "`",
  "\\": "\\",
  "\n": "\n",
  $: "$",
}

const unescape = (text: string): string =>
  text.replace(/\\(n|t|r|'|"|`|\\|\n|\$)/g, (_, char: string) => ESCAPES[char]!)

/**
 * 5. `find` with its backslash escapes decoded, then line windows that decode to the same text.
 *
 * @since 0.1.0
 */
export function* escapeNormalized(content: string, find: string): Generator<string> {
  const target = unescape(find)
  if (content.includes(target)) yield target
  for (const window of windows(lines(content), lines(target).length)) if (unescape(window) === target) yield window
}

/**
 * 6. `find` without its surrounding whitespace, then line windows equal to it once trimmed.
 *
 * @since 0.1.0
 */
export function* trimmedBoundary(content: string, find: string): Generator<string> {
  const target = find.trim()
  if (target === find) return
  if (content.includes(target)) yield target
  for (const window of windows(lines(content), lines(find).length)) if (window.trim() === target) yield window
}

/**
 * 7. Same-length blocks anchored by the first and last trimmed lines with at least half the middle lines equal.
 *
 * @since 0.1.0
 */
export function* contextAware(content: string, find: string): Generator<string> {
  if (lines(find).length < 3) return
  const all = lines(content)
  const search = withoutTrailingEmpty(find)
  const first = search[0]!.trim()
  const last = search[search.length - 1]!.trim()
  for (let i = 0; i < all.length; i++) {
    if (all[i]!.trim() !== first) continue
    for (let j = i + 2; j < all.length; j++) {
      if (all[j]!.trim() !== last) continue
      const length = j - i + 1
      if (length === search.length) {
        let nonEmpty = 0
        let equal = 0
        for (let k = 1; k < length - 1; k++) {
          const a = all[i + k]!.trim()
          const b = search[k]!.trim()
          if (a.length === 0 && b.length === 0) continue
          nonEmpty++
          if (a === b) equal++
        }
        if (nonEmpty === 0 || equal / nonEmpty >= 0.5) yield block(all, i, length)
      }
      break
    }
  }
}

/**
 * The fuzzy replacers by name; the key order is the order they are tried in.
 *
 * @since 0.1.0
 * @category utilities
 */
export const replacers = {
  lineTrimmed,
  blockAnchor,
  whitespaceNormalized,
  indentationFlexible,
  escapeNormalized,
  trimmedBoundary,
  contextAware,
} as const satisfies Readonly<Record<string, Replacer>>

/**
 * The fuzzy replacers in the order they are tried.
 *
 * @since 0.1.0
 * @category utilities
 */
export const ordered: ReadonlyArray<Replacer> = Object.values(replacers)

/**
 * The non-overlapping occurrences of `search` in `content` (scanning with `indexOf`). `search` must be non-empty.
 *
 * @since 0.1.0
 * @category utilities
 */
export const countOccurrences = (content: string, search: string): number => {
  let count = 0
  for (let offset = content.indexOf(search); offset !== -1; offset = content.indexOf(search, offset + search.length))
    count++
  return count
}

/**
 * The outcome of `replace`.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome =
  | { readonly _tag: "Replaced"; readonly text: string; readonly replacements: number; readonly fuzzy: boolean }
  /** Neither exact nor fuzzy matching found anything. */
  | { readonly _tag: "NotFound" }
  /** Exact matching found several occurrences and `replaceAll` was not set. */
  | { readonly _tag: "MultipleExact" }
  /** Fuzzy candidates occurred, but each more than once. */
  | { readonly _tag: "Ambiguous" }

/**
 * Replaces `find` with `replacement` in `content`: exact matching (JavaScript `replace` / `replaceAll` semantics,
 * so `$&` and friends are interpreted), else the fuzzy replacers (a single replacement is plain concatenation).
 *
 * @since 0.1.0
 * @category utilities
 */
export const replace = (content: string, find: string, replacement: string, replaceAll = false): Outcome => {
  const exact = countOccurrences(content, find)
  if (exact > 0) {
    if (exact > 1 && !replaceAll) return { _tag: "MultipleExact" }
    const text = replaceAll ? content.replaceAll(find, replacement) : content.replace(find, replacement)
    return { _tag: "Replaced", text, replacements: exact, fuzzy: false }
  }
  let found = false
  for (const replacer of ordered) {
    for (const candidate of replacer(content, find)) {
      if (candidate === "") continue
      const index = content.indexOf(candidate)
      if (index === -1) continue
      found = true
      if (replaceAll) {
        const replacements = countOccurrences(content, candidate)
        return { _tag: "Replaced", text: content.replaceAll(candidate, replacement), replacements, fuzzy: true }
      }
      if (content.lastIndexOf(candidate) !== index) continue
      const text = content.slice(0, index) + replacement + content.slice(index + candidate.length)
      return { _tag: "Replaced", text, replacements: 1, fuzzy: true }
    }
  }
  return found ? { _tag: "Ambiguous" } : { _tag: "NotFound" }
}
