/**
 * Commands that read the files their arguments name (`cat`, `head`, `grep`, `sort`, `jq`, `awk`, …) and the files
 * some of them write (`tee`, `sort -o`, `uniq IN OUT`). Reads go through the `read` rules when bash is not allowed
 * wholesale; an option outside a reader's model makes the segment unresolved, as does an option or program that can run
 * commands (`sort --compress-program`, `rg --pre`, an awk program calling `system`) makes the segment unresolved.
 * See docs/shell.md.
 *
 * @since 0.3.0
 */
import * as Options from "../internal/options.js"
import { type Effects, noEffects, use } from "../internal/segment.js"
import { join, type Word } from "../internal/words.js"
import { type Reader, READER_TABLE } from "./reader-table.js"

const READERS: ReadonlyMap<string, Reader> = new Map(
  READER_TABLE.flatMap(([names, reader]) => names.map((name): [string, Reader] => [name, reader])),
)

/**
 * The names of the commands whose file arguments are read through the `read` rules.
 *
 * @since 0.3.0
 * @category constants
 */
export const READER_NAMES: ReadonlyArray<string> = [...READERS.keys(), "jq", "awk", "gawk", "mawk", "nawk", "tee"]

const recursiveRead = (effects: Effects, raw: string) => {
  effects.reads.push({
    word: { text: raw, literal: false, glob: false },
    raw,
    mode: "tree",
    follow: true,
    unknown: "it reads a whole directory tree, past the read rules",
  })
}

const generic = (name: string, reader: Reader, words: ReadonlyArray<Word>): Effects => {
  const effects = noEffects()
  const raw = join(words)
  if (reader.alwaysRecursive === true) {
    if (words.some((w) => !w.literal || /^--pre(?:-glob)?(?:=|$)/.test(w.text))) {
      effects.unresolved = `${name} --pre runs a program on every file`
    }
    recursiveRead(effects, raw)
    return effects
  }
  const parsed = Options.parse(words, 1, reader.spec)
  if (parsed.unknown !== undefined) {
    // An option outside the table may do anything (`file --preserve-date` resets times): the segment is unresolved.
    effects.unresolved = `${name} ${parsed.unknown} is an option the gate does not model`
    return effects
  }
  if (name === "sort" && words.some((w) => w.literal && w.text.startsWith("--compress-program"))) {
    effects.unresolved = "sort --compress-program runs a program"
    return effects
  }
  for (const file of Options.valuesOf(parsed, ...(reader.readOptions ?? []))) effects.reads.push(use(file, raw))
  for (const file of Options.valuesOf(parsed, ...(reader.writeOptions ?? []))) effects.writes.push(use(file, raw))
  for (const directory of Options.valuesOf(parsed, "T", "temporary-directory")) {
    if (name === "sort") effects.writes.push(use(directory, raw, "tree"))
  }
  let operands = parsed.operands.map((o) => o.word)
  if (reader.script !== undefined && !Options.has(parsed, ...reader.script)) operands = operands.slice(1)
  if (name === "uniq" && operands.length >= 2) {
    effects.writes.push(use(operands[1]!, raw))
    operands = operands.slice(0, 1)
  }
  if (reader.recursive !== undefined && Options.has(parsed, ...reader.recursive)) {
    recursiveRead(effects, raw)
    return effects
  }
  for (const file of operands) if (!(file.literal && file.text === "-")) effects.reads.push(use(file, raw))
  return effects
}

const jq = (words: ReadonlyArray<Word>): Effects => {
  const effects = noEffects()
  const raw = join(words)
  let program = false
  let positional = false
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!
    if (!w.literal) {
      effects.reads.push({ ...use(w, raw), unknown: `${w.text} is only known when the shell runs` })
      continue
    }
    const t = w.text
    if (positional) continue
    if (t === "--args" || t === "--jsonargs") {
      positional = true
      continue
    }
    if (t === "--arg" || t === "--argjson") {
      i += 2
      continue
    }
    if (t === "--slurpfile" || t === "--rawfile") {
      const file = words[i + 2]
      if (file !== undefined) effects.reads.push(use(file, raw))
      i += 2
      continue
    }
    if (t === "-f" || t === "--from-file") {
      const file = words[i + 1]
      if (file !== undefined) effects.reads.push(use(file, raw))
      program = true
      i++
      continue
    }
    if (t === "-L" || t === "--indent") {
      i++
      continue
    }
    if (t.startsWith("-") && t.length > 1) {
      if (
        !/^(?:-[cnrjaseSCMh0]+|--(?:compact-output|null-input|raw-output|join-output|ascii-output|slurp|exit-status|sort-keys|color-output|monochrome-output|tab|raw-input|raw-output0|seq|stream|stream-errors))$/.test(
          t,
        )
      ) {
        effects.reads.push({ ...use(w, raw), unknown: `jq ${t} is an option the gate does not model` })
      }
      continue
    }
    if (!program) {
      program = true
      continue
    }
    effects.reads.push(use(w, raw))
  }
  return effects
}

/** What in an awk program may run a command, read or write a file: `>=` alone is a comparison. */
const AWK_UNSAFE = /system|getline|\||>(?!=)|@|ENVIRON|PROCINFO|close|fflush/

const awk = (words: ReadonlyArray<Word>): Effects => {
  const effects = noEffects()
  const raw = join(words)
  const parsed = Options.parse(words, 1, { values: "fvFe", posix: false })
  if (parsed.unknown !== undefined) {
    effects.unresolved = `awk ${parsed.unknown} is an option the gate does not model`
    return effects
  }
  if (Options.has(parsed, "f")) {
    effects.unresolved = "awk -f runs a program from a file"
    return effects
  }
  const given = Options.valuesOf(parsed, "e")
  const operands = parsed.operands.map((o) => o.word)
  const programs = given.length > 0 ? given : operands.slice(0, 1)
  for (const program of programs) {
    if (!program.literal || AWK_UNSAFE.test(program.text)) {
      effects.unresolved = "the awk program may run commands or write files"
      return effects
    }
  }
  for (const file of given.length > 0 ? operands : operands.slice(1)) {
    // `var=value` operands are assignments, not files.
    if (file.literal && /^[A-Za-z_][A-Za-z0-9_]*=/.test(file.text)) continue
    effects.reads.push(use(file, raw))
  }
  return effects
}

const tee = (words: ReadonlyArray<Word>): Effects => {
  const effects = noEffects()
  const parsed = Options.parse(words, 1, {
    flags: "aip",
    long: ["append", "ignore-interrupts"],
    longOptional: ["output-error"],
  })
  const raw = join(words)
  if (parsed.unknown !== undefined) {
    effects.unresolved = `tee ${parsed.unknown} is an option the gate does not model`
    return effects
  }
  for (const { word } of parsed.operands) effects.writes.push(use(word, raw))
  return effects
}

/**
 * The files a reading command reads and writes, or `undefined` when `name` is not a reader.
 *
 * @since 0.3.0
 * @category utilities
 */
export const readerEffects = (name: string, words: ReadonlyArray<Word>): Effects | undefined => {
  if (name === "jq") return jq(words)
  if (name === "awk" || name === "gawk" || name === "mawk" || name === "nawk") return awk(words)
  if (name === "tee") return tee(words)
  const reader = READERS.get(name)
  return reader === undefined ? undefined : generic(name, reader, words)
}
