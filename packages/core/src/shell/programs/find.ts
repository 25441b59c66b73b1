/**
 * `find` as the gate reads it: start paths, then an expression of GNU find's primaries. `-exec`/`-execdir`/`-ok`/
 * `-okdir` run commands (their own segments, `{}` filled in at run time), `-delete` removes what it finds below the
 * start paths, `-fprint`/`-fprint0`/`-fprintf`/`-fls` write files. A primary outside GNU find's list makes the segment
 * unresolved. See docs/shell.md.
 *
 * @since 0.3.0
 */
import { type Effects, noEffects, use } from "../internal/segment.js"
import { join, type Word } from "../internal/words.js"

const EXEC: ReadonlySet<string> = new Set(["-exec", "-execdir", "-ok", "-okdir"])
const WRITES: ReadonlySet<string> = new Set(["-fprint", "-fprint0", "-fprintf", "-fls"])
const NO_VALUE: ReadonlySet<string> = new Set([
  "-d",
  "-depth",
  "-help",
  "--help",
  "-ignore_readdir_race",
  "-mount",
  "-noignore_readdir_race",
  "-noleaf",
  "-version",
  "--version",
  "-xdev",
  "-daystart",
  "-follow",
  "-warn",
  "-nowarn",
  "-empty",
  "-executable",
  "-false",
  "-nogroup",
  "-nouser",
  "-readable",
  "-true",
  "-writable",
  "-ls",
  "-print",
  "-print0",
  "-prune",
  "-quit",
  "-delete",
  "(",
  ")",
  "!",
  "-not",
  "-a",
  "-and",
  "-o",
  "-or",
  ",",
])
const ONE_VALUE: ReadonlySet<string> = new Set([
  "-maxdepth",
  "-mindepth",
  "-regextype",
  "-amin",
  "-anewer",
  "-atime",
  "-cmin",
  "-cnewer",
  "-context",
  "-ctime",
  "-fstype",
  "-gid",
  "-group",
  "-ilname",
  "-iname",
  "-inum",
  "-ipath",
  "-iregex",
  "-iwholename",
  "-links",
  "-lname",
  "-mmin",
  "-mtime",
  "-name",
  "-newer",
  "-path",
  "-perm",
  "-regex",
  "-samefile",
  "-size",
  "-type",
  "-uid",
  "-used",
  "-user",
  "-wholename",
  "-xtype",
  "-printf",
  "-files0-from",
])

/**
 * What one `find` does.
 *
 * @since 0.3.0
 * @category models
 */
export interface Find {
  readonly starts: ReadonlyArray<Word>
  readonly effects: Effects
  /** The commands `-exec` and friends run; `execdir`: in each found file's directory. */
  readonly execs: ReadonlyArray<{ readonly words: ReadonlyArray<Word>; readonly execdir: boolean }>
  /** `-delete`: everything below the start paths may be removed. */
  readonly deletes: boolean
}

/**
 * Reads a `find` command's words (`words[0]` is `find`).
 *
 * @since 0.3.0
 * @category utilities
 */
export const find = (words: ReadonlyArray<Word>): Find => {
  const effects = noEffects()
  const execs: Array<{ readonly words: ReadonlyArray<Word>; readonly execdir: boolean }> = []
  const starts: Array<Word> = []
  const raw = join(words)
  let i = 1
  // Options before the start paths.
  while (i < words.length && words[i]!.literal && /^-(?:H|L|P|D|O\d*)$/.test(words[i]!.text)) {
    i += words[i]!.text === "-D" ? 2 : 1
  }
  while (i < words.length) {
    const w = words[i]!
    if (w.literal && (w.text.startsWith("-") || w.text === "(" || w.text === "!" || w.text === ",")) break
    starts.push(w)
    i++
  }
  let deletes = false
  for (; i < words.length; i++) {
    const w = words[i]!
    if (!w.literal) {
      effects.unresolved = `the find expression ${w.text} is only known when the shell runs`
      break
    }
    const t = w.text
    if (EXEC.has(t)) {
      let end = i + 1
      while (end < words.length && !(words[end]!.literal && (words[end]!.text === ";" || words[end]!.text === "+")))
        end++
      execs.push({ words: words.slice(i + 1, end), execdir: t === "-execdir" || t === "-okdir" })
      i = end
      continue
    }
    if (WRITES.has(t)) {
      const file = words[i + 1]
      if (file !== undefined) effects.writes.push(use(file, raw))
      i += t === "-fprintf" ? 2 : 1
      continue
    }
    if (t === "-delete") deletes = true
    if (t === "-files0-from" && words[i + 1] !== undefined) effects.reads.push(use(words[i + 1]!, raw))
    if (NO_VALUE.has(t)) continue
    if (ONE_VALUE.has(t) || /^-newer[aBcmt][aBcmt]$/.test(t)) {
      i++
      continue
    }
    effects.unresolved = `find ${t} is a primary the gate does not model`
    break
  }
  const roots = starts.length === 0 ? [{ text: ".", literal: true, glob: false }] : starts
  return { starts: roots, effects, execs, deletes }
}
