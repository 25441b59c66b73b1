/**
 * The data behind the shell's reading commands (`readers.ts`): each reader's options as coreutils, grep,
 * ripgrep and friends document them. A table, not logic: an option not listed here makes a read unresolved.
 *
 * @since 0.3.0
 */
import type * as Options from "../internal/options.js"

/**
 * How one reader's words are read.
 *
 * @since 0.3.0
 * @internal
 */
export interface Reader {
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

/**
 * The readers and their options: per group of names, the option spec (flags, flags with values, long options, long
 * options with values) and which operands and option values are files read or written.
 *
 * @since 0.3.0
 * @internal
 */
export const READER_TABLE: ReadonlyArray<readonly [ReadonlyArray<string>, Reader]> = [
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
    {
      ...plain(
        "bcdEhiklLNnrsSvz0",
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
          "print0",
          "extension",
          "apple",
        ],
        ["exclude", "exclude-quiet", "separator", "files-from", "magic-file", "parameter"],
      ),
      readOptions: ["f", "files-from", "m", "magic-file"],
    },
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
  [
    ["du"],
    {
      spec: {
        flags: "0abcDHhklLmPSsx",
        values: "BdtX",
        long: [
          "null",
          "all",
          "apparent-size",
          "bytes",
          "total",
          "dereference-args",
          "human-readable",
          "inodes",
          "dereference",
          "count-links",
          "no-dereference",
          "separate-dirs",
          "si",
          "summarize",
          "one-file-system",
        ],
        longValues: ["block-size", "max-depth", "files0-from", "threshold", "exclude-from", "exclude", "time-style"],
        longOptional: ["time"],
      },
      readOptions: ["files0-from", "X", "exclude-from"],
    },
  ],
  [["less", "more"], plain("FRSXNnqQsiIeEmMcCdrjz", "xbhjkoOpPtTyz", [], [])],
]
