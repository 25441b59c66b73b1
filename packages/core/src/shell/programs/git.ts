/**
 * `git` as the gate reads it, per subcommand: a table of the subcommands it models, each with its options as git's
 * own option parser reads them (clusters, attached values, `--opt=value`, unambiguous abbreviations). A subcommand,
 * an option or an option form outside the table makes the segment unresolved — git is never assumed to do nothing.
 *
 * Per subcommand the table says what git reads and writes:
 * - files named by the command (`checkout -- F`, `rm`, `mv`, `clean`, `add`, `commit -F`, `--output`, `-o DIR`,
 *   `init DIR`, `clone URL DIR`, `worktree add DIR`, `bundle create FILE`);
 * - files named by the repository's data (`checkout REV`, `switch`, `reset --hard`, `stash pop`, `merge`,
 *   `cherry-pick`, `revert`, `rebase REV`): the planner asks git for the names (`gitNames`), and what it cannot name
 *   (`pull`, `am`, `apply`, `rebase --continue`) is an unknown write, which asks;
 * - the repository's configuration (`config`, `remote add`, …): a write of `.git/config`, a protected path;
 * - contents printed from history (`log`, `show`, `diff`, `blame`, `grep`, `cat-file`, …): a `history` read, which
 *   the planner judges as a read of every file the repository tracks or has tracked;
 * - command strings (`rebase --exec`, `grep -O`, `difftool -x`, `-c`, `--config-env`, `--exec-path`, `--upload-pack`,
 *   …): never in the table, so unresolved.
 * See docs/shell.md.
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

/** Options shared by the commands that print diffs (`diff`, `log`, `show`, `stash show`, `format-patch`). */
const DIFF_LONG = [
  "patch",
  "no-patch",
  "raw",
  "patch-with-raw",
  "patch-with-stat",
  "numstat",
  "shortstat",
  "compact-summary",
  "summary",
  "name-only",
  "name-status",
  "cumulative",
  "full-index",
  "binary",
  "find-copies-harder",
  "irreversible-delete",
  "no-renames",
  "rename-empty",
  "no-rename-empty",
  "check",
  "no-color",
  "no-color-moved",
  "ignore-space-at-eol",
  "ignore-space-change",
  "ignore-all-space",
  "ignore-blank-lines",
  "ignore-cr-at-eol",
  "minimal",
  "patience",
  "histogram",
  "indent-heuristic",
  "no-indent-heuristic",
  "function-context",
  "exit-code",
  "quiet",
  "text",
  "no-prefix",
  "default-prefix",
  "no-relative",
  "ita-invisible-in-index",
  "ita-visible-in-index",
  "pickaxe-all",
  "pickaxe-regex",
  "no-ext-diff",
  "no-textconv",
  "full-diff",
]
const DIFF_LONG_VALUES = [
  "word-diff-regex",
  "diff-algorithm",
  "anchored",
  "src-prefix",
  "dst-prefix",
  "line-prefix",
  "unified",
  "inter-hunk-context",
  "diff-filter",
  "output-indicator-new",
  "output-indicator-old",
  "output-indicator-context",
  "color-moved-ws",
  "skip-to",
  "rotate-to",
  "output",
]
const DIFF_LONG_OPTIONAL = [
  "stat",
  "dirstat",
  "abbrev",
  "break-rewrites",
  "find-renames",
  "find-copies",
  "color",
  "color-moved",
  "color-words",
  "word-diff",
  "ignore-submodules",
  "relative",
  "submodule",
]
const DIFF_FLAGS = "pusRabwWDzt"
const DIFF_VALUES = "USGOl"
const DIFF_OPTIONAL = "MCBX"

/** Options of the commands that walk history (`log`, `show`, `shortlog`, `whatchanged`, `format-patch`). */
const LOG_LONG = [
  "oneline",
  "graph",
  "no-decorate",
  "all",
  "reverse",
  "first-parent",
  "merges",
  "no-merges",
  "follow",
  "abbrev-commit",
  "no-abbrev-commit",
  "left-right",
  "cherry-pick",
  "cherry-mark",
  "cherry",
  "boundary",
  "topo-order",
  "date-order",
  "author-date-order",
  "source",
  "mailmap",
  "no-mailmap",
  "use-mailmap",
  "no-notes",
  "walk-reflogs",
  "invert-grep",
  "all-match",
  "regexp-ignore-case",
  "extended-regexp",
  "fixed-strings",
  "perl-regexp",
  "basic-regexp",
  "cc",
  "dd",
  "remerge-diff",
  "combined-all-paths",
  "relative-date",
  "parents",
  "children",
  "full-history",
  "simplify-merges",
  "ancestry-path",
  "simplify-by-decoration",
  "show-pulls",
  "dense",
  "sparse",
  "ignore-missing",
  "no-expand-tabs",
  "log-size",
  "no-walk",
  "do-walk",
  "show-linear-break",
  "single-worktree",
  "reflog",
  "in-commit-order",
  "no-min-parents",
  "no-max-parents",
  "numbered",
  "summary",
]
const LOG_LONG_VALUES = [
  "date",
  "since",
  "after",
  "until",
  "before",
  "author",
  "committer",
  "grep",
  "grep-reflog",
  "max-count",
  "skip",
  "diff-merges",
  "exclude",
  "encoding",
  "min-parents",
  "max-parents",
  "since-as-filter",
  "glob",
]
const LOG_LONG_OPTIONAL = ["decorate", "branches", "tags", "remotes", "format", "pretty", "notes", "expand-tabs"]

const spec = (
  flags: string,
  values: string,
  long: ReadonlyArray<string> = [],
  longValues: ReadonlyArray<string> = [],
  longOptional: ReadonlyArray<string> = [],
  numeric?: string,
  optional?: string,
): Options.Spec => ({
  flags,
  values,
  long,
  longValues,
  longOptional,
  ...(numeric === undefined ? {} : { numeric }),
  ...(optional === undefined ? {} : { optional }),
})

const DIFF_SPEC = spec(
  DIFF_FLAGS,
  DIFF_VALUES,
  [...DIFF_LONG, "cached", "staged", "merge-base", "no-index"],
  DIFF_LONG_VALUES,
  DIFF_LONG_OPTIONAL,
  undefined,
  DIFF_OPTIONAL,
)
const LOG_SPEC = spec(
  `${DIFF_FLAGS}cgmiEFPr`,
  `${DIFF_VALUES}nL`,
  [...DIFF_LONG, ...LOG_LONG],
  [...DIFF_LONG_VALUES, ...LOG_LONG_VALUES],
  [...DIFF_LONG_OPTIONAL, ...LOG_LONG_OPTIONAL],
  "n",
  DIFF_OPTIONAL,
)

/** What one modelled subcommand does with its words (`args[0]` is the subcommand). */
interface Sub {
  readonly spec: Options.Spec
  readonly effects: (args: ReadonlyArray<Word>, parsed: Options.Parsed, at: At) => Effects | string | undefined
}

/** How the subcommand's paths are placed, and the segment's text. */
interface At {
  readonly path: (word: Word, mode?: PathUse["mode"], follow?: boolean) => PathUse
  /** A write of files whose names git takes from the repository: the plumbing that names them, or why it cannot. */
  readonly named: (what: string, names: ReadonlyArray<ReadonlyArray<string>> | string) => PathUse
  /** Every file the repository tracks or has tracked, printed. */
  readonly history: (what: string) => PathUse
  /** The repository's own configuration, written. */
  readonly config: (name?: string) => PathUse
  readonly raw: string
}

const revision = (word: Word | undefined): string | undefined =>
  word !== undefined && word.literal && !word.glob && !word.text.startsWith("-") && word.text !== ""
    ? word.text
    : undefined

const DIFF_TREE = ["diff-tree", "-r", "--name-only", "-z", "--no-renames"]
/** Tracked files that differ from HEAD (in the work tree or the index). */
const DIRTY = ["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "HEAD"]
const between = (from: string, to: string): ReadonlyArray<string> => [...DIFF_TREE, from, to]

/** Files a work-tree change to `rev` writes, or why they cannot be named. */
const towards = (rev: string | undefined, what: string): ReadonlyArray<ReadonlyArray<string>> | string =>
  rev === undefined ? `${what} names a revision only known when the shell runs` : [between("HEAD", rev)]

const readsHistory =
  (more?: (args: ReadonlyArray<Word>, parsed: Options.Parsed, at: At, effects: Effects) => void) =>
  (args: ReadonlyArray<Word>, parsed: Options.Parsed, at: At): Effects => {
    const effects = noEffects()
    const dynamic = parsed.operands.find((o) => !o.word.literal)
    // A revision only known when the shell runs may name any object, even one no commit reaches.
    effects.reads.push(
      dynamic === undefined
        ? at.history(`git ${args[0]!.text}`)
        : {
            ...at.history(`git ${args[0]!.text}`),
            unknown: `${dynamic.word.text} may name any object of the repository`,
          },
    )
    for (const file of Options.valuesOf(parsed, "output")) effects.writes.push(at.path(file))
    for (const file of Options.valuesOf(parsed, "O")) effects.reads.push(at.path(file))
    more?.(args, parsed, at, effects)
    return effects
  }

const nothing = (): Effects => noEffects()

const CHECKOUT_LONG = [
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
  "detach",
  "track",
  "no-track",
  "guess",
  "no-guess",
  "ignore-other-worktrees",
  "progress",
  "no-progress",
  "orphan",
  "create",
  "force-create",
  "discard-changes",
  "sparse",
  "overlay",
  "no-overlay",
  "ignore-skip-worktree-bits",
]
const CHECKOUT_SPEC = spec(
  "fqpmld",
  "bB",
  CHECKOUT_LONG,
  ["conflict", "pathspec-from-file", "orphan"],
  ["recurse-submodules", "track"],
  undefined,
  "t",
)
const SWITCH_SPEC = spec(
  "fqmd",
  "cC",
  CHECKOUT_LONG,
  ["conflict", "orphan"],
  ["recurse-submodules", "track", "create", "force-create"],
  undefined,
  "t",
)
const RESTORE_SPEC = spec(
  "qpmSW",
  "sU",
  CHECKOUT_LONG,
  ["source", "conflict", "pathspec-from-file"],
  ["recurse-submodules"],
)
const RM_SPEC = spec(
  "fnrq",
  "",
  ["force", "dry-run", "cached", "ignore-unmatch", "sparse", "quiet"],
  ["pathspec-from-file"],
)

const pathOperands = (
  sub: string,
  parsed: Options.Parsed,
  at: At,
  effects: Effects,
  operands: ReadonlyArray<Word>,
): void => {
  const mode = sub === "rm" && Options.has(parsed, "r") ? "tree" : "file"
  for (const word of operands) effects.writes.push({ ...at.path(word, mode, false) })
}

const checkout: Sub = {
  spec: CHECKOUT_SPEC,
  effects: (args, parsed, at) => {
    const effects = noEffects()
    if (Options.has(parsed, "p", "patch", "pathspec-from-file", "recurse-submodules")) {
      return "git checkout --patch, --pathspec-from-file and --recurse-submodules are not followed"
    }
    const operands = parsed.operands.map((o) => o.word)
    const dash = args.findIndex((w) => w.literal && w.text === "--")
    const creating = Options.valuesOf(parsed, "b", "B", "orphan")
    if (creating.length > 0) {
      // A new branch at HEAD changes no file; at another start point, the files that differ from it.
      const start = operands[0]
      if (start === undefined) return effects
      effects.writes.push(at.named("git checkout -b", towards(revision(start), "git checkout -b")))
      return effects
    }
    if (dash !== -1) {
      const before = parsed.operands.filter((o) => o.index < dash + 1).map((o) => o.word)
      const after = parsed.operands.filter((o) => o.index > dash).map((o) => o.word)
      if (before.length > 1) return "git checkout names more than one revision"
      pathOperands("checkout", parsed, at, effects, after)
      return effects
    }
    if (operands.length === 0) return effects
    // `git checkout NAME`: a revision when git knows one by that name, else a file. Both are judged.
    const first = operands[0]!
    const rev = first.literal && first.text === "-" ? "@{-1}" : revision(first)
    // When NAME is no revision, git reads it as a path: the names are then those of the path write below.
    effects.writes.push(
      at.named("git checkout", rev === undefined ? towards(rev, "git checkout") : [["?", ...between("HEAD", rev)]]),
    )
    if (Options.has(parsed, "f", "force")) effects.writes.push(at.named("git checkout --force", [DIRTY]))
    pathOperands("checkout", parsed, at, effects, operands)
    return effects
  },
}

const restoreOrRm = (sub: "restore" | "rm"): Sub => ({
  spec: sub === "rm" ? RM_SPEC : RESTORE_SPEC,
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    if (Options.has(parsed, "p", "patch", "pathspec-from-file", "recurse-submodules")) {
      return `git ${sub} --patch, --pathspec-from-file and --recurse-submodules are not followed`
    }
    const indexOnly =
      Options.has(parsed, "cached", "n", "dry-run") ||
      (sub === "restore" && Options.has(parsed, "S", "staged") && !Options.has(parsed, "W", "worktree"))
    if (indexOnly) return effects
    pathOperands(
      sub,
      parsed,
      at,
      effects,
      parsed.operands.map((o) => o.word),
    )
    return effects
  },
})

const switchSub: Sub = {
  spec: SWITCH_SPEC,
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    if (Options.has(parsed, "recurse-submodules")) return "git switch --recurse-submodules is not followed"
    const operands = parsed.operands.map((o) => o.word)
    if (Options.has(parsed, "c", "C", "create", "force-create")) {
      if (operands[0] === undefined) return effects
    } else if (Options.has(parsed, "orphan")) {
      effects.writes.push(at.named("git switch --orphan", [["ls-files", "-z"]]))
      return effects
    }
    const target = operands[0]
    if (target === undefined) return effects
    const rev = target.literal && target.text === "-" ? "@{-1}" : revision(target)
    effects.writes.push(at.named("git switch", towards(rev, "git switch")))
    if (Options.has(parsed, "f", "force", "discard-changes")) effects.writes.push(at.named("git switch", [DIRTY]))
    return effects
  },
}

const mv: Sub = {
  spec: spec("fkvn", "", ["force", "verbose", "dry-run"]),
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    const all = parsed.operands.map((o) => o.word)
    if (all.length < 2 || Options.has(parsed, "n", "dry-run")) return effects
    for (const source of all.slice(0, -1)) effects.writes.push(at.path(source, "tree", false))
    effects.writes.push({ ...at.path(all[all.length - 1]!, "tree"), into: all.slice(0, -1) })
    return effects
  },
}

const clean: Sub = {
  spec: spec("dfinqxX", "e", ["force", "interactive", "dry-run", "quiet"], ["exclude"]),
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    if (Options.has(parsed, "i", "interactive")) return "git clean --interactive runs a session"
    if (Options.has(parsed, "n", "dry-run")) return effects
    const targets = parsed.operands.length === 0 ? [literal(".")] : parsed.operands.map((o) => o.word)
    for (const target of targets) effects.writes.push(at.path(target, "tree", false))
    return effects
  },
}

const CONFIG_SPEC = spec(
  "lez",
  "f",
  [
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
  ["file", "blob", "type", "default", "comment", "value"],
)

const config: Sub = {
  spec: CONFIG_SPEC,
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    if (Options.has(parsed, "e", "edit")) return "git config --edit runs an editor"
    const verb = parsed.operands[0]?.word.text ?? ""
    const changes = Options.has(parsed, "unset", "unset-all", "rename-section", "remove-section", "add", "replace-all")
    const reading =
      Options.has(parsed, "get", "get-all", "get-regexp", "get-urlmatch", "l", "list") ||
      verb === "get" ||
      verb === "list" ||
      (parsed.operands.length <= 1 && !changes)
    if (reading) {
      // A blob or a file given to read: its contents are printed.
      for (const file of Options.valuesOf(parsed, "f", "file")) effects.reads.push(at.path(file))
      if (Options.valuesOf(parsed, "blob").length > 0) effects.reads.push(at.history("git config --blob"))
      return effects
    }
    const file = Options.valuesOf(parsed, "f", "file")[0]
    if (file !== undefined) effects.writes.push(at.path(file))
    else if (Options.has(parsed, "global")) {
      effects.writes.push(use({ ...literal("~/.gitconfig"), home: true }, at.raw))
    } else if (Options.has(parsed, "system")) effects.writes.push(use(literal("/etc/gitconfig"), at.raw))
    else effects.writes.push(at.config(Options.has(parsed, "worktree") ? "config.worktree" : "config"))
    return effects
  },
}

const remote: Sub = {
  spec: spec("v", "", ["verbose"]),
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    const verb = parsed.operands[0]?.word.text
    if (verb === undefined || verb === "show" || verb === "get-url") return effects
    // Every other verb (`add`, `rename`, `remove`, `set-url`, …) rewrites the repository's configuration.
    effects.writes.push(at.config())
    return effects
  },
}

const reset: Sub = {
  spec: spec(
    "qpN",
    "",
    ["quiet", "soft", "mixed", "hard", "merge", "keep", "patch", "no-refresh", "refresh", "intent-to-add"],
    ["pathspec-from-file"],
    ["recurse-submodules"],
  ),
  effects: (args, parsed, at) => {
    const effects = noEffects()
    if (Options.has(parsed, "p", "patch", "recurse-submodules", "pathspec-from-file")) {
      return "git reset --patch, --pathspec-from-file and --recurse-submodules are not followed"
    }
    if (!Options.has(parsed, "hard", "merge", "keep")) return effects
    const dash = args.findIndex((w) => w.literal && w.text === "--")
    const operands = parsed.operands.filter((o) => dash === -1 || o.index < dash + 1).map((o) => o.word)
    const rev = operands.length === 0 ? "HEAD" : revision(operands[0])
    effects.writes.push(
      at.named("git reset --hard", rev === undefined ? towards(undefined, "git reset") : [between("HEAD", rev), DIRTY]),
    )
    return effects
  },
}

const STASH_VERBS = new Set([
  "list",
  "show",
  "drop",
  "clear",
  "create",
  "store",
  "pop",
  "apply",
  "push",
  "save",
  "branch",
])

const stash: Sub = {
  spec: spec(
    "pkuaqmS",
    "m",
    [
      "patch",
      "keep-index",
      "no-keep-index",
      "include-untracked",
      "no-include-untracked",
      "all",
      "quiet",
      "staged",
      "index",
      "only-untracked",
      ...DIFF_LONG,
      ...LOG_LONG,
    ],
    ["message", "pathspec-from-file", ...DIFF_LONG_VALUES],
    [...DIFF_LONG_OPTIONAL, ...LOG_LONG_OPTIONAL],
  ),
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    const first = parsed.operands[0]?.word
    const verb = first === undefined ? "push" : first.literal && STASH_VERBS.has(first.text) ? first.text : undefined
    if (verb === undefined) return `git stash ${first?.text ?? ""} is not a stash command the gate models`
    const ref = parsed.operands[1]?.word
    const entry = ref === undefined ? "stash@{0}" : revision(ref)
    switch (verb) {
      case "list":
      case "drop":
      case "clear":
      case "create":
      case "store":
        return effects
      case "show":
        effects.reads.push(at.history("git stash show"))
        return effects
      case "push":
      case "save": {
        if (Options.has(parsed, "p", "patch", "pathspec-from-file")) return "git stash --patch is not followed"
        if (Options.has(parsed, "u", "include-untracked", "a", "all", "only-untracked")) {
          return "git stash --include-untracked removes files only known when it runs"
        }
        effects.writes.push(at.named("git stash", [DIRTY]))
        return effects
      }
      case "branch":
        return "git stash branch is not followed"
      default: {
        if (entry === undefined) return `git stash ${verb} names an entry only known when the shell runs`
        effects.writes.push(
          at.named(`git stash ${verb}`, [
            between(`${entry}^1`, entry),
            ["?", "ls-tree", "-r", "--name-only", "-z", `${entry}^3`],
          ]),
        )
        return effects
      }
    }
  },
}

const MERGE_LONG = [
  "commit",
  "no-commit",
  "edit",
  "no-edit",
  "ff",
  "no-ff",
  "ff-only",
  "log",
  "no-log",
  "signoff",
  "no-signoff",
  "stat",
  "no-stat",
  "squash",
  "no-squash",
  "verify",
  "no-verify",
  "verbose",
  "quiet",
  "progress",
  "no-progress",
  "autostash",
  "no-autostash",
  "allow-unrelated-histories",
  "abort",
  "quit",
  "continue",
  "rerere-autoupdate",
  "no-rerere-autoupdate",
  "overwrite-ignore",
  "no-overwrite-ignore",
]

/** `merge`, `cherry-pick`, `revert`: the files the named commits change; `--continue`/`--abort` cannot be named. */
const applying = (sub: "merge" | "cherry-pick" | "revert"): Sub => ({
  spec:
    sub === "merge"
      ? spec("nevq", "msXF", MERGE_LONG, ["strategy", "strategy-option", "cleanup", "into-name", "message", "file"], [])
      : spec(
          "nexs",
          "mX",
          [...MERGE_LONG, "keep-redundant-commits", "allow-empty", "allow-empty-message", "skip"],
          ["strategy", "strategy-option", "cleanup", "mainline"],
          [],
        ),
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    if (Options.has(parsed, "strategy") || (sub === "merge" && Options.has(parsed, "s")))
      return `git ${sub} --strategy runs a merge program the gate does not follow`
    if (Options.has(parsed, "abort", "quit", "continue", "skip")) {
      effects.writes.push(
        at.named(`git ${sub}`, `git ${sub} --continue and --abort write files only known when it runs`),
      )
      return effects
    }
    const revs = parsed.operands.map((o) => revision(o.word))
    if (revs.length === 0 || revs.includes(undefined)) {
      effects.writes.push(at.named(`git ${sub}`, `git ${sub} names commits only known when the shell runs`))
      return effects
    }
    const names = revs.map((rev) => (sub === "merge" ? between("HEAD", rev!) : between(`${rev!}^`, rev!)))
    effects.writes.push(at.named(`git ${sub}`, [...names, DIRTY]))
    return effects
  },
})

const rebase: Sub = {
  spec: spec(
    "iqvnfrm",
    "sX",
    [
      ...MERGE_LONG,
      "interactive",
      "merge",
      "root",
      "skip",
      "edit-todo",
      "show-current-patch",
      "keep-base",
      "no-keep-base",
      "fork-point",
      "no-fork-point",
      "force-rebase",
      "no-ff",
      "reapply-cherry-picks",
      "no-reapply-cherry-picks",
      "update-refs",
      "no-update-refs",
      "ignore-whitespace",
      "ignore-date",
      "committer-date-is-author-date",
      "reset-author-date",
      "keep-empty",
      "no-keep-empty",
      "empty",
      "autosquash",
      "no-autosquash",
      "rebase-merges",
      "no-rebase-merges",
      "apply",
    ],
    ["onto", "strategy", "strategy-option", "whitespace"],
    [],
  ),
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    if (Options.has(parsed, "i", "interactive", "edit-todo", "s", "strategy", "r", "rebase-merges", "root")) {
      return "git rebase --interactive, --strategy, --rebase-merges and --root run programs the gate does not follow"
    }
    if (Options.has(parsed, "abort", "quit", "continue", "skip")) {
      effects.writes.push(
        at.named("git rebase", "git rebase --continue and --abort write files only known when it runs"),
      )
      return effects
    }
    if (Options.has(parsed, "show-current-patch")) {
      effects.reads.push(at.history("git rebase --show-current-patch"))
      return effects
    }
    const onto = Options.valuesOf(parsed, "onto")[0]
    const upstream = parsed.operands[0]?.word
    const base = revision(onto ?? upstream)
    if (base === undefined || (onto !== undefined && upstream !== undefined && revision(upstream) === undefined)) {
      effects.writes.push(
        at.named("git rebase", "git rebase without a literal upstream writes files only known when it runs"),
      )
      return effects
    }
    const from = upstream === undefined ? base : revision(upstream)!
    // The rebased branch ends at `base` plus HEAD's own commits: the files either side changed since they met.
    effects.writes.push(
      at.named("git rebase", [
        between("HEAD", base),
        ["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", `${from}...HEAD`],
        DIRTY,
      ]),
    )
    return effects
  },
}

/** Commands that write files named only by data the gate cannot see before they run. */
const unnamed = (what: string, specification: Options.Spec, readOnly?: (parsed: Options.Parsed) => boolean): Sub => ({
  spec: specification,
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    if (readOnly?.(parsed) === true) return effects
    effects.writes.push(at.named(what, `${what} writes files named by data only known when it runs`))
    return effects
  },
})

const FETCH_LONG = [
  "all",
  "append",
  "atomic",
  "force",
  "keep",
  "multiple",
  "prune",
  "prune-tags",
  "no-tags",
  "tags",
  "dry-run",
  "quiet",
  "verbose",
  "progress",
  "no-progress",
  "ipv4",
  "ipv6",
  "unshallow",
  "update-shallow",
  "set-upstream",
  "no-write-fetch-head",
  "write-fetch-head",
  "prefetch",
  "auto-maintenance",
  "no-auto-maintenance",
  "auto-gc",
  "no-auto-gc",
  "show-forced-updates",
  "no-show-forced-updates",
  "no-recurse-submodules",
]
const FETCH_VALUES = [
  "depth",
  "deepen",
  "shallow-since",
  "shallow-exclude",
  "refmap",
  "jobs",
  "server-option",
  "negotiation-tip",
]

const pull: Sub = unnamed(
  "git pull",
  spec("afknpqrtv46", "j", [...FETCH_LONG, ...MERGE_LONG, "no-rebase"], FETCH_VALUES, ["rebase"]),
)

const apply: Sub = unnamed(
  "git apply",
  spec(
    "vqR",
    "Cp",
    [
      "stat",
      "numstat",
      "summary",
      "check",
      "index",
      "cached",
      "intent-to-add",
      "3way",
      "reverse",
      "reject",
      "unidiff-zero",
      "recount",
      "inaccurate-eof",
      "verbose",
      "quiet",
      "allow-empty",
      "ignore-space-change",
      "ignore-whitespace",
    ],
    ["exclude", "include", "whitespace", "directory"],
    ["build-fake-ancestor"],
  ),
  (parsed) =>
    Options.has(parsed, "stat", "numstat", "summary", "check") && !Options.has(parsed, "index", "3way", "reject"),
)

const am: Sub = unnamed(
  "git am",
  spec(
    "sk3qucn",
    "Cp",
    [
      "signoff",
      "keep",
      "keep-non-patch",
      "keep-cr",
      "no-keep-cr",
      "scissors",
      "no-scissors",
      "quiet",
      "utf8",
      "no-utf8",
      "3way",
      "no-3way",
      "ignore-space-change",
      "ignore-whitespace",
      "reject",
      "committer-date-is-author-date",
      "ignore-date",
      "skip",
      "continue",
      "resolved",
      "abort",
      "quit",
      "no-verify",
      "message-id",
      "no-message-id",
    ],
    ["whitespace", "directory", "exclude", "include", "patch-format", "quoted-cr", "empty"],
  ),
)

const pathsLong = [
  "all",
  "update",
  "verbose",
  "dry-run",
  "force",
  "intent-to-add",
  "refresh",
  "ignore-errors",
  "ignore-missing",
  "no-all",
  "ignore-removal",
  "no-ignore-removal",
  "sparse",
  "renormalize",
  "no-warn-embedded-repo",
]

const add: Sub = {
  spec: spec("nvfiApuN", "", [...pathsLong, "interactive", "patch", "edit"], ["pathspec-from-file"], ["chmod"]),
  // `--patch` and `--interactive` only stage hunks (their answers come from the input); `--edit` runs an editor.
  effects: (_args, parsed) => (Options.has(parsed, "e", "edit") ? "git add --edit runs an editor" : noEffects()),
}

const COMMIT_SPEC = spec(
  "aqvnsepioz",
  "mFtcC",
  [
    "all",
    "quiet",
    "verbose",
    "dry-run",
    "signoff",
    "no-signoff",
    "no-verify",
    "verify",
    "allow-empty",
    "allow-empty-message",
    "amend",
    "no-edit",
    "edit",
    "include",
    "only",
    "reset-author",
    "short",
    "branch",
    "porcelain",
    "long",
    "null",
    "no-status",
    "status",
    "no-gpg-sign",
    "patch",
    "interactive",
  ],
  [
    "message",
    "file",
    "template",
    "reuse-message",
    "reedit-message",
    "author",
    "date",
    "cleanup",
    "trailer",
    "pathspec-from-file",
  ],
  ["fixup", "squash", "untracked-files"],
  undefined,
  "u",
)

const commit: Sub = {
  spec: COMMIT_SPEC,
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    if (Options.has(parsed, "p", "patch", "interactive", "pathspec-from-file")) {
      return "git commit --patch and --interactive run an interactive session"
    }
    for (const file of Options.valuesOf(parsed, "F", "file", "t", "template")) {
      if (!(file.literal && file.text === "-")) effects.reads.push(at.path(file))
    }
    return effects
  },
}

const BRANCH_SPEC = spec(
  "dDmMcClrarvqtfu",
  "u",
  [
    "delete",
    "move",
    "copy",
    "list",
    "all",
    "remotes",
    "verbose",
    "quiet",
    "track",
    "no-track",
    "force",
    "show-current",
    "unset-upstream",
    "ignore-case",
    "omit-empty",
    "no-column",
    "no-color",
    "create-reflog",
    "edit-description",
  ],
  ["set-upstream-to", "sort", "format", "points-at", "contains", "no-contains", "merged", "no-merged"],
  ["color", "abbrev", "column", "recurse-submodules"],
)

const branch: Sub = {
  spec: BRANCH_SPEC,
  effects: (_args, parsed, at) => {
    if (Options.has(parsed, "edit-description")) return "git branch --edit-description runs an editor"
    if (Options.has(parsed, "recurse-submodules")) return "git branch --recurse-submodules is not followed"
    // Creating, renaming or tracking a branch writes the repository's configuration.
    const effects = noEffects()
    if (
      Options.has(parsed, "m", "M", "move", "c", "C", "copy", "t", "track", "u", "set-upstream-to", "unset-upstream")
    ) {
      effects.writes.push(at.config())
    }
    return effects
  },
}

const TAG_SPEC = spec(
  "adsfliunmFv",
  "mFnu",
  [
    "annotate",
    "sign",
    "no-sign",
    "force",
    "delete",
    "verify",
    "list",
    "ignore-case",
    "omit-empty",
    "no-column",
    "create-reflog",
    "edit",
    "no-edit",
  ],
  [
    "message",
    "file",
    "local-user",
    "sort",
    "format",
    "points-at",
    "contains",
    "no-contains",
    "merged",
    "no-merged",
    "cleanup",
    "trailer",
  ],
  ["color", "column"],
)

const tag: Sub = {
  spec: TAG_SPEC,
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    if (Options.has(parsed, "s", "sign", "u", "local-user", "v", "verify"))
      return "git tag --sign and --verify run a signing program"
    if (Options.has(parsed, "e", "edit")) return "git tag --edit runs an editor"
    for (const file of Options.valuesOf(parsed, "F", "file"))
      if (!(file.literal && file.text === "-")) effects.reads.push(at.path(file))
    return effects
  },
}

const blame: Sub = {
  spec: spec(
    "bcflnpstwe",
    "LS",
    [
      "root",
      "show-stats",
      "porcelain",
      "line-porcelain",
      "incremental",
      "show-name",
      "show-number",
      "show-email",
      "progress",
      "no-progress",
      "score-debug",
      "minimal",
    ],
    ["since", "rev", "reverse", "first-parent", "encoding", "ignore-rev", "ignore-revs-file", "contents", "date"],
    ["abbrev", "color-lines", "color-by-age"],
    undefined,
    "MC",
  ),
  effects: readsHistory((_args, parsed, at, effects) => {
    for (const file of Options.valuesOf(parsed, "contents", "ignore-revs-file", "S")) effects.reads.push(at.path(file))
    for (const { word } of parsed.operands)
      if (word.literal && !word.text.startsWith("-")) effects.reads.push(at.path(word))
  }),
}

const GREP_SPEC = spec(
  "aiIwvhHEGPFnlLzcoqrWp",
  "eABCfm",
  [
    "text",
    "textconv",
    "no-textconv",
    "ignore-case",
    "word-regexp",
    "invert-match",
    "full-name",
    "extended-regexp",
    "basic-regexp",
    "perl-regexp",
    "fixed-strings",
    "line-number",
    "column",
    "files-with-matches",
    "name-only",
    "files-without-match",
    "null",
    "count",
    "only-matching",
    "break",
    "heading",
    "show-function",
    "function-context",
    "all-match",
    "quiet",
    "cached",
    "recursive",
    "no-recursive",
    "exclude-standard",
    "no-exclude-standard",
    "or",
    "and",
    "not",
    "no-index",
    "untracked",
    "recurse-submodules",
  ],
  ["max-depth", "threads", "context", "after-context", "before-context", "max-count"],
  ["color", "open-files-in-pager"],
  "C",
  "O",
)

const grep: Sub = {
  spec: GREP_SPEC,
  effects: (_args, parsed, at) => {
    if (Options.has(parsed, "O", "open-files-in-pager")) return "git grep -O runs a pager program on the files it finds"
    if (Options.has(parsed, "no-index", "untracked", "recurse-submodules")) {
      return "git grep --no-index, --untracked and --recurse-submodules read files past the repository's"
    }
    const effects = noEffects()
    effects.reads.push(at.history("git grep"))
    for (const file of Options.valuesOf(parsed, "f")) effects.reads.push(at.path(file))
    return effects
  },
}

const diff: Sub = {
  spec: DIFF_SPEC,
  effects: (args, parsed, at) => {
    if (Options.has(parsed, "no-index")) {
      // `git diff --no-index A B`: two paths on the disk, printed.
      const effects = noEffects()
      for (const { word } of parsed.operands) effects.reads.push(at.path(word))
      for (const file of Options.valuesOf(parsed, "output")) effects.writes.push(at.path(file))
      return effects
    }
    return readsHistory()(args, parsed, at)
  },
}

const catFile: Sub = {
  spec: spec(
    "tsepP",
    "",
    [
      "textconv",
      "filters",
      "batch-all-objects",
      "buffer",
      "unordered",
      "follow-symlinks",
      "allow-unknown-type",
      "use-mailmap",
      "no-use-mailmap",
      "Z",
    ],
    ["path"],
    ["batch", "batch-check", "batch-command"],
  ),
  effects: (_args, _parsed, at) => {
    const effects = noEffects()
    effects.reads.push({
      ...at.history("git cat-file"),
      unknown: "git cat-file prints any object of the repository, also ones no commit reaches",
    })
    return effects
  },
}

const formatPatch: Sub = {
  spec: spec(
    `${DIFF_FLAGS}kn`,
    `${DIFF_VALUES}ov`,
    [
      ...DIFF_LONG,
      "numbered",
      "no-numbered",
      "signoff",
      "stdout",
      "attach",
      "no-attach",
      "inline",
      "thread",
      "no-thread",
      "ignore-if-in-upstream",
      "no-ignore-if-in-upstream",
      "keep-subject",
      "cover-letter",
      "no-cover-letter",
      "zero-commit",
      "progress",
      "no-signature",
      "quiet",
      "root",
      "rfc",
      "no-binary",
      "no-stat",
    ],
    [
      ...DIFF_LONG_VALUES,
      "output-directory",
      "start-number",
      "subject-prefix",
      "in-reply-to",
      "to",
      "cc",
      "from",
      "add-header",
      "signature",
      "base",
      "suffix",
      "reroll-count",
      "filename-max-length",
      "range-diff",
      "interdiff",
      "creation-factor",
      "signature-file",
      "description-file",
      "cover-from-description",
    ],
    [...DIFF_LONG_OPTIONAL],
    "max-count",
    DIFF_OPTIONAL,
  ),
  effects: readsHistory((_args, parsed, at, effects) => {
    const directory = Options.valuesOf(parsed, "o", "output-directory")[0]
    if (!Options.has(parsed, "stdout")) effects.writes.push(at.path(directory ?? literal("."), "tree"))
    for (const file of Options.valuesOf(parsed, "signature-file", "description-file")) effects.reads.push(at.path(file))
  }),
}

const archive: Sub = {
  spec: spec(
    "lv0123456789",
    "o",
    ["list", "verbose", "worktree-attributes"],
    ["format", "prefix", "output", "add-file", "add-virtual-file", "mtime"],
    [],
  ),
  effects: readsHistory((_args, parsed, at, effects) => {
    for (const file of Options.valuesOf(parsed, "o")) effects.writes.push(at.path(file))
    for (const file of Options.valuesOf(parsed, "add-file")) effects.reads.push(at.path(file))
  }),
}

const init: Sub = {
  spec: spec(
    "q",
    "b",
    ["quiet", "bare"],
    ["separate-git-dir", "object-format", "initial-branch", "ref-format"],
    ["shared", "template"],
  ),
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    const directory = parsed.operands[0]?.word ?? literal(".")
    // The new (or re-initialised) repository, its hooks copied from the template: all of it is written.
    effects.writes.push(at.path(directory, "tree"))
    if (!Options.has(parsed, "bare")) effects.writes.push(at.path(joined(directory, ".git"), "opaque"))
    for (const dir of Options.valuesOf(parsed, "separate-git-dir")) effects.writes.push(at.path(dir, "opaque"))
    for (const template of Options.valuesOf(parsed, "template")) effects.reads.push(at.path(template, "tree"))
    return effects
  },
}

const joined = (directory: Word, name: string): Word =>
  directory.literal && !directory.glob
    ? { ...directory, text: `${directory.text.replace(/\/+$/, "")}/${name}` }
    : directory

/** A clone source that names a place on this disk (not `host:path` or a URL): it is read. */
const localSource = (word: Word): boolean =>
  word.literal && !/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(word.text) && !/^[^/]+:/.test(word.text)

const clone: Sub = {
  spec: spec(
    "lsqvnb",
    "bocj",
    [
      "local",
      "no-hardlinks",
      "shared",
      "quiet",
      "verbose",
      "progress",
      "no-checkout",
      "bare",
      "mirror",
      "single-branch",
      "no-single-branch",
      "no-tags",
      "shallow-submodules",
      "no-shallow-submodules",
      "remote-submodules",
      "no-remote-submodules",
      "sparse",
      "reject-shallow",
      "no-reject-shallow",
      "also-filter-submodules",
    ],
    [
      "origin",
      "branch",
      "depth",
      "shallow-since",
      "shallow-exclude",
      "jobs",
      "filter",
      "bundle-uri",
      "server-option",
      "reference",
      "reference-if-able",
      "dissociate",
      "separate-git-dir",
      "object-format",
      "ref-format",
      "revision",
    ],
    [],
  ),
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    const [source, target] = parsed.operands.map((o) => o.word)
    if (source === undefined) return effects
    if (localSource(source)) effects.reads.push(at.path(source, "tree"))
    let directory = target
    if (directory === undefined) {
      if (!source.literal) return "git clone names its directory from a source only known when the shell runs"
      const name = source.text
        .replace(/\/+$/, "")
        .replace(/\.git$/, "")
        .replace(/^.*[/:]/, "")
      directory = literal(Options.has(parsed, "bare", "mirror") ? `${name}.git` : name)
    }
    effects.writes.push(at.path(directory, "opaque"))
    for (const dir of Options.valuesOf(parsed, "separate-git-dir")) effects.writes.push(at.path(dir, "opaque"))
    return effects
  },
}

const worktree: Sub = {
  spec: spec(
    "fdbBq",
    "bB",
    [
      "force",
      "detach",
      "checkout",
      "no-checkout",
      "lock",
      "guess-remote",
      "no-guess-remote",
      "track",
      "no-track",
      "orphan",
      "quiet",
      "porcelain",
      "verbose",
      "dry-run",
      "relative-paths",
      "no-relative-paths",
    ],
    ["reason", "expire"],
    ["z"],
  ),
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    const [verb, ...rest] = parsed.operands.map((o) => o.word)
    switch (verb?.text) {
      case "list":
      case "prune":
      case "lock":
      case "unlock":
      case "repair":
        return effects
      case "add":
      case "remove":
        if (rest[0] === undefined) return effects
        effects.writes.push(at.path(rest[0], "opaque"))
        return effects
      case "move":
        for (const dir of rest) effects.writes.push(at.path(dir, "opaque"))
        return effects
      default:
        return `git worktree ${verb?.text ?? ""} is not a worktree command the gate models`
    }
  },
}

const bundle: Sub = {
  spec: spec("q", "", ["quiet", "progress", "all", "branches", "tags", "remotes"], ["version"]),
  effects: (_args, parsed, at) => {
    const effects = noEffects()
    const [verb, file] = parsed.operands.map((o) => o.word)
    if (file === undefined) return effects
    switch (verb?.text) {
      case "create":
        effects.writes.push(at.path(file))
        return effects
      case "verify":
      case "list-heads":
        effects.reads.push(at.path(file))
        return effects
      default:
        return `git bundle ${verb?.text ?? ""} is not a bundle command the gate models`
    }
  },
}

/** Subcommands that only print names, refs and metadata, or write git's own store (objects and refs). */
const quiet = (specification: Options.Spec): Sub => ({ spec: specification, effects: nothing })

const SUBCOMMANDS: ReadonlyMap<string, Sub> = new Map<string, Sub>([
  [
    "status",
    quiet(
      spec(
        "sbuvz",
        "u",
        [
          "short",
          "branch",
          "show-stash",
          "long",
          "verbose",
          "null",
          "renames",
          "no-renames",
          "ahead-behind",
          "no-ahead-behind",
        ],
        [],
        ["porcelain", "untracked-files", "ignored", "ignore-submodules", "column", "no-column", "find-renames"],
      ),
    ),
  ],
  ["log", { spec: LOG_SPEC, effects: readsHistory() }],
  ["show", { spec: LOG_SPEC, effects: readsHistory() }],
  ["whatchanged", { spec: LOG_SPEC, effects: readsHistory() }],
  [
    "shortlog",
    quiet(
      spec(
        "nsec",
        "w",
        ["numbered", "summary", "email", "committer", "all", "no-merges", "merges"],
        ["group", "format", "since", "until", "after", "before", "author"],
        ["w"],
      ),
    ),
  ],
  ["diff", diff],
  ["blame", blame],
  ["annotate", blame],
  ["grep", grep],
  ["cat-file", catFile],
  ["format-patch", formatPatch],
  ["archive", archive],
  ["checkout", checkout],
  ["restore", restoreOrRm("restore")],
  ["rm", restoreOrRm("rm")],
  ["switch", switchSub],
  ["mv", mv],
  ["clean", clean],
  ["config", config],
  ["remote", remote],
  ["reset", reset],
  ["stash", stash],
  ["merge", applying("merge")],
  ["cherry-pick", applying("cherry-pick")],
  ["revert", applying("revert")],
  ["rebase", rebase],
  ["pull", pull],
  ["apply", apply],
  ["am", am],
  ["add", add],
  ["commit", commit],
  ["branch", branch],
  ["tag", tag],
  ["init", init],
  ["clone", clone],
  ["worktree", worktree],
  ["bundle", bundle],
  ["fetch", quiet(spec("afkmnpPqtuv46", "j", FETCH_LONG, FETCH_VALUES, ["recurse-submodules"]))],
  [
    "push",
    quiet(
      spec(
        "nfqvud46",
        "o",
        [
          "all",
          "mirror",
          "tags",
          "follow-tags",
          "dry-run",
          "porcelain",
          "delete",
          "prune",
          "force",
          "atomic",
          "no-atomic",
          "set-upstream",
          "quiet",
          "verbose",
          "progress",
          "no-progress",
          "no-verify",
          "verify",
          "ipv4",
          "ipv6",
          "branches",
        ],
        ["push-option", "repo"],
        ["force-with-lease", "force-if-includes", "signed", "no-signed"],
      ),
    ),
  ],
  [
    "rev-parse",
    quiet(
      spec(
        "q",
        "",
        [
          "verify",
          "quiet",
          "short",
          "abbrev-ref",
          "symbolic",
          "symbolic-full-name",
          "show-toplevel",
          "show-prefix",
          "show-cdup",
          "git-dir",
          "git-common-dir",
          "absolute-git-dir",
          "is-inside-work-tree",
          "is-inside-git-dir",
          "is-bare-repository",
          "is-shallow-repository",
          "show-superproject-working-tree",
          "all",
          "branches",
          "tags",
          "remotes",
          "sq",
          "sq-quote",
          "not",
          "revs-only",
          "no-revs",
          "flags",
          "no-flags",
          "local-env-vars",
          "shared-index-path",
          "parseopt",
          "keep-dashdash",
          "stop-at-non-option",
          "stuck-long",
          "default",
        ],
        [
          "prefix",
          "since",
          "after",
          "until",
          "before",
          "exclude",
          "glob",
          "path-format",
          "show-object-format",
          "show-ref-format",
          "git-path",
          "resolve-git-dir",
        ],
        ["short", "abbrev-ref", "disambiguate"],
      ),
    ),
  ],
  [
    "ls-files",
    quiet(
      spec(
        "cdmosiktvfzuxX",
        "xX",
        [
          "cached",
          "deleted",
          "modified",
          "others",
          "stage",
          "ignored",
          "killed",
          "directory",
          "no-empty-directory",
          "unmerged",
          "resolve-undo",
          "exclude-standard",
          "error-unmatch",
          "full-name",
          "recurse-submodules",
          "debug",
          "eol",
          "sparse",
          "deduplicate",
        ],
        ["exclude", "exclude-from", "exclude-per-directory", "with-tree", "format"],
        ["abbrev"],
      ),
    ),
  ],
  [
    "ls-tree",
    quiet(
      spec(
        "drtlz",
        "",
        ["long", "name-only", "name-status", "object-only", "full-name", "full-tree"],
        ["format"],
        ["abbrev"],
      ),
    ),
  ],
  [
    "ls-remote",
    quiet(
      spec(
        "htq",
        "",
        ["heads", "tags", "branches", "refs", "quiet", "get-url", "symref"],
        ["sort", "server-option"],
        [],
      ),
    ),
  ],
  [
    "describe",
    quiet(
      spec(
        "",
        "",
        ["all", "tags", "contains", "long", "always", "first-parent", "exact-match", "debug"],
        ["match", "exclude", "candidates"],
        ["abbrev", "dirty", "broken"],
      ),
    ),
  ],
  [
    "reflog",
    quiet(spec(`${DIFF_FLAGS}n`, "n", [...LOG_LONG, "all", "verbose"], LOG_LONG_VALUES, LOG_LONG_OPTIONAL, "n")),
  ],
  [
    "rev-list",
    quiet(
      spec(
        "n",
        "n",
        [...LOG_LONG, "count", "objects", "no-object-names", "quiet"],
        LOG_LONG_VALUES,
        LOG_LONG_OPTIONAL,
        "n",
      ),
    ),
  ],
  ["merge-base", quiet(spec("a", "", ["all", "octopus", "independent", "is-ancestor", "fork-point"]))],
  [
    "name-rev",
    quiet(spec("", "", ["tags", "all", "name-only", "no-undefined", "always", "annotate-stdin"], ["refs", "exclude"])),
  ],
  [
    "show-ref",
    quiet(
      spec(
        "dsq",
        "",
        ["head", "heads", "branches", "tags", "dereference", "verify", "quiet", "exclude-existing", "exists"],
        [],
        ["hash", "abbrev"],
      ),
    ),
  ],
  ["symbolic-ref", quiet(spec("qd", "", ["quiet", "short", "no-recurse", "delete"], ["m"]))],
  ["count-objects", quiet(spec("vH", "", ["verbose", "human-readable"]))],
  ["var", quiet(spec("l", ""))],
  ["version", quiet(spec("", "", ["build-options"]))],
  ["check-ignore", quiet(spec("qvnz", "", ["quiet", "verbose", "non-matching", "no-index", "stdin"]))],
  ["check-attr", quiet(spec("az", "", ["all", "cached", "stdin"], ["source"]))],
  ["cherry", quiet(spec("v", "", [], [], ["abbrev"]))],
  ["range-diff", { spec: LOG_SPEC, effects: readsHistory() }],
  [
    "submodule",
    {
      spec: spec("q", "", ["quiet", "cached", "recursive"]),
      effects: (_args, parsed) => {
        const verb = parsed.operands[0]?.word.text
        return verb === undefined || verb === "status" || verb === "summary"
          ? noEffects()
          : `git submodule ${verb} is not followed`
      },
    },
  ],
])

/**
 * The subcommands the gate models; any other (including aliases) makes the segment unresolved.
 *
 * @since 0.4.0
 * @category constants
 */
export const GIT_SUBCOMMANDS: ReadonlyArray<string> = [...SUBCOMMANDS.keys()]

/** Subcommands that never move HEAD, the index or the refs a later `git checkout` would read. */
const STILL: ReadonlySet<string> = new Set([
  "status",
  "log",
  "show",
  "whatchanged",
  "shortlog",
  "diff",
  "blame",
  "annotate",
  "grep",
  "cat-file",
  "rev-parse",
  "ls-files",
  "ls-tree",
  "ls-remote",
  "describe",
  "rev-list",
  "merge-base",
  "name-rev",
  "show-ref",
  "count-objects",
  "var",
  "version",
  "check-ignore",
  "check-attr",
  "cherry",
  "range-diff",
  "format-patch",
  "archive",
])

/**
 * Whether a command may change the repository's state (HEAD, refs, the index, the stash) so that the files a later
 * git command writes can no longer be named from the state before the command ran: any `git` but the reading
 * subcommands above.
 *
 * @since 0.4.0
 * @category utilities
 */
export const changesRepository = (words: ReadonlyArray<Word>): boolean => {
  const found = gitSubcommand(words)
  if ("unresolved" in found) return true
  const sub = words[found.at]
  return sub !== undefined && !(sub.literal && STILL.has(sub.text))
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
  if (sub === undefined) return effects
  if (!sub.literal) {
    effects.unresolved = `the git subcommand ${sub.text} is only known when the shell runs`
    return effects
  }
  const table = SUBCOMMANDS.get(sub.text)
  if (table === undefined) {
    effects.unresolved = `git ${sub.text} is not a subcommand the gate models`
    return effects
  }
  const args = words.slice(found.at)
  const raw = join(words)
  const moved = "git -C, --git-dir and --work-tree move where git works"
  const elsewhere = (u: PathUse): PathUse => (found.elsewhere ? { ...u, unknown: moved } : u)
  const at: At = {
    raw,
    path: (w, mode = "file", follow = true) => elsewhere(use(w, raw, mode, follow)),
    named: (what, names) =>
      elsewhere({
        word: literal(`(the files ${what} writes)`),
        raw,
        mode: "file",
        follow: false,
        ...(typeof names === "string" ? { unknown: names } : { gitNames: names }),
      }),
    history: (what) =>
      elsewhere({
        word: literal(`(every file ${what} may print from the repository)`),
        raw,
        mode: "tree",
        follow: false,
        history: true,
      }),
    config: (name = "config") =>
      found.elsewhere ? { ...use(literal(name), raw), unknown: moved } : { ...use(literal(name), raw), git: true },
  }
  const parsed = Options.parse(args, 1, table.spec)
  if (parsed.unknown !== undefined) {
    effects.unresolved = `git ${sub.text} ${parsed.unknown} is an option the gate does not model`
    return effects
  }
  const result = table.effects(args, parsed, at)
  if (result === undefined) return effects
  if (typeof result === "string") {
    effects.unresolved = result
    return effects
  }
  return result
}
