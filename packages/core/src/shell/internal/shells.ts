/**
 * The shells whose command strings the gate reads (`bash`; `sh`, `dash` and `ash` as POSIX shells) and how a shell's
 * own options are read: only the options that make the shell stricter or noisier are modelled (`-e`, `-u`, `-x`,
 * `-o pipefail`, `--norc`, …); any other (`-i`, `-l`, `-s`, `-O`, `--rcfile`, …) makes the invocation unresolved.
 * See docs/shell.md.
 *
 * @since 0.3.0
 */
import * as Options from "./options.js"
import type { Word } from "./words.js"

/**
 * The grammar a command string is read with: bash's, or a POSIX shell's (`sh`, `dash`), where every construct whose
 * meaning differs from bash's is unresolved.
 *
 * @since 0.3.0
 * @category models
 */
export type Grammar = "bash" | "posix"

/**
 * The shells whose command strings are parsed, and the grammar each one reads.
 *
 * @since 0.3.0
 * @category constants
 */
export const SHELLS: ReadonlyMap<string, Grammar> = new Map<string, Grammar>([
  ["bash", "bash"],
  ["sh", "posix"],
  ["dash", "posix"],
  ["ash", "posix"],
])

/**
 * `set -o` / `bash -o` option names the gate models: they only make the shell stricter or noisier.
 *
 * @since 0.3.0
 * @category constants
 */
export const MODELLED_SET_OPTIONS: ReadonlySet<string> = new Set([
  "errexit",
  "nounset",
  "xtrace",
  "verbose",
  "pipefail",
  "noglob",
  "noclobber",
  "noexec",
])

/**
 * How a shell is invoked.
 *
 * @since 0.3.0
 * @category models
 */
export type Invocation =
  | { readonly kind: "string"; readonly body: Word; readonly grammar: Grammar }
  | { readonly kind: "script"; readonly at: number }
  | { readonly kind: "stdin"; readonly grammar: Grammar }
  | { readonly kind: "unresolved"; readonly reason: string }

const STDIN_SCRIPTS: ReadonlySet<string> = new Set(["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"])

/**
 * Reads a shell's options (`bash --norc -ec 'cmd'`, `sh -e -c 'cmd'`): a `-c` string, a script file, or commands
 * from standard input. Any option outside the modelled set (`-i`, `-s`, `-O`, `--rcfile`, …) and a login shell
 * (`-l`, `--login`) are unresolved.
 *
 * @since 0.3.0
 * @category utilities
 */
export const invocation = (words: ReadonlyArray<Word>, grammar: Grammar): Invocation => {
  const name = words[0]!.text
  const parsed = Options.parse(words, 1, {
    posix: true,
    plus: true,
    flags: grammar === "bash" ? "ceuxvfnCplr" : "ceuxvfnCl",
    values: "o",
    long: grammar === "bash" ? ["norc", "noprofile", "login", "restricted", "noediting", "posix", "verbose"] : [],
  })
  if (parsed.unknown !== undefined) {
    return { kind: "unresolved", reason: `${name} ${parsed.unknown} is an option the gate does not model` }
  }
  // A login shell first runs the profile files (and `~/.bash_logout` on `exit`, `--noprofile` or not): code the
  // command does not show.
  if (Options.has(parsed, "l") || Options.has(parsed, "login")) {
    return { kind: "unresolved", reason: `${name} as a login shell runs its profile files first` }
  }
  for (const option of Options.valuesOf(parsed, "o")) {
    if (!option.literal || !MODELLED_SET_OPTIONS.has(option.text)) {
      return { kind: "unresolved", reason: `${name} -o ${option.text} is an option the gate does not model` }
    }
  }
  const inner: Grammar = Options.has(parsed, "posix") ? "posix" : grammar
  if (parsed.options.some((option) => option.name === "c" && option.plus !== true)) {
    const body = words[parsed.rest]
    if (body === undefined) return { kind: "unresolved", reason: `${name} -c without a command string` }
    return { kind: "string", body, grammar: inner }
  }
  const script = words[parsed.rest]
  if (script === undefined) return { kind: "stdin", grammar: inner }
  if (!script.literal)
    return { kind: "unresolved", reason: `the script ${script.text} is only known when the shell runs` }
  if (STDIN_SCRIPTS.has(script.text)) return { kind: "stdin", grammar: inner }
  return { kind: "script", at: parsed.rest }
}
