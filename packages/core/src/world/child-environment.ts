/**
 * ChildEnvironment: which variables of the runner's environment a bash child sees. `inherit` passes the whole
 * environment (opencode's behaviour); `scrub` removes every variable whose name matches a secret pattern or whose
 * value looks like a credential (a URL with a password, a private key, a token of a well-known format), except the
 * allow-listed ones; `set` adds explicit values in both modes. See docs/sandbox.md.
 *
 * @since 0.2.0
 */
import type * as Config from "../place/config.js"
import * as Wildcard from "../values/wildcard.js"

/**
 * Name patterns of variables that `scrub` removes, matched case-insensitively as `Wildcard` patterns.
 *
 * @since 0.2.0
 * @category constants
 */
export const SECRET_PATTERNS: ReadonlyArray<string> = [
  "*KEY*",
  "*SECRET*",
  "*TOKEN*",
  "*PASSWORD*",
  "*PASSWD*",
  "*PASSPHRASE*",
  "*PASS",
  "*_PASS_*",
  "*_PWD",
  "*_PW",
  "*CREDENTIAL*",
  "*PRIVATE*",
  "*AUTH*",
  "*COOKIE*",
  "*SESSION*",
  "*_PAT",
  "*JWT*",
  "*BEARER*",
  "*WEBHOOK*",
  "*DSN*",
  "*CONNECTION_STRING*",
  "DATABASE_URL",
  "AWS_*",
  "AZURE_*",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "SSH_AUTH_SOCK",
  "GPG_AGENT_INFO",
]

/**
 * Value shapes that `scrub` removes whatever the variable is called: a URL carrying a password
 * (`scheme://user:password@…`, `scheme://:password@…`), a PEM private key, and tokens of well-known formats
 * (GitHub, GitLab, Slack, AWS access key ids, npm, Stripe live keys, Google API keys, `sk-` API keys, JSON Web
 * Tokens).
 *
 * @since 0.3.0
 * @category constants
 */
export const SECRET_VALUES: ReadonlyArray<RegExp> = [
  /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#@]*:[^\s/?#@]*@/,
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/,
  /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})/,
  /\bglpat-[A-Za-z0-9_-]{20,}/,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/,
  /\bnpm_[A-Za-z0-9]{36}\b/,
  /\b[rs]k_live_[A-Za-z0-9]{16,}/,
  /\bAIza[0-9A-Za-z_-]{35}/,
  /\bsk-[A-Za-z0-9_-]{20,}/,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+/,
]

/**
 * True iff `value` has one of the `SECRET_VALUES` shapes.
 *
 * @since 0.3.0
 * @category predicates
 */
export const looksSecret = (value: string): boolean => SECRET_VALUES.some((shape) => shape.test(value))

/**
 * Variables `scrub` keeps even when a pattern matches them.
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_ALLOW: ReadonlyArray<string> = []

/**
 * The resolved settings.
 *
 * @since 0.2.0
 * @category models
 */
export interface Settings {
  readonly mode: "inherit" | "scrub"
  /** Patterns in addition to `SECRET_PATTERNS`. */
  readonly scrub: ReadonlyArray<string>
  readonly allow: ReadonlyArray<string>
  readonly set: Readonly<Record<string, string>>
}

/**
 * Settings from the `bash.env` configuration value; `fallback` is the mode when nothing is configured.
 *
 * @since 0.2.0
 * @category utilities
 */
export const settings = (value: typeof Config.BashEnv.Type | undefined, fallback: Settings["mode"]): Settings => {
  if (value === undefined) return { mode: fallback, scrub: [], allow: [], set: {} }
  if (typeof value === "string") return { mode: value, scrub: [], allow: [], set: {} }
  return { mode: value.mode ?? fallback, scrub: value.scrub ?? [], allow: value.allow ?? [], set: value.set ?? {} }
}

const nocase = Wildcard.make({ caseInsensitive: true })
const matches = (name: string, patterns: ReadonlyArray<string>): boolean =>
  patterns.some((pattern) => nocase.match(name, pattern))

/**
 * The overrides for `AppProcess.Command.env`: `undefined` removes a variable of `parent`, a string sets one.
 *
 * @since 0.2.0
 * @category utilities
 */
export const overrides = (
  resolved: Settings,
  parent: NodeJS.ProcessEnv = process.env,
): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {}
  if (resolved.mode === "scrub") {
    const secret = [...SECRET_PATTERNS, ...resolved.scrub]
    const allowed = [...DEFAULT_ALLOW, ...resolved.allow]
    for (const [name, value] of Object.entries(parent)) {
      if ((matches(name, secret) || (value !== undefined && looksSecret(value))) && !matches(name, allowed))
        out[name] = undefined
    }
  }
  for (const [name, value] of Object.entries(resolved.set)) out[name] = value
  return out
}
