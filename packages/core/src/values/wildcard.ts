/**
 * Permission wildcard matching with the reference semantics (`*` any run, `?` one UTF-16 unit, `\` read as `/`,
 * optional trailing `" *"`, anchored, dot-all, case-insensitive only on win32), in time linear in the input for a
 * compiled pattern. Patterns are compiled once into star-separated segments and kept in a bounded cache (oldest
 * compiled pattern evicted first).
 *
 * @since 0.1.0
 */

/** A compiled, star-separated piece of a pattern; `?` positions match any single code unit. */
interface Segment {
  readonly text: string
  readonly wild: boolean
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

const segment = (text: string): Segment => ({ text, wild: text.includes("?") })

const compileCore = (pattern: string): Compiled => {
  const parts = pattern.split("*")
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
  const core = compileCore(pattern)
  if (pattern.endsWith(" *")) return { ...core, optional: compileCore(pattern.slice(0, -2)) }
  return core
}

/** Does `seg` match `input` at `at` (the caller guarantees it fits)? */
const matchesAt = (input: string, at: number, seg: Segment): boolean => {
  if (!seg.wild) return input.startsWith(seg.text, at)
  const text = seg.text
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code !== 63 /* ? */ && code !== input.charCodeAt(at + i)) return false
  }
  return true
}

/** Leftmost position `>= from` where `seg` matches and ends by `end`, or -1. */
const find = (input: string, seg: Segment, from: number, end: number): number => {
  const limit = end - seg.text.length
  if (!seg.wild) {
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
