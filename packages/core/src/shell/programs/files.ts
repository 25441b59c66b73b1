/**
 * Commands that change files, in a documented table: `rm`, `rmdir`, `unlink`, `mkdir`, `touch`, `chmod`, `chown`,
 * `chgrp`, `truncate`, `dd`, `sed -i`, `install`, `cp`, `mv`, `ln`, `tar`, `unzip` and the file-naming forms of `git`.
 * Their file arguments become writes exactly like redirections (links and copies also record what they point to
 * or mirror). Options are read as getopt reads them; an option outside the model makes the segment unresolved. See
 * docs/shell.md.
 *
 * @since 0.3.0
 */
import { tar, unzip } from "./archives.js"
import { git } from "./git.js"
import * as Options from "../internal/options.js"
import { sed } from "./sed.js"
import { type Effects, noEffects, type PathUse, unmodelled, use } from "../internal/segment.js"
import { join, literal, type Word } from "../internal/words.js"

/**
 * How one file command's words become effects.
 *
 * @since 0.3.0
 * @category models
 */
export type Command = (words: ReadonlyArray<Word>) => Effects

/** Every leading part of a relative path (`a/b/c` → `a`, `a/b`, `a/b/c`): what `mkdir -p` may create. */
const prefixes = (word: Word): ReadonlyArray<Word> => {
  if (!word.literal || word.glob) return [word]
  const parts = word.text.split("/")
  const out: Array<Word> = []
  for (let i = 1; i <= parts.length; i++) {
    const text = parts.slice(0, i).join("/")
    if (text === "" || text === "." || text === "..") continue
    out.push({ ...word, text })
  }
  return out.length === 0 ? [word] : out
}

const remove: Command = (words) => {
  const effects = noEffects()
  const parsed = Options.parse(words, 1, {
    flags: "fiIrRdv",
    long: ["force", "one-file-system", "no-preserve-root", "recursive", "dir", "verbose"],
    longOptional: ["interactive", "preserve-root"],
  })
  if (parsed.unknown !== undefined) return unmodelled(effects, "rm", parsed.unknown)
  const mode = Options.has(parsed, "r", "R", "recursive") ? "tree" : "file"
  for (const { word } of parsed.operands) effects.writes.push(use(word, join(words), mode, false))
  return effects
}

const rmdir: Command = (words) => {
  const effects = noEffects()
  const parsed = Options.parse(words, 1, { flags: "pv", long: ["ignore-fail-on-non-empty", "parents", "verbose"] })
  if (parsed.unknown !== undefined) return unmodelled(effects, "rmdir", parsed.unknown)
  const parents = Options.has(parsed, "p", "parents")
  for (const { word } of parsed.operands) {
    for (const part of parents ? prefixes(word) : [word]) effects.writes.push(use(part, join(words), "file", false))
  }
  return effects
}

const unlink: Command = (words) => {
  const effects = noEffects()
  const parsed = Options.parse(words, 1, {})
  if (parsed.unknown !== undefined) return unmodelled(effects, "unlink", parsed.unknown)
  for (const { word } of parsed.operands) effects.writes.push(use(word, join(words), "file", false))
  return effects
}

const mkdir: Command = (words) => {
  const effects = noEffects()
  const parsed = Options.parse(words, 1, {
    flags: "pvZ",
    values: "m",
    long: ["parents", "verbose"],
    longValues: ["mode"],
    longOptional: ["context"],
  })
  if (parsed.unknown !== undefined) return unmodelled(effects, "mkdir", parsed.unknown)
  const parents = Options.has(parsed, "p", "parents")
  for (const { word } of parsed.operands) {
    for (const part of parents ? prefixes(word) : [word]) effects.writes.push(use(part, join(words), "file", false))
  }
  return effects
}

const touch: Command = (words) => {
  const effects = noEffects()
  const parsed = Options.parse(words, 1, {
    flags: "acmfh",
    values: "drt",
    long: ["no-create", "no-dereference"],
    longValues: ["date", "reference", "time"],
  })
  if (parsed.unknown !== undefined) return unmodelled(effects, "touch", parsed.unknown)
  const follow = !Options.has(parsed, "h", "no-dereference")
  for (const { word } of parsed.operands) effects.writes.push(use(word, join(words), "file", follow))
  return effects
}

const MODE_WORD = /^-[rwxXstugoa=+,0-7-]+$/

/** `chmod`, `chown`, `chgrp`: the first operand is the mode or owner unless `--reference` gives it. */
const attributes =
  (name: string, flags: string): Command =>
  (words) => {
    const effects = noEffects()
    // `chmod -w file`: a mode that looks like an option.
    const modes =
      name === "chmod"
        ? words.filter((w, i) => i > 0 && w.literal && MODE_WORD.test(w.text) && /[rwxXst]/.test(w.text))
        : []
    const rest = words.filter((w) => !modes.includes(w))
    const parsed = Options.parse(rest, 1, {
      flags,
      long: [
        "recursive",
        "changes",
        "silent",
        "quiet",
        "verbose",
        "preserve-root",
        "no-preserve-root",
        "dereference",
        "no-dereference",
      ],
      longValues: ["reference", "from"],
    })
    if (parsed.unknown !== undefined) return unmodelled(effects, name, parsed.unknown)
    const files = Options.has(parsed, "reference") || modes.length > 0 ? parsed.operands : parsed.operands.slice(1)
    const mode = Options.has(parsed, "R", "recursive") ? "tree" : "file"
    const follow = !Options.has(parsed, "h", "no-dereference")
    for (const { word } of files) effects.writes.push(use(word, join(words), mode, follow))
    return effects
  }

const truncate: Command = (words) => {
  const effects = noEffects()
  const parsed = Options.parse(words, 1, {
    flags: "co",
    values: "sr",
    long: ["no-create", "io-blocks"],
    longValues: ["reference", "size"],
  })
  if (parsed.unknown !== undefined) return unmodelled(effects, "truncate", parsed.unknown)
  for (const { word } of parsed.operands) effects.writes.push(use(word, join(words)))
  return effects
}

const DD_OPERANDS: ReadonlySet<string> = new Set([
  "bs",
  "cbs",
  "conv",
  "count",
  "ibs",
  "iflag",
  "obs",
  "oflag",
  "seek",
  "oseek",
  "skip",
  "iseek",
  "status",
])

const dd: Command = (words) => {
  const effects = noEffects()
  for (const w of words.slice(1)) {
    if (!w.literal) return unmodelled(effects, "dd", w.text)
    const eq = w.text.indexOf("=")
    const key = eq === -1 ? w.text : w.text.slice(0, eq)
    const value: Word = { ...w, text: w.text.slice(eq + 1) }
    if (key === "of") effects.writes.push(use(value, join(words)))
    else if (key === "if") effects.reads.push(use(value, join(words)))
    else if (!DD_OPERANDS.has(key) || eq === -1) return unmodelled(effects, "dd", w.text)
  }
  return effects
}

/** The sources and destination of `cp`, `mv`, `install`, `ln`: `-t DIR`, `-T`, or the last operand. */
const destination = (parsed: Options.Parsed, linkForm = false) => {
  const operands = parsed.operands.map((o) => o.word)
  const target = Options.valuesOf(parsed, "t", "target-directory")[0]
  if (target !== undefined) return { sources: operands, dest: target, into: true }
  if (Options.has(parsed, "T", "no-target-directory")) {
    return { sources: operands.slice(0, 1), dest: operands[1], into: false }
  }
  // `ln TARGET` makes the link in the working directory.
  if (linkForm && operands.length === 1) return { sources: operands, dest: literal("."), into: true }
  return {
    sources: operands.slice(0, -1),
    dest: operands[operands.length - 1],
    into: true,
  }
}

const copyLike =
  (name: "cp" | "mv" | "install"): Command =>
  (words) => {
    const effects = noEffects()
    const spec: Options.Spec =
      name === "cp"
        ? {
            flags: "abdfHilLnPpRrsTuvxZ",
            values: "St",
            long: [
              "archive",
              "attributes-only",
              "copy-contents",
              "debug",
              "dereference",
              "force",
              "interactive",
              "link",
              "no-clobber",
              "no-dereference",
              "one-file-system",
              "recursive",
              "remove-destination",
              "strip-trailing-slashes",
              "symbolic-link",
              "no-target-directory",
              "verbose",
              "keep-directory-symlink",
            ],
            longValues: ["suffix", "target-directory", "no-preserve", "sparse"],
            longOptional: ["backup", "preserve", "reflink", "update", "context"],
          }
        : name === "mv"
          ? {
              flags: "bfinTuvZ",
              values: "St",
              long: [
                "force",
                "interactive",
                "no-clobber",
                "no-copy",
                "strip-trailing-slashes",
                "no-target-directory",
                "verbose",
                "debug",
              ],
              longValues: ["suffix", "target-directory"],
              longOptional: ["backup", "update", "context"],
            }
          : {
              flags: "bcCdDpsvTZ",
              values: "gmoSt",
              long: ["compare", "directory", "preserve-timestamps", "strip", "no-target-directory", "verbose", "debug"],
              longValues: ["group", "mode", "owner", "suffix", "target-directory"],
              longOptional: ["backup", "context"],
            }
    const parsed = Options.parse(words, 1, spec)
    if (parsed.unknown !== undefined) return unmodelled(effects, name, parsed.unknown)
    const raw = join(words)
    if (name === "install" && Options.has(parsed, "d", "directory")) {
      for (const { word } of parsed.operands) {
        for (const part of prefixes(word)) effects.writes.push(use(part, raw, "file", false))
      }
      return effects
    }
    const { sources, dest, into } = destination(parsed)
    if (dest === undefined || sources.length === 0) return effects
    const recursive = name === "mv" || Options.has(parsed, "r", "R", "recursive", "a", "archive")
    const mode = recursive ? "tree" : "file"
    if (name === "mv") for (const source of sources) effects.writes.push(use(source, raw, "tree", false))
    else for (const source of sources) effects.reads.push(use(source, raw, mode))
    const to: PathUse = { ...use(dest, raw, mode, true), ...(into ? { into: sources } : {}) }
    if (name === "install" && Options.has(parsed, "D")) {
      for (const part of prefixes(dest).slice(0, -1)) effects.writes.push(use(part, raw, "file", false))
    }
    effects.writes.push(to)
    if (name === "cp" && Options.has(parsed, "s", "symbolic-link", "l", "link")) {
      const symbolic = Options.has(parsed, "s", "symbolic-link")
      for (const source of sources) {
        effects.links.push({ link: to, target: source, symbolic, ...(symbolic ? {} : { relativeToCwd: true }) })
      }
    }
    for (const source of sources) effects.mirrors.push({ from: source, to })
    return effects
  }

const ln: Command = (words) => {
  const effects = noEffects()
  const parsed = Options.parse(words, 1, {
    flags: "bdFfiLnPrsTv",
    values: "St",
    long: [
      "directory",
      "force",
      "interactive",
      "logical",
      "no-dereference",
      "physical",
      "relative",
      "symbolic",
      "no-target-directory",
      "verbose",
    ],
    longValues: ["suffix", "target-directory"],
    longOptional: ["backup"],
  })
  if (parsed.unknown !== undefined) return unmodelled(effects, "ln", parsed.unknown)
  const { sources, dest, into } = destination(parsed, true)
  if (dest === undefined || sources.length === 0) return effects
  const symbolic = Options.has(parsed, "s", "symbolic")
  const relative = Options.has(parsed, "r", "relative")
  const raw = join(words)
  for (const source of sources) {
    const link: PathUse = { ...use(dest, raw, "file", false), ...(into ? { into: [source] } : {}) }
    effects.writes.push(link)
    effects.links.push({ link, target: source, symbolic, ...(!symbolic || relative ? { relativeToCwd: true } : {}) })
  }
  return effects
}

/** `patch`: the files it changes are named by the diff it reads, so they are unknown unless `-o` names one. */
const patch: Command = (words) => {
  const effects = noEffects()
  const parsed = Options.parse(words, 1, {
    flags: "bcefElnNRsStuZ",
    values: "BdDFgiopPrVxYzY",
    long: [
      "backup",
      "context",
      "ed",
      "remove-empty-files",
      "force",
      "ignore-whitespace",
      "normal",
      "forward",
      "reverse",
      "silent",
      "quiet",
      "batch",
      "set-time",
      "set-utc",
      "unified",
      "dry-run",
      "verbose",
      "posix",
      "binary",
      "backup-if-mismatch",
      "no-backup-if-mismatch",
      "follow-symlinks",
    ],
    longValues: [
      "prefix",
      "directory",
      "ifdef",
      "fuzz",
      "input",
      "output",
      "strip",
      "reject-file",
      "version-control",
      "basename-prefix",
      "suffix",
      "quoting-style",
      "merge",
      "read-only",
      "reject-format",
    ],
  })
  if (parsed.unknown !== undefined) return unmodelled(effects, "patch", parsed.unknown)
  const raw = join(words)
  for (const file of Options.valuesOf(parsed, "i", "input")) effects.reads.push(use(file, raw))
  if (Options.has(parsed, "dry-run")) return effects
  const output = Options.valuesOf(parsed, "o", "output")[0]
  const operands = parsed.operands.map((o) => o.word)
  if (output !== undefined) {
    if (!(output.literal && output.text === "-")) effects.writes.push(use(output, raw))
  } else if (operands[0] !== undefined && Options.valuesOf(parsed, "d", "directory").length === 0) {
    effects.writes.push(use(operands[0], raw))
  } else {
    effects.writes.push({
      ...use(literal("(the files the diff names)"), raw),
      unknown: "patch changes the files its diff names, only known when it runs",
    })
  }
  if (operands[1] !== undefined) effects.reads.push(use(operands[1], raw))
  return effects
}

/**
 * The commands that change files, by name, each reading its own options and operands.
 *
 * @since 0.3.0
 * @category constants
 */
export const FILE_COMMANDS: ReadonlyMap<string, Command> = new Map<string, Command>([
  ["rm", remove],
  ["rmdir", rmdir],
  ["unlink", unlink],
  ["mkdir", mkdir],
  ["touch", touch],
  ["chmod", attributes("chmod", "Rvcf")],
  ["chown", attributes("chown", "RvcfhHLP")],
  ["chgrp", attributes("chgrp", "RvcfhHLP")],
  ["truncate", truncate],
  ["dd", dd],
  ["sed", sed],
  ["install", copyLike("install")],
  ["cp", copyLike("cp")],
  ["mv", copyLike("mv")],
  ["ln", ln],
  ["tar", tar],
  ["unzip", unzip],
  ["git", git],
  ["patch", patch],
])
