/**
 * Shell builtins that change the shell itself — its options, variables, traps, aliases, the table of commands — as
 * the gate judges them: the forms that only make the shell stricter or print something are modelled, everything
 * else is unresolved. (`cd`, `pushd`, `popd`, `eval`, `exec`, `command` and `builtin` are followed by the
 * traversal and the wrappers.) See docs/shell.md.
 *
 * @since 0.3.0
 */
import * as Options from "./options.js"
import * as Variables from "./variables.js"
import { MODELLED_SET_OPTIONS } from "./shells.js"
import type { Word } from "./words.js"

/**
 * Builtins that are unresolved whatever their arguments: they run text later or elsewhere (`source`, `trap`),
 * change how names are found (`alias`, `enable`, `hash -p`), or replay commands (`fc`). `history` only prints
 * (bare, or with a count); any option changes or reads history files.
 *
 * @since 0.3.0
 * @category constants
 */
export const UNRESOLVED_BUILTINS: ReadonlyMap<string, string> = new Map([
  ["source", "it runs the commands of a file in this shell"],
  [".", "it runs the commands of a file in this shell"],
  ["alias", "an alias changes what a later command name runs"],
  ["enable", "enable can load or switch off builtins"],
  ["fc", "fc runs commands from the history"],
  ["bind", "bind attaches commands to keys"],
  ["compgen", "compgen can run commands"],
  ["complete", "complete attaches commands to completion"],
  ["let", "let evaluates arithmetic, which may run commands through variables"],
  ["coproc", "a coprocess is not followed"],
])

const unresolvedOption = (name: string, option: string) => `${name} ${option} is an option the gate does not model`

const variableReason = (names: ReadonlyArray<Word>): string | undefined => {
  for (const name of names) {
    if (!name.literal) return `the variable name ${name.text} is only known when the shell runs`
    const base = name.text.replace(/\[.*$/, "")
    if (name.text !== base) return `${name.text} assigns through an array subscript, which may run commands`
    if (Variables.judge(base) === "unresolved") return Variables.behaviourReason(base)
  }
  return undefined
}

/**
 * Why a builtin invocation is unresolved, or `undefined` when the gate models it (or `name` is no such builtin).
 *
 * @since 0.3.0
 * @category utilities
 */
export const judgeBuiltin = (name: string, words: ReadonlyArray<Word>): string | undefined => {
  const fixed = UNRESOLVED_BUILTINS.get(name)
  if (fixed !== undefined) return fixed
  switch (name) {
    case "history": {
      const args = words.slice(1)
      if (args.length === 0 || (args.length === 1 && args[0]!.literal && /^\d+$/.test(args[0]!.text))) return undefined
      return "history changes the history that commands can be replayed from"
    }
    case "trap": {
      const args = words.slice(1)
      const first = args[0]
      if (first === undefined || (first.literal && ["-l", "-p", "-lp", "-pl"].includes(first.text))) return undefined
      if (first.literal && (first.text === "-" || first.text === "")) return undefined
      return "the command trap runs later is not followed"
    }
    case "set": {
      const parsed = Options.parse(words, 1, { posix: true, plus: true, flags: "euxvfCn", values: "o" })
      if (parsed.unknown !== undefined) return unresolvedOption("set", parsed.unknown)
      for (const option of Options.valuesOf(parsed, "o")) {
        if (!option.literal || !MODELLED_SET_OPTIONS.has(option.text)) return unresolvedOption("set -o", option.text)
      }
      return undefined
    }
    case "shopt": {
      const parsed = Options.parse(words, 1, { posix: true, flags: "pqsuo" })
      if (parsed.unknown !== undefined) return unresolvedOption("shopt", parsed.unknown)
      if (Options.has(parsed, "s", "u")) return "shopt changes how the shell reads and runs commands"
      return undefined
    }
    case "hash": {
      const parsed = Options.parse(words, 1, { posix: true, flags: "lrt", values: "pd" })
      if (parsed.unknown !== undefined) return unresolvedOption("hash", parsed.unknown)
      if (Options.has(parsed, "p")) return "hash -p changes which program a command name runs"
      return undefined
    }
    case "read": {
      const parsed = Options.parse(words, 1, { posix: true, flags: "ers", values: "adinNptu" })
      if (parsed.unknown !== undefined) return unresolvedOption("read", parsed.unknown)
      return variableReason([
        ...Options.valuesOf(parsed, "a"),
        ...parsed.operands.map((o) => o.word),
        ...words.slice(parsed.rest),
      ])
    }
    case "mapfile":
    case "readarray": {
      const parsed = Options.parse(words, 1, { posix: true, flags: "t", values: "dnOsucC" })
      if (parsed.unknown !== undefined) return unresolvedOption(name, parsed.unknown)
      if (Options.has(parsed, "C")) return `${name} -C runs a command for every line`
      return variableReason(words.slice(parsed.rest))
    }
    case "printf": {
      const parsed = Options.parse(words, 1, { posix: true, values: "v" })
      // An option printf does not know makes it fail before it assigns anything.
      if (parsed.unknown !== undefined) return undefined
      return variableReason(Options.valuesOf(parsed, "v"))
    }
    case "getopts": {
      const target = words[2]
      return target === undefined ? undefined : variableReason([target])
    }
    default:
      return undefined
  }
}

/**
 * Why a `declare`/`typeset`/`local`/`export`/`readonly` is unresolved: an option the gate does not model (`-n`
 * namerefs, `-i` arithmetic, `export -f`), or an assignment of a behaviour-changing variable.
 *
 * @since 0.3.0
 * @category utilities
 */
export const judgeDeclaration = (
  keyword: string,
  options: ReadonlyArray<string>,
  assigned: ReadonlyArray<string>,
): string | undefined => {
  for (const option of options) {
    for (const c of option.slice(1)) {
      if (!"aAglurxtpF".includes(c) || (c === "F" && keyword !== "declare" && keyword !== "typeset")) {
        return unresolvedOption(keyword, option)
      }
    }
    if (keyword === "export" && /[fF]/.test(option)) return "export -f passes a function to every child shell"
  }
  for (const name of assigned) {
    if (Variables.judge(name) === "unresolved") return Variables.behaviourReason(name)
  }
  return undefined
}
