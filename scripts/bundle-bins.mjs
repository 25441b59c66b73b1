// Bundles the two bins, `toolgate` and `toolgate-mcp`, each into one ES module file next to the built JavaScript
// (packages/cli/dist/toolgate.bundle.js, packages/mcp/dist/toolgate-mcp.bundle.js). Runs after `tsc -b` (it reads
// dist/), as part of `build` and `prepare`.
//
// Why: Node 20 spends most of a bin's start-up resolving and linking the few thousand small modules of effect,
// @effect/cli and @effect/platform; one file starts several times faster (docs/performance.md has the figures).
// The libraries are never bundled: an application that embeds @toolgate/core shares its own copy of effect.
//
// What stays outside the bundle: packages that find files next to their own code at run time — better-sqlite3's
// native addon and web-tree-sitter's WebAssembly runtime. The bundle loads them through `@toolgate/core`'s own
// dependency tree (see packages/core/src/system/core-package.ts), because under pnpm's strict layout a bin's
// package cannot see its dependencies' dependencies.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/** Module bodies (CommonJS) that replace the kept-outside packages inside a bundle. */
const outside = {
  "better-sqlite3": [
    `const { createRequire } = require("node:module")`,
    `const core = createRequire(require.resolve("@toolgate/core/package.json"))`,
    `module.exports = createRequire(core.resolve("@effect/sql-sqlite-node"))("better-sqlite3")`,
  ].join("\n"),
  "@silvia-odwyer/photon-node": [
    `const { createRequire } = require("node:module")`,
    `module.exports = createRequire(require.resolve("@toolgate/core/package.json"))("@silvia-odwyer/photon-node")`,
  ].join("\n"),
  "web-tree-sitter": [
    `const { createRequire } = require("node:module")`,
    `module.exports = createRequire(require.resolve("@toolgate/core/package.json"))("web-tree-sitter")`,
  ].join("\n"),
}

/** @type {import("esbuild").Plugin} */
const keepOutside = {
  name: "keep-outside",
  setup(build) {
    const filter = new RegExp(`^(${Object.keys(outside).join("|")})$`)
    build.onResolve({ filter }, (args) => ({ path: args.path, namespace: "keep-outside" }))
    build.onLoad({ filter: /.*/, namespace: "keep-outside" }, (args) => ({
      contents: outside[args.path],
      loader: "js",
    }))
  },
}

const bins = [
  { entry: "packages/cli/dist/main.js", name: "toolgate", outdir: "packages/cli/bundle" },
  { entry: "packages/mcp/dist/main.js", name: "toolgate-mcp", outdir: "packages/mcp/bundle" },
]

/**
 * Bundles `entries` (name → file, relative to the repository) into `outdir`. With `source`, `@toolgate/*` imports
 * resolve through the `@toolgate/source` condition to the TypeScript sources: the test suites start their bins from
 * such a bundle (built once per run by the packages' vitest global setup), which starts in well under a second where
 * running the sources through tsx takes several.
 *
 * @param {{ readonly entries: Record<string, string>, readonly outdir: string, readonly source?: boolean }} options
 */
export const bundle = ({ entries, outdir, source = false }) => {
  // Chunk names carry content hashes: without a clean folder, every build would leave the previous chunks behind.
  fs.rmSync(path.join(repo, outdir), { recursive: true, force: true })
  return esbuild.build({
    entryPoints: Object.fromEntries(Object.entries(entries).map(([name, entry]) => [name, path.join(repo, entry)])),
    outdir: path.join(repo, outdir),
    // Commands load their modules on first use (dynamic imports): each becomes its own chunk, so `--help`
    // reads only what it needs.
    splitting: true,
    // ES module builds first: some packages' CommonJS "main" builds (UMD) load their parts with requires no bundler can follow.
    mainFields: ["module", "main"],
    ...(source ? { conditions: ["@toolgate/source"] } : {}),
    chunkNames: "[name]-[hash]",
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    // Lets the CommonJS inside the bundle call `require` (esbuild's ESM output has none of its own).
    banner: {
      js: `import { createRequire as __toolgateRequire } from "node:module";\nconst require = __toolgateRequire(import.meta.url);`,
    },
    plugins: [keepOutside],
    legalComments: "none",
    minifyWhitespace: !source,
    minifySyntax: !source,
    logLevel: "warning",
  })
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await Promise.all(bins.map(({ entry, name, outdir }) => bundle({ entries: { [name]: entry }, outdir })))
}
