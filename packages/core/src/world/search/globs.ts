/**
 * Override globs (`rg --glob`) for the Node engine: gitignore-style lines matched with picomatch, decided in
 * ripgrep's order (last matching glob wins; a plain glob whitelists, a `!` glob excludes).
 *
 * @since 0.1.0
 */
import picomatch from "picomatch"

/**
 * A glob ripgrep would refuse; `message` has ripgrep's wording.
 *
 * @since 0.1.0
 * @category errors
 */
export class GlobSyntaxError extends globalThis.Error {
  constructor(
    readonly glob: string,
    readonly reason: string,
  ) {
    super(`error parsing glob '${glob}': ${reason}`)
  }
}

/**
 * Throws `GlobSyntaxError` for the glob syntax errors ripgrep's glob parser reports.
 *
 * @since 0.1.0
 * @category utilities
 */
export const validate = (glob: string): void => {
  let inAlternates = false
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]
    if (char === "\\") {
      if (i + 1 >= glob.length) throw new GlobSyntaxError(glob, "dangling '\\'")
      i++
    } else if (char === "{") {
      if (inAlternates) throw new GlobSyntaxError(glob, "nested alternate groups are not allowed")
      inAlternates = true
    } else if (char === "}") {
      inAlternates = false
    } else if (char === "[") {
      i = classEnd(glob, i)
    }
  }
  if (inAlternates) {
    throw new GlobSyntaxError(glob, "unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)")
  }
}

const classEnd = (glob: string, open: number): number => {
  let i = open + 1
  if (glob[i] === "!" || glob[i] === "^") i++
  let first = true
  while (i < glob.length) {
    const char = glob[i]!
    if (char === "]" && !first) return i
    first = false
    if (glob[i + 1] === "-" && i + 2 < glob.length && glob[i + 2] !== "]") {
      const end = glob[i + 2]!
      if (char.codePointAt(0)! > end.codePointAt(0)!)
        throw new GlobSyntaxError(glob, `invalid range; '${char}' > '${end}'`)
      i += 3
      continue
    }
    i++
  }
  throw new GlobSyntaxError(glob, "unclosed character class; missing ']'")
}

/**
 * One parsed gitignore-style line.
 *
 * @since 0.1.0
 * @category models
 */
export interface Line {
  /** The line started with `!`. */
  readonly negated: boolean
  /** The line ended with `/`: it applies to directories only. */
  readonly dirOnly: boolean
  /** The glob actually matched against the relative path. */
  readonly glob: string
}

/**
 * Parses one gitignore-style line as ripgrep does: `#` starts a comment, trailing blanks are dropped, a leading
 * `!` negates, a leading `/` anchors, a trailing `/` restricts to directories, a slash-less glob gets `**\/` so it
 * matches the basename at any depth, and a trailing `/**` matches the contents but not the directory itself.
 *
 * @since 0.1.0
 * @category utilities
 */
export const parseLine = (raw: string): Line | undefined => {
  if (raw.startsWith("#")) return undefined
  let line = raw.endsWith("\\ ") ? raw : raw.trimEnd()
  if (line === "") return undefined
  let negated = false
  if (line.startsWith("\\!") || line.startsWith("\\#")) line = line.slice(1)
  else if (line.startsWith("!")) {
    negated = true
    line = line.slice(1)
  }
  let anchored = false
  if (line.startsWith("/")) {
    anchored = true
    line = line.slice(1)
  }
  let dirOnly = false
  if (line.endsWith("/")) {
    dirOnly = true
    line = line.slice(0, -1)
  }
  let glob = line
  if (!anchored && !line.includes("/") && !(glob.startsWith("**/") || glob === "**")) glob = `**/${glob}`
  if (glob.endsWith("/**")) glob = `${glob}/*`
  return { negated, dirOnly, glob }
}

const compile = (glob: string): ((path: string) => boolean) =>
  picomatch(glob, { dot: true, noextglob: true, nonegate: true, strictSlashes: true })

/**
 * The decision of the override list for one entry.
 *
 * @since 0.1.0
 * @category models
 */
export type Decision = "include" | "exclude" | undefined

/**
 * Compiled override globs, in command-line order.
 *
 * @since 0.1.0
 * @category models
 */
export interface Overrides {
  /** `include`: whitelisted (skip every later check); `exclude`; `undefined`: fall through. */
  readonly decide: (path: string, isDirectory: boolean) => Decision
}

/**
 * Compiles override globs (throws `GlobSyntaxError`). An empty list decides nothing.
 *
 * @since 0.1.0
 * @category utilities
 */
export const overrides = (globs: ReadonlyArray<string>): Overrides => {
  const compiled: Array<{ readonly line: Line; readonly test: (path: string) => boolean }> = []
  for (const glob of globs) {
    validate(glob)
    const line = parseLine(glob)
    if (line !== undefined) compiled.push({ line, test: compile(line.glob) })
  }
  // Overrides invert gitignore: a plain glob whitelists and a `!` glob excludes.
  const whitelists = compiled.filter((entry) => !entry.line.negated).length
  return {
    decide: (path, isDirectory) => {
      for (let i = compiled.length - 1; i >= 0; i--) {
        const { line, test } = compiled[i]!
        if (line.dirOnly && !isDirectory) continue
        if (test(path)) return line.negated ? "exclude" : "include"
      }
      return whitelists > 0 && !isDirectory ? "exclude" : undefined
    },
  }
}
