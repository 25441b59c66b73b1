/**
 * Shell variable assignments as the gate judges them: a short list of harmless variables is dropped, variables that
 * change what a command executes or where it reads and writes make the segment unresolved, and every other
 * assignment stays part of what is approved. See docs/shell.md.
 *
 * @since 0.3.0
 */

/**
 * Variables whose assignment before a command is dropped from the resource: they change only how output looks.
 *
 * @since 0.3.0
 * @category constants
 */
export const HARMLESS_VARIABLES: ReadonlyArray<string> = [
  "LANG",
  "LANGUAGE",
  "LC_*",
  "TZ",
  "COLUMNS",
  "LINES",
  "NO_COLOR",
  "FORCE_COLOR",
  "CLICOLOR",
  "CLICOLOR_FORCE",
  "CI",
]

/**
 * Variables (`*` ends a prefix) whose assignment changes what the shell or a program executes, which files it loads,
 * where relative names lead or how the command line is split: an assignment of one of them anywhere (before a
 * command, alone, through `export`, `declare`, `read`, `printf -v`, a `for` loop, `env` or `sudo`) makes the segment
 * unresolved.
 *
 * @since 0.3.0
 * @category constants
 */
export const BEHAVIOUR_VARIABLES: ReadonlyArray<string> = [
  // The shell itself
  "BASH_ENV",
  "ENV",
  "CDPATH",
  "PATH",
  "IFS",
  "PS0",
  "PS1",
  "PS2",
  "PS3",
  "PS4",
  "PROMPT_COMMAND",
  "SHELLOPTS",
  "BASHOPTS",
  "GLOBIGNORE",
  "BASH_FUNC_*",
  "BASH_XTRACEFD",
  "BASH_LOADABLES_PATH",
  "EXECIGNORE",
  "FIGNORE",
  "HISTFILE",
  "INPUTRC",
  "POSIXLY_CORRECT",
  "HOME",
  "PWD",
  "OLDPWD",
  "SHELL",
  "TMPDIR",
  "TEXTDOMAIN",
  "TEXTDOMAINDIR",
  "XDG_*",
  // The dynamic loader and the C library
  "LD_*",
  "DYLD_*",
  "GCONV_PATH",
  "LOCPATH",
  "NLSPATH",
  "HOSTALIASES",
  "RESOLV_*",
  // Programs that run other programs or load code
  "GIT_*",
  "npm_config_*",
  "NPM_CONFIG_*",
  "YARN_*",
  "COREPACK_*",
  "NODE_OPTIONS",
  "NODE_PATH",
  "PYTHON*",
  "PERL5*",
  "PERLLIB",
  "RUBYOPT",
  "RUBYLIB",
  "GEM_*",
  "BUNDLE_*",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "CARGO_*",
  "RUSTC*",
  "RUSTFLAGS",
  "GOFLAGS",
  "CC",
  "CXX",
  "MAKEFLAGS",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "MANPAGER",
  "BROWSER",
  "LESS*",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
  "SSH_*",
  "TERMINFO*",
  "SYSTEMD_*",
]

const matches = (name: string, patterns: ReadonlyArray<string>): boolean =>
  patterns.some((pattern) => (pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : name === pattern))

/**
 * How the gate treats an assignment of `name`: `drop` (harmless), `unresolved` (it changes behaviour) or `keep`
 * (part of the resource).
 *
 * @since 0.3.0
 * @category utilities
 */
export const judge = (name: string): "drop" | "keep" | "unresolved" =>
  matches(name, BEHAVIOUR_VARIABLES) ? "unresolved" : matches(name, HARMLESS_VARIABLES) ? "drop" : "keep"

/**
 * A valid shell variable name.
 *
 * @since 0.3.0
 * @category guards
 */
export const isName = (text: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*$/.test(text)

/**
 * The name of a `NAME=value` (or `NAME+=value`) word, or `undefined`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const assignedName = (text: string): string | undefined => {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)\+?=/.exec(text)
  return match?.[1]
}

/**
 * Why an assignment of `name` makes the segment unresolved.
 *
 * @since 0.3.0
 * @category utilities
 */
export const behaviourReason = (name: string): string =>
  `it sets ${name}, which changes what commands run or where their files are`
