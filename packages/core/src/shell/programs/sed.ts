/**
 * `sed` as the gate reads it: its scripts must only print and edit the stream (no `w`, `W`, `r`, `R` or `e` — a
 * small reader of sed's own syntax decides; anything it does not recognise is unsafe), its file operands are reads,
 * and with `-i` writes too (and the backup files `-i SUFFIX` makes). See docs/shell.md.
 *
 * @since 0.3.0
 */
import * as Options from "../internal/options.js"
import { type Effects, noEffects, unmodelled, use } from "../internal/segment.js"
import { join, type Word } from "../internal/words.js"

/**
 * True when a sed script can only print and edit the stream: no `w`/`W` (write a file), `r`/`R` (read one) or `e`
 * (run a command) command, and no `w` or `e` flag on an `s` command. Anything it does not recognise counts as
 * unsafe.
 *
 * @since 0.3.0
 * @category utilities
 */
export const safeSedScript = (script: string): boolean => {
  let i = 0
  const n = script.length
  const skipSpace = () => {
    while (i < n && /[ \t\n;]/.test(script[i]!)) i++
  }
  const delimited = (delimiter: string): boolean => {
    while (i < n && script[i] !== delimiter) {
      if (script[i] === "\\") i++
      if (script[i] === "\n" && delimiter !== "\n") return false
      i++
    }
    if (i >= n) return false
    i++
    return true
  }
  const address = (): boolean => {
    if (i < n && /[0-9$]/.test(script[i]!)) {
      while (i < n && /[0-9$~+]/.test(script[i]!)) i++
      return true
    }
    if (script[i] === "/") {
      i++
      if (!delimited("/")) return false
      while (script[i] === "I" || script[i] === "M") i++
      return true
    }
    if (script[i] === "\\") {
      const d = script[i + 1]
      if (d === undefined) return false
      i += 2
      if (!delimited(d)) return false
      while (script[i] === "I" || script[i] === "M") i++
      return true
    }
    return true
  }
  for (;;) {
    skipSpace()
    if (i >= n) return true
    if (script[i] === "#") {
      while (i < n && script[i] !== "\n") i++
      continue
    }
    if (!address()) return false
    if (script[i] === ",") {
      i++
      if (!address()) return false
    }
    while (script[i] === " " || script[i] === "!") i++
    const c = script[i]
    if (c === undefined) return false
    i++
    if ("pPdDnNgGhHxlqQz=F{}".includes(c)) continue
    if (c === "b" || c === "t" || c === "T" || c === ":") {
      while (i < n && script[i] !== "\n" && script[i] !== ";") i++
      continue
    }
    if (c === "a" || c === "i" || c === "c") {
      while (i < n && script[i] !== "\n") {
        if (script[i] === "\\") i++
        i++
      }
      continue
    }
    if (c === "y") {
      const d = script[i++]
      if (d === undefined || !delimited(d) || !delimited(d)) return false
      continue
    }
    if (c === "s") {
      const d = script[i++]
      if (d === undefined || d === "\n" || d === "\\" || !delimited(d) || !delimited(d)) return false
      while (i < n && /[gpiImM0-9]/.test(script[i]!)) i++
      if (i < n && !/[ \t\n;}]/.test(script[i]!)) return false
      continue
    }
    return false
  }
}

/**
 * The effects of one `sed` command.
 *
 * @since 0.3.0
 * @category utilities
 */
export const sed = (words: ReadonlyArray<Word>): Effects => {
  const effects = noEffects()
  const parsed = Options.parse(words, 1, {
    flags: "nrEsuz",
    values: "efl",
    optional: "i",
    long: [
      "quiet",
      "silent",
      "regexp-extended",
      "separate",
      "unbuffered",
      "null-data",
      "zero-terminated",
      "posix",
      "sandbox",
      "debug",
      "follow-symlinks",
    ],
    longValues: ["expression", "file", "line-length"],
    longOptional: ["in-place"],
  })
  if (parsed.unknown !== undefined) return unmodelled(effects, "sed", parsed.unknown)
  if (Options.has(parsed, "f", "file")) return unmodelled(effects, "sed", "-f (a script from a file)")
  const expressions = Options.valuesOf(parsed, "e", "expression")
  const operands = parsed.operands.map((o) => o.word)
  const scripts = expressions.length > 0 ? expressions : operands.slice(0, 1)
  const files = expressions.length > 0 ? operands : operands.slice(1)
  const sandboxed = Options.has(parsed, "sandbox")
  for (const script of scripts) {
    if (!script.literal) return unmodelled(effects, "sed", `script ${script.text}`)
    if (!sandboxed && !safeSedScript(script.text)) {
      effects.unresolved = "the sed script may write or read files or run commands (w, r, e)"
      return effects
    }
  }
  const inPlace = parsed.options.find((o) => o.name === "i" || o.name === "in-place")
  const follow = Options.has(parsed, "follow-symlinks")
  const raw = join(words)
  for (const file of files) {
    effects.reads.push(use(file, raw))
    if (inPlace === undefined) continue
    // Without --follow-symlinks, sed -i replaces a link by a file of its own.
    effects.writes.push(use(file, raw, "file", follow))
    const suffix = inPlace.value?.text
    if (suffix === undefined || suffix === "") continue
    if (suffix.includes("/") || suffix.includes("*") || !file.literal) {
      effects.writes.push({ ...use(file, raw), unknown: `the backup name ${suffix} is not followed` })
    } else effects.writes.push(use({ ...file, text: `${file.text}${suffix}` }, raw, "file", false))
  }
  return effects
}
