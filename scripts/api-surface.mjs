/**
 * The public API surface of every published entry, read with the TypeScript checker from the sources: per entry,
 * its top-level names, and the names inside its namespaces (`export * as X`), so a change's growth or shrinkage is
 * a number in the same run. Names tagged `@internal` are counted apart (they are not part of the API).
 *
 * Usage: node scripts/api-surface.mjs [--json] [--names]
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const args = new Set(process.argv.slice(2))

const entries = []
for (const name of fs.readdirSync(path.join(root, "packages"))) {
  const manifest = path.join(root, "packages", name, "package.json")
  if (!fs.existsSync(manifest)) continue
  const json = JSON.parse(fs.readFileSync(manifest, "utf8"))
  for (const [key, value] of Object.entries(json.exports ?? {})) {
    const source = typeof value === "object" && value !== null ? value["@toolgate/source"] : undefined
    if (typeof source !== "string" || !source.endsWith(".ts")) continue
    entries.push({ entry: `${json.name}${key === "." ? "" : key.slice(1)}`, file: path.join(root, "packages", name, source) })
  }
}

const program = ts.createProgram(
  entries.map((entry) => entry.file),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: false,
    customConditions: ["@toolgate/source"],
  },
)
const checker = program.getTypeChecker()

const isInternal = (symbol) => {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  return [symbol, target].some((s) => s.getJsDocTags(checker).some((tag) => tag.name === "internal"))
}

const isNamespace = (symbol) => {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  return (target.flags & ts.SymbolFlags.ValueModule) !== 0 && target.valueDeclaration !== undefined &&
    ts.isSourceFile(target.valueDeclaration)
}

const report = []
for (const { entry, file } of entries) {
  const source = program.getSourceFile(file)
  if (source === undefined) continue
  const module = checker.getSymbolAtLocation(source)
  if (module === undefined) continue
  const top = checker.getExportsOfModule(module)
  let names = 0
  let internal = 0
  const namespaces = []
  const listed = []
  for (const symbol of top) {
    if (isNamespace(symbol)) {
      const target = checker.getAliasedSymbol(symbol)
      const inner = checker.getExportsOfModule(target)
      const kept = inner.filter((s) => !isInternal(s))
      namespaces.push(symbol.name)
      names += kept.length
      internal += inner.length - kept.length
      for (const s of kept) listed.push(`${symbol.name}.${s.name}`)
    } else if (isInternal(symbol)) internal++
    else {
      names++
      listed.push(symbol.name)
    }
  }
  report.push({ entry, namespaces: namespaces.length, names, internal, ...(args.has("--names") ? { listed } : {}) })
}

if (args.has("--json")) console.log(JSON.stringify(report, null, 2))
else {
  for (const row of report)
    console.log(
      `${row.entry.padEnd(28)} ${String(row.namespaces).padStart(3)} namespaces  ${String(row.names).padStart(4)} names  (${row.internal} @internal)`,
    )
  if (args.has("--names")) for (const row of report) for (const name of row.listed) console.log(`${row.entry} ${name}`)
}
