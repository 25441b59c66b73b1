/**
 * The places git's configuration names that decide what git runs: the hooks directory (`core.hooksPath`), the files
 * it includes (`include.path`, `includeIf.<condition>.path`) and the configuration files themselves. Read with
 * `git config --list --show-origin --null`, which follows includes, so a value set in an included file counts too.
 * `ProtectedPath` protects what this returns (see docs/trust/protected-paths.md).
 *
 * @since 0.4.0
 * @internal
 */
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as ProcessGroup from "../../system/process-group.js"

/**
 * What the git configuration of one repository names.
 *
 * @since 0.4.0
 * @internal
 */
export interface Configured {
  /** The directories `core.hooksPath` names (the last value wins in git; every value is listed). */
  readonly hooks: ReadonlyArray<string>
  /** The files `include.path` and `includeIf.*.path` name. */
  readonly includes: ReadonlyArray<string>
  /** The configuration files git read (system, global, local, worktree and included ones). */
  readonly files: ReadonlyArray<string>
}

/** The most output `git config --list` may print; past it the reading fails (and the caller fails closed). */
const OUTPUT_BYTES = 1024 * 1024

/** Variables that would point git at another repository than the one being read. */
const ENVIRONMENT: Readonly<Record<string, undefined>> = {
  GIT_DIR: undefined,
  GIT_WORK_TREE: undefined,
  GIT_COMMON_DIR: undefined,
  GIT_INDEX_FILE: undefined,
  GIT_PREFIX: undefined,
}

const expandHome = (value: string, home: string): string =>
  value === "~" ? home : value.startsWith("~/") ? path.join(home, value.slice(2)) : value

const INCLUDE = /^include\.path$|^includeif\..*\.path$/

/**
 * Reads what the git configuration of the repository at `worktree` names; `undefined` when git cannot say (not a
 * repository, git missing, too much output): the caller decides how to fail closed.
 *
 * @since 0.4.0
 * @internal
 */
export const read = (worktree: string, home: string): Effect.Effect<Configured | undefined> =>
  ProcessGroup.run(
    {
      command: "git",
      args: ["config", "--list", "--show-origin", "--null", "--includes"],
      cwd: worktree,
      env: ENVIRONMENT,
    },
    { maxOutputBytes: OUTPUT_BYTES, maxErrorBytes: 0, timeout: "10 seconds" },
  ).pipe(
    Effect.map((result) => {
      if (result.exitCode !== 0 || result.stdoutTruncated) return undefined
      const hooks: Array<string> = []
      const includes: Array<string> = []
      const files = new Set<string>()
      // --null: `<origin>\0<key>\n<value>\0` per entry.
      const fields = Buffer.from(result.stdout).toString("utf8").split("\0")
      for (let i = 0; i + 1 < fields.length; i += 2) {
        const origin = fields[i]!
        const entry = fields[i + 1]!
        const newline = entry.indexOf("\n")
        const key = (newline < 0 ? entry : entry.slice(0, newline)).toLowerCase()
        const value = newline < 0 ? "" : entry.slice(newline + 1)
        const file = origin.startsWith("file:") ? path.resolve(worktree, origin.slice("file:".length)) : undefined
        if (file !== undefined) files.add(file)
        if (value === "") continue
        if (key === "core.hookspath") hooks.push(path.resolve(worktree, expandHome(value, home)))
        else if (INCLUDE.test(key)) {
          // A relative include is relative to the file that names it.
          const base = file === undefined ? worktree : path.dirname(file)
          includes.push(path.resolve(base, expandHome(value, home)))
        }
      }
      return { hooks, includes, files: [...files] }
    }),
    Effect.orElseSucceed(() => undefined),
  )
