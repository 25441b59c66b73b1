#!/usr/bin/env node
/**
 * Installs toolgate the way a user does and uses it from outside the repository.
 *
 * 1. `pnpm pack` every package (after `tsc -b`), and check each tarball: dist + README + LICENSE only (no tests,
 *    no TypeScript sources but .d.ts), no `workspace:` range left in its package.json.
 * 2. A fresh consumer project in the system temp directory depends on the tarballs (plus the adapters' real peer
 *    libraries) and is installed with npm, then again with pnpm (which needs `allowBuilds` for better-sqlite3).
 * 3. After each install: plain-node ESM scripts (scripts/consumer/*.mjs) build a Location with Core.layer, settle
 *    read and glob, answer an ask, settle through @toolgate/core/tool without SQLite, drive each adapter with its
 *    peer library, start the installed bins; `tsc --noEmit` (strict, NodeNext) checks scripts/consumer/types.ts.
 *    After the npm install the README and docs snippets are type-checked and run there (scripts/check-snippets.mjs).
 *
 * Usage: node scripts/pack-check.mjs [--keep] [--no-pnpm] [--no-snippets]
 * Prints one line per check and exits 1 when any failed.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { checkSnippets } from "./check-snippets.mjs"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const args = new Set(process.argv.slice(2))
const PNPM = ["npx", "-y", "pnpm@12.21.0"]
const PACKAGES = ["core", "mcp", "cli", "ai-sdk", "effect-ai"]

const failures = []
const started = Date.now()
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)}s`

/** Runs a command; returns its result (never throws). Output is captured unless `inherit`. */
const run = (command, commandArgs, options = {}) => {
  const result = spawnSync(command, commandArgs, {
    cwd: options.cwd ?? repo,
    env: { ...process.env, ...options.env },
    encoding: "utf8",
    stdio: options.inherit ? "inherit" : "pipe",
    timeout: options.timeout ?? 600_000,
    maxBuffer: 64 * 1024 * 1024,
  })
  return { code: result.status ?? 1, output: `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ?? ""}` }
}

/** Records a check: prints `ok`/`FAIL`, with the output of a failed command. */
const check = (name, ok, detail = "") => {
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${ok ? "" : `\n${String(detail).trim().replace(/^/gm, "     ")}`}`)
  if (!ok) failures.push(name)
  return ok
}
const checkRun = (name, command, commandArgs, options) => {
  const result = run(command, commandArgs, options)
  return check(name, result.code === 0, result.output)
}

const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"))
const manifest = (pkg) => readJson(path.join(repo, "packages", pkg, "package.json"))

// --- 1. build and pack -------------------------------------------------------------------------------------------
const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-pack-")))
if (work.startsWith(repo + path.sep)) throw new Error(`the consumer must live outside the repository: ${work}`)
const tarballs = path.join(work, "tarballs")
fs.mkdirSync(tarballs)

// A type error fails the check, but tsc -b still writes dist, so the rest runs and reports as well.
checkRun("build (tsc -b)", "npx", ["tsc", "-b", "tsconfig.build.json", "packages/cli/tsconfig.build.json"])
checkRun("bundle the bins", "node", [path.join(repo, "scripts", "bundle-bins.mjs")])
if (!PACKAGES.every((pkg) => fs.existsSync(path.join(repo, "packages", pkg, "dist", "index.js")) || pkg === "cli"))
  process.exit(1)

const tarballOf = {}
for (const pkg of PACKAGES) {
  const json = manifest(pkg)
  const before = new Set(fs.readdirSync(tarballs))
  const packed = run(PNPM[0], [...PNPM.slice(1), "pack", "--pack-destination", tarballs], {
    cwd: path.join(repo, "packages", pkg),
  })
  const created = fs.readdirSync(tarballs).filter((file) => !before.has(file) && file.endsWith(".tgz"))
  if (!check(`pnpm pack ${json.name}`, packed.code === 0 && created.length === 1, packed.output)) continue
  const file = path.join(tarballs, created[0])
  tarballOf[json.name] = file

  const listing = run("tar", ["-tzf", file]).output.split("\n").filter(Boolean)
  const allowed = (entry) =>
    entry === "package/package.json" ||
    entry === "package/README.md" ||
    entry === "package/LICENSE" ||
    entry === "package/CHANGELOG.md" ||
    (entry.startsWith("package/dist/") && /\.(js|d\.ts|js\.map)$/.test(entry)) ||
    entry.startsWith("package/bin/") ||
    // The bundled bins (scripts/bundle-bins.mjs).
    ((pkg === "cli" || pkg === "mcp") && entry.startsWith("package/bundle/") && entry.endsWith(".js")) ||
    // The CLI's demo copies this sample project (data, not library source) into a temp directory.
    (pkg === "cli" && entry.startsWith("package/demo/"))
  const unexpected = listing.filter((entry) => !allowed(entry))
  const missing = ["package/package.json", "package/README.md", "package/LICENSE"].filter((e) => !listing.includes(e))
  // The CLI is a program with no exports: it ships no declarations.
  const declarations = pkg === "cli" || listing.some((entry) => entry.endsWith(".d.ts"))
  check(
    `${json.name} tarball holds dist, README and LICENSE only`,
    unexpected.length === 0 && missing.length === 0 && declarations,
    `unexpected: ${unexpected.join(", ") || "none"}; missing: ${missing.join(", ") || "none"}; .d.ts: ${declarations}`,
  )
  const packedJson = JSON.parse(run("tar", ["-xzOf", file, "package/package.json"]).output)
  const ranges = { ...packedJson.dependencies, ...packedJson.peerDependencies, ...packedJson.optionalDependencies }
  const workspaceRanges = Object.entries(ranges).filter(([, range]) => String(range).startsWith("workspace:"))
  const internal = Object.entries(ranges).filter(([name]) => name.startsWith("@toolgate/"))
  check(
    `${json.name} package.json has real version ranges`,
    workspaceRanges.length === 0 && internal.every(([, range]) => /^\^\d+\.\d+\.\d+/.test(range)),
    JSON.stringify(ranges),
  )
}
if (Object.keys(tarballOf).length !== PACKAGES.length) {
  console.log(`pack-check: ${failures.length} failed (${elapsed()})`)
  process.exit(1)
}

// --- 2. the consumer project -------------------------------------------------------------------------------------
const consumer = path.join(work, "consumer")
fs.mkdirSync(consumer)
const core = manifest("core")
const aiSdk = manifest("ai-sdk")
const effectAi = manifest("effect-ai")
const mcp = manifest("mcp")
const root = readJson(path.join(repo, "package.json"))
const fileSpec = (name) => `file:${path.relative(consumer, tarballOf[name])}`
const toolgate = Object.fromEntries(Object.keys(tarballOf).map((name) => [name, fileSpec(name)]))
fs.writeFileSync(
  path.join(consumer, "package.json"),
  JSON.stringify(
    {
      name: "toolgate-consumer",
      private: true,
      type: "module",
      dependencies: {
        ...toolgate,
        "@effect/ai": effectAi.peerDependencies["@effect/ai"],
        // An embedder serving approvals with no Location brings its own HttpClient (docs/approval-server.md).
        "@effect/platform-node": core.dependencies["@effect/platform-node"],
        "@modelcontextprotocol/sdk": mcp.dependencies["@modelcontextprotocol/sdk"],
        ai: aiSdk.peerDependencies.ai,
        effect: core.dependencies.effect,
        zod: aiSdk.devDependencies.zod,
      },
      devDependencies: {
        "@effect/vitest": root.devDependencies["@effect/vitest"],
        "@types/node": root.devDependencies["@types/node"],
        tsx: root.devDependencies.tsx,
        typescript: root.devDependencies.typescript,
        vitest: root.devDependencies.vitest,
      },
      // The adapters depend on @toolgate/core by range; the range must resolve to the tarball, not a registry.
      overrides: { "@toolgate/core": toolgate["@toolgate/core"], "@toolgate/mcp": toolgate["@toolgate/mcp"] },
    },
    null,
    2,
  ),
)
// The repository's .npmrc (node-gyp headers) applies to the consumer's build of better-sqlite3 too.
if (fs.existsSync(path.join(repo, ".npmrc"))) fs.copyFileSync(path.join(repo, ".npmrc"), path.join(consumer, ".npmrc"))
// A consumer's strict NodeNext setup. tsconfig.lib.json checks the declarations too (skipLibCheck off, DOM lib
// for the AI SDK's fetch types); only findings in @toolgate's own .d.ts or in the consumer's files count there,
// since other libraries' declarations are not ours to fix.
const compilerOptions = {
  target: "ES2022",
  lib: ["ES2022"],
  module: "NodeNext",
  moduleResolution: "NodeNext",
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: true,
  noEmit: true,
  types: ["node"],
}
fs.writeFileSync(
  path.join(consumer, "tsconfig.json"),
  JSON.stringify({ compilerOptions, include: ["types.ts", "snippets/**/*.ts"] }, null, 2),
)
fs.writeFileSync(
  path.join(consumer, "tsconfig.lib.json"),
  JSON.stringify(
    { compilerOptions: { ...compilerOptions, skipLibCheck: false, lib: ["ES2022", "DOM"] }, include: ["types.ts"] },
    null,
    2,
  ),
)
for (const file of fs.readdirSync(path.join(repo, "scripts", "consumer")))
  fs.copyFileSync(path.join(repo, "scripts", "consumer", file), path.join(consumer, file))

// --- 3. checks after an install -----------------------------------------------------------------------------------
const env = { XDG_DATA_HOME: path.join(work, "xdg-data"), XDG_CONFIG_HOME: path.join(work, "xdg-config") }
const useIt = (client) => {
  for (const script of ["core.mjs", "tool-only.mjs", "ai-sdk.mjs", "effect-ai.mjs", "mcp.mjs"])
    checkRun(`[${client}] node ${script}`, "node", [script, ...(script === "tool-only.mjs" ? ["--control"] : [])], {
      cwd: consumer,
      env,
      timeout: 120_000,
    })
  const help = run(path.join(consumer, "node_modules", ".bin", "toolgate"), ["--help"], { cwd: consumer, env })
  check(`[${client}] toolgate --help`, help.code === 0 && /demo/.test(help.output), help.output)
  // The whole scripted session from the bundled bin: SQLite's native addon, the bash grammar's WebAssembly and the
  // sample files are all found from the installed packages.
  const demo = run(path.join(consumer, "node_modules", ".bin", "toolgate"), ["demo", "--yes"], {
    cwd: consumer,
    env,
    timeout: 120_000,
  })
  check(`[${client}] toolgate demo --yes`, demo.code === 0 && /saved approvals/.test(demo.output), demo.output)
  const tsc = path.join(consumer, "node_modules", ".bin", "tsc")
  checkRun(`[${client}] tsc --noEmit (strict, NodeNext)`, tsc, ["-p", "tsconfig.json", "--pretty", "false"], {
    cwd: consumer,
  })
  const lib = run(tsc, ["-p", "tsconfig.lib.json", "--pretty", "false"], { cwd: consumer })
  const ours = lib.output.split("\n").filter((line) => /^(node_modules\/@toolgate\/|types\.ts)/.test(line))
  check(`[${client}] @toolgate declarations check with skipLibCheck off`, ours.length === 0, ours.join("\n"))
}

let install = Date.now()
const npm = run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: consumer, timeout: 900_000 })
if (check(`npm install of the tarballs (${((Date.now() - install) / 1000).toFixed(0)}s)`, npm.code === 0, npm.output)) {
  useIt("npm")
  if (!args.has("--no-snippets")) {
    const snippetFailures = checkSnippets({ repo, project: consumer, env })
    check("README and docs snippets type-check and run", snippetFailures === 0, `${snippetFailures} snippet(s) failed`)
  }
}

if (!args.has("--no-pnpm")) {
  fs.rmSync(path.join(consumer, "node_modules"), { recursive: true, force: true })
  fs.rmSync(path.join(consumer, "package-lock.json"), { force: true })
  // What a pnpm consumer adds (README "Install in your project"): better-sqlite3 must build its addon; pnpm 11+
  // fails the install on any other unlisted build script, so toolgate's other two are listed as not needed. The
  // last two belong to this project's own dev tools (tsx, vitest).
  fs.writeFileSync(
    path.join(consumer, "pnpm-workspace.yaml"),
    [
      "allowBuilds:",
      "  better-sqlite3: true",
      "  tree-sitter-bash: false",
      "  msgpackr-extract: false",
      "  esbuild: true",
      '  "@parcel/watcher": false',
      "overrides:",
      `  "@toolgate/core": "${toolgate["@toolgate/core"]}"`,
      `  "@toolgate/mcp": "${toolgate["@toolgate/mcp"]}"`,
      "",
    ].join("\n"),
  )
  install = Date.now()
  const pnpm = run(PNPM[0], [...PNPM.slice(1), "install", "--no-frozen-lockfile"], { cwd: consumer, timeout: 900_000 })
  if (
    check(`pnpm install of the tarballs (${((Date.now() - install) / 1000).toFixed(0)}s)`, pnpm.code === 0, pnpm.output)
  )
    useIt("pnpm")
}

if (args.has("--keep")) console.log(`consumer kept at ${consumer}`)
else fs.rmSync(work, { recursive: true, force: true })
console.log(`pack-check: ${failures.length === 0 ? "all passed" : `${failures.length} failed`} (${elapsed()})`)
process.exit(failures.length === 0 ? 0 : 1)
