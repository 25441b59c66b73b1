/**
 * The pieces every part of the shell walk shares: its context, the segment a command part becomes, the words'
 * substitutions (which run first, each a subshell) and redirections, wherever tree-sitter hangs them (after a
 * here-document, on a function, on a group). The statements and the simple commands recurse into each other
 * through `Context.walker`. See `traversal.ts`.
 *
 * @since 0.3.0
 */
import type { Node, Parser } from "web-tree-sitter"
import { check as checkGrammar } from "./grammar.js"
import { type Effects, noEffects, type Segment, use } from "./segment.js"
import * as State from "./state.js"
import type { Grammar } from "./shells.js"
import { childrenOf, dynamic, join, literal, word, type Word } from "./words.js"

/**
 * How many segments one command may produce before it is unresolved as a whole.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_SEGMENTS = 5000

/**
 * How deep the syntax tree is walked before the whole command is unresolved.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_NESTING = 200

/**
 * Thrown inside the walk when a bound is passed; caught where the command is parsed.
 *
 * @since 0.3.0
 * @category models
 */
export class Bound {
  constructor(readonly reason: string) {}
}

/**
 * Standard input of a command: a literal text (a here-document, a here-string), a pipe, or nothing known.
 *
 * @since 0.3.0
 * @category models
 */
export type Stdin =
  { readonly kind: "none" } | { readonly kind: "pipe" } | { readonly kind: "text"; readonly text: Word }

/**
 * @since 0.3.0
 *
 * @category constants
 */
export const NO_STDIN: Stdin = { kind: "none" }

/**
 * @since 0.3.0
 *
 * @category models
 */
export interface FunctionDefinition {
  readonly body: Node
  readonly redirects: ReadonlyArray<Node>
}

/**
 * @since 0.3.0
 *
 * @category models
 */
export interface Context {
  readonly out: Array<Segment>
  readonly parser: Parser
  readonly grammar: Grammar
  readonly depth: number
  readonly functions: ReadonlyMap<string, ReadonlyArray<FunctionDefinition>>
  readonly inlining: ReadonlyArray<string>
  readonly inLoop: boolean
  /** Wrapper forms of the command that ran this command string, outermost first. */
  readonly wrappers: ReadonlyArray<string>
  readonly elevated: boolean
  readonly flags: { error: boolean }
  readonly walker: Walker
}

/**
 * The statement walk, for the parts that recurse into it (substitutions, command strings, function bodies).
 *
 * @since 0.3.0
 * @category models
 */
export interface Walker {
  readonly sequence: (ctx: Context, nodes: ReadonlyArray<Node>, state: State.State, level: number) => State.Outcome
  readonly statement: (
    ctx: Context,
    node: Node,
    state: State.State,
    level: number,
    stdin: Stdin,
    outer?: ReadonlyArray<Node>,
  ) => State.Outcome
}

/**
 * What a command part contributes to the segment it belongs to.
 *
 * @since 0.3.0
 * @category models
 */
export interface Draft {
  readonly text: string
  readonly wrappers: ReadonlyArray<string>
  readonly elevated: boolean
  readonly assignments: ReadonlyArray<string>
  readonly unresolved?: string
  readonly effects: Effects
  readonly stdin: Stdin
  readonly replace?: string
  readonly appended?: boolean
  readonly elsewhere?: string
}

/**
 * @since 0.3.0
 *
 * @category utilities
 */
export const merge = (a: Effects, b: Effects | undefined): Effects =>
  b === undefined
    ? a
    : {
        writes: [...a.writes, ...b.writes],
        reads: [...a.reads, ...b.reads],
        links: [...a.links, ...b.links],
        mirrors: [...a.mirrors, ...b.mirrors],
        ...(a.unresolved !== undefined || b.unresolved !== undefined
          ? { unresolved: a.unresolved ?? b.unresolved }
          : {}),
      }

/**
 * @since 0.3.0
 *
 * @category guards
 */
export const isEmpty = (effects: Effects) =>
  effects.writes.length === 0 &&
  effects.reads.length === 0 &&
  effects.links.length === 0 &&
  effects.mirrors.length === 0

/**
 * @since 0.3.0
 *
 * @category utilities
 */
export const guard = (level: number) => {
  if (level > MAX_NESTING) throw new Bound(`the command is nested deeper than ${MAX_NESTING} levels`)
}

/**
 * Adds a segment.
 *
 * @since 0.3.0
 * @category utilities
 */
export const emit = (
  ctx: Context,
  state: State.State,
  argv: ReadonlyArray<Word>,
  draft: Pick<Draft, "text" | "wrappers" | "elevated" | "assignments" | "unresolved" | "effects" | "elsewhere">,
  impliedBy?: string,
): void => {
  if (ctx.out.length >= MAX_SEGMENTS) throw new Bound(`the command has more than ${MAX_SEGMENTS} simple commands`)
  const bare = join(argv)
  const unresolved = draft.unresolved ?? draft.effects.unresolved
  const place = draft.elsewhere !== undefined ? { directories: [], unknown: draft.elsewhere } : State.placeOf(state)
  ctx.out.push({
    argv,
    bare,
    command: [...draft.assignments, bare].filter((part) => part !== "").join(" "),
    assignments: draft.assignments,
    text: draft.text,
    wrappers: [...ctx.wrappers, ...draft.wrappers],
    elevated: ctx.elevated || draft.elevated,
    ...(unresolved === undefined ? {} : { unresolved }),
    writes: draft.effects.writes,
    reads: draft.effects.reads,
    links: draft.effects.links,
    mirrors: draft.effects.mirrors,
    place,
    ...(impliedBy === undefined ? {} : { impliedBy }),
  })
}

/**
 * @since 0.3.0
 *
 * @category utilities
 */
export const plainDraft = (text: string, effects: Effects = noEffects()): Draft => ({
  text,
  wrappers: [],
  elevated: false,
  assignments: [],
  effects,
  stdin: NO_STDIN,
})

/**
 * An unresolved segment for a node, showing its source text.
 *
 * @since 0.3.0
 * @category utilities
 */
export const unresolvedNode = (ctx: Context, state: State.State, node: Node, reason: string) =>
  emit(ctx, state, [dynamic(node.text)], { ...plainDraft(node.text), unresolved: reason })

// ---------------------------------------------------------------------------------------------------------------
// Words: the substitutions inside them run first; the expansions the gate does not model are unresolved.

/**
 * @since 0.3.0
 *
 * @category utilities
 */
export const scanWord = (ctx: Context, node: Node, state: State.State, level: number): void => {
  guard(level)
  const problem = checkGrammar(node, ctx.grammar)
  if (problem !== undefined) unresolvedNode(ctx, state, node, problem)
  // Inside `…` the shell removes a backslash before `$`, `` ` `` and `\` before it reads the command; the tree shows
  // the text before that, so with a backslash there the gate would judge other words than the shell runs.
  if (node.type === "command_substitution" && node.text.startsWith("`") && node.text.includes("\\")) {
    unresolvedNode(ctx, state, node, "a backslash inside `…` is removed before the shell reads the command")
  }
  switch (node.type) {
    case "command_substitution":
    case "process_substitution":
      // A subshell; `$(< file)` is a read with no command.
      ctx.walker.sequence(
        ctx,
        childrenOf(node).filter((child) => child.isNamed),
        state,
        level + 1,
      )
      return
    default:
      for (const child of childrenOf(node)) {
        if (child.isNamed) scanWord(ctx, child, state, level + 1)
      }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Redirections

const OUTPUT = new Set([">", ">>", ">|", "&>", "&>>"])

/**
 * @since 0.3.0
 *
 * @category models
 */
export interface Redirected {
  readonly effects: Effects
  stdin: Stdin
  /** Statements tree-sitter hangs inside a here-document redirection (`cat <<E | sh`, `cat <<E && ls`). */
  readonly after: Array<State.Outcome>
}

/** `<<EOF` expands `$…`, `` `…` `` and backslashes in the body; `<<'EOF'` (any quote in the word) keeps it. */
const heredocText = (start: Node | undefined, body: Node | undefined, strip: boolean): Word => {
  const raw = body?.text ?? ""
  const quoted = start !== undefined && /['"\\]/.test(start.text)
  const stripped = strip ? raw.replace(/^\t+/gm, "") : raw
  if (quoted) return literal(stripped)
  if (body !== undefined && childrenOf(body).some((child) => child.type !== "heredoc_content")) return dynamic(raw)
  if (/\$|`/.test(stripped.replace(/\\[$`\\]/g, ""))) return dynamic(raw)
  return literal(stripped.replace(/\\\n/g, "").replace(/\\([$`\\])/g, "$1"))
}

/**
 * @since 0.3.0
 *
 * @category utilities
 */
export const redirection = (ctx: Context, node: Node, state: State.State, level: number, into: Redirected): void => {
  guard(level)
  const parts = childrenOf(node)
  if (node.type === "heredoc_redirect") {
    const start = parts.find((part) => part.type === "heredoc_start")
    const body = parts.find((part) => part.type === "heredoc_body")
    const quoted = start !== undefined && /['"\\]/.test(start.text)
    for (const part of parts) {
      if (part.type === "heredoc_body") {
        if (!quoted) scanWord(ctx, part, state, level + 1)
      } else if (
        part.type === "file_redirect" ||
        part.type === "herestring_redirect" ||
        part.type === "heredoc_redirect"
      ) {
        redirection(ctx, part, state, level + 1, into)
      } else if (part.isNamed && !["heredoc_start", "heredoc_end"].includes(part.type)) {
        // A statement tree-sitter put inside the redirection: it runs after or beside the command.
        into.after.push(ctx.walker.statement(ctx, part, state, level + 1, { kind: "pipe" }))
      } else if (!part.isNamed && !["<<", "<<-", "|", "&&", "||", "|&"].includes(part.type)) {
        unresolvedNode(ctx, state, node, "the grammar could not read this here-document")
      }
    }
    into.stdin = { kind: "text", text: heredocText(start, body, parts[0]?.type === "<<-") }
    return
  }
  if (node.type === "herestring_redirect") {
    if (ctx.grammar !== "bash") {
      unresolvedNode(ctx, state, node, "a here-string means something else to sh")
      return
    }
    const value = parts.find((part) => part.isNamed && part.type !== "file_descriptor")
    if (value === undefined) return
    scanWord(ctx, value, state, level + 1)
    const text = word(value)
    into.stdin = { kind: "text", text: text.literal ? literal(`${text.text}\n`) : text }
    return
  }
  if (node.type !== "file_redirect") {
    unresolvedNode(ctx, state, node, `the redirection ${node.type} is not modelled`)
    return
  }
  const operator = parts.find((part) => !part.isNamed)
  const destinations = parts.filter((part) => part.isNamed && part.type !== "file_descriptor")
  if (operator === undefined || parts.some((part) => part.type === "ERROR")) {
    unresolvedNode(ctx, state, node, "the grammar could not read this redirection")
    return
  }
  if (destinations.length > 1) {
    unresolvedNode(ctx, state, node, "more than one word follows this redirection; the shell reads them differently")
  }
  for (const destination of destinations) scanWord(ctx, destination, state, level + 1)
  const destination = destinations[0]
  const op = operator.type
  if (ctx.grammar !== "bash" && (op === "&>" || op === "&>>")) {
    unresolvedNode(ctx, state, node, `${op} means a background job and a redirection to sh`)
    return
  }
  if (op === "<&-" || op === ">&-" || destination === undefined) return
  if (destination.type === "process_substitution") return
  const target = word(destination)
  if (op === "<&" || op === ">&") {
    if (target.literal && /^(?:\d+|-)$/.test(target.text)) return
    if (op === "<&") return
  }
  if (op === "<") {
    into.effects.reads.push(use(target, node.text))
    into.stdin = { kind: "pipe" }
    return
  }
  if (OUTPUT.has(op) || op === ">&") {
    into.effects.writes.push(use(target, node.text))
    return
  }
  unresolvedNode(ctx, state, node, `the redirection ${op} is not modelled`)
}

/**
 * @since 0.3.0
 *
 * @category constants
 */
export const REDIRECTS = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"])

/**
 * Every function defined anywhere in a tree, by name (a call may come before the definition in a loop).
 *
 * @since 0.3.0
 * @category utilities
 */
export const definitions = (root: Node): ReadonlyMap<string, ReadonlyArray<FunctionDefinition>> => {
  const out = new Map<string, Array<FunctionDefinition>>()
  const stack: Array<Node> = [root]
  let visited = 0
  while (stack.length > 0) {
    const node = stack.pop()!
    if (++visited > 200_000) break
    if (node.type === "function_definition") {
      const name = node.childForFieldName("name")?.text
      const body = node.childForFieldName("body")
      if (name !== undefined && body !== null) {
        const list = out.get(name) ?? []
        list.push({ body, redirects: childrenOf(node).filter((child) => REDIRECTS.has(child.type)) })
        out.set(name, list)
      }
    }
    for (let i = node.namedChildCount - 1; i >= 0; i--) {
      const child = node.namedChild(i)
      if (child !== null) stack.push(child)
    }
  }
  return out
}
