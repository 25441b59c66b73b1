/**
 * The walk over a tree-sitter bash tree that produces segments. Every node type is handled explicitly — statements,
 * words, redirections anywhere (after a here-document, on a function or a group) — and anything outside the
 * modelled subset is an unresolved segment showing its source text, never nothing. The walk is depth-bounded: past
 * `MAX_NESTING` nodes deep, or past `MAX_SEGMENTS`, the whole command is one unresolved segment. `cd` is followed with
 * its scoping and uncertainty (`state.ts`); function calls are followed into the function's body; command
 * strings of shells, `eval` and wrappers are parsed again, up to `MAX_DEPTH` levels. See docs/shell.md.
 *
 * @since 0.3.0
 */
import type { Node, Parser } from "web-tree-sitter"
import { assignmentOf, commandNode, MAX_DEPTH, resolve, WORD_NODES } from "./commands.js"
import { check as checkGrammar, gapProblem, TOKENS } from "./grammar.js"
import type { Parsed } from "./segment.js"
import * as State from "./state.js"
import * as Variables from "./variables.js"
import {
  Bound,
  type Context,
  definitions,
  emit,
  guard,
  isEmpty,
  MAX_NESTING,
  MAX_SEGMENTS,
  NO_STDIN,
  plainDraft,
  type Redirected,
  redirection,
  REDIRECTS,
  scanWord,
  type Stdin,
  unresolvedNode,
  type Walker,
} from "./walk.js"
import { noEffects, unresolvedWhole } from "./segment.js"
import type { Grammar } from "./shells.js"
import { bareWord, childrenOf, literal, word } from "./words.js"

export {
  /** @since 0.3.0 */
  MAX_DEPTH,
  /** @since 0.3.0 */
  MAX_NESTING,
  /** @since 0.3.0 */
  MAX_SEGMENTS,
}

/**
 * The longest command parsed; a longer one is unresolved as a whole.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_LENGTH = 262_144

/** A list of statements in one shell: `;` and newlines in order, `&` in the background. */
const visitSequence = (ctx: Context, nodes: ReadonlyArray<Node>, state: State.State, level: number): State.Outcome => {
  guard(level)
  let outcome = State.same(state)
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!
    if (!node.isNamed) {
      if (!TOKENS.sequence.has(node.type))
        unresolvedNode(ctx, State.either(outcome), node, `the grammar read ${JSON.stringify(node.text)} here`)
      continue
    }
    if (node.type === "comment") continue
    const current = State.either(outcome)
    const background = nodes[i + 1]?.type === "&"
    if (REDIRECTS.has(node.type)) {
      // A redirection with no command (`$(< file)`, `> file`).
      const redirected: Redirected = { effects: noEffects(), stdin: NO_STDIN, after: [] }
      redirection(ctx, node, current, level + 1, redirected)
      if (!isEmpty(redirected.effects)) emit(ctx, current, [], plainDraft(node.text, redirected.effects))
      outcome = State.same(current)
      continue
    }
    const result = visitStatement(ctx, node, current, level + 1, NO_STDIN)
    outcome = background ? State.same(current) : result
  }
  return outcome
}

const named = (node: Node) => childrenOf(node).filter((child) => child.isNamed && child.type !== "comment")

/** Node types a redirection written after them binds into (bash gives it to their last simple command). */
const PASS_DOWN = new Set(["command", "list", "pipeline", "negated_command", "redirected_statement"])

const visitStatement = (
  ctx: Context,
  node: Node,
  state: State.State,
  level: number,
  stdin: Stdin,
  outer: ReadonlyArray<Node> = [],
): State.Outcome => {
  guard(level)
  if (outer.length > 0 && !PASS_DOWN.has(node.type)) {
    // A compound command's redirections are opened before it runs.
    const redirected: Redirected = { effects: noEffects(), stdin, after: [] }
    for (const redirect of outer) redirection(ctx, redirect, state, level + 1, redirected)
    if (!isEmpty(redirected.effects))
      emit(ctx, state, [], plainDraft(outer.map((r) => r.text).join(" "), redirected.effects))
    const input: Stdin = redirected.stdin.kind === "none" ? stdin : { kind: "pipe" }
    let outcome = visitStatement(ctx, node, state, level + 1, input)
    for (const after of redirected.after)
      outcome = { ok: State.union(outcome.ok, after.ok), fail: State.union(outcome.fail, after.fail) }
    return outcome
  }
  if (node.type === "ERROR" || node.isMissing) {
    ctx.flags.error = true
    unresolvedNode(ctx, state, node, "the shell grammar could not read this part")
    for (const child of named(node)) visitAny(ctx, child, state, level + 1)
    return State.same(State.unknown("after a part the grammar could not read"))
  }
  const problem = checkGrammar(node, ctx.grammar)
  if (problem !== undefined) {
    unresolvedNode(ctx, state, node, problem)
    for (const child of named(node)) visitAny(ctx, child, state, level + 1)
    return State.same(State.unknown(problem))
  }
  switch (node.type) {
    case "command":
      return commandNode(ctx, node, state, level, outer, [node.text, ...outer.map((r) => r.text)].join(" "), stdin)
    case "redirected_statement": {
      const body = node.childForFieldName("body")
      const redirects = [...childrenOf(node).filter((child) => child !== body && REDIRECTS.has(child.type)), ...outer]
      for (const child of childrenOf(node)) {
        if (child.isNamed && child.id !== body?.id && !REDIRECTS.has(child.type) && child.type !== "comment") {
          unresolvedNode(ctx, state, child, `the grammar read ${JSON.stringify(child.text)} as ${child.type}`)
        }
      }
      if (body === null) {
        const redirected: Redirected = { effects: noEffects(), stdin, after: [] }
        for (const redirect of redirects) redirection(ctx, redirect, state, level + 1, redirected)
        if (!isEmpty(redirected.effects)) emit(ctx, state, [], plainDraft(node.text, redirected.effects))
        return State.same(state)
      }
      if (body.type === "command") return commandNode(ctx, body, state, level + 1, redirects, node.text, stdin)
      return visitStatement(ctx, body, state, level + 1, stdin, redirects)
    }
    case "pipeline": {
      let i = 0
      const parts = named(node)
      const last = parts[parts.length - 1]
      for (const child of childrenOf(node)) {
        if (!child.isNamed) {
          if (!TOKENS.pipeline.has(child.type) || (child.type === "|&" && ctx.grammar !== "bash")) {
            unresolvedNode(ctx, state, node, `${child.type} is not modelled here`)
          }
          continue
        }
        if (child.type === "comment") continue
        // Every part of a pipeline runs in its own subshell.
        visitStatement(
          ctx,
          child,
          state,
          level + 1,
          i === 0 ? stdin : { kind: "pipe" },
          child.id === last?.id ? outer : [],
        )
        i++
      }
      return State.same(state)
    }
    case "list": {
      let outcome: State.Outcome | undefined
      let operator: string | undefined
      const parts = named(node)
      const last = parts[parts.length - 1]
      for (const child of childrenOf(node)) {
        if (!child.isNamed) {
          operator = child.type
          if (operator !== "&&" && operator !== "||")
            unresolvedNode(ctx, state, node, `${operator} is not modelled here`)
          continue
        }
        if (child.type === "comment") continue
        const bound = child.id === last?.id ? outer : []
        if (outcome === undefined) {
          outcome = visitStatement(ctx, child, state, level + 1, stdin, bound)
          continue
        }
        if (operator === "||") {
          const right = visitStatement(ctx, child, outcome.fail, level + 1, stdin, bound)
          outcome = { ok: State.union(outcome.ok, right.ok), fail: right.fail }
        } else {
          const right = visitStatement(ctx, child, outcome.ok, level + 1, stdin, bound)
          outcome = { ok: right.ok, fail: State.union(outcome.fail, right.fail) }
        }
      }
      return outcome ?? State.same(state)
    }
    case "negated_command": {
      const inner = named(node)[0]
      if (inner === undefined) return State.same(state)
      const result = visitStatement(ctx, inner, state, level + 1, stdin, outer)
      return { ok: result.fail, fail: result.ok }
    }
    case "subshell":
      visitSequence(
        ctx,
        childrenOf(node).filter((c) => c.type !== "(" && c.type !== ")"),
        state,
        level + 1,
      )
      return State.same(state)
    case "compound_statement":
      if (childrenOf(node)[0]?.type === "((") {
        for (const child of named(node)) scanWord(ctx, child, state, level + 1)
        return State.same(state)
      }
      return visitSequence(
        ctx,
        childrenOf(node).filter((c) => c.type !== "{" && c.type !== "}"),
        state,
        level + 1,
      )
    case "if_statement":
      return ifStatement(ctx, node, state, level)
    case "while_statement": {
      const loop: Context = { ...ctx, inLoop: true }
      let result = state
      for (const child of named(node))
        result = State.union(result, State.either(visitStatement(loop, child, result, level + 1, stdin)))
      return State.same(result)
    }
    case "for_statement": {
      const variable = node.childForFieldName("variable")
      if (variable !== null && Variables.judge(variable.text) === "unresolved") {
        unresolvedNode(ctx, state, node, Variables.behaviourReason(variable.text))
      }
      const body = node.childForFieldName("body")
      for (const child of named(node)) {
        if (child.id !== body?.id && child.id !== variable?.id) scanWord(ctx, child, state, level + 1)
      }
      if (body === null) return State.same(state)
      const loop: Context = { ...ctx, inLoop: true }
      return State.same(State.union(state, State.either(visitStatement(loop, body, state, level + 1, stdin))))
    }
    case "do_group":
      return visitSequence(
        ctx,
        childrenOf(node).filter((c) => c.type !== "do" && c.type !== "done"),
        state,
        level + 1,
      )
    case "case_statement": {
      let result = state
      for (const child of named(node)) {
        if (child.type !== "case_item") {
          scanWord(ctx, child, state, level + 1)
          continue
        }
        const statements: Array<Node> = []
        for (const part of childrenOf(child)) {
          if (part.type === ";&" || part.type === ";;&") {
            if (ctx.grammar !== "bash") unresolvedNode(ctx, state, child, `${part.type} means something else to sh`)
            continue
          }
          if (!part.isNamed) continue
          if (
            part.id === child.childForFieldName("value")?.id ||
            WORD_NODES.has(part.type) ||
            part.type === "extglob_pattern"
          ) {
            scanWord(ctx, part, state, level + 1)
          } else statements.push(part)
        }
        result = State.union(result, State.either(visitSequence(ctx, statements, state, level + 1)))
      }
      return State.same(result)
    }
    case "function_definition": {
      const name = node.childForFieldName("name")
      if (name?.text === "command_not_found_handle") {
        unresolvedNode(ctx, state, node, "bash runs command_not_found_handle for every command it cannot find")
      }
      const body = node.childForFieldName("body")
      const redirects = childrenOf(node).filter((child) => REDIRECTS.has(child.type))
      const redirected: Redirected = { effects: noEffects(), stdin: NO_STDIN, after: [] }
      for (const redirect of redirects) redirection(ctx, redirect, state, level + 1, redirected)
      if (!isEmpty(redirected.effects)) emit(ctx, state, [], plainDraft(node.text, redirected.effects))
      // The body is judged where it is defined too (a call the gate does not see still runs what it holds).
      if (body !== null)
        visitStatement({ ...ctx, inlining: [...ctx.inlining, name?.text ?? ""] }, body, state, level + 1, NO_STDIN)
      return State.same(state)
    }
    case "declaration_command":
    case "unset_command": {
      for (const child of named(node)) scanWord(ctx, child, state, level + 1)
      const keyword = childrenOf(node)[0]?.text ?? ""
      const words = [
        literal(keyword),
        ...named(node).map((child) =>
          child.type === "variable_assignment" || child.type === "variable_name" ? bareWord(child.text) : word(child),
        ),
      ]
      return resolve(ctx, state, words, plainDraft(node.text), level + 1)
    }
    case "variable_assignment":
    case "variable_assignments": {
      const assignments = node.type === "variable_assignment" ? [node] : named(node)
      for (const assignment of assignments) {
        const judged = assignmentOf(ctx, assignment, state, level + 1)
        if (judged.reason !== undefined) {
          emit(ctx, state, [bareWord(assignment.text)], { ...plainDraft(assignment.text), unresolved: judged.reason })
        }
      }
      return State.same(state)
    }
    case "test_command":
    case "c_style_for_statement": {
      // The grammar check already refused what evaluates variables as arithmetic.
      for (const child of named(node)) {
        if (node.type === "c_style_for_statement" && child.id === node.childForFieldName("body")?.id) {
          visitStatement({ ...ctx, inLoop: true }, child, state, level + 1, stdin)
        } else scanWord(ctx, child, state, level + 1)
      }
      return State.same(state)
    }
    case "comment":
      return State.same(state)
    default:
      unresolvedNode(ctx, state, node, `${node.type} is not in the modelled subset of the shell`)
      for (const child of named(node)) visitAny(ctx, child, state, level + 1)
      return State.same(State.unknown(`after ${node.type}`))
  }
}

const STATEMENTS = new Set([
  "command",
  "redirected_statement",
  "pipeline",
  "list",
  "negated_command",
  "subshell",
  "compound_statement",
  "if_statement",
  "while_statement",
  "for_statement",
  "c_style_for_statement",
  "case_statement",
  "function_definition",
  "declaration_command",
  "unset_command",
  "variable_assignment",
  "variable_assignments",
  "test_command",
])

/** A node of unknown role (inside an error): a statement is visited, anything else scanned as a word. */
const visitAny = (ctx: Context, node: Node, state: State.State, level: number): void => {
  if (STATEMENTS.has(node.type) || node.type === "ERROR") visitStatement(ctx, node, state, level, NO_STDIN)
  else if (REDIRECTS.has(node.type)) {
    const redirected: Redirected = { effects: noEffects(), stdin: NO_STDIN, after: [] }
    redirection(ctx, node, state, level, redirected)
    if (!isEmpty(redirected.effects)) emit(ctx, state, [], plainDraft(node.text, redirected.effects))
  } else scanWord(ctx, node, state, level)
}

const ifStatement = (ctx: Context, node: Node, state: State.State, level: number): State.Outcome => {
  const results: Array<State.State> = []
  // The state when no branch so far was taken; `undefined` once an `else` took the rest.
  let pending: State.State | undefined = state
  const branch = (children: ReadonlyArray<Node>) => {
    const condition: Array<Node> = []
    const body: Array<Node> = []
    let inBody = false
    for (const child of children) {
      if (child.type === "then") inBody = true
      else if (child.type === "elif_clause" || child.type === "else_clause" || child.type === "comment") continue
      else if (!child.isNamed) {
        if (!TOKENS.condition.has(child.type)) unresolvedNode(ctx, state, node, `${child.type} is not modelled here`)
      } else (inBody ? body : condition).push(child)
    }
    if (pending === undefined) return
    const cond = visitSequence(ctx, condition, pending, level + 1)
    results.push(State.either(visitSequence(ctx, body, cond.ok, level + 1)))
    pending = cond.fail
  }
  branch(childrenOf(node))
  for (const child of childrenOf(node)) {
    if (child.type === "elif_clause") branch(childrenOf(child))
    else if (child.type === "else_clause") {
      if (pending !== undefined) {
        const rest = childrenOf(child).filter((c) => c.type !== "else")
        results.push(State.either(visitSequence(ctx, rest, pending, level + 1)))
      }
      pending = undefined
    }
  }
  if (pending !== undefined) results.push(pending)
  let result: State.State | undefined
  for (const r of results) result = result === undefined ? r : State.union(result, r)
  return State.same(result ?? state)
}

const WALKER: Walker = { sequence: visitSequence, statement: visitStatement }

/**
 * Parses `command` with `parser` read as `grammar`: never throws and never fails, for any input.
 *
 * @since 0.3.0
 * @category utilities
 */
export const parseWith = (parser: Parser, command: string, grammar: Grammar): Parsed => {
  const whole = (reason: string): Parsed => unresolvedWhole(command, reason, true)
  if (command.length > MAX_LENGTH) return whole(`the command is longer than ${MAX_LENGTH} characters`)
  let tree: ReturnType<Parser["parse"]>
  try {
    tree = parser.parse(command)
  } catch {
    return whole("the shell grammar could not read this command")
  }
  if (tree === null) return whole("the shell grammar could not read this command")
  try {
    const ctx: Context = {
      out: [],
      parser,
      grammar,
      depth: 0,
      functions: definitions(tree.rootNode),
      inlining: [],
      inLoop: false,
      wrappers: [],
      elevated: false,
      flags: { error: tree.rootNode.hasError },
      walker: WALKER,
    }
    const gap = gapProblem(tree.rootNode, command)
    if (gap !== undefined) unresolvedNode(ctx, State.START, tree.rootNode, gap)
    visitSequence(ctx, childrenOf(tree.rootNode), State.START, 1)
    return { segments: ctx.out, error: ctx.flags.error }
  } catch (error) {
    if (error instanceof Bound) return whole(error.reason)
    // A stack overflow or an exception inside the grammar's bindings must not stop the caller: the command is
    // judged as one unresolved segment instead.
    return whole("the shell grammar could not read this command")
  } finally {
    tree.delete()
  }
}
