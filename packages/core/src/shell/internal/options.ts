/**
 * Command-line options as getopt reads them, for the commands the shell gate models: short clusters (`-rf`,
 * `-t/tmp`, `-vS'…'`), long options with `=` or a separate value, unambiguous prefixes of long options (`--tar=D`
 * is `--target-directory=D`), `--`, and either POSIX order (options stop at the first operand — wrappers) or GNU
 * permutation (options anywhere before `--`). An option the spec does not name is reported, never guessed at: the
 * caller makes the command unresolved.
 *
 * @since 0.3.0
 */
import type { Word } from "./words.js"

/**
 * The options of one command.
 *
 * @since 0.3.0
 * @category models
 */
export interface Spec {
  /** Short options without a value, as one string of letters (`"fiv"`). */
  readonly flags?: string
  /** Short options with a value: the rest of the cluster or the next word. */
  readonly values?: string
  /** Short options with an optional value, given only inside the cluster (`-i.bak`, xargs `-e`). */
  readonly optional?: string
  /** Long options without a value. */
  readonly long?: ReadonlyArray<string>
  /** Long options with a value (`--name=value` or `--name value`). */
  readonly longValues?: ReadonlyArray<string>
  /** Long options with an optional value (only `--name=value`). */
  readonly longOptional?: ReadonlyArray<string>
  /** Options stop at the first operand (wrappers); otherwise they may follow operands, until `--`. */
  readonly posix?: boolean
  /** `-5` means `-n 5` (`nice`, `head`): the digits are the value of this short option. */
  readonly numeric?: string
  /** Words starting with `+` are options too (`sh +e`), read like `-` clusters. */
  readonly plus?: boolean
}

/**
 * One option given: its canonical name (`r`, `recursive`), its value when it takes one, and the word it came from.
 *
 * @since 0.3.0
 * @category models
 */
export interface Option {
  readonly name: string
  readonly value?: Word
  /** `+` instead of `-` (`set +e`). */
  readonly plus?: boolean
}

/**
 * What the words say.
 *
 * @since 0.3.0
 * @category models
 */
export interface Parsed {
  readonly options: ReadonlyArray<Option>
  /** The operands, in order (with their index in the words). */
  readonly operands: ReadonlyArray<{ readonly word: Word; readonly index: number }>
  /** Set when a word is not an option the spec names: that word. */
  readonly unknown?: string
  /**
   * Set when a word known only at run time stands where an option may be (it may expand to options or to several
   * operands): that word. It is counted as an operand; what the command does with its files is then unknown.
   */
  readonly dynamic?: string
  /** With `posix`: the index of the first operand (the wrapped command); `words.length` when there is none. */
  readonly rest: number
}

const fromText = (text: string): Word => ({ text, literal: true, glob: false })

/** The long option `name` stands for: exact, else the one spec name it is a prefix of. */
const longName = (name: string, names: ReadonlyArray<string>): string | undefined => {
  if (names.includes(name)) return name
  const found = names.filter((candidate) => candidate.startsWith(name))
  return found.length === 1 ? found[0] : undefined
}

/**
 * Reads the options of `words` from index `from` (the command name is before it).
 *
 * @since 0.3.0
 * @category utilities
 */
export const parse = (words: ReadonlyArray<Word>, from: number, spec: Spec): Parsed => {
  const options: Array<Option> = []
  const operands: Array<{ readonly word: Word; readonly index: number }> = []
  const flags = spec.flags ?? ""
  const values = spec.values ?? ""
  const optional = spec.optional ?? ""
  const long = spec.long ?? []
  const longValues = spec.longValues ?? []
  const longOptional = spec.longOptional ?? []
  const allLong = [...long, ...longValues, ...longOptional]
  let done = false
  let dynamic: string | undefined
  const result = (rest: number, unknown?: string): Parsed => ({
    options,
    operands,
    rest,
    ...(unknown === undefined ? {} : { unknown }),
    ...(dynamic === undefined ? {} : { dynamic }),
  })
  for (let i = from; i < words.length; i++) {
    const w = words[i]!
    const t = w.text
    const optionLike = t.length > 1 && (t.startsWith("-") || (spec.plus === true && t.startsWith("+")))
    if (done || !w.literal || !optionLike) {
      // POSIX order: the first operand (or a word known only at run time) is where the command starts.
      if (spec.posix === true && !done) return result(i)
      if (!w.literal && !done) dynamic ??= t
      operands.push({ word: w, index: i })
      continue
    }
    if (t === "--") {
      done = true
      if (spec.posix === true) return result(i + 1)
      continue
    }
    if (t.startsWith("--")) {
      const eq = t.indexOf("=")
      const given = eq === -1 ? t.slice(2) : t.slice(2, eq)
      const name = longName(given, allLong)
      if (name === undefined) return result(i, t)
      if (long.includes(name)) {
        if (eq !== -1) return result(i, t)
        options.push({ name })
      } else if (longValues.includes(name)) {
        if (eq !== -1) options.push({ name, value: fromText(t.slice(eq + 1)) })
        else {
          const next = words[i + 1]
          if (next === undefined) return result(i, t)
          options.push({ name, value: next })
          i++
        }
      } else options.push(eq === -1 ? { name } : { name, value: fromText(t.slice(eq + 1)) })
      continue
    }
    const plus = t.startsWith("+")
    if (spec.numeric !== undefined && /^-\d+$/.test(t)) {
      options.push({ name: spec.numeric, value: fromText(t.slice(1)) })
      continue
    }
    for (let j = 1; j < t.length; j++) {
      const c = t[j]!
      if (flags.includes(c)) {
        options.push(plus ? { name: c, plus } : { name: c })
        continue
      }
      if (values.includes(c)) {
        const inline = t.slice(j + 1)
        if (inline !== "") options.push({ name: c, value: fromText(inline), ...(plus ? { plus } : {}) })
        else {
          const next = words[i + 1]
          if (next === undefined) return result(i, t)
          options.push({ name: c, value: next, ...(plus ? { plus } : {}) })
          i++
        }
        break
      }
      if (optional.includes(c)) {
        const inline = t.slice(j + 1)
        options.push(inline === "" ? { name: c } : { name: c, value: fromText(inline) })
        break
      }
      return result(i, t)
    }
  }
  return result(words.length)
}

/**
 * Whether an option (by any of its names) was given.
 *
 * @since 0.3.0
 * @category utilities
 */
export const has = (parsed: Parsed, ...names: ReadonlyArray<string>): boolean =>
  parsed.options.some((option) => names.includes(option.name))

/**
 * The values of an option (by any of its names), in order.
 *
 * @since 0.3.0
 * @category utilities
 */
export const valuesOf = (parsed: Parsed, ...names: ReadonlyArray<string>): ReadonlyArray<Word> =>
  parsed.options.flatMap((option) => (names.includes(option.name) && option.value !== undefined ? [option.value] : []))
