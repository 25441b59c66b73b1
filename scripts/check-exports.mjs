#!/usr/bin/env node
/**
 * Modules name what they export: no `export * from "<relative module>"` in any packages/<name>/src file, so a reader
 * finds every public name of a namespace, with its doc, in the namespace's own file (a public module re-declares
 * `export const make = internal.make`, or re-exports a class by name). The package index and the subpath entries
 * use `export * as Namespace from`, which this allows: it adds one name.
 *
 * Every file is read with TypeScript's parser, so a comment or a string that looks like a re-export is not one.
 *
 * Usage: node scripts/check-exports.mjs [file...]   (default: every .ts file under packages/<name>/src). Exits 1 on a
 * finding.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

const walk = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return walk(full)
    return entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : []
  })

const named = process.argv.slice(2).map((file) => path.resolve(file))
const files =
  named.length > 0
    ? named
    : fs
        .readdirSync(path.join(repo, "packages"))
        .map((name) => path.join(repo, "packages", name, "src"))
        .filter((dir) => fs.existsSync(dir))
        .flatMap(walk)

const findings = []
for (const file of files) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false)
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement) || statement.exportClause !== undefined) continue
    const specifier = statement.moduleSpecifier
    if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith(".")) continue
    const { line } = source.getLineAndCharacterOfPosition(statement.getStart(source))
    findings.push(`${path.relative(repo, file)}:${line + 1}: export * from "${specifier.text}"`)
  }
}

if (findings.length > 0) {
  console.error(
    "A module names what it exports: re-declare each name (`export const make = internal.make`, " +
      "`export type X = internal.X`) or re-export it by name, with its doc.",
  )
  for (const finding of findings) console.error(`  ${finding}`)
  process.exit(1)
}
console.log(`${files.length} modules name what they export`)
