/**
 * ShellCommand: what a shell command string will run, read with the tree-sitter bash grammar (WASM). A command is
 * split into its simple commands — across `;`, `&&`, `||`, `|`, `&`, newlines, subshells, groups, `$(…)`,
 * backticks, `<(…)`, here-documents and the string of `bash -c`/`sh -c`/`eval` (recursively) — each with its argv
 * normalised (quotes and escapes removed), leading assignments dropped and wrappers (`command`, `env`, `sudo`,
 * `xargs`, `find -exec`, …) unwrapped to the command they run. Output redirections, `tee` files and `cd` targets
 * are reported; whatever cannot be known without running the shell (a command name from a variable, a parse
 * error) is marked unresolved. See docs/shell.md.
 *
 * The grammar is loaded once per process (the first `layer` build); parsing itself is synchronous.
 *
 * @since 0.2.0
 */
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Language, type Node, Parser } from "web-tree-sitter"
import * as CorePackage from "../system/core-package.js"
import * as Wildcard from "../values/wildcard.js"

/**
 * A word of a command after quote removal. `text` is the word as the command will see it when `literal`, else the
 * word as written (it holds an expansion, a substitution or a brace expansion).
 *
 * @since 0.2.0
 */
export interface Word {
  readonly text: string
  readonly literal: boolean
  /** An unquoted `*`, `?` or `[` that the shell may expand into file names. */
  readonly glob: boolean
}

/**
 * A file the command writes (`>`, `>>`, `&>`, `>|`, `tee FILE`, `find -fprint FILE`, `time -o FILE`); `target` is
 * absent when the file name is not literal (`> $F`).
 *
 * @since 0.2.0
 */
export interface Write {
  readonly operator: string
  readonly target?: string
  readonly raw: string
}

/**
 * One simple command, as the permission gate evaluates it.
 *
 * @since 0.2.0
 */
export interface Segment {
  /** The command that runs: assignments dropped, wrappers unwrapped, quotes and escapes removed. */
  readonly argv: ReadonlyArray<Word>
  /** `argv` joined by single spaces: the `bash` permission resource of this segment. */
  readonly command: string
  /** The source text of the simple command, as written (wrappers and assignments included). */
  readonly text: string
  /** The wrappers around the command, outermost first, each as the normalised text from the wrapper on. */
  readonly wrappers: ReadonlyArray<string>
  /** True when a wrapper changes the user the command runs as (`sudo`, `doas`). */
  readonly elevated: boolean
  /** Set when the command cannot be resolved statically: why. */
  readonly unresolved?: string
  /** Files the command writes. */
  readonly writes: ReadonlyArray<Write>
  /** Files the command reads through `<`. */
  readonly reads: ReadonlyArray<Write>
  /** For `cd`/`pushd`: the target directory (`undefined` target = not literal); `~` means the home directory. */
  readonly cd?: { readonly target?: string }
  /** Set for a command implied by another one (`find -delete` implies `rm`): the implying segment's text. */
  readonly impliedBy?: string
}

/**
 * The simple commands of a command string, in the order they appear (a substitution before the command using it).
 *
 * @since 0.2.0
 */
export interface Parsed {
  readonly segments: ReadonlyArray<Segment>
  /** True when the grammar reported a syntax error (the erroneous parts are unresolved segments). */
  readonly error: boolean
}

/**
 * The grammar could not be loaded (missing or incompatible `.wasm`).
 *
 * @since 0.2.0
 */
export class LoadError extends Schema.TaggedError<LoadError>()("ShellCommand.LoadError", {
  message: Schema.String,
}) {}

/**
 * The parser.
 *
 * @since 0.2.0
 */
export interface Interface {
  /** Parses a command; waits for the grammar on the first call only. Never fails for any input. */
  readonly parse: (command: string) => Effect.Effect<Parsed>
}

/**
 * The ShellCommand service (process-wide).
 *
 * @since 0.2.0
 */
export class Service extends Context.Tag("@toolgate/ShellCommand")<Service, Interface>() {}

/**
 * How deep `bash -c`, `eval` and substitution strings are followed; deeper strings are unresolved.
 *
 * @since 0.2.0
 */
export const MAX_DEPTH = 8

/** Shells whose `-c STRING` is parsed as a command. */
const SHELLS: ReadonlySet<string> = new Set(["bash", "sh", "dash", "zsh", "ksh", "ash", "mksh", "busybox"])

/** Files that a redirection may name without writing anything. */
const HARMLESS_TARGETS: ReadonlySet<string> = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"])

/**
 * A wrapper: a command that runs another command given as its arguments. `options` take one argument each; `flags`
 * take none; every other word starting with `-` is treated as a flag. `value` gives a positional word to skip
 * before the command (`timeout DURATION`).
 */
interface WrapperSpec {
  readonly options: ReadonlySet<string>
  readonly positional?: number
  readonly elevated?: boolean
  /** With one of these flags the wrapper does not run its argument (`command -v rm` only looks it up). */
  readonly lookup?: ReadonlySet<string>
  /** Options whose effect cannot be followed statically (`env -C DIR`). */
  readonly opaque?: ReadonlySet<string>
  /** Without a command, this runs instead (`xargs` runs `echo`). */
  readonly fallback?: string
}

const set = (...items: ReadonlyArray<string>): ReadonlySet<string> => new Set(items)

/**
 * The wrappers that are unwrapped, with how their options are read.
 *
 * @since 0.2.0
 */
export const WRAPPERS: ReadonlyMap<string, WrapperSpec> = new Map<string, WrapperSpec>([
  ["command", { options: set(), lookup: set("-v", "-V") }],
  ["builtin", { options: set() }],
  ["exec", { options: set("-a") }],
  ["nohup", { options: set() }],
  ["time", { options: set("-f", "--format", "-o", "--output") }],
  ["nice", { options: set("-n", "--adjustment") }],
  ["env", { options: set("-u", "--unset", "-S", "--split-string"), opaque: set("-C", "--chdir") }],
  [
    "sudo",
    {
      options: set("-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-r", "--role", "-t", "--type"),
      opaque: set("-C", "--close-from", "-D", "--chdir", "-U", "--other-user", "-T", "--command-timeout"),
      elevated: true,
    },
  ],
  ["doas", { options: set("-u", "-C"), elevated: true }],
  [
    "xargs",
    {
      options: set(
        "-a",
        "--arg-file",
        "-d",
        "--delimiter",
        "-E",
        "-e",
        "--eof",
        "-I",
        "-i",
        "--replace",
        "-L",
        "-l",
        "--max-lines",
        "-n",
        "--max-args",
        "-P",
        "--max-procs",
        "-s",
        "--max-chars",
        "--process-slot-var",
      ),
      fallback: "echo",
    },
  ],
  ["timeout", { options: set("-k", "--kill-after", "-s", "--signal"), positional: 1 }],
  ["stdbuf", { options: set("-i", "--input", "-o", "--output", "-e", "--error") }],
  ["setsid", { options: set() }],
  ["ionice", { options: set("-c", "--class", "-n", "--classdata", "-t") }],
  ["watch", { options: set("-n", "--interval", "-d", "--differences") }],
])

// ---------------------------------------------------------------------------------------------------------------
// Words

const isGlobChar = (c: string) => c === "*" || c === "?" || c === "["

/** An unquoted word: backslash escapes removed, line continuations dropped. */
const bareWord = (raw: string): Word => {
  let text = ""
  let glob = false
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!
    if (c === "\\") {
      const next = raw[i + 1]
      if (next === undefined) break
      i++
      if (next !== "\n") text += next
      continue
    }
    if (isGlobChar(c)) glob = true
    text += c
  }
  return { text, literal: true, glob }
}

/** The literal text between double quotes: only `\$`, `` \` ``, `\"`, `\\` and `\<newline>` are escapes there. */
const doubleQuoted = (raw: string): string => {
  let text = ""
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!
    const next = raw[i + 1]
    if (c === "\\" && next !== undefined && '$`"\\\n'.includes(next)) {
      i++
      if (next !== "\n") text += next
      continue
    }
    text += c
  }
  return text
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
}

/** `$'…'`: the escapes bash decodes; `undefined` for one we do not decode (`\c`, `\u`). */
const ansiC = (body: string): string | undefined => {
  let text = ""
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!
    if (c !== "\\") {
      text += c
      continue
    }
    const next = body[++i]
    if (next === undefined) return undefined
    const simple = SIMPLE_ESCAPES[next]
    if (simple !== undefined) {
      text += simple
      continue
    }
    if (next === "x") {
      const hex = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 1))
      if (hex === null) return undefined
      text += String.fromCharCode(parseInt(hex[0], 16))
      i += hex[0].length
      continue
    }
    if (next >= "0" && next <= "7") {
      const octal = /^[0-7]{1,3}/.exec(body.slice(i))!
      text += String.fromCharCode(parseInt(octal[0], 8) & 0xff)
      i += octal[0].length - 1
      continue
    }
    return undefined
  }
  return text
}

const dynamic = (raw: string): Word => ({ text: raw, literal: false, glob: false })

const children = (node: Node): ReadonlyArray<Node> => node.children.filter((child): child is Node => child !== null)

/** Normalises one word node (a command name or an argument). */
const word = (node: Node): Word => {
  switch (node.type) {
    case "word":
    case "number":
      return bareWord(node.text)
    case "raw_string":
      return { text: node.text.slice(1, -1), literal: true, glob: false }
    case "ansi_c_string": {
      const decoded = ansiC(node.text.slice(2, -1))
      return decoded === undefined ? dynamic(node.text) : { text: decoded, literal: true, glob: false }
    }
    case "string":
    case "translated_string": {
      const open = node.type === "translated_string" ? 2 : 1
      // Any expansion or substitution inside the quotes makes the word dynamic.
      const expands = children(node).some(
        (child) => child.type !== '"' && child.type !== "string_content" && child.type !== "$",
      )
      if (expands) return dynamic(node.text)
      return { text: doubleQuoted(node.text.slice(open, node.text.length - 1)), literal: true, glob: false }
    }
    case "concatenation": {
      const parts = children(node).map(word)
      const raw = node.text
      // `{a,b}` arrives as the words `{`, `a,b`, `}`: a brace expansion, which changes the word count.
      const texts = parts.map((part) => part.text)
      const open = texts.indexOf("{")
      const close = texts.lastIndexOf("}")
      const brace =
        open !== -1 && close > open && texts.slice(open + 1, close).some((t) => t.includes(",") || t.includes(".."))
      if (brace || parts.some((part) => !part.literal)) return dynamic(raw)
      return { text: texts.join(""), literal: true, glob: parts.some((part) => part.glob) }
    }
    default:
      return dynamic(node.text)
  }
}

const join = (words: ReadonlyArray<Word>): string => words.map((w) => w.text).join(" ")

// ---------------------------------------------------------------------------------------------------------------
// Commands

interface Context {
  readonly out: Array<Segment>
  readonly parseInner: (text: string, depth: number) => Parsed
  readonly depth: number
  error: boolean
}

interface Draft {
  writes: Array<Write>
  reads: Array<Write>
}

const OUTPUT_OPERATORS: ReadonlySet<string> = new Set([">", ">>", "&>", "&>>", ">|"])

/** A redirection node's file write or read, if it names a file. */
const redirection = (node: Node): { readonly kind: "write" | "read"; readonly value: Write } | undefined => {
  if (node.type !== "file_redirect") return undefined
  const parts = children(node)
  const operator = parts.find((part) => OUTPUT_OPERATORS.has(part.type) || part.type === "<" || part.type === ">&")
  if (operator === undefined) return undefined
  const destination = node.childForFieldName("destination") ?? parts[parts.length - 1]
  if (destination === undefined || destination === operator) return undefined
  const target = word(destination)
  if (operator.type === ">&") {
    // `>&2` duplicates a descriptor; `>& file` writes a file.
    if (target.literal && /^(?:\d+|-)$/.test(target.text)) return undefined
  }
  if (operator.type === "<") {
    return {
      kind: "read",
      value: { operator: "<", raw: node.text, ...(target.literal ? { target: target.text } : {}) },
    }
  }
  if (target.literal && (HARMLESS_TARGETS.has(target.text) || target.text.startsWith("/dev/fd/"))) return undefined
  return {
    kind: "write",
    value: {
      operator: operator.type,
      raw: node.text,
      ...(target.literal && !target.glob ? { target: target.text } : {}),
    },
  }
}

const segmentOf = (
  argv: ReadonlyArray<Word>,
  text: string,
  wrappers: ReadonlyArray<string>,
  elevated: boolean,
  draft: Draft,
  extra: Partial<Pick<Segment, "unresolved" | "cd" | "impliedBy">> = {},
): Segment => ({
  argv,
  command: join(argv),
  text,
  wrappers,
  elevated,
  writes: draft.writes,
  reads: draft.reads,
  ...extra,
})

const baseName = (name: string): string => path.posix.basename(name.trim())

/** Skips a wrapper's options; returns the index of the wrapped command, or why it cannot be followed. */
const skipOptions = (
  words: ReadonlyArray<Word>,
  from: number,
  spec: WrapperSpec,
  name: string,
): { readonly next: number; readonly lookup?: boolean; readonly opaque?: string; readonly split?: Word } => {
  let i = from
  let positional = spec.positional ?? 0
  while (i < words.length) {
    const w = words[i]!
    if (!w.literal) return { next: i }
    const t = w.text
    if (t === "--") {
      i++
      break
    }
    if ((name === "env" || name === "sudo") && /^[A-Za-z_][A-Za-z0-9_]*=/.test(t)) {
      i++
      continue
    }
    if (t.startsWith("-") && t.length > 1) {
      const [flag, inline] = t.startsWith("--") ? [t.split("=")[0]!, t.includes("=")] : [t.slice(0, 2), t.length > 2]
      if (spec.lookup?.has(flag)) return { next: i, lookup: true }
      if (spec.opaque?.has(flag)) return { next: i, opaque: t }
      if (name === "env" && (flag === "-S" || flag === "--split-string")) {
        const value = inline
          ? { text: t.startsWith("--") ? t.slice(t.indexOf("=") + 1) : t.slice(2), literal: true, glob: false }
          : words[i + 1]
        return value === undefined ? { next: words.length } : { next: words.length, split: value }
      }
      if (name === "nice" && /^-\d+$/.test(t)) {
        i++
        continue
      }
      i += spec.options.has(flag) && !inline ? 2 : 1
      continue
    }
    if (positional > 0) {
      positional--
      i++
      continue
    }
    break
  }
  return { next: i }
}

/** The index of the `-c` string of a shell invocation, or -1. */
const shellString = (words: ReadonlyArray<Word>): number => {
  let sawC = false
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!
    if (!w.literal) return sawC ? i : -1
    const t = w.text
    if (t === "--") return sawC ? i + 1 : -1
    if (t === "-o" || t === "+o" || t === "-O" || t === "+O") {
      i++
      continue
    }
    if (/^[-+][A-Za-z]+$/.test(t)) {
      if (t.startsWith("-") && t.includes("c")) sawC = true
      continue
    }
    return sawC ? i : -1
  }
  return -1
}

const FIND_EXEC: ReadonlySet<string> = new Set(["-exec", "-execdir", "-ok", "-okdir"])
const FIND_WRITES: ReadonlySet<string> = new Set(["-fprint", "-fprint0", "-fprintf", "-fls"])

/**
 * Resolves one simple command's words into segments: wrappers, `bash -c`, `eval`, `find -exec` and `-delete`, `cd`.
 */
const resolve = (
  ctx: Context,
  words: ReadonlyArray<Word>,
  text: string,
  wrappers: ReadonlyArray<string>,
  elevated: boolean,
  draft: Draft,
): void => {
  const name = words[0]
  if (name === undefined) return
  if (!name.literal || name.glob) {
    ctx.out.push(
      segmentOf(words, text, wrappers, elevated, draft, {
        unresolved: `the command name ${name.text} is only known when the shell runs`,
      }),
    )
    return
  }
  const base = baseName(name.text)
  const wrapper = WRAPPERS.get(base)
  if (wrapper !== undefined) {
    const skipped = skipOptions(words, 1, wrapper, base)
    const form = join(words)
    if (skipped.opaque !== undefined) {
      ctx.out.push(
        segmentOf(words, text, wrappers, elevated || wrapper.elevated === true, draft, {
          unresolved: `${base} ${skipped.opaque} cannot be followed statically`,
        }),
      )
      return
    }
    if (skipped.split !== undefined) {
      inner(ctx, skipped.split, text, [...wrappers, form], elevated || wrapper.elevated === true, draft)
      return
    }
    if (skipped.lookup !== true) {
      if (base === "time") {
        for (let i = 1; i < skipped.next; i++) {
          const t = words[i]!.text
          if ((t === "-o" || t === "--output") && words[i + 1] !== undefined) {
            const file = words[i + 1]!
            draft.writes.push({ operator: t, raw: `${t} ${file.text}`, ...(file.literal ? { target: file.text } : {}) })
          }
        }
      }
      const rest = words.slice(skipped.next)
      const wrapped =
        rest.length === 0 && wrapper.fallback !== undefined
          ? [{ text: wrapper.fallback, literal: true, glob: false }]
          : rest
      if (wrapped.length > 0) {
        resolve(ctx, wrapped, text, [...wrappers, form], elevated || wrapper.elevated === true, draft)
        return
      }
    }
  }
  if (SHELLS.has(base) || base === "eval") {
    const at = base === "eval" ? 1 : shellString(words)
    if (at !== -1) {
      const form = join(words)
      if (base === "eval") {
        const args = words.slice(1)
        if (args.length === 0) return
        const literal = args.every((w) => w.literal)
        const body: Word = literal ? { text: join(args), literal: true, glob: false } : dynamic(join(args))
        inner(ctx, body, text, [...wrappers, form], elevated, draft)
        return
      }
      const body = words[at]
      if (body === undefined) {
        ctx.out.push(segmentOf(words, text, wrappers, elevated, draft))
        return
      }
      inner(ctx, body, text, [...wrappers, form], elevated, draft)
      return
    }
  }
  if (base === "find") {
    const own: Array<Word> = []
    for (let i = 0; i < words.length; i++) {
      const w = words[i]!
      if (w.literal && FIND_EXEC.has(w.text)) {
        let end = i + 1
        while (end < words.length && !(words[end]!.literal && (words[end]!.text === ";" || words[end]!.text === "+")))
          end++
        const command = words.slice(i + 1, end)
        if (command.length > 0) resolve(ctx, command, text, [...wrappers, join(words)], elevated, fresh())
        for (let j = i; j <= end && j < words.length; j++) own.push(words[j]!)
        i = end
        continue
      }
      if (w.literal && FIND_WRITES.has(w.text) && words[i + 1] !== undefined) {
        const file = words[i + 1]!
        draft.writes.push({
          operator: w.text,
          raw: `${w.text} ${file.text}`,
          ...(file.literal ? { target: file.text } : {}),
        })
      }
      own.push(w)
    }
    const segment = segmentOf(own, text, wrappers, elevated, draft)
    ctx.out.push(segment)
    if (own.some((w) => w.literal && w.text === "-delete")) {
      const starts: Array<Word> = []
      for (const w of own.slice(1)) {
        if (w.literal && (w.text.startsWith("-") || w.text === "(" || w.text === "!")) break
        starts.push(w)
      }
      const rm: ReadonlyArray<Word> = [{ text: "rm", literal: true, glob: false }, ...starts]
      ctx.out.push(segmentOf(rm, text, wrappers, elevated, fresh(), { impliedBy: segment.command }))
    }
    return
  }
  if (base === "cd" || base === "pushd") {
    const args = words.slice(1).filter((w) => !(w.literal && /^-[LPe@]+$/.test(w.text)))
    const target = args[0]
    const cd =
      target === undefined
        ? { target: "~" }
        : target.literal && target.text !== "-" && !target.glob
          ? { target: target.text }
          : {}
    ctx.out.push(
      segmentOf(words, text, wrappers, elevated, draft, {
        cd,
        ...(cd.target === undefined
          ? { unresolved: `the directory of ${join(words)} is only known when the shell runs` }
          : {}),
      }),
    )
    return
  }
  if (base === "tee") {
    for (const w of words.slice(1)) {
      if (w.literal && w.text.startsWith("-")) continue
      if (w.literal && (HARMLESS_TARGETS.has(w.text) || w.text.startsWith("/dev/fd/"))) continue
      draft.writes.push({ operator: "tee", raw: `tee ${w.text}`, ...(w.literal && !w.glob ? { target: w.text } : {}) })
    }
  }
  ctx.out.push(segmentOf(words, text, wrappers, elevated, draft))
}

const fresh = (): Draft => ({ writes: [], reads: [] })

/** A command string given to `bash -c`, `eval` or `env -S`: parsed again when literal, unresolved otherwise. */
const inner = (
  ctx: Context,
  body: Word,
  text: string,
  wrappers: ReadonlyArray<string>,
  elevated: boolean,
  draft: Draft,
): void => {
  if (!body.literal || ctx.depth + 1 > MAX_DEPTH) {
    ctx.out.push(
      segmentOf([body], text, wrappers, elevated, draft, {
        unresolved: body.literal
          ? `commands nested deeper than ${MAX_DEPTH} levels are not followed`
          : `the command string ${body.text} is only known when the shell runs`,
      }),
    )
    return
  }
  const parsed = ctx.parseInner(body.text, ctx.depth + 1)
  if (parsed.error) ctx.error = true
  const first = ctx.out.length
  for (const segment of parsed.segments) {
    ctx.out.push({
      ...segment,
      wrappers: [...wrappers, ...segment.wrappers],
      elevated: elevated || segment.elevated,
    })
  }
  // The outer command's redirections apply to the last inner command (what the string prints).
  if (draft.writes.length > 0 || draft.reads.length > 0) {
    const last = ctx.out.length - 1
    if (last >= first) {
      const target = ctx.out[last]!
      ctx.out[last] = {
        ...target,
        writes: [...target.writes, ...draft.writes],
        reads: [...target.reads, ...draft.reads],
      }
    } else ctx.out.push(segmentOf([], text, wrappers, elevated, draft))
  }
}

/** Collects the nested commands of a node (substitutions inside words, redirections, assignments). */
const nested = (ctx: Context, node: Node): void => {
  for (const child of children(node)) visit(ctx, child)
}

const commandNode = (ctx: Context, node: Node, draft: Draft): void => {
  const words: Array<Word> = []
  for (const child of children(node)) {
    visit(ctx, child)
    if (child.type === "variable_assignment") continue
    if (child.type === "command_name") {
      const name = children(child)[0]
      if (name !== undefined) words.push(word(name))
      continue
    }
    if (child.type === "file_redirect") {
      const found = redirection(child)
      if (found !== undefined) (found.kind === "write" ? draft.writes : draft.reads).push(found.value)
      continue
    }
    if (child.type === "herestring_redirect" || child.type === "heredoc_redirect") continue
    if (child.isNamed) words.push(word(child))
  }
  if (words.length === 0) {
    if (draft.writes.length > 0 || draft.reads.length > 0) ctx.out.push(segmentOf([], node.text, [], false, draft))
    return
  }
  resolve(ctx, words, node.text, [], false, draft)
}

const visit = (ctx: Context, node: Node): void => {
  if (node.type === "ERROR" || node.isMissing) {
    ctx.error = true
    ctx.out.push(
      segmentOf([dynamic(node.text)], node.text, [], false, fresh(), {
        unresolved: "the shell grammar could not read this part",
      }),
    )
    return
  }
  switch (node.type) {
    case "command":
      commandNode(ctx, node, fresh())
      return
    case "declaration_command":
    case "unset_command": {
      nested(ctx, node)
      const words = children(node)
        .filter((child) => child.isNamed)
        .map((child) => (child.type === "variable_assignment" ? bareWord(child.text) : word(child)))
      const keyword = children(node)[0]
      ctx.out.push(segmentOf([bareWord(keyword?.text ?? ""), ...words], node.text, [], false, fresh()))
      return
    }
    case "redirected_statement": {
      const body = node.childForFieldName("body")
      const draft = fresh()
      for (const child of children(node)) {
        if (child === body || (body !== null && child.id === body.id)) continue
        visit(ctx, child)
        const found = redirection(child)
        if (found !== undefined) (found.kind === "write" ? draft.writes : draft.reads).push(found.value)
      }
      if (body === null) {
        if (draft.writes.length > 0 || draft.reads.length > 0) ctx.out.push(segmentOf([], node.text, [], false, draft))
        return
      }
      if (body.type === "command") {
        commandNode(ctx, body, draft)
        return
      }
      const first = ctx.out.length
      visit(ctx, body)
      if (draft.writes.length === 0 && draft.reads.length === 0) return
      // A group's redirection: reported on the group's last command, or on a command-less segment.
      const last = ctx.out.length - 1
      if (last >= first) {
        const target = ctx.out[last]!
        ctx.out[last] = {
          ...target,
          writes: [...target.writes, ...draft.writes],
          reads: [...target.reads, ...draft.reads],
        }
      } else ctx.out.push(segmentOf([], node.text, [], false, draft))
      return
    }
    default:
      nested(ctx, node)
  }
}

/** Parses with a ready parser; `depth` counts the nesting of command strings. */
const parseWith = (parser: Parser, command: string, depth: number): Parsed => {
  const tree = parser.parse(command)
  if (tree === null) {
    return {
      error: true,
      segments: [
        segmentOf([dynamic(command)], command, [], false, fresh(), {
          unresolved: "the shell grammar could not read this command",
        }),
      ],
    }
  }
  try {
    const ctx: Context = {
      out: [],
      depth,
      error: false,
      parseInner: (text, next) => parseWith(parser, text, next),
    }
    visit(ctx, tree.rootNode)
    return { segments: ctx.out, error: ctx.error }
  } finally {
    tree.delete()
  }
}

/**
 * A synchronous parser over a loaded grammar (for benchmarks and pure tests; the service wraps the same function).
 *
 * @since 0.2.0
 */
export const makeParser = (language: Language): ((command: string) => Parsed) => {
  const parser = new Parser()
  parser.setLanguage(language)
  return (command) => parseWith(parser, command, 0)
}

let loading: Promise<Language> | undefined

const load = (): Promise<Language> => {
  loading ??= (async () => {
    await Parser.init()
    return Language.load(CorePackage.require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"))
  })().catch((error: unknown) => {
    loading = undefined
    throw error
  })
  return loading
}

/**
 * Loads the grammar, once per process: later calls share the same promise (a failed load is retried).
 *
 * @since 0.2.0
 */
export const loadLanguage: Effect.Effect<Language, LoadError> = Effect.tryPromise({
  try: load,
  catch: (error) => new LoadError({ message: `Unable to load the bash grammar: ${String(error)}` }),
})

/**
 * The process-wide layer. Building it starts loading the grammar without waiting for it (tool registration is not
 * delayed); the first `parse` waits for the load, later ones run synchronously. A grammar that cannot be loaded is
 * a defect (the package ships it).
 *
 * @since 0.2.0
 */
export const layer: Layer.Layer<Service> = Layer.sync(Service, () => {
  // Started now, awaited by the first parse; a failure surfaces there.
  load().catch(() => undefined)
  let ready: ((command: string) => Parsed) | undefined
  const start = Effect.map(Effect.orDie(loadLanguage), (language) => {
    ready ??= makeParser(language)
    return ready
  })
  return Service.of({
    parse: (command) =>
      ready !== undefined ? Effect.sync(() => ready!(command)) : Effect.map(start, (parse) => parse(command)),
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Evaluation

/**
 * The resource prefix of a segment that cannot be resolved statically. Only a rule whose resource starts with it can
 * allow such a segment (`bash unresolved:* allow`); `*` or a pattern matching the raw text never does.
 *
 * @since 0.2.0
 */
export const UNRESOLVED_PREFIX = "unresolved:"

/**
 * The decision for one segment. `resource` is what the gate is asked about: the form that was denied or asks, the
 * command when allowed, `unresolved:<raw text>` when unresolved. `save` is the pattern an `always` reply saves
 * (absent for unresolved segments, which are never saved).
 *
 * @since 0.2.0
 */
export interface Verdict {
  readonly segment: Segment
  readonly effect: "allow" | "ask" | "deny"
  readonly resource: string
  readonly save?: string
  /** Why it asks beyond the rules themselves. */
  readonly reason?: string
}

/**
 * The deny-relevant forms of a segment: the command, each wrapper form, and each of them with its command name
 * reduced to the base name (`/bin/rm x` → `rm x`). An unresolved segment adds its `unresolved:` resource and text.
 *
 * @since 0.2.0
 */
export const forms = (segment: Segment): ReadonlyArray<string> => {
  const out = new Set<string>([segment.command])
  if (segment.unresolved !== undefined) out.add(segment.text)
  const variant = (words: ReadonlyArray<string>) => {
    const name = words[0]
    if (name === undefined) return
    const base = baseName(name)
    if (base !== name && base !== "") out.add([base, ...words.slice(1)].join(" "))
  }
  variant(segment.argv.map((w) => w.text))
  for (const wrapper of segment.wrappers) {
    out.add(wrapper)
    variant(wrapper.split(" "))
  }
  return [...out]
}

/**
 * Evaluates the segments of `parsed` (command-less segments, which only redirect, are skipped): a segment is denied
 * when any of its forms is denied; an unresolved one is asked about as `unresolved:<raw text>`; an elevated one
 * (`sudo`) needs its outermost form allowed too; otherwise the command's own effect decides. `effectOf` answers for
 * one bash resource; `savePattern` gives the `always` pattern of an argv.
 *
 * @since 0.2.0
 */
export const evaluate = (
  parsed: Parsed,
  effectOf: (resource: string) => "allow" | "ask" | "deny",
  savePattern: (argv: ReadonlyArray<string>) => string,
): ReadonlyArray<Verdict> => {
  const out: Array<Verdict> = []
  for (const segment of parsed.segments) {
    if (segment.argv.length === 0) continue
    const denied = forms(segment).find((form) => effectOf(form) === "deny")
    if (denied !== undefined) {
      out.push({ segment, effect: "deny", resource: denied })
      continue
    }
    if (segment.unresolved !== undefined) {
      const resource = `${UNRESOLVED_PREFIX}${segment.text}`
      const effect = effectOf(resource)
      out.push({ segment, effect: effect === "allow" ? "allow" : effect, resource, reason: segment.unresolved })
      continue
    }
    const outer = segment.elevated ? segment.wrappers[0] : undefined
    if (outer !== undefined && effectOf(outer) !== "allow") {
      out.push({ segment, effect: "ask", resource: outer, save: Wildcard.literal(outer) })
      continue
    }
    out.push({
      segment,
      effect: effectOf(segment.command),
      resource: segment.command,
      save: savePattern(segment.argv.map((w) => w.text)),
    })
  }
  return out
}
