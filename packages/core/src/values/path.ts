/**
 * Path: the pure path arithmetic every floor shares — whether one path is inside another, the home expansion of a
 * pattern or path (from the home directory `Global` resolved, never read again from the process), and the UTF-16
 * surrogate checks a path or a cut of text needs (a lone surrogate reaches the disk as U+FFFD, another name than the
 * one checked). Nothing here touches the disk: a lexical answer only, so callers confine canonical paths.
 *
 * @since 0.3.0
 */
import * as path from "node:path"

/**
 * True iff `child` is `parent` or lexically below it (both absolute, or both relative to the same directory). A name
 * that merely starts with two dots (`..cache`) is below; `..` and what lies under it are not.
 *
 * @since 0.3.0
 * @category predicates
 */
export const isWithin = (parent: string, child: string): boolean => {
  const relative = path.relative(parent, child)
  return relative === "" || (!path.isAbsolute(relative) && relative !== ".." && !relative.startsWith(`..${path.sep}`))
}

/**
 * Expands a leading `~`, `~/`, `$HOME`, `$HOME/` or `$HOME\` to `home` (pass `Global.home`); a `~` or `$HOME`
 * anywhere else, or `~user`, is left as it is.
 *
 * @since 0.3.0
 * @category home
 */
export const expandHome = (text: string, home: string): string => {
  if (text === "~" || text === "$HOME") return home
  if (text.startsWith("~/")) return home + text.slice(1)
  if (text.startsWith("$HOME/") || text.startsWith("$HOME\\")) return home + text.slice(5)
  return text
}

/**
 * True iff `text` starts with the `~` that `expandHome` expands (`~` or `~/…`).
 *
 * @since 0.3.0
 * @category home
 */
export const startsWithHome = (text: string): boolean => text === "~" || text.startsWith("~/")

/**
 * A high (leading) surrogate code unit, U+D800–U+DBFF.
 *
 * @since 0.3.0
 * @category surrogates
 */
export const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/**
 * A low (trailing) surrogate code unit, U+DC00–U+DFFF.
 *
 * @since 0.3.0
 * @category surrogates
 */
export const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/**
 * Matches one surrogate that is not half of a pair.
 *
 * @since 0.3.0
 * @category surrogates
 */
export const LONE_SURROGATE: RegExp = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * True iff `text` holds a surrogate that is not half of a pair (it is not well-formed Unicode).
 *
 * @since 0.3.0
 * @category surrogates
 */
export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text)

/**
 * True iff cutting `text` after `units` code units would split a surrogate pair.
 *
 * @since 0.3.0
 * @category surrogates
 */
export const splitsPair = (text: string, units: number): boolean =>
  units > 0 &&
  units < text.length &&
  isHighSurrogate(text.charCodeAt(units - 1)) &&
  isLowSurrogate(text.charCodeAt(units))
