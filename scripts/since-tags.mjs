#!/usr/bin/env node
// Every export that the API reference documents (@effect/docgen, see docs/api-reference.md) carries a JSDoc `@since`.
//
//   node scripts/since-tags.mjs [files...]          adds the missing tags (to every packages/*/src/**/*.ts file
//                                                   when no file is named)
//   node scripts/since-tags.mjs --check [files...]  lists the exports without one and exits 1 if there is any
//
// What counts mirrors docgen's parser: the module comment (the first comment before the first statement), exported
// functions, constants, classes (with their methods and public instance properties), interfaces, type aliases,
// enums and namespaces (with the interfaces, type aliases and namespaces inside), each re-exported name of
// `export { a } from` and each `export * as X from`. Declarations tagged `@internal` or `@ignore` are left out, as
// docgen leaves them out.
//
// A missing tag is added to the declaration's own JSDoc when it has one, or as a new `/** @since V */` when it has
// none (a description is written by hand, not generated). V is 0.2.0 for a module first added to the repository on
// or after NEW_SINCE (renames followed, so a module that only moved keeps its first version), 0.1.0 otherwise.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const NEW_SINCE = "2026-12-01"
const FIRST_VERSION = "0.1.0"
const NEW_VERSION = "0.2.0"

const args = process.argv.slice(2)
const checkOnly = args.includes("--check")
const named = args.filter((arg) => !arg.startsWith("--"))

const walk = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return walk(full)
    return entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : []
  })

const allSources = () =>
  fs
    .readdirSync(path.join(root, "packages"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(root, "packages", entry.name, "src")))
    .flatMap((entry) => walk(path.join(root, "packages", entry.name, "src")))
    .sort()

/** The version a module's new tags get: by the date the file (followed through renames) was first added. */
const versionOf = (file) => {
  let added = ""
  try {
    const out = execFileSync(
      "git",
      ["log", "--follow", "--diff-filter=A", "--format=%ad", "--date=short", "--", path.relative(root, file)],
      { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
    )
    added = out.trim().split("\n").filter(Boolean).at(-1) ?? ""
  } catch {
    added = ""
  }
  return added === "" || added >= NEW_SINCE ? NEW_VERSION : FIRST_VERSION
}

/** Parses the text of one comment as a JSDoc block, with the compiler. */
const parseComment = (text) => {
  if (!text.startsWith("/**")) return undefined
  const probe = ts.createSourceFile("comment.ts", `${text}\nconst probe = 0\n`, ts.ScriptTarget.Latest, true)
  return probe.statements[0]?.jsDoc?.at(-1)
}

const tagsOf = (jsDoc) => (jsDoc?.tags ?? []).map((tag) => tag.tagName.text)
const sinceOf = (jsDoc) => {
  const tag = (jsDoc?.tags ?? []).find((t) => t.tagName.text === "since")
  if (tag === undefined) return undefined
  const comment = typeof tag.comment === "string" ? tag.comment : ts.getTextOfJSDocComment(tag.comment)
  return comment?.trim() || undefined
}
const ignored = (jsDoc) => tagsOf(jsDoc).some((tag) => tag === "internal" || tag === "ignore")

const hasExport = (node) => (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
const hasModifier = (node, kind) => (ts.getModifiers(node) ?? []).some((m) => m.kind === kind)

const columnOf = (sf, pos) => pos - sf.getLineStarts()[sf.getLineAndCharacterOfPosition(pos).line]

/**
 * One place that needs a tag. `jsDoc` is the block docgen reads (undefined when there is none) and `at` is where a
 * new block goes.
 */
const target = (sf, name, jsDoc, at) => ({ name, jsDoc, at, line: sf.getLineAndCharacterOfPosition(at).line + 1 })

/** The JSDoc the compiler attached to a declaration: docgen reads the last one. */
const ownJsDoc = (node) => node.jsDoc?.at(-1)

/** docgen reads the first comment before a node for the module comment and for re-exports. */
const firstComment = (sf, node) => {
  const ranges = ts.getLeadingCommentRanges(sf.text, node.getFullStart()) ?? []
  const first = ranges[0]
  if (first === undefined) return { jsDoc: undefined, at: node.getStart(sf) }
  const text = sf.text.slice(first.pos, first.end)
  const jsDoc = parseComment(text)
  return { jsDoc: jsDoc === undefined ? undefined : { ...jsDoc, range: first }, at: first.pos }
}

const declarationTargets = (sf, statements, prefix) => {
  const out = []
  const seenFunctions = new Set()
  const add = (name, node) => {
    const jsDoc = ownJsDoc(node)
    if (ignored(jsDoc)) return
    out.push(target(sf, prefix + name, jsDoc, node.getStart(sf)))
  }
  for (const statement of statements) {
    const exported = hasExport(statement)
    if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) {
      if (exported) add(statement.name.text, statement)
    } else if (ts.isModuleDeclaration(statement) && ts.isIdentifier(statement.name)) {
      if (!exported || ignored(ownJsDoc(statement))) continue
      add(statement.name.text, statement)
      let body = statement.body
      if (body !== undefined && ts.isModuleBlock(body)) {
        out.push(
          ...declarationTargets(
            sf,
            body.statements.filter((s) => !ts.isVariableStatement(s) && !ts.isFunctionDeclaration(s)),
            `${prefix}${statement.name.text}.`,
          ),
        )
      }
    } else if (prefix !== "") {
      continue
    } else if (ts.isFunctionDeclaration(statement)) {
      if (!exported || statement.name === undefined) continue
      // Overloads: docgen reads the first signature's JSDoc.
      if (seenFunctions.has(statement.name.text)) continue
      seenFunctions.add(statement.name.text)
      add(statement.name.text, statement)
    } else if (ts.isVariableStatement(statement)) {
      if (exported) {
        add(statement.declarationList.declarations.map((d) => d.name.getText(sf)).join(", "), statement)
      }
    } else if (ts.isEnumDeclaration(statement)) {
      if (exported) add(statement.name.text, statement)
    } else if (ts.isClassDeclaration(statement)) {
      if (!exported || statement.name === undefined || ignored(ownJsDoc(statement))) continue
      const className = statement.name.text
      add(className, statement)
      const seenMethods = new Set()
      for (const member of statement.members) {
        const memberName = member.name?.getText(sf) ?? ""
        if (ts.isMethodDeclaration(member)) {
          const key = `${hasModifier(member, ts.SyntaxKind.StaticKeyword)}:${memberName}`
          if (seenMethods.has(key)) continue
          seenMethods.add(key)
          add(`${className}.${memberName}`, member)
        } else if (
          ts.isPropertyDeclaration(member) &&
          !hasModifier(member, ts.SyntaxKind.StaticKeyword) &&
          !hasModifier(member, ts.SyntaxKind.PrivateKeyword)
        ) {
          add(`${className}#${memberName}`, member)
        }
      }
    } else if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause
      if (clause !== undefined && ts.isNamedExports(clause)) {
        for (const element of clause.elements) {
          const { jsDoc, at } = firstComment(sf, element)
          if (ignored(jsDoc)) continue
          out.push({ ...target(sf, element.name.text, jsDoc, at), specifier: true })
        }
      } else {
        const { jsDoc, at } = firstComment(sf, statement)
        if (ignored(jsDoc)) continue
        const name = clause === undefined ? "*" : `* as ${clause.name.text}`
        const from = statement.moduleSpecifier.text
        out.push({ ...target(sf, `export ${name} from "${from}"`, jsDoc, at), from })
      }
    }
  }
  return out
}

const targetsOf = (sf) => {
  const out = []
  const first = sf.statements[0]
  if (first === undefined) {
    out.push(target(sf, "<module>", undefined, 0))
  } else {
    const { jsDoc, at } = firstComment(sf, first)
    out.push({ ...target(sf, "<module>", jsDoc, at), module: true })
  }
  out.push(...declarationTargets(sf, sf.statements, ""))
  return out
}

/** The edit that gives one target its tag. */
const editFor = (sf, t, version) => {
  if (t.jsDoc === undefined) {
    const column = columnOf(sf, t.at)
    const indent = sf.text.slice(t.at - column, t.at)
    const inline = indent.trim() !== ""
    if (t.module && t.at === sf.statements[0]?.getStart(sf)) {
      // A module comment of its own, separated from the first declaration's.
      return { pos: t.at, end: t.at, text: `/**\n * @since ${version}\n */\n\n` }
    }
    if (t.specifier) {
      // docgen reads a specifier's comment only when it starts a line, and a block keeps prettier from joining
      // the specifiers onto the line of `export {`.
      const lineIndent = indent.match(/^\s*/)[0]
      const own = inline ? `${lineIndent}  ` : indent
      const block = `/**\n${own} * @since ${version}\n${own} */\n${own}`
      return { pos: t.at, end: t.at, text: inline ? `\n${own}${block}` : block }
    }
    return { pos: t.at, end: t.at, text: inline ? `/** @since ${version} */ ` : `/** @since ${version} */\n${indent}` }
  }
  const pos = t.jsDoc.range?.pos ?? t.jsDoc.getStart(sf)
  const end = t.jsDoc.range?.end ?? t.jsDoc.end
  const text = sf.text.slice(pos, end)
  const column = columnOf(sf, pos)
  const indent = " ".repeat(column)
  const body = text.slice(3, -2)
  if (!text.includes("\n")) {
    const content = body.trim()
    if (content === "") return { pos, end, text: `/** @since ${version} */` }
    return { pos, end, text: `/**\n${indent} * ${content}\n${indent} *\n${indent} * @since ${version}\n${indent} */` }
  }
  const lines = text.split("\n")
  const last = lines.at(-1)
  const before = last.slice(0, last.lastIndexOf("*/"))
  const head = lines.slice(0, -1)
  if (before.replace(/\s/g, "") !== "") head.push(before.replace(/\s+$/, ""))
  const previous = head.at(-1).trim()
  if (previous !== "*" && previous !== "/**") head.push(`${indent} *`)
  head.push(`${indent} * @since ${version}`, `${indent} */`)
  return { pos, end, text: head.join("\n") }
}

const files = named.length > 0 ? named.map((file) => path.resolve(file)) : allSources()
let missing = 0
let added = 0
for (const file of files) {
  const source = fs.readFileSync(file, "utf8")
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const lacking = targetsOf(sf).filter((t) => sinceOf(t.jsDoc) === undefined)
  if (lacking.length === 0) continue
  const relative = path.relative(root, file)
  if (checkOnly) {
    for (const t of lacking) console.log(`${relative}:${t.line}: ${t.name} has no @since`)
    missing += lacking.length
    continue
  }
  const version = versionOf(file)
  // Several targets can share one comment (a module comment that is also the first export's JSDoc).
  // An insertion of a new module comment and one of a new declaration comment at the same place both stay, the
  // module comment first.
  const edits = new Map()
  for (const t of lacking) {
    // A namespace re-export is as old as the module it names.
    const source = t.from?.startsWith(".")
      ? path.resolve(path.dirname(file), t.from.replace(/\.js$/, ".ts"))
      : undefined
    const own = source !== undefined && fs.existsSync(source) ? versionOf(source) : version
    const edit = { ...editFor(sf, t, own), module: t.module === true }
    const key = edit.pos === edit.end ? `${edit.pos}:insert:${edit.module}` : `${edit.pos}:${edit.end}`
    edits.set(key, edit)
  }
  let text = source
  const order = (a, b) => b.pos - a.pos || Number(a.module) - Number(b.module)
  for (const edit of [...edits.values()].sort(order)) {
    text = text.slice(0, edit.pos) + edit.text + text.slice(edit.end)
  }
  fs.writeFileSync(file, text)
  added += lacking.length
  console.log(`${relative}: ${lacking.length} tag(s) added (@since ${version})`)
}
if (checkOnly) {
  console.log(missing === 0 ? "every export has @since" : `${missing} export(s) without @since`)
  process.exit(missing === 0 ? 0 : 1)
}
console.log(`${added} tag(s) added`)
