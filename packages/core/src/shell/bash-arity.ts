/**
 * BashArity: how many leading words name "the same command" for a saved bash approval. Answering `always` to
 * `git commit -m "fix"` saves `git commit *` (arity 2), to `npm run test -- --watch` saves `npm run test *` (arity
 * 3), to `ls -la` saves `ls *` (any command not in the table has arity 1). The prefix is saved literally: a `*` or
 * `?` in the command's own words never becomes a wildcard. The table is extendable from configuration
 * (`bash.arity`). See docs/shell.md.
 *
 * @since 0.2.0
 */
import * as Wildcard from "../values/wildcard.js"

/**
 * A prefix → arity table: the key is one or more words, the value how many words of a command starting with them
 * make its saved prefix.
 *
 * @since 0.2.0
 * @category models
 */
export type Table = ReadonlyMap<string, number>

const entries: ReadonlyArray<readonly [string, number]> = [
  // Version control
  ["git", 2],
  ["git stash", 3],
  ["git remote", 3],
  ["git submodule", 3],
  ["git worktree", 3],
  ["git config", 3],
  ["hg", 2],
  ["svn", 2],
  ["gh", 3],
  ["glab", 3],
  // JavaScript
  ["npm", 2],
  ["npm run", 3],
  ["npm exec", 3],
  ["npx", 2],
  ["pnpm", 2],
  ["pnpm run", 3],
  ["pnpm exec", 3],
  ["pnpm dlx", 3],
  ["yarn", 2],
  ["yarn run", 3],
  ["yarn workspace", 4],
  ["bun", 2],
  ["bun run", 3],
  ["bun x", 3],
  ["bunx", 2],
  ["deno", 2],
  ["deno task", 3],
  ["node", 2],
  ["tsc", 1],
  ["vitest", 2],
  ["jest", 1],
  ["eslint", 1],
  ["prettier", 1],
  ["turbo", 2],
  ["turbo run", 3],
  ["nx", 2],
  // Python
  ["python", 2],
  ["python3", 2],
  ["python -m", 3],
  ["python3 -m", 3],
  ["pip", 2],
  ["pip3", 2],
  ["uv", 2],
  ["uv run", 3],
  ["uv pip", 3],
  ["poetry", 2],
  ["poetry run", 3],
  ["pytest", 1],
  ["ruff", 2],
  ["mypy", 1],
  // Other toolchains
  ["cargo", 2],
  ["rustup", 2],
  ["go", 2],
  ["go mod", 3],
  ["make", 2],
  ["cmake", 2],
  ["gradle", 2],
  ["./gradlew", 2],
  ["mvn", 2],
  ["dotnet", 2],
  ["swift", 2],
  ["mix", 2],
  ["bundle", 2],
  ["bundle exec", 3],
  ["rails", 2],
  ["rake", 2],
  ["composer", 2],
  // Containers and clusters
  ["docker", 2],
  ["docker compose", 3],
  ["docker container", 3],
  ["docker image", 3],
  ["docker volume", 3],
  ["docker network", 3],
  ["docker-compose", 2],
  ["podman", 2],
  ["kubectl", 2],
  ["kubectl config", 3],
  ["helm", 2],
  ["terraform", 2],
  ["aws", 3],
  ["gcloud", 3],
  ["az", 3],
  // System
  ["systemctl", 2],
  ["service", 3],
  ["apt", 2],
  ["apt-get", 2],
  ["brew", 2],
  ["chmod", 2],
  ["chown", 2],
]

/**
 * The built-in table.
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT: Table = new Map(entries)

/**
 * The built-in table extended (and overridden) by configured entries, applied in order. Keys are normalised to single
 * spaces; a non-positive or non-integer arity is ignored.
 *
 * @since 0.2.0
 * @category utilities
 */
export const extend = (table: Table, ...extra: ReadonlyArray<Readonly<Record<string, number>> | undefined>): Table => {
  const out = new Map(table)
  for (const record of extra) {
    if (record === undefined) continue
    for (const [key, value] of Object.entries(record)) {
      const normalised = key.trim().split(/\s+/).join(" ")
      if (normalised === "" || !Number.isInteger(value) || value < 1) continue
      out.set(normalised, value)
    }
  }
  return out
}

/**
 * The words that make the saved prefix of `argv`: the longest table key that starts `argv` decides the arity
 * (default 1). When an option (`-x`) falls inside the prefix, the prefix is the whole command: `git -C dir push`
 * must not become `git -C *`.
 *
 * @since 0.2.0
 * @category utilities
 */
export const prefix = (
  argv: ReadonlyArray<string>,
  table: Table = DEFAULT,
): { words: ReadonlyArray<string>; exact: boolean } => {
  if (argv.length === 0) return { words: [], exact: true }
  let arity = 1
  let key = 1
  for (let length = Math.min(argv.length, 4); length >= 1; length--) {
    const found = table.get(argv.slice(0, length).join(" "))
    if (found !== undefined) {
      arity = found
      key = length
      break
    }
  }
  // Too few words for the arity (`git` alone), or an option inside the prefix: the exact command.
  if (argv.length < arity) return { words: argv, exact: true }
  const words = argv.slice(0, arity)
  if (words.slice(key).some((w) => w.startsWith("-"))) return { words: argv, exact: true }
  return { words, exact: false }
}

/**
 * The pattern saved for `argv` on an `always` reply: the literal prefix followed by ` *` (which also matches the
 * prefix alone), or the literal command when the prefix is the whole command because of an option.
 *
 * @example
 * ```ts
 * import { BashArity } from "@toolgate/core"
 * import { strictEqual } from "node:assert"
 *
 * strictEqual(BashArity.pattern(["git", "commit", "-m", "fix"]), "git commit *")
 * strictEqual(BashArity.pattern(["npm", "run", "test", "--", "--watch"]), "npm run test *")
 * strictEqual(BashArity.pattern(["ls", "-la"]), "ls *")
 * // An option inside the prefix: the whole command is saved, not `git -C *`.
 * strictEqual(BashArity.pattern(["git", "-C", "dir", "push"]), "git -C dir push")
 * ```
 *
 * @since 0.2.0
 * @category utilities
 */
export const pattern = (argv: ReadonlyArray<string>, table: Table = DEFAULT): string => {
  const { words, exact } = prefix(argv, table)
  const text = Wildcard.literal(words.join(" "))
  return exact ? text : `${text} *`
}
