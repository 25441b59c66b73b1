/**
 * Ignore-file matchers for the Node engine (`.gitignore`, `.ignore`, `.rgignore`, `.git/info/exclude`), built with
 * the `ignore` package. Like ripgrep, a matcher tests one path only: parents are not consulted, because the walk
 * never descends into an excluded directory.
 *
 * @since 0.1.0
 */
import ignore from "ignore"

/**
 * The outcome of one matcher for one path.
 *
 * @since 0.1.0
 * @category utilities
 */
export const enum Verdict {
  None = 0,
  Ignore = 1,
  Whitelist = 2,
}

/**
 * Tests a path relative to the ignore file's directory; directories end with `/`.
 *
 * @since 0.1.0
 * @category models
 */
export type Matcher = (path: string) => Verdict

interface TestResult {
  readonly ignored: boolean
  readonly unignored: boolean
}

interface RuleList {
  readonly test: (path: string, mode: string) => TestResult
}

const verdict = (result: TestResult): Verdict =>
  result.ignored ? Verdict.Ignore : result.unignored ? Verdict.Whitelist : Verdict.None

/**
 * Compiles the text of one ignore file; `undefined` when it holds no rule.
 *
 * @since 0.1.0
 * @category utilities
 */
export const compile = (content: string): Matcher | undefined => {
  const instance = ignore({ ignorecase: false, allowRelativePaths: true }).add(content)
  // `ignore` tests parents first through its public API; its rule list tests the path alone, as ripgrep does.
  // The public `test` is the fallback should that internal ever change shape.
  const rules = (instance as unknown as { readonly _rules?: Partial<RuleList> & { readonly _rules?: unknown } })._rules
  if (rules !== undefined && Array.isArray(rules._rules) && rules._rules.length === 0) return undefined
  if (rules !== undefined && typeof rules.test === "function") {
    const test = rules.test.bind(rules)
    return (path) => verdict(test(path, "regex"))
  }
  return (path) => verdict(instance.test(path))
}
