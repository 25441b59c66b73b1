/**
 * Commands that read the files their arguments name (`cat`, `head`, `grep`, `sort`, `jq`, `awk`, …) and the files
 * some of them write (`tee`, `sort -o`, `uniq IN OUT`). Reads go through the `read` rules when bash is not allowed
 * wholesale; an option outside a reader's model makes its reads unresolved, and an option or program that can run
 * commands (`sort --compress-program`, `rg --pre`, an awk program calling `system`) makes the segment unresolved.
 * See docs/shell.md.
 *
 * @since 0.3.0
 */
import * as Options from "./shell-options.js"
import { type Effects, noEffects, use } from "./shell-segment.js"
import { join, type Word } from "./shell-words.js"

/**
 * How one reader's words are read.
 *
 * @since 0.3.0
 */
interface Reader {
  readonly spec: Options.Spec
  /** The first operand is a pattern or program, not a file (unless one of these options gives it). */
  readonly script?: ReadonlyArray<string>
  /** Options whose value is a file it reads. */
  readonly readOptions?: ReadonlyArray<string>
  /** Options whose value is a file it writes. */
  readonly writeOptions?: ReadonlyArray<string>
  /** Options that make it read whole directory trees. */
  readonly recursive?: ReadonlyArray<string>
  /** It reads directory trees whatever its options. */
  readonly alwaysRecursive?: boolean
}

const plain = (
  flags: string,
  values = "",
  long: ReadonlyArray<string> = [],
  longValues: ReadonlyArray<string> = [],
) => ({
  spec: { flags, values, long, longValues },
})

const READER_TABLE: ReadonlyArray<readonly [ReadonlyArray<string>, Reader]> = [
  [
    ["cat"],
    plain("AbeEnstTuv", "", [
      "show-all",
      "number-nonblank",
      "show-ends",
      "number",
      "squeeze-blank",
      "show-tabs",
      "show-nonprinting",
    ]),
  ],
  [["tac"], plain("br", "s", ["before", "regex"], ["separator"])],
  [
    ["head", "tail"],
    {
      spec: {
        flags: "qvzfF",
        values: "ncs",
        numeric: "n",
        long: ["quiet", "silent", "verbose", "zero-terminated", "retry"],
        longValues: ["lines", "bytes", "pid", "sleep-interval", "max-unchanged-stats"],
        longOptional: ["follow"],
      },
    },
  ],
  [
    ["wc"],
    {
      spec: {
        flags: "cmlLw",
        long: ["bytes", "chars", "lines", "max-line-length", "words"],
        longValues: ["files0-from"],
        longOptional: ["total"],
      },
      readOptions: ["files0-from"],
    },
  ],
  [
    ["cut"],
    plain(
      "nsz",
      "bcdf",
      ["complement", "only-delimited", "zero-terminated"],
      ["bytes", "characters", "delimiter", "fields", "output-delimiter"],
    ),
  ],
  [
    ["nl"],
    plain(
      "p",
      "bdfhilnsvw",
      ["no-renumber"],
      [
        "body-numbering",
        "section-delimiter",
        "footer-numbering",
        "header-numbering",
        "line-increment",
        "join-blank-lines",
        "number-format",
        "number-separator",
        "starting-line-number",
        "number-width",
      ],
    ),
  ],
  [
    ["od"],
    plain(
      "bcdfiloxsv",
      "AjNStw",
      ["output-duplicates", "traditional"],
      ["address-radix", "skip-bytes", "read-bytes", "strings", "format", "width", "endian"],
    ),
  ],
  [
    ["strings"],
    plain(
      "afw",
      "ntneTs",
      ["all", "include-all-whitespace"],
      ["bytes", "radix", "encoding", "target", "output-separator"],
    ),
  ],
  [["base64", "base32"], plain("diw", "", ["decode", "ignore-garbage"], ["wrap"])],
  [
    ["md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum"],
    plain(
      "btz",
      "",
      [
        "binary",
        "text",
        "tag",
        "zero",
        "ignore-missing",
        "quiet",
        "status",
        "strict",
        "warn",
        "untagged",
        "base64",
        "raw",
      ],
      ["algorithm", "length"],
    ),
  ],
  [
    ["file"],
    plain(
      "bcdEhiklLNnprsSvz0",
      "eFfmP",
      [
        "brief",
        "dereference",
        "no-dereference",
        "mime",
        "mime-type",
        "mime-encoding",
        "keep-going",
        "raw",
        "special-files",
        "uncompress",
        "no-pad",
        "no-buffer",
        "preserve-date",
        "print0",
        "extension",
        "apple",
      ],
      ["exclude", "exclude-quiet", "separator", "files-from", "magic-file", "parameter"],
    ),
  ],
  [["stat"], plain("LfZt", "c", ["dereference", "file-system", "terse"], ["format", "printf", "cached"])],
  [
    ["cmp"],
    plain("blsz", "in", ["print-bytes", "verbose", "quiet", "silent", "zero-terminated"], ["ignore-initial", "bytes"]),
  ],
  [
    ["diff"],
    {
      spec: {
        flags: "aBbcdEeiNnpqrsTtuwyZ",
        values: "CDFILSUWxX",
        numeric: "U",
        long: [
          "brief",
          "report-identical-files",
          "normal",
          "ed",
          "rcs",
          "side-by-side",
          "left-column",
          "suppress-common-lines",
          "show-c-function",
          "expand-tabs",
          "initial-tab",
          "suppress-blank-empty",
          "recursive",
          "no-dereference",
          "new-file",
          "unidirectional-new-file",
          "ignore-file-name-case",
          "no-ignore-file-name-case",
          "text",
          "strip-trailing-cr",
          "ignore-case",
          "ignore-tab-expansion",
          "ignore-trailing-space",
          "ignore-space-change",
          "ignore-all-space",
          "ignore-blank-lines",
          "minimal",
          "speed-large-files",
        ],
        longValues: [
          "label",
          "show-function-line",
          "width",
          "starting-file",
          "exclude",
          "exclude-from",
          "from-file",
          "to-file",
          "ignore-matching-lines",
          "ifdef",
          "tabsize",
          "horizon-lines",
          "line-format",
          "old-line-format",
          "new-line-format",
          "unchanged-line-format",
        ],
        longOptional: ["context", "unified", "color", "palette"],
      },
      readOptions: ["X", "exclude-from", "from-file", "to-file"],
      recursive: ["r", "recursive"],
    },
  ],
  [
    ["grep", "egrep", "fgrep"],
    {
      spec: {
        flags: "EFGPivwxyclLoqsbHhnTZzaIrRUVu",
        values: "efmABCdD",
        numeric: "C",
        long: [
          "extended-regexp",
          "fixed-strings",
          "basic-regexp",
          "perl-regexp",
          "ignore-case",
          "no-ignore-case",
          "invert-match",
          "word-regexp",
          "line-regexp",
          "count",
          "files-with-matches",
          "files-without-match",
          "only-matching",
          "quiet",
          "silent",
          "no-messages",
          "byte-offset",
          "with-filename",
          "no-filename",
          "line-number",
          "initial-tab",
          "null",
          "null-data",
          "text",
          "recursive",
          "dereference-recursive",
          "line-buffered",
          "binary",
          "no-group-separator",
        ],
        longValues: [
          "regexp",
          "file",
          "max-count",
          "label",
          "context",
          "before-context",
          "after-context",
          "binary-files",
          "devices",
          "directories",
          "exclude",
          "exclude-from",
          "exclude-dir",
          "include",
          "group-separator",
        ],
        longOptional: ["color", "colour"],
      },
      script: ["e", "regexp", "f", "file"],
      readOptions: ["f", "file", "exclude-from"],
      recursive: ["r", "R", "recursive", "dereference-recursive"],
    },
  ],
  [["rg", "ag", "ack"], { spec: {}, alwaysRecursive: true }],
  [
    ["sort"],
    {
      spec: {
        flags: "bdfgiMhnRrVcCsumz",
        values: "kotTS",
        long: [
          "ignore-leading-blanks",
          "dictionary-order",
          "ignore-case",
          "general-numeric-sort",
          "ignore-nonprinting",
          "month-sort",
          "human-numeric-sort",
          "numeric-sort",
          "random-sort",
          "reverse",
          "version-sort",
          "check",
          "debug",
          "merge",
          "stable",
          "unique",
          "zero-terminated",
        ],
        longValues: [
          "key",
          "output",
          "field-separator",
          "temporary-directory",
          "buffer-size",
          "parallel",
          "files0-from",
          "random-source",
          "batch-size",
          "sort",
        ],
      },
      readOptions: ["files0-from", "random-source"],
      writeOptions: ["o", "output"],
    },
  ],
  [
    ["uniq"],
    plain(
      "cdDiuz",
      "fsw",
      ["count", "repeated", "ignore-case", "unique", "zero-terminated"],
      ["skip-fields", "skip-chars", "check-chars", "all-repeated", "group"],
    ),
  ],
  [["less", "more"], plain("FRSXNnqQsiIeEmMcCdrjz", "xbhjkoOpPtTyz", [], [])],
]

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
    effects.reads.push({
      ...use(words[0]!, raw),
      unknown: `${name} ${parsed.unknown} is an option the gate does not model`,
    })
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

const AWK_UNSAFE = /system|getline|\||>|@|ENVIRON|PROCINFO|close|fflush/

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
