/**
 * The values the shell gate's analysis produces: segments (one per simple command), the files they write and read,
 * the links and copies they make, and the directories the shell may be in when each one runs.
 *
 * @since 0.3.0
 */
import type { Word } from "./words.js"

/**
 * One `cd` (or `pushd`) on the way from the starting directory.
 *
 * @since 0.3.0
 * @category models
 */
export interface CdStep {
  /** The directory as written (quotes removed). */
  readonly target: string
  /** Relative to the home directory (`cd`, `cd ~/x`). */
  readonly home?: boolean
  /** `cd -P`: `..` is resolved on the disk, not by dropping the last name. */
  readonly physical?: boolean
  /** A bare relative name (`cd x`): a `CDPATH` in the environment may send it elsewhere. */
  readonly searched?: boolean
}

/**
 * A directory the shell may be in: the `cd` steps from the directory the command starts in.
 *
 * @since 0.3.0
 * @category models
 */
export type Directory = ReadonlyArray<CdStep>

/**
 * Where a segment runs: every directory the shell may be in at that point, or why that cannot be known.
 *
 * @since 0.3.0
 * @category models
 */
export interface Place {
  readonly directories: ReadonlyArray<Directory>
  readonly unknown?: string
}

/**
 * How much of the file system a path use covers.
 *
 * - `file`: that path;
 * - `tree`: that path and everything below it as it is now (`rm -r`, `chmod -R`, `cp -r` into it);
 * - `opaque`: anything may appear below it (`tar -x`, `unzip`): any name, a link, a protected file.
 *
 * @since 0.3.0
 * @category models
 */
export type PathMode = "file" | "tree" | "opaque"

/**
 * A file a segment writes (creates, changes, removes) or reads.
 *
 * @since 0.3.0
 * @category models
 */
export interface PathUse {
  /** The path as the command gives it. */
  readonly word: Word
  /** What the user is shown: the redirection or the command part that names it (`> out`, `rm -rf build`). */
  readonly raw: string
  readonly mode: PathMode
  /** A symbolic link as the last name is followed (`> link` writes the link's target; `rm link` does not). */
  readonly follow: boolean
  /** When the path is a directory, the change lands at `path/<basename of each>` (`cp a b dir`, `mv a dir`). */
  readonly into?: ReadonlyArray<Word>
  /** Relative to the git directory found above the working directory (`git config` writes `config` there). */
  readonly git?: boolean
  /** Set when the file is only known at run time (`{}` of `find -exec`, `xargs` arguments, a glob): why. */
  readonly unknown?: string
  /**
   * The files are named by the repository's data (`git checkout REV` writes the files that differ from REV): git
   * plumbing commands, each printing NUL-separated names relative to the work tree's top level, that name them all.
   * A command whose first word is `?` may fail (it then names nothing). The planner runs them before the command.
   */
  readonly gitNames?: ReadonlyArray<ReadonlyArray<string>>
  /**
   * Contents printed from the repository's history (`git log -p`, `git show`, `git grep`): a read of every file the
   * repository tracks or has tracked.
   */
  readonly history?: boolean
  /**
   * A word of a program the gate does not model that reads as a path: judged only for where it lies (outside the
   * Location asks `external_directory`, protected asks `protected_path`), never as an `edit`.
   */
  readonly operand?: boolean
}

/**
 * A link a segment creates: `link` names it, `target` is what it points to (for a symbolic link, relative to the
 * link's own directory unless `relativeToCwd`).
 *
 * @since 0.3.0
 * @category models
 */
export interface Link {
  readonly link: PathUse
  readonly target: Word
  readonly symbolic: boolean
  readonly relativeToCwd?: boolean
}

/**
 * A copy or a move: after it, what is below `to` mirrors what was below `from` (links included).
 *
 * @since 0.3.0
 * @category models
 */
export interface Mirror {
  readonly from: Word
  readonly to: PathUse
}

/**
 * One simple command, as the permission gate evaluates it.
 *
 * @since 0.3.0
 * @category models
 */
export interface Segment {
  /** The command that runs: wrappers unwrapped, quotes and escapes removed. */
  readonly argv: ReadonlyArray<Word>
  /**
   * The `bash` permission resource: the assignments kept (`FOO=1`) and `argv`, joined by single spaces.
   */
  readonly command: string
  /** `argv` joined by single spaces, without the kept assignments. */
  readonly bare: string
  /** Assignments before the command that are part of what is approved (not on the harmless list). */
  readonly assignments: ReadonlyArray<string>
  /** The source text of the simple command, as written (wrappers and assignments included). */
  readonly text: string
  /** The wrappers around the command, outermost first, each as the normalised text from the wrapper on. */
  readonly wrappers: ReadonlyArray<string>
  /** True when a wrapper changes the user the command runs as (`sudo`, `doas`). */
  readonly elevated: boolean
  /** Set when the command cannot be judged statically: why. */
  readonly unresolved?: string
  readonly writes: ReadonlyArray<PathUse>
  readonly reads: ReadonlyArray<PathUse>
  readonly links: ReadonlyArray<Link>
  readonly mirrors: ReadonlyArray<Mirror>
  /** Where the shell may be when it runs. */
  readonly place: Place
  /** Set for a command implied by another one (`find -delete` implies `rm`): the implying segment's text. */
  readonly impliedBy?: string
}

/**
 * The simple commands of a command string, in the order the shell meets them (a substitution before the command
 * using it).
 *
 * @since 0.3.0
 * @category models
 */
export interface Parsed {
  readonly segments: ReadonlyArray<Segment>
  /** True when the grammar reported a syntax error (the erroneous parts are unresolved segments). */
  readonly error: boolean
}

/**
 * What a modelled command does to files: filled in by the command tables, attached to its segment.
 *
 * @since 0.3.0
 * @category models
 */
export interface Effects {
  writes: Array<PathUse>
  reads: Array<PathUse>
  links: Array<Link>
  mirrors: Array<Mirror>
  /** The command cannot be followed (an option the gate does not model, a program it runs): why. */
  unresolved?: string
}

/**
 * Empty effects.
 *
 * @since 0.3.0
 * @category utilities
 */
export const noEffects = (): Effects => ({ writes: [], reads: [], links: [], mirrors: [] })

/**
 * The same effects with every file unknown: a word known only at run time stood where an option may be, so it may
 * change what the other words mean (`cp $OPTS a b` may copy to `-t /elsewhere`).
 *
 * @since 0.3.0
 * @category utilities
 */
export const uncertain = (effects: Effects, reason: string): Effects => ({
  ...effects,
  writes: effects.writes.map((use) => (use.unknown === undefined ? { ...use, unknown: reason } : use)),
  reads: effects.reads.map((use) => (use.unknown === undefined ? { ...use, unknown: reason } : use)),
  links: effects.links.map((link) =>
    link.link.unknown === undefined ? { ...link, link: { ...link.link, unknown: reason } } : link,
  ),
})

/**
 * A path use from a word: unknown when the word is only known at run time or is a glob.
 *
 * @since 0.3.0
 * @category utilities
 */
export const use = (word: Word, raw: string, mode: PathMode = "file", follow = true): PathUse => ({
  word,
  raw,
  mode,
  follow,
  ...(!word.literal
    ? { unknown: `${word.text} is only known when the shell runs` }
    : word.glob
      ? { unknown: `the pattern ${word.text} names files only known when the shell runs` }
      : {}),
})

/**
 * Marks effects unresolved because of an option the gate does not model.
 *
 * @since 0.3.0
 * @category utilities
 */
export const unmodelled = (effects: Effects, name: string, option: string): Effects => {
  effects.unresolved = `${name} ${option} is an option the gate does not model`
  return effects
}

/**
 * A whole command judged as one unresolved segment with `reason`: what the gate returns for a command it cannot read
 * (too long, unparsable) or a shell it does not model. `error` says whether the grammar failed to read it.
 *
 * @since 0.3.0
 * @category constructors
 */
export const unresolvedWhole = (command: string, reason: string, error: boolean): Parsed => ({
  error,
  segments: [
    {
      argv: [{ text: command, literal: false, glob: false }],
      command,
      bare: command,
      assignments: [],
      text: command,
      wrappers: [],
      elevated: false,
      unresolved: reason,
      writes: [],
      reads: [],
      links: [],
      mirrors: [],
      place: { directories: [], unknown: reason },
    },
  ],
})
