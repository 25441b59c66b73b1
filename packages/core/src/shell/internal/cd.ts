/**
 * `cd`, `pushd` and `popd` in the shell walk: the directories the shell may be in afterwards. A `cd` that may fail
 * leaves the old directory possible too; one in a loop, one whose target is only known at run time, `cd -` before
 * any `cd` (OLDPWD comes from the environment) and the stack forms that are not followed make the directory
 * unknown. See docs/shell.md.
 *
 * @since 0.3.0
 */
import * as State from "./state.js"
import { type Context, type Draft, emit } from "./walk.js"
import { join, type Word } from "./words.js"

/**
 * `cd`, `pushd`, `popd`: the new directories, scoped and uncertain.
 *
 * @since 0.3.0
 * @category utilities
 */
export const changeDirectory = (
  ctx: Context,
  state: State.State,
  base: string,
  words: ReadonlyArray<Word>,
  draft: Draft,
): State.Outcome => {
  const decided = directoryChange(ctx, state, base, words, draft)
  if ("reason" in decided) {
    emit(ctx, state, words, { ...draft, unresolved: decided.reason })
    return { ok: State.unknown(decided.reason), fail: state }
  }
  emit(ctx, state, words, draft)
  return decided
}

const directoryChange = (
  ctx: Context,
  state: State.State,
  base: string,
  words: ReadonlyArray<Word>,
  draft: Draft,
): State.Outcome | { readonly reason: string } => {
  if (draft.unresolved !== undefined) return { reason: draft.unresolved }
  if (ctx.inLoop) return { reason: `a ${base} inside a loop may run any number of times` }
  const args = words.slice(1)
  let physical = false
  let noChange = false
  let i = 0
  for (; i < args.length; i++) {
    const w = args[i]!
    if (!w.literal) return { reason: `the directory of ${join(words)} is only known when the shell runs` }
    if (w.text === "--") {
      i++
      break
    }
    if (!/^-[A-Za-z@]+$/.test(w.text)) break
    for (const c of w.text.slice(1)) {
      if (base === "cd" && c === "P") physical = true
      else if (base === "cd" && c === "L") physical = false
      else if (base === "cd" && c === "e") continue
      else if (base !== "cd" && c === "n") noChange = true
      else return { reason: `${base} ${w.text} is an option the gate does not model` }
    }
  }
  const operand = args[i]
  const stack = state.stack
  const unknownStack = { reason: "the directory stack is only known when the shell runs" }
  if (base === "popd") {
    if (operand !== undefined) return { reason: `popd ${operand.text} is not followed` }
    if (stack === undefined) return unknownStack
    if (stack.length === 0) return State.same(state)
    const rest = stack.slice(1)
    if (noChange) return { ok: { ...state, stack: rest }, fail: state }
    return { ok: { dirs: stack[0], oldpwd: state.dirs, stack: rest }, fail: state }
  }
  if (base === "pushd" && operand === undefined) {
    if (stack !== undefined && stack.length === 0) return State.same(state)
    if (stack === undefined || state.dirs === undefined) return unknownStack
    return { ok: { dirs: stack[0], oldpwd: state.dirs, stack: [state.dirs, ...stack.slice(1)] }, fail: state }
  }
  if (operand !== undefined && (!operand.literal || operand.glob)) {
    return { reason: `the directory of ${join(words)} is only known when the shell runs` }
  }
  if (base === "pushd" && operand !== undefined && /^[+-]\d+$/.test(operand.text)) {
    return { reason: `pushd ${operand.text} is not followed` }
  }
  let entered: State.State
  if (operand === undefined) entered = State.enter(state, { target: "", home: true })
  else if (operand.text === "-" && base === "cd") {
    if (state.oldpwd === undefined) return { reason: "cd - goes to OLDPWD, which is only known when the shell runs" }
    entered = { dirs: state.oldpwd, oldpwd: state.dirs, stack: state.stack }
  } else {
    const text = operand.text
    const searched = operand.home !== true && !text.startsWith("/") && !text.startsWith(".") && text !== ""
    entered = State.enter(state, {
      target: operand.home === true ? text.replace(/^~\/?/, "") : text,
      ...(operand.home === true ? { home: true } : {}),
      ...(physical ? { physical: true } : {}),
      ...(searched ? { searched: true } : {}),
    })
  }
  if (base === "pushd") {
    if (state.dirs === undefined || stack === undefined) return unknownStack
    const pushed = [state.dirs, ...stack]
    if (noChange) return { ok: { ...state, stack: pushed }, fail: state }
    return { ok: { ...entered, stack: pushed }, fail: state }
  }
  return { ok: entered, fail: state }
}
