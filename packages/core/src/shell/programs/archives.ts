/**
 * Archives: `tar` (both option forms, `tar xzf a.tgz` and `tar -x -z -f a.tgz`) and `unzip`. Extracting fills a
 * directory with names only known when it runs — any file, a link, a protected path — so that directory is an
 * `opaque` write; creating or appending writes the archive and reads the members. Options that run programs
 * (`--to-command`, `--use-compress-program`, `--checkpoint-action`) or allow absolute names (`-P`) are outside the
 * model. See docs/shell.md.
 *
 * @since 0.3.0
 */
import * as Options from "../internal/options.js"
import { type Effects, noEffects, unmodelled, use } from "../internal/segment.js"
import { join, literal, type Word } from "../internal/words.js"

const TAR_FUNCTIONS = "cxtruAd"
const TAR_SPEC: Options.Spec = {
  flags: `${TAR_FUNCTIONS}vzjJakpoOmhSWUBiZ`,
  values: "fCTXbKNLVgH",
  long: [
    "create",
    "extract",
    "get",
    "list",
    "append",
    "update",
    "catenate",
    "concatenate",
    "diff",
    "compare",
    "delete",
    "verbose",
    "gzip",
    "gunzip",
    "ungzip",
    "bzip2",
    "xz",
    "lzip",
    "lzma",
    "lzop",
    "zstd",
    "auto-compress",
    "keep-old-files",
    "skip-old-files",
    "overwrite",
    "overwrite-dir",
    "unlink-first",
    "recursive-unlink",
    "no-same-owner",
    "same-owner",
    "no-same-permissions",
    "preserve-permissions",
    "same-permissions",
    "to-stdout",
    "dereference",
    "hard-dereference",
    "one-file-system",
    "totals",
    "exclude-vcs",
    "exclude-vcs-ignores",
    "exclude-backups",
    "exclude-caches",
    "wildcards",
    "no-wildcards",
    "anchored",
    "no-anchored",
    "ignore-case",
    "numeric-owner",
    "no-recursion",
    "recursion",
    "null",
    "verbatim-files-from",
    "no-verbatim-files-from",
    "ignore-zeros",
    "ignore-failed-read",
    "sparse",
    "touch",
    "keep-newer-files",
    "show-transformed-names",
    "show-stored-names",
  ],
  longValues: [
    "file",
    "directory",
    "files-from",
    "exclude-from",
    "exclude",
    "strip-components",
    "owner",
    "group",
    "mode",
    "mtime",
    "sort",
    "transform",
    "xform",
    "warning",
    "blocking-factor",
    "record-size",
    "format",
    "label",
    "occurrence",
  ],
}

/** `tar xzf a.tgz`: the old form, a first word of letters whose value letters take the next words in order. */
const tarWords = (words: ReadonlyArray<Word>): ReadonlyArray<Word> => {
  const first = words[1]
  if (first === undefined || !first.literal || !/^[A-Za-z]+$/.test(first.text)) return words
  const out: Array<Word> = [words[0]!]
  let next = 2
  for (const letter of first.text) {
    out.push(literal(`-${letter}`))
    if ((TAR_SPEC.values ?? "").includes(letter) && words[next] !== undefined) out.push(words[next++]!)
  }
  return [...out, ...words.slice(next)]
}

/**
 * The effects of one `tar` command.
 *
 * @since 0.3.0
 * @category utilities
 */
export const tar = (input: ReadonlyArray<Word>): Effects => {
  const effects = noEffects()
  const words = tarWords(input)
  const parsed = Options.parse(words, 1, TAR_SPEC)
  if (parsed.unknown !== undefined) return unmodelled(effects, "tar", parsed.unknown)
  const raw = join(input)
  const archive = Options.valuesOf(parsed, "f", "file")[0]
  const archives = archive === undefined || (archive.literal && archive.text === "-") ? [] : [archive]
  const directories = Options.valuesOf(parsed, "C", "directory")
  for (const list of Options.valuesOf(parsed, "T", "files-from", "X", "exclude-from")) {
    effects.reads.push(use(list, raw))
  }
  const members = parsed.operands.map((o) => o.word)
  if (Options.has(parsed, "x", "extract", "get")) {
    for (const file of archives) effects.reads.push(use(file, raw))
    if (Options.has(parsed, "O", "to-stdout")) return effects
    // `-C` changes directory for what follows, each relative to the one before: one is followed, more are not.
    const into = directories.length === 0 ? literal(".") : directories[0]!
    const target = use(into, raw, "opaque")
    effects.writes.push(
      directories.length > 1 ? { ...target, unknown: "tar with several -C options is not followed" } : target,
    )
    return effects
  }
  if (Options.has(parsed, "t", "list", "d", "diff", "compare")) {
    for (const file of archives) effects.reads.push(use(file, raw))
    return effects
  }
  if (Options.has(parsed, "c", "create", "r", "append", "u", "update", "A", "catenate", "concatenate", "delete")) {
    for (const file of archives) effects.writes.push(use(file, raw))
    for (const member of members) {
      effects.reads.push(
        directories.length > 0
          ? { ...use(member, raw, "tree"), unknown: "tar -C changes where it reads" }
          : use(member, raw, "tree"),
      )
    }
  }
  return effects
}

/**
 * The effects of one `unzip` command.
 *
 * @since 0.3.0
 * @category utilities
 */
export const unzip = (words: ReadonlyArray<Word>): Effects => {
  const effects = noEffects()
  const parsed = Options.parse(words, 1, {
    flags: "oqnjaCLUVXKDTbBufxlvtzpcZ",
    values: "dP",
  })
  if (parsed.unknown !== undefined) return unmodelled(effects, "unzip", parsed.unknown)
  const raw = join(words)
  const archive = parsed.operands[0]?.word
  if (archive !== undefined) effects.reads.push(use(archive, raw))
  // Listing, testing and printing to standard output write nothing.
  if (Options.has(parsed, "l", "v", "t", "z", "p", "c", "Z")) return effects
  const into = Options.valuesOf(parsed, "d")[0] ?? literal(".")
  effects.writes.push(use(into, raw, "opaque"))
  return effects
}
