/**
 * `git` as the gate reads it: its global options (`-c`, `--config-env` and `--exec-path` can make git run anything,
 * so they are unresolved; `-C`, `--git-dir` and `--work-tree` move where it works), and the subcommands that name
 * the files they change — `checkout`/`restore`/`rm`/`mv` with paths, `clean`, `config` (the repository's `config`),
 * `--output` of `diff`/`log`/`show`/`format-patch` — or whose content they print (`show REV:PATH`, `blame FILE`).
 * Other subcommands change the work tree and the repository as git decides. See docs/shell.md.
 *
 * @since 0.3.0
 */
import * as Options from "../internal/options.js"
import { type Effects, noEffects, type PathUse, use } from "../internal/segment.js"
import { join, literal, type Word } from "../internal/words.js"

const GLOBAL: Options.Spec = {
  posix: true,
  flags: "pPh",
  values: "Cc",
  long: [
    "no-pager",
    "paginate",
    "bare",
    "no-replace-objects",
    "literal-pathspecs",
    "glob-pathspecs",
    "noglob-pathspecs",
    "icase-pathspecs",
    "no-optional-locks",
    "no-advice",
    "version",
    "help",
  ],
  longValues: ["git-dir", "work-tree", "namespace", "config-env", "super-prefix", "list-cmds", "attr-source"],
  longOptional: ["exec-path"],
}

/**
 * Where `git` is told to run its subcommand: the index of the subcommand, or why the invocation is unresolved.
 *
 * @since 0.3.0
 * @category utilities
 */
export const gitSubcommand = (
  words: ReadonlyArray<Word>,
): { readonly at: number; readonly elsewhere: boolean } | { readonly unresolved: string } => {
  const parsed = Options.parse(words, 1, GLOBAL)
  if (parsed.unknown !== undefined) return { unresolved: `git ${parsed.unknown} is an option the gate does not model` }
  if (Options.has(parsed, "c", "config-env", "exec-path")) {
    return { unresolved: "git -c, --config-env and --exec-path can make git run any command" }
  }
  return { at: parsed.rest, elsewhere: Options.has(parsed, "C", "git-dir", "work-tree") }
}

const PATHS: Options.Spec = {
  flags: "fqpmbBlWSrn",
  values: "sU",
  long: [
    "force",
    "quiet",
    "patch",
    "merge",
    "cached",
    "staged",
    "worktree",
    "ours",
    "theirs",
    "dry-run",
    "ignore-unmatch",
  ],
  longValues: ["source", "conflict", "pathspec-from-file"],
  longOptional: ["recurse-submodules", "overlay", "no-overlay"],
}

const CONFIG: Options.Spec = {
  flags: "lez",
  values: "f",
  long: [
    "get",
    "get-all",
    "get-regexp",
    "get-urlmatch",
    "list",
    "add",
    "unset",
    "unset-all",
    "replace-all",
    "rename-section",
    "remove-section",
    "global",
    "system",
    "local",
    "worktree",
    "show-origin",
    "show-scope",
    "name-only",
    "null",
    "includes",
    "no-includes",
    "edit",
    "bool",
    "int",
    "path",
    "expiry-date",
    "all",
  ],
  longValues: ["file", "blob", "type", "default", "comment", "value"],
}

/**
 * The effects of one `git` command.
 *
 * @since 0.3.0
 * @category utilities
 */
export const git = (words: ReadonlyArray<Word>): Effects => {
  const effects = noEffects()
  const found = gitSubcommand(words)
  if ("unresolved" in found) {
    effects.unresolved = found.unresolved
    return effects
  }
  const sub = words[found.at]
  if (sub === undefined || !sub.literal) return effects
  const args = words.slice(found.at)
  const raw = join(words)
  const moved = "git -C, --git-dir and --work-tree move where git works"
  const at = (w: Word): PathUse => (found.elsewhere ? { ...use(w, raw), unknown: moved } : use(w, raw))
  switch (sub.text) {
    case "checkout":
    case "restore":
    case "rm": {
      const parsed = Options.parse(args, 1, PATHS)
      if (parsed.unknown !== undefined) {
        effects.unresolved = `git ${sub.text} ${parsed.unknown} is an option the gate does not model`
        return effects
      }
      const indexOnly =
        Options.has(parsed, "cached", "n", "dry-run") ||
        (sub.text === "restore" && Options.has(parsed, "S", "staged") && !Options.has(parsed, "W", "worktree"))
      if (indexOnly) return effects
      // Without `--`, `git checkout NAME` may name a branch or a file: every operand counts as a file.
      const mode = sub.text === "rm" && Options.has(parsed, "r") ? "tree" : "file"
      for (const { word } of parsed.operands) effects.writes.push({ ...at(word), mode, follow: false })
      return effects
    }
    case "mv": {
      const parsed = Options.parse(args, 1, { flags: "fkvn", long: ["force", "verbose", "dry-run"] })
      if (parsed.unknown !== undefined) {
        effects.unresolved = `git mv ${parsed.unknown} is an option the gate does not model`
        return effects
      }
      const all = parsed.operands.map((o) => o.word)
      if (all.length < 2 || Options.has(parsed, "n", "dry-run")) return effects
      for (const source of all.slice(0, -1)) effects.writes.push({ ...at(source), mode: "tree", follow: false })
      effects.writes.push({ ...at(all[all.length - 1]!), mode: "tree", into: all.slice(0, -1) })
      return effects
    }
    case "clean": {
      const parsed = Options.parse(args, 1, {
        flags: "dfinqxX",
        values: "e",
        long: ["force", "interactive", "dry-run", "quiet"],
        longValues: ["exclude"],
      })
      if (parsed.unknown !== undefined) {
        effects.unresolved = `git clean ${parsed.unknown} is an option the gate does not model`
        return effects
      }
      if (Options.has(parsed, "n", "dry-run")) return effects
      const targets = parsed.operands.length === 0 ? [literal(".")] : parsed.operands.map((o) => o.word)
      for (const target of targets) effects.writes.push({ ...at(target), mode: "tree", follow: false })
      return effects
    }
    case "config": {
      const parsed = Options.parse(args, 1, CONFIG)
      if (parsed.unknown !== undefined) {
        effects.unresolved = `git config ${parsed.unknown} is an option the gate does not model`
        return effects
      }
      if (Options.has(parsed, "e", "edit")) {
        effects.unresolved = "git config --edit runs an editor"
        return effects
      }
      const verb = parsed.operands[0]?.word.text ?? ""
      const changes = Options.has(
        parsed,
        "unset",
        "unset-all",
        "rename-section",
        "remove-section",
        "add",
        "replace-all",
      )
      const reading =
        Options.has(parsed, "get", "get-all", "get-regexp", "get-urlmatch", "l", "list") ||
        verb === "get" ||
        verb === "list" ||
        (parsed.operands.length <= 1 && !changes)
      if (reading) return effects
      const file = Options.valuesOf(parsed, "f", "file")[0]
      if (file !== undefined) effects.writes.push(at(file))
      else if (Options.has(parsed, "global")) effects.writes.push(use({ ...literal("~/.gitconfig"), home: true }, raw))
      else if (Options.has(parsed, "system")) effects.writes.push(use(literal("/etc/gitconfig"), raw))
      else {
        const name = Options.has(parsed, "worktree") ? "config.worktree" : "config"
        effects.writes.push(
          found.elsewhere ? { ...use(literal(name), raw), unknown: moved } : { ...use(literal(name), raw), git: true },
        )
      }
      return effects
    }
    case "diff":
    case "log":
    case "show":
    case "format-patch":
    case "blame":
    case "cat-file": {
      for (let i = 1; i < args.length; i++) {
        const w = args[i]!
        const next = args[i + 1]
        if (w.literal && (w.text === "--output" || (sub.text === "format-patch" && w.text === "-o")) && next) {
          effects.writes.push({ ...at(next), mode: sub.text === "format-patch" ? "tree" : "file" })
        } else if (w.literal && w.text.startsWith("--output=")) {
          effects.writes.push(at({ ...w, text: w.text.slice("--output=".length) }))
        } else if (w.literal && w.text.startsWith("--output-directory")) {
          effects.writes.push({ ...at(literal(w.text.split("=")[1] ?? ".")), mode: "tree" })
        }
      }
      // The file contents these print: `REV:PATH`, and `blame FILE`.
      for (const w of args.slice(1)) {
        if (!w.literal || w.text.startsWith("-")) continue
        const colon = w.text.indexOf(":")
        if ((sub.text === "show" || sub.text === "cat-file") && colon !== -1 && colon < w.text.length - 1) {
          effects.reads.push(at({ ...w, text: w.text.slice(colon + 1) }))
        } else if (sub.text === "blame") effects.reads.push(at(w))
      }
      return effects
    }
    default:
      return effects
  }
}
