#!/usr/bin/env node
/**
 * The import graph of packages/core/src: no cycle, and no module importing a floor above its own (the floors of
 * scripts/floors.mjs, the house plan of docs/architecture.md; `tool/` additionally never imports the policy floors,
 * shell to hosts). Each floor's value imports of modules that reach outside the process (files, processes, network,
 * host, database: `osKinds` in scripts/floors.mjs) are exactly the kinds its entry in scripts/floors.mjs lists: a
 * kind used but not listed fails, and so does a kind listed but no longer used.
 *
 * Every .ts file under src/ is read with TypeScript's own pre-processor (static imports and re-exports, `import
 * type`, dynamic `import()`), each specifier is resolved with TypeScript's NodeNext resolver, and cycles are the
 * strongly connected components of the resulting graph (Tarjan). Type-only edges count too: a type-level cycle is
 * still a knot in the design.
 *
 * Usage: node scripts/check-cycles.mjs [src directory]   (default packages/core/src). Exits 1 on a finding.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { FLOORS as PLAN, FORBIDDEN, osKinds } from "./floors.mjs"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const src = path.resolve(process.argv[2] ?? path.join(repo, "packages/core/src"))

/** Floors from the bottom up (scripts/floors.mjs); a module may import its own floor or a lower one. */
const FLOORS = PLAN.map((floor) => floor.folder)
/** What each floor may reach outside the process, by folder. */
const OS_ALLOWED = new Map(PLAN.map((floor) => [floor.folder, new Set(floor.os)]))

const files = []
const walk = (directory) => {
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    const file = path.join(directory, entry.name)
    if (entry.isDirectory()) walk(file)
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) files.push(file)
  }
}
walk(src)

const options = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, allowJs: false }
const host = ts.createCompilerHost(options)
const inside = new Set(files)
const graph = new Map()
for (const file of files) {
  const info = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true)
  const targets = new Set()
  for (const { fileName } of info.importedFiles) {
    if (!fileName.startsWith(".")) continue
    const resolved = ts.resolveModuleName(fileName, file, options, host).resolvedModule?.resolvedFileName
    if (resolved === undefined) {
      console.log(`unresolved: ${path.relative(repo, file)} imports "${fileName}"`)
      continue
    }
    if (inside.has(resolved)) targets.add(resolved)
  }
  graph.set(file, [...targets])
}

// Tarjan's strongly connected components.
let index = 0
const stack = []
const state = new Map()
const cycles = []
const connect = (node) => {
  const entry = { index, low: index, onStack: true }
  index++
  state.set(node, entry)
  stack.push(node)
  for (const next of graph.get(node)) {
    const seen = state.get(next)
    if (seen === undefined) {
      connect(next)
      entry.low = Math.min(entry.low, state.get(next).low)
    } else if (seen.onStack) entry.low = Math.min(entry.low, seen.index)
  }
  if (entry.low === entry.index) {
    const component = []
    let member
    do {
      member = stack.pop()
      state.get(member).onStack = false
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || graph.get(node).includes(node)) cycles.push(component)
  }
}
for (const file of files) if (!state.has(file)) connect(file)

const relative = (file) => path.relative(src, file)
const folder = (file) => relative(file).split(path.sep)[0]
const floor = (file) => FLOORS.indexOf(folder(file))
const upward = []
for (const [from, targets] of graph) {
  if (floor(from) === -1) continue // src/index.ts and anything outside the plan sits on top
  for (const to of targets) {
    const forbidden = FORBIDDEN.some(([a, b]) => folder(from) === a && folder(to) === b)
    if (floor(to) > floor(from) || floor(to) === -1 || forbidden) upward.push(`${relative(from)} → ${relative(to)}`)
  }
}

// What each floor reaches outside the process, from its value imports (type-only imports touch nothing).
const reached = new Map()
const outside = []
for (const file of files) {
  if (floor(file) === -1) continue
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest)
  for (const statement of source.statements) {
    let specifier
    if (ts.isImportDeclaration(statement) && !(statement.importClause?.isTypeOnly ?? false))
      specifier = statement.moduleSpecifier
    else if (ts.isExportDeclaration(statement) && !statement.isTypeOnly) specifier = statement.moduleSpecifier
    if (specifier === undefined || !ts.isStringLiteral(specifier)) continue
    for (const kind of osKinds(specifier.text)) {
      const seen = reached.get(folder(file)) ?? new Set()
      seen.add(kind)
      reached.set(folder(file), seen)
      if (!OS_ALLOWED.get(folder(file)).has(kind))
        outside.push(
          `${relative(file)} imports "${specifier.text}" (${kind}), which scripts/floors.mjs does not allow ${folder(file)}/`,
        )
    }
  }
}
const present = new Set(files.map(folder))
for (const [name, allowed] of OS_ALLOWED)
  for (const kind of present.has(name) ? allowed : [])
    if (!(reached.get(name)?.has(kind) ?? false))
      outside.push(
        `${name}/ no longer imports anything that reaches ${kind}: drop it from its floor in scripts/floors.mjs`,
      )

for (const cycle of cycles) console.log(`cycle: ${cycle.map(relative).sort().join(" ↔ ")}`)
for (const edge of upward) console.log(`imports upward: ${edge}`)
for (const finding of outside) console.log(`operating system: ${finding}`)
const edges = [...graph.values()].reduce((sum, targets) => sum + targets.length, 0)
console.log(
  `check-cycles: ${files.length} modules, ${edges} imports, ${cycles.length} cycle(s), ${upward.length} upward import(s), ${outside.length} operating-system finding(s)`,
)
process.exit(cycles.length === 0 && upward.length === 0 && outside.length === 0 ? 0 : 1)
