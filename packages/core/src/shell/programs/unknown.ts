/**
 * Programs the gate does not model. What they do runs unseen (see docs/shell.md), but the places their words name
 * are judged: every operand and option value that reads as a path is an `operand` use, which asks
 * `external_directory` when it lies outside the Location and `protected_path` when it is protected — never `edit`.
 * A program fed a file through `<` may do anything its input says (`patch -p0 < d` creates the files the diff
 * names), so that segment is unresolved; options of well-known programs that run command strings (`zip -TT`,
 * `rsync -e`, `ssh -o ProxyCommand`, `man -P`, editors' `-c`) make the segment unresolved too.
 *
 * @since 0.4.0
 */
import { type Effects, noEffects, type PathUse, use } from "../internal/segment.js"
import { join, type Word } from "../internal/words.js"

/**
 * Programs whose words name no file: they print, compute or wait.
 *
 * @since 0.4.0
 * @category constants
 */
export const NAMELESS_PROGRAMS: ReadonlySet<string> = new Set([
  "echo",
  "printf",
  "true",
  "false",
  ":",
  "sleep",
  "date",
  "whoami",
  "id",
  "uname",
  "hostname",
  "seq",
  "yes",
  "expr",
  "test",
  "[",
  "kill",
  "which",
  "type",
  "basename",
  "dirname",
  "printenv",
  "nproc",
  "arch",
  "tty",
  "groups",
  "logname",
  "uptime",
  "wait",
  "shift",
  "return",
  "exit",
  "break",
  "continue",
  "read",
  "getopts",
  "unset",
  "umask",
  "ulimit",
  "jobs",
  "fg",
  "bg",
  "disown",
  "suspend",
  "times",
  "history",
  "dirs",
])

/**
 * Options of unmodelled programs that run a command string or a program the gate does not see: per program, a
 * test on one word.
 *
 * @since 0.4.0
 * @category constants
 */
export const COMMAND_OPTIONS: ReadonlyMap<string, (word: string) => boolean> = new Map<
  string,
  (word: string) => boolean
>([
  ["zip", (w) => /^(?:-TT|--unzip-command|-TT=)/.test(w) || /^--unz/.test(w)],
  ["rsync", (w) => (/^-[A-Za-z]*e/.test(w) && !w.startsWith("--") ? true : /^--(?:rsh|rsync-path|rs)/.test(w))],
  ["ssh", (w) => /^-[A-Za-z]*o/.test(w) && !w.startsWith("--")],
  ["scp", (w) => /^-[A-Za-z]*[oS]/.test(w) && !w.startsWith("--")],
  ["sftp", (w) => /^-[A-Za-z]*[oSD]/.test(w) && !w.startsWith("--")],
  ["man", (w) => /^-[A-Za-z]*[PHp]/.test(w) || /^--(?:pager|html|preprocessor)/.test(w)],
  ["vim", (w) => /^[+-]/.test(w) && /^(?:\+|-c|--cmd|-S|-u|-i|--remote)/.test(w)],
  ["vi", (w) => /^(?:\+|-c|--cmd|-S|-u)/.test(w)],
  ["nvim", (w) => /^(?:\+|-c|--cmd|-S|-u|-l|--headless)/.test(w)],
  ["ex", (w) => /^(?:\+|-c|--cmd|-S|-u)/.test(w)],
  ["view", (w) => /^(?:\+|-c|--cmd|-S|-u)/.test(w)],
  ["emacs", (w) => /^(?:--eval|--load|-l|--batch|-batch|--script|-f|--funcall|-x)/.test(w)],
])

/** A word that names something else than a path: a URL, or nothing path-like after options are taken off. */
const URL = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//

/** The path-like part of one word, as an unmodelled program may read it. */
const candidate = (word: Word): Word | undefined => {
  if (!word.literal) return undefined
  const t = word.text
  if (t === "" || t === "-" || t === "--" || URL.test(t)) return undefined
  if (t.startsWith("--")) {
    const eq = t.indexOf("=")
    return eq === -1 ? undefined : candidate({ ...word, text: t.slice(eq + 1) })
  }
  // `-o../x`: a short option with its value attached, when the value looks like a path.
  if (t.startsWith("-"))
    return t.length > 2 && /[/~.]/.test(t.slice(2)) ? candidate({ ...word, text: t.slice(2) }) : undefined
  const assignment = /^[A-Za-z_][A-Za-z0-9_.-]*=(.*)$/.exec(t)
  if (assignment !== null) return candidate({ ...word, text: assignment[1]! })
  if (t.startsWith("~")) return { ...word, text: t, home: true }
  return word
}

/**
 * The effects of an unmodelled program's words: the places they name (`operand` uses), or why the segment is
 * unresolved.
 *
 * @since 0.4.0
 * @category utilities
 */
export const unknownProgram = (name: string, words: ReadonlyArray<Word>, input: Effects): Effects => {
  const effects = noEffects()
  if (NAMELESS_PROGRAMS.has(name)) return effects
  const runs = COMMAND_OPTIONS.get(name)
  if (runs !== undefined) {
    const found = words.slice(1).find((w) => w.literal && runs(w.text))
    if (found !== undefined) {
      effects.unresolved = `${name} ${found.text} runs a command the gate does not follow`
      return effects
    }
  }
  if (input.reads.some((read) => /^\d*<(?!<)/.test(read.raw))) {
    effects.unresolved = `${name} reads its input from a file and may do whatever it says; the gate does not follow ${name}`
    return effects
  }
  const raw = join(words)
  for (const word of words.slice(1)) {
    const path = candidate(word)
    if (path === undefined) continue
    const judged: PathUse = { ...use(path, raw, "file", true), operand: true }
    if (judged.unknown === undefined) effects.writes.push(judged)
  }
  return effects
}
