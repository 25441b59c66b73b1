/**
 * The values of `ShellPlan`: what the planner reads (`Places`, `Environment`, `Setting`, `Input`) and what it builds
 * (`Group`, `Assert`, `Plan`).
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as BashArity from "../bash-arity.js"
import * as Paths from "./paths.js"
import * as ShellCommand from "../shell-command.js"

/**
 * What is at a path (`missing`, `directory`, `file`, `symlink` with its stored target, `other`).
 *
 * @since 0.3.0
 * @category models
 */
export type Entry = Paths.Entry

/**
 * The permission form of a canonical path: its resource and, outside the Location, the `external_directory` it
 * needs. `impossible`: nothing can be written there (a parent is a file); `invalid`: the path cannot be used.
 *
 * @since 0.3.0
 * @category models
 */
export type Located =
  | {
      readonly _tag: "located"
      readonly canonical: string
      readonly resource: string
      readonly external?: { readonly resource: string; readonly save: string }
    }
  | { readonly _tag: "impossible" }
  | { readonly _tag: "invalid"; readonly reason: string }

/**
 * The disk and the Location as the planner sees them.
 *
 * @since 0.3.0
 * @category models
 */
export interface Places {
  /** The directory `~` and a bare `cd` stand for. */
  readonly home: string
  /** `CDPATH` as the shell will have it, split on `:` (empty when unset). */
  readonly cdpath: ReadonlyArray<string>
  /** What is at an absolute path, without following a final link. */
  readonly inspect: (absolute: string) => Effect.Effect<Entry>
  /** The permission form of a canonical path. */
  readonly locate: (canonical: string, kind: "file" | "directory") => Effect.Effect<Located>
  /** Whether a canonical path is protected (`toolgate.json`, `.toolgate/**`, `.git/**`, …). */
  readonly isProtected: (canonical: string) => boolean
  /** The names in a directory, or `undefined` when it cannot be read. */
  readonly list: (canonical: string) => Effect.Effect<ReadonlyArray<string> | undefined>
  /**
   * Runs a read-only git plumbing command (`diff-tree`, `ls-files`, `rev-parse`, …) in a directory: its output, or
   * `undefined` when it fails or prints more than the planner reads.
   */
  readonly git: (cwd: string, args: ReadonlyArray<string>) => Effect.Effect<string | undefined>
}

/**
 * What the planner needs besides the command: the places, the rules (`check` evaluates resources for an action as
 * PermissionV2 would, saved approvals included), the arity table, and the sandbox.
 *
 * @since 0.3.0
 * @category models
 */
export interface Environment<E = never> {
  readonly places: Places
  readonly check: (
    action: string,
    resources: ReadonlyArray<string>,
  ) => Effect.Effect<ReadonlyMap<string, "allow" | "ask" | "deny">, E>
  readonly table: BashArity.Table
  /** The Location's sandbox is active (asks say so). */
  readonly sandboxed: boolean
  /** `bash.sandbox.auto_allow` while the sandbox is active: segments that would only ask `bash` run. */
  readonly autoAllow: boolean
}

/**
 * The planner's inputs and surroundings for one Location (`Environment` without the rules, plus the shell), as a
 * service: the bash tool's layer provides it, `permissions explain` uses it.
 *
 * @since 0.3.0
 * @category models
 */
export interface Setting {
  /** The canonical directory of the Location: where a command starts when no workdir is given. */
  readonly root: string
  readonly places: Places
  readonly sandboxed: boolean
  readonly autoAllow: boolean
  /** The shell commands run with: its grammar decides how they are read. */
  readonly shell: string
}

/**
 * One permission group: an action, its resources, what `always` saves, the effect of each resource under the
 * rules, and the prompt metadata.
 *
 * @since 0.3.0
 * @category models
 */
export interface Group {
  readonly action: string
  readonly resources: ReadonlyArray<string>
  readonly save: ReadonlyArray<string>
  readonly effects: ReadonlyMap<string, "allow" | "ask" | "deny">
  readonly metadata?: Record<string, unknown>
  /** Why an `unresolved:` resource of this group is unresolved. */
  readonly reasons?: ReadonlyMap<string, string>
}

/**
 * One assert the leaf makes, in order.
 *
 * @since 0.3.0
 * @category models
 */
export interface Assert {
  readonly action: string
  readonly resources: ReadonlyArray<string>
  readonly save?: ReadonlyArray<string>
  readonly metadata?: Record<string, unknown>
}

/**
 * The plan of one command.
 *
 * @since 0.3.0
 * @category models
 */
export interface Plan {
  readonly parsed: ShellCommand.Parsed
  readonly verdicts: ReadonlyArray<ShellCommand.Verdict>
  /** external_directory groups, then bash, read, edit, protected_path (empty groups left out). */
  readonly groups: ReadonlyArray<Group>
  /** The asserts, denies first: the first denied one blocks the call. */
  readonly asserts: ReadonlyArray<Assert>
  /** The decision: deny when any resource is denied, ask when any asks, else allow. */
  readonly effect: "allow" | "ask" | "deny"
}

/**
 * The input of `plan`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Input {
  readonly command: string
  /** The canonical directory the command starts in. */
  readonly workdir: string
  /** The `external_directory` resource already approved for an external workdir. */
  readonly approved?: string
  readonly description?: string
  readonly parsed: ShellCommand.Parsed
}
