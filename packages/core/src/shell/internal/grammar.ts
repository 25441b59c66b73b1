/**
 * Where tree-sitter's reading of a command and the shell's own may part, each a reason for an unresolved segment:
 *
 * - text the grammar skips as whitespace that bash reads (a carriage return, `\` before a space or tab, a line
 *   continuation that joins two words);
 * - constructs whose meaning differs between bash and a POSIX `sh` (`[[ ]]`, `(( ))`, `$'…'`, `<(…)`, `&>`, arrays,
 *   `function`, `select`, most `${…}` operators), when the shell that runs the command is not bash;
 * - constructs that evaluate text as code at run time even in bash: arithmetic on variables (`(( x ))`, `$(( x ))`,
 *   `[[ $x -eq 1 ]]`, subscripts), `${!x}`, `${x@P}`, extended glob patterns.
 *
 * @since 0.3.0
 */
import type { Node } from "web-tree-sitter"
import * as Variables from "./variables.js"
import type { Grammar } from "./shells.js"
import { childrenOf } from "./words.js"

/**
 * Tokens that may appear between statements of each kind of node.
 *
 * @since 0.3.0
 * @category constants
 */
export const TOKENS = {
  sequence: new Set([";", "&", ";;", "\n"]),
  pipeline: new Set(["|", "|&"]),
  condition: new Set(["if", "elif", "fi", ";", "\n"]),
} as const

const ARITHMETIC_COMPARISONS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"])

/** Node types whose presence in an arithmetic expression means a variable's value is evaluated as code. */
const EVALUATED = new Set([
  "variable_name",
  "word",
  "simple_expansion",
  "expansion",
  "command_substitution",
  "subscript",
  "string",
  "concatenation",
])

const MAX_SCAN = 10_000

/** True when the subtree holds a node the predicate accepts (iterative, bounded: past the bound, true). */
const contains = (root: Node, predicate: (node: Node) => boolean): boolean => {
  const stack: Array<Node> = [...childrenOf(root)]
  let seen = 0
  while (stack.length > 0) {
    if (++seen > MAX_SCAN) return true
    const node = stack.pop()!
    if (predicate(node)) return true
    stack.push(...childrenOf(node))
  }
  return false
}

const evaluatesVariables = (node: Node) => contains(node, (child) => EVALUATED.has(child.type))

const POSIX_EXPANSION_OPERATORS = new Set([":-", "-", ":+", "+", ":?", "?", ":=", "=", "#", "##", "%", "%%"])
const BASH_EXPANSION_OPERATORS = new Set([
  ...POSIX_EXPANSION_OPERATORS,
  "/",
  "//",
  "/#",
  "/%",
  "^",
  "^^",
  ",",
  ",,",
  "@",
  "Q",
  "E",
  "A",
  "a",
  "U",
  "u",
  "L",
  "K",
  "k",
])

const expansionProblem = (node: Node, grammar: Grammar): string | undefined => {
  const parts = childrenOf(node)
  const allowed = grammar === "bash" ? BASH_EXPANSION_OPERATORS : POSIX_EXPANSION_OPERATORS
  let name: string | undefined
  let afterColon = false
  for (const part of parts) {
    if (part.type === "${" || part.type === "}") continue
    if (part.type === "variable_name") {
      name ??= part.text
      continue
    }
    if (part.type === "special_variable_name" || part.type === "number") {
      if (afterColon && part.type !== "number") return "a substring offset is arithmetic, which may run commands"
      continue
    }
    if (part.type === "subscript") {
      if (grammar !== "bash") return "arrays mean something else to sh"
      const index = part.childForFieldName("index")
      if (index !== null && !(index.type === "number" || (index.type === "word" && /^[@*]$/.test(index.text)))) {
        return "an array subscript is arithmetic, which may run commands"
      }
      continue
    }
    if (part.type === "!") return "an indirect expansion ${!…} may run commands"
    if (part.type === "P") return "${…@P} expands the value as a prompt, which runs commands"
    if (part.type === ":") {
      if (grammar !== "bash") return "${x:offset} means something else to sh"
      afterColon = true
      continue
    }
    if (!part.isNamed) {
      if (!allowed.has(part.type)) return `the expansion operator ${part.type} is not modelled`
      if ((part.type === ":=" || part.type === "=") && name !== undefined && Variables.judge(name) === "unresolved") {
        return Variables.behaviourReason(name)
      }
      continue
    }
    if (afterColon && part.type !== "number") return "a substring offset is arithmetic, which may run commands"
  }
  return undefined
}

const testProblem = (node: Node): string | undefined => {
  let problem: string | undefined
  contains(node, (child) => {
    if (child.type === "binary_expression") {
      const operator = child.childForFieldName("operator")
      if (operator !== null && ARITHMETIC_COMPARISONS.has(operator.text)) {
        for (const side of [child.childForFieldName("left"), child.childForFieldName("right")]) {
          if (side !== null && side.type !== "number") {
            problem = `${operator.text} evaluates its operands as arithmetic, which may run commands`
            return true
          }
        }
      }
    }
    if (child.type === "unary_expression" && /^-v/.test(child.text) && child.text.includes("[")) {
      problem = "-v with a subscript evaluates arithmetic, which may run commands"
      return true
    }
    return false
  })
  return problem
}

/**
 * Why a node is outside the modelled subset for `grammar` (looking at the node itself, and at the subtree of an
 * arithmetic or test context), or `undefined`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const check = (node: Node, grammar: Grammar): string | undefined => {
  const posix = grammar !== "bash"
  switch (node.type) {
    case "extglob_pattern":
      return "extended glob patterns are not modelled"
    case "test_command":
      return posix ? "[[ ]] means something else to sh" : testProblem(node)
    case "c_style_for_statement":
      return posix ? "for (( )) means something else to sh" : "arithmetic in for (( )) may run commands"
    case "compound_statement":
      if (childrenOf(node)[0]?.type !== "((") return undefined
      if (posix) return "(( )) runs a subshell in sh, not arithmetic"
      return evaluatesVariables(node) ? "arithmetic on variables may run commands" : undefined
    case "arithmetic_expansion":
      if (posix && childrenOf(node)[0]?.type === "$[") return "$[ ] means something else to sh"
      return evaluatesVariables(node) ? "arithmetic on variables may run commands" : undefined
    case "expansion":
      return expansionProblem(node, grammar)
    case "subscript": {
      if (posix) return "arrays mean something else to sh"
      const index = node.childForFieldName("index")
      return index === null || index.type === "number"
        ? undefined
        : "an array subscript is arithmetic, which may run commands"
    }
    case "process_substitution":
      return posix ? "<( ) means something else to sh" : undefined
    case "ansi_c_string":
      return posix ? "$'…' means something else to sh" : undefined
    case "translated_string":
      return posix ? '$"…" means something else to sh' : undefined
    case "array":
      return posix ? "arrays mean something else to sh" : undefined
    case "function_definition":
      return posix && childrenOf(node)[0]?.type === "function" ? "the function keyword is bash's" : undefined
    case "for_statement":
      return posix && childrenOf(node)[0]?.type === "select" ? "select is bash's" : undefined
    default:
      return undefined
  }
}

/** Node types whose text between children is content, not syntax. */
const CONTENT = new Set([
  "string",
  "translated_string",
  "heredoc_body",
  "heredoc_redirect",
  "raw_string",
  "ansi_c_string",
  "comment",
  "word",
  "regex",
  "heredoc_content",
  "string_content",
  "extglob_pattern",
  "ERROR",
])

/** Why the text between two tokens is not plain whitespace to bash, or `undefined`. */
const gapText = (source: string, from: number, to: number): string | undefined => {
  for (let i = from; i < to; i++) {
    const c = source[i]!
    if (c === " " || c === "\t" || c === "\n") continue
    if (c === "\\" && source[i + 1] === "\n" && i + 1 < to) {
      const before = source[i - 1]
      const after = source[i + 2]
      const blank = (x: string | undefined) => x === undefined || x === " " || x === "\t" || x === "\n"
      if (!blank(before) && !blank(after)) return "a line continuation joins two words that the grammar reads apart"
      i++
      continue
    }
    if (c === "\\") return `a backslash before ${JSON.stringify(source[i + 1] ?? "")} is part of a word to bash`
    return `${JSON.stringify(c)} between words is part of a word to bash`
  }
  return undefined
}

/**
 * Why the text the grammar skips somewhere in the tree is not what bash skips, or `undefined`. Iterative; past a
 * bound on the number of nodes, the answer is a problem.
 *
 * @since 0.3.0
 * @category utilities
 */
export const gapProblem = (root: Node, source: string): string | undefined => {
  const offset = 0
  const edges = gapText(source, 0, root.startIndex) ?? gapText(source, root.endIndex, source.length)
  if (edges !== undefined) return edges
  const stack: Array<Node> = [root]
  let seen = 0
  while (stack.length > 0) {
    if (++seen > 1_000_000) return "the command is too large to check"
    const node = stack.pop()!
    if (CONTENT.has(node.type) || node.childCount === 0) continue
    let at = node.startIndex
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i)
      if (child === null) continue
      const problem = gapText(source, at - offset, child.startIndex - offset)
      if (problem !== undefined) return problem
      at = Math.max(at, child.endIndex)
      stack.push(child)
    }
    const problem = gapText(source, at - offset, node.endIndex - offset)
    if (problem !== undefined) return problem
  }
  return undefined
}
