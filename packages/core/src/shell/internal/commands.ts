/**
 * Simple commands in the shell walk: assignments judged, words normalised, then resolved — a function defined in the
 * command (its body runs here), the builtins that change the shell, wrappers (unwrapped to what they run), shells,
 * `eval` and wrappers' command strings (parsed again with the grammar of the shell that runs them, up to
 * `MAX_DEPTH` levels), `find`, the file-changing and reading commands. See docs/shell.md.
 *
 * @since 0.3.0
 */
import * as path from "node:path"
import type { Node } from "web-tree-sitter"
import { judgeBuiltin, judgeDeclaration } from "./builtins.js"
import { changeDirectory } from "./cd.js"
import { FILE_COMMANDS } from "../programs/files.js"
import { find } from "../programs/find.js"
import { gapProblem } from "./grammar.js"
import { readerEffects } from "../programs/readers.js"
import { unknownProgram } from "../programs/unknown.js"
import { noEffects, uncertain, use } from "./segment.js"
import * as State from "./state.js"
import * as Variables from "./variables.js"
import {
  type Context,
  definitions,
  type Draft,
  emit,
  type FunctionDefinition,
  guard,
  isEmpty,
  merge,
  NO_STDIN,
  plainDraft,
  type Redirected,
  redirection,
  REDIRECTS,
  scanWord,
  type Stdin,
  unresolvedNode,
} from "./walk.js"
import { type Grammar, invocation, SHELLS } from "./shells.js"
import { isLoader, UNMODELLED_RUNNERS } from "./runners.js"
import { WRAPPERS } from "./wrappers.js"
import { bareWord, childrenOf, dynamic, join, literal, word, type Word } from "./words.js"

/**
 * How deep command strings (`bash -c`, `eval`, wrappers' strings) and function calls are followed.
 *
 * @since 0.3.0
 * @category constants
 */
export const MAX_DEPTH = 8

/**
 * Words of an argument node: a word, or what a declaration argument holds.
 *
 * @since 0.3.0
 * @category constants
 */
export const WORD_NODES = new Set([
  "word",
  "number",
  "raw_string",
  "ansi_c_string",
  "string",
  "translated_string",
  "concatenation",
  "simple_expansion",
  "expansion",
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
  "brace_expression",
])

/**
 * @since 0.3.0
 *
 * @category utilities
 */
export const commandNode = (
  ctx: Context,
  node: Node,
  state: State.State,
  level: number,
  outer: ReadonlyArray<Node>,
  text: string,
  stdin: Stdin,
): State.Outcome => {
  const assignments: Array<Node> = []
  const words: Array<Node> = []
  const redirects: Array<Node> = [...outer]
  for (const child of childrenOf(node)) {
    if (child.type === "variable_assignment" && words.length === 0) assignments.push(child)
    else if (child.type === "command_name") {
      const name = childrenOf(child)
      if (name.length !== 1) unresolvedNode(ctx, state, child, "the grammar could not read this command name")
      if (name[0] !== undefined) words.push(name[0])
    } else if (REDIRECTS.has(child.type)) redirects.push(child)
    else if (child.type === "comment") continue
    else if (WORD_NODES.has(child.type)) words.push(child)
    else unresolvedNode(ctx, state, child, `the grammar read ${JSON.stringify(child.text)} as ${child.type}`)
  }
  for (let i = 1; i < words.length; i++) {
    if (words[i - 1]!.endIndex === words[i]!.startIndex) {
      unresolvedNode(ctx, state, node, "the grammar split a word that the shell reads as one")
      break
    }
  }
  // Substitutions run before the command: in assignments, words, then redirection targets.
  const kept: Array<string> = []
  let reason: string | undefined
  for (const assignment of assignments) {
    const judged = assignmentOf(ctx, assignment, state, level + 1)
    if (judged.reason !== undefined) reason ??= judged.reason
    if (judged.keep !== undefined) kept.push(judged.keep)
  }
  for (const w of words) scanWord(ctx, w, state, level + 1)
  const redirected: Redirected = { effects: noEffects(), stdin, after: [] }
  for (const redirect of redirects) redirection(ctx, redirect, state, level + 1, redirected)
  const argv = words.map(word)
  const draft: Draft = {
    ...plainDraft(text, redirected.effects),
    assignments: kept,
    stdin: redirected.stdin,
    ...(reason === undefined ? {} : { unresolved: reason }),
  }
  let outcome: State.Outcome
  if (argv.length === 0) {
    if (reason !== undefined || !isEmpty(redirected.effects)) {
      emit(
        ctx,
        state,
        assignments.map((a) => bareWord(a.text)),
        draft,
      )
    }
    outcome = State.same(state)
  } else outcome = resolve(ctx, state, argv, draft, level + 1)
  for (const after of redirected.after)
    outcome = { ok: State.union(outcome.ok, after.ok), fail: State.union(outcome.fail, after.fail) }
  return outcome
}

/**
 * A `NAME=value` node: its substitutions, and whether it is dropped, kept or makes the segment unresolved.
 *
 * @since 0.3.0
 * @category utilities
 */
export const assignmentOf = (
  ctx: Context,
  node: Node,
  state: State.State,
  level: number,
): { readonly keep?: string; readonly reason?: string } => {
  for (const child of childrenOf(node)) if (child.isNamed) scanWord(ctx, child, state, level)
  const name = node.childForFieldName("name")
  if (name === null || name.type !== "variable_name") {
    return { reason: "an assignment through an array subscript may run commands" }
  }
  const value = node.childForFieldName("value")
  if (value !== null && value.type === "array" && ctx.grammar !== "bash") {
    return { reason: "arrays mean something else to sh" }
  }
  const judged = Variables.judge(name.text)
  if (judged === "unresolved") return { reason: Variables.behaviourReason(name.text) }
  if (judged === "drop") return {}
  return { keep: node.text }
}

/**
 * Resolves one command's words: functions, builtins, wrappers, shells, `find`, file commands, readers.
 *
 * @since 0.3.0
 * @category utilities
 */
export const resolve = (
  ctx: Context,
  state: State.State,
  input: ReadonlyArray<Word>,
  draft: Draft,
  level: number,
): State.Outcome => {
  guard(level)
  let words = input
  if (draft.replace !== undefined) {
    const marker = draft.replace
    words = words.map((w, i) => (i > 0 && w.text.includes(marker) ? dynamic(w.text) : w))
  }
  if (draft.appended === true) words = [...words, dynamic("(the arguments xargs reads)")]
  const name = words[0]
  if (name === undefined) return State.same(state)
  if (!name.literal || name.glob) {
    emit(ctx, state, words, { ...draft, unresolved: `the command name ${name.text} is only known when the shell runs` })
    return State.same(state)
  }
  const base = path.posix.basename(name.text.trim())
  const here = draft.elsewhere !== undefined ? State.unknown(draft.elsewhere) : state

  if (!name.text.includes("/") && ctx.functions.has(name.text)) return callFunction(ctx, here, words, draft, level)
  if (base === "cd" || base === "pushd" || base === "popd") return changeDirectory(ctx, here, base, words, draft)
  if (draft.unresolved !== undefined) {
    emit(ctx, here, words, draft)
    return State.same(state)
  }
  if (base === "eval") {
    const args = words.slice(1)
    if (args.length === 0) return State.same(state)
    const body = args.every((w) => w.literal) ? literal(join(args)) : dynamic(join(args))
    if (draft.assignments.length > 0 || !isEmpty(draft.effects)) emit(ctx, here, words, draft)
    return commandString(ctx, here, body, ctx.grammar, join(words), draft, true, level)
  }
  const builtin = judgeBuiltin(base, words)
  if (builtin !== undefined) {
    emit(ctx, here, words, { ...draft, unresolved: builtin })
    return State.same(state)
  }
  if (base === "declare" || base === "typeset" || base === "local" || base === "export" || base === "readonly") {
    const options = words
      .slice(1)
      .filter((w) => w.literal && /^[-+]/.test(w.text))
      .map((w) => w.text)
    const names = words
      .slice(1)
      .flatMap((w) => (w.literal ? [Variables.assignedName(w.text)] : [undefined]))
      .filter((n): n is string => n !== undefined)
    const problem = judgeDeclaration(base, options, names)
    emit(ctx, here, words, problem === undefined ? draft : { ...draft, unresolved: problem })
    return State.same(state)
  }

  const wrapper = WRAPPERS.get(base)
  if (wrapper !== undefined) {
    const unwrapped = wrapper(words)
    const form = join(words)
    switch (unwrapped.kind) {
      case "unresolved":
        emit(ctx, here, words, { ...draft, unresolved: unwrapped.reason })
        return State.same(state)
      case "none":
        emit(ctx, here, words, { ...draft, effects: merge(draft.effects, unwrapped.effects) })
        return State.same(state)
      case "string":
        return commandString(
          ctx,
          here,
          unwrapped.body,
          unwrapped.grammar,
          form,
          {
            ...draft,
            effects: merge(draft.effects, unwrapped.effects),
          },
          false,
          level,
        )
      case "run": {
        const kept = [...draft.assignments]
        let reason: string | undefined
        for (const assignment of unwrapped.assignments ?? []) {
          const variable = Variables.assignedName(assignment.text) ?? ""
          const judged = Variables.judge(variable)
          if (judged === "unresolved") reason ??= Variables.behaviourReason(variable)
          else if (judged === "keep") kept.push(assignment.text)
        }
        const inner = unwrapped.fallback ?? words.slice(unwrapped.at)
        const next: Draft = {
          ...draft,
          wrappers: [...draft.wrappers, form],
          elevated: draft.elevated || unwrapped.elevated === true,
          assignments: kept,
          effects: merge(draft.effects, unwrapped.effects),
          ...(reason === undefined ? {} : { unresolved: reason }),
          ...(unwrapped.replace === undefined ? {} : { replace: unwrapped.replace }),
          ...(unwrapped.appended === true ? { appended: true } : {}),
          ...(unwrapped.elsewhere === undefined ? {} : { elsewhere: unwrapped.elsewhere }),
        }
        // Only `command`, `builtin` and the `time` keyword run a builtin such as `cd` in this shell.
        const inShell = base === "command" || base === "builtin" || base === "time"
        const result = resolve(ctx, here, inner, next, level + 1)
        return inShell ? result : State.same(state)
      }
    }
  }

  const grammar = SHELLS.get(base)
  if (grammar !== undefined) {
    const call = invocation(words, grammar)
    switch (call.kind) {
      case "string":
        return commandString(ctx, here, call.body, call.grammar, join(words), draft, false, level)
      case "stdin":
        if (draft.stdin.kind === "text") {
          return commandString(ctx, here, draft.stdin.text, call.grammar, join(words), draft, false, level)
        }
        if (draft.stdin.kind === "pipe") {
          emit(ctx, here, words, { ...draft, unresolved: `${base} reads the commands it runs from its input` })
          return State.same(state)
        }
        emit(ctx, here, words, draft)
        return State.same(state)
      case "script":
        emit(ctx, here, words, draft)
        return State.same(state)
      case "unresolved":
        emit(ctx, here, words, { ...draft, unresolved: call.reason })
        return State.same(state)
    }
  }
  if (UNMODELLED_RUNNERS.has(base) || isLoader(base)) {
    emit(ctx, here, words, { ...draft, unresolved: `${base} runs commands in a way the gate does not follow` })
    return State.same(state)
  }
  if (base === "find") {
    const found = find(words)
    emit(ctx, here, words, { ...draft, effects: merge(draft.effects, found.effects) })
    const form = join(words)
    for (const exec of found.execs) {
      if (exec.words.length === 0) continue
      resolve(
        ctx,
        here,
        exec.words.map((w) => (w.text.includes("{}") ? dynamic(w.text) : w)),
        {
          ...plainDraft(draft.text),
          wrappers: [...draft.wrappers, form],
          elevated: draft.elevated,
          ...(exec.execdir ? { elsewhere: "find -execdir runs it in the directory of each file it finds" } : {}),
        },
        level + 1,
      )
    }
    if (found.deletes) {
      const effects = noEffects()
      for (const start of found.starts) effects.writes.push(use(start, form, "tree", false))
      emit(
        ctx,
        here,
        [literal("rm"), ...found.starts],
        { ...plainDraft(draft.text, effects), wrappers: draft.wrappers, elevated: draft.elevated },
        form,
      )
    }
    return State.same(state)
  }
  const files = FILE_COMMANDS.get(base)
  let effects = files !== undefined ? files(words) : readerEffects(base, words)
  const end = words.findIndex((w) => w.literal && w.text === "--")
  const optional = words.slice(1, end === -1 ? undefined : end).find((w) => !w.literal)
  if (effects !== undefined && optional !== undefined) {
    effects = uncertain(effects, `${optional.text} is only known when the shell runs and may change what ${base} does`)
  }
  effects ??= unknownProgram(base, words, draft.effects)
  emit(ctx, here, words, { ...draft, effects: merge(draft.effects, effects) })
  return State.same(state)
}

/** A call of a function defined in the command: its body runs here, in this shell. */
const callFunction = (
  ctx: Context,
  state: State.State,
  words: ReadonlyArray<Word>,
  draft: Draft,
  level: number,
): State.Outcome => {
  const name = words[0]!.text
  if (ctx.inlining.includes(name) || ctx.inlining.length >= MAX_DEPTH) {
    const reason = `the function ${name} calls itself`
    emit(ctx, state, words, { ...draft, unresolved: reason })
    return State.same(State.unknown(reason))
  }
  emit(ctx, state, words, draft)
  const inner: Context = { ...ctx, inlining: [...ctx.inlining, name] }
  let result: State.State | undefined
  for (const definition of ctx.functions.get(name) ?? []) {
    const redirected: Redirected = { effects: noEffects(), stdin: NO_STDIN, after: [] }
    for (const redirect of definition.redirects) redirection(inner, redirect, state, level + 1, redirected)
    if (!isEmpty(redirected.effects)) emit(inner, state, [], plainDraft(draft.text, redirected.effects))
    const after = State.either(ctx.walker.statement(inner, definition.body, state, level + 1, draft.stdin))
    result = result === undefined ? after : State.union(result, after)
  }
  return State.same(result ?? state)
}

/**
 * A command string run by a shell, `eval` or a wrapper: parsed again with the grammar of the shell that runs it.
 * `inShell` (eval) keeps what it changes; a child shell's changes end with it.
 */
const commandString = (
  ctx: Context,
  state: State.State,
  body: Word,
  grammar: Grammar,
  form: string,
  draft: Draft,
  inShell: boolean,
  level: number,
): State.Outcome => {
  if (!body.literal) {
    emit(ctx, state, [body], {
      ...draft,
      wrappers: [...draft.wrappers, form],
      unresolved: `the command string ${body.text} is only known when the shell runs`,
    })
    return inShell
      ? State.same(State.unknown("after a command string only known when the shell runs"))
      : State.same(state)
  }
  if (ctx.depth + 1 > MAX_DEPTH) {
    emit(ctx, state, [body], {
      ...draft,
      wrappers: [...draft.wrappers, form],
      unresolved: `commands nested deeper than ${MAX_DEPTH} levels are not followed`,
    })
    return State.same(inShell ? State.unknown("after a command string nested too deep") : state)
  }
  // The outer command's own parts: what it writes, and the assignments it passes on.
  if (draft.assignments.length > 0 || !isEmpty(draft.effects)) {
    emit(ctx, state, draft.assignments.length > 0 ? [literal(form)] : [], { ...draft, wrappers: draft.wrappers })
  }
  const tree = ctx.parser.parse(body.text)
  if (tree === null) {
    emit(ctx, state, [body], { ...draft, unresolved: "the shell grammar could not read this command string" })
    return State.same(state)
  }
  try {
    const inner: Context = {
      ...ctx,
      grammar,
      depth: ctx.depth + 1,
      functions: inShell ? merged(ctx.functions, definitions(tree.rootNode)) : definitions(tree.rootNode),
      inlining: inShell ? ctx.inlining : [],
      wrappers: [...ctx.wrappers, ...draft.wrappers, form],
      elevated: ctx.elevated || draft.elevated,
    }
    const gap = gapProblem(tree.rootNode, body.text)
    if (gap !== undefined) unresolvedNode(inner, state, tree.rootNode, gap)
    if (tree.rootNode.hasError) ctx.flags.error = true
    const outcome = ctx.walker.sequence(inner, childrenOf(tree.rootNode), state, level + 1)
    return inShell ? outcome : State.same(state)
  } finally {
    tree.delete()
  }
}

const merged = (
  a: ReadonlyMap<string, ReadonlyArray<FunctionDefinition>>,
  b: ReadonlyMap<string, ReadonlyArray<FunctionDefinition>>,
): ReadonlyMap<string, ReadonlyArray<FunctionDefinition>> => {
  const out = new Map(a)
  for (const [name, list] of b) out.set(name, [...(out.get(name) ?? []), ...list])
  return out
}
