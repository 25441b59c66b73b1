/**
 * Search engines: grep and glob over a generated tree of 50,000 small files (with a `.gitignore` inside a git
 * repository), timed through our ripgrep engine, our Node engine, and `rg` itself spawned directly with the same
 * arguments, all in one run. Targets: rg engine ≤ 1.2× rg; Node engine ≤ 3× rg.
 *
 * Run: npx tsx bench/search.ts
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { Search } from "@toolgate/core"

const FILES = 50_000
const ROUNDS = 5

const words = ["user", "session", "account", "order", "invoice", "payment", "profile", "cart", "search", "report"]
const kinds = ["service", "controller", "model", "view", "util", "store", "hook", "client"]

/** packages/<pkg>/src/<area>/<word>-<kind>.ts and friends; ~2% of files mention `fetchUser`. */
const generate = (root: string): number => {
  fs.mkdirSync(path.join(root, ".git/info"), { recursive: true })
  fs.writeFileSync(path.join(root, ".git/HEAD"), "ref: refs/heads/main\n")
  fs.writeFileSync(path.join(root, ".gitignore"), "node_modules/\ndist/\n*.log\ncoverage/\n")
  let written = 0
  let n = 0
  while (written < FILES) {
    const pkg = `pkg-${words[n % words.length]}-${Math.floor(n / 500)}`
    const area = `${kinds[Math.floor(n / 50) % kinds.length]}s`
    const dir = path.join(root, "packages", pkg, n % 7 === 0 ? "dist" : "src", area)
    fs.mkdirSync(dir, { recursive: true })
    for (let i = 0; i < 50 && written < FILES; i++, n++) {
      const word = words[(n * 7 + i) % words.length]!
      const kind = kinds[(n + i) % kinds.length]!
      const ext = i % 10 === 0 ? "md" : i % 5 === 0 ? "test.ts" : i % 3 === 0 ? "js" : "ts"
      const name = `${word}-${kind}-${i}.${ext}`
      const needle = n % 50 === 0 ? "  return fetchUser(id)\n" : ""
      const body =
        `import { ${word} } from "../${kind}"\n\n` +
        `/** ${word} ${kind} number ${n}. */\n` +
        `export function ${word}${kind}${n}(id: string) {\n` +
        needle +
        `  const value = ${word}.get(id) ?? ${n}\n  return { id, value, kind: "${kind}" }\n}\n`
      fs.writeFileSync(path.join(dir, name), body)
      written++
    }
  }
  return written
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const time = async (label: string, body: () => Promise<number>) => {
  await body() // warm-up (page cache, JIT)
  const samples: Array<number> = []
  let rows = 0
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now()
    rows = await body()
    samples.push(performance.now() - start)
  }
  const ms = median(samples)
  console.log(`  ${label.padEnd(12)} ${ms.toFixed(1).padStart(8)} ms  (${rows} rows)`)
  return ms
}

/** `rg` spawned directly; counts output lines. */
const raw = (cwd: string, args: ReadonlyArray<string>) => () =>
  new Promise<number>((resolve, reject) => {
    const child = spawn("rg", args as Array<string>, { cwd, stdio: ["ignore", "pipe", "ignore"] })
    let lines = 0
    child.stdout.on("data", (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++
    })
    child.on("error", reject)
    child.on("close", () => resolve(lines))
  })

const main = async () => {
  if (spawnSync("rg", ["--version"]).status !== 0) {
    console.log("rg is not on PATH: install ripgrep (apt-get install -y ripgrep) to run this bench")
    return
  }
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-search-")))
  try {
    const files = generate(root)
    console.log(`tree: ${files} files under ${root}`)
    const ripgrep = Search.make({ _tag: "ripgrep", rgPath: "rg" })
    const node = Search.make({ _tag: "node" })
    const limit = Number.MAX_SAFE_INTEGER
    const cases = [
      {
        name: "grep fetchUser",
        rg: raw(root, [...Search.grepArgs("fetchUser", undefined, undefined)]),
        engine: (search: Search.Interface) => () =>
          Effect.runPromise(Effect.map(search.grep({ cwd: root, pattern: "fetchUser", limit }), (rows) => rows.length)),
      },
      {
        name: "glob *.test.ts",
        rg: raw(root, [...Search.globArgs("*.test.ts")]),
        engine: (search: Search.Interface) => () =>
          Effect.runPromise(Effect.map(search.glob({ cwd: root, pattern: "*.test.ts", limit }), (rows) => rows.length)),
      },
    ]
    for (const { name, rg, engine } of cases) {
      console.log(name)
      const base = await time("rg", rg)
      const viaRg = await time("rg engine", engine(ripgrep))
      const viaNode = await time("node engine", engine(node))
      console.log(
        `  ratios: rg engine ${(viaRg / base).toFixed(2)}× rg (target ≤ 1.2), ` +
          `node engine ${(viaNode / base).toFixed(2)}× rg (target ≤ 3)`,
      )
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

await main()
