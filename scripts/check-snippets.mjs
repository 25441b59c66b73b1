#!/usr/bin/env node
/**
 * Every TypeScript snippet in README.md, docs/**\/*.md and packages/*\/README.md, checked as a user pastes it.
 *
 * Each ```ts (or ```typescript) block becomes a file in `<project>/snippets/`, where <project> is a consumer
 * project with the packed packages installed (scripts/pack-check.mjs builds one and calls this). All snippets are
 * type-checked together with the project's tsconfig (strict, NodeNext); then each is run: with vitest when it
 * imports `@effect/vitest` or `vitest`, otherwise with `node --import tsx`, in a fresh temporary directory.
 *
 * Fence words after the language choose less: ```ts no-run   — type-checked only (for a fragment that needs a
 * server, a key or user input); there is no way to skip the type-check.
 *
 * Usage: node scripts/check-snippets.mjs --project <consumer dir> [--list]
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

/** The markdown files whose snippets are checked, relative to the repository. */
export const markdownFiles = (repo) => {
  const files = ["README.md"]
  const walk = (directory) => {
    if (!fs.existsSync(path.join(repo, directory))) return
    for (const entry of fs.readdirSync(path.join(repo, directory), { withFileTypes: true })) {
      const relative = path.join(directory, entry.name)
      if (entry.isDirectory()) walk(relative)
      else if (entry.name.endsWith(".md")) files.push(relative)
    }
  }
  walk("docs")
  for (const pkg of fs.readdirSync(path.join(repo, "packages")).sort())
    if (fs.existsSync(path.join(repo, "packages", pkg, "README.md")))
      files.push(path.join("packages", pkg, "README.md"))
  return files
}

/** The ```ts blocks of one markdown text: { line (1-based, of the first code line), code, words }. */
export const extract = (text) => {
  const snippets = []
  const lines = text.split("\n")
  for (let index = 0; index < lines.length; index++) {
    const open = /^(\s*)(```+|~~~+)\s*(ts|typescript)\b(.*)$/.exec(lines[index])
    if (open === null) continue
    const [, indent, fence, , rest] = open
    const body = []
    let end = index + 1
    while (end < lines.length && !lines[end].trimStart().startsWith(fence)) body.push(lines[end++].slice(indent.length))
    snippets.push({ line: index + 2, code: body.join("\n") + "\n", words: rest.trim().split(/\s+/).filter(Boolean) })
    index = end
  }
  return snippets
}

const isTest = (code) => /from\s+["'](@effect\/vitest|vitest)["']/.test(code)

/** Type-checks and runs every snippet in `project`; returns the number of failed snippets. */
export const checkSnippets = ({ repo, project, env = {} }) => {
  const directory = path.join(project, "snippets")
  fs.rmSync(directory, { recursive: true, force: true })
  fs.mkdirSync(directory, { recursive: true })
  const all = []
  for (const file of markdownFiles(repo)) {
    const snippets = extract(fs.readFileSync(path.join(repo, file), "utf8"))
    snippets.forEach((snippet, index) => {
      const base = `${file.replace(/[\\/.]/g, "_")}_${index + 1}`
      const name = isTest(snippet.code) ? `${base}.test.ts` : `${base}.ts`
      // `export {}` makes each snippet a module, so top-level names never collide between snippets.
      fs.writeFileSync(path.join(directory, name), `${snippet.code}export {}\n`)
      all.push({ ...snippet, source: `${file}:${snippet.line}`, file: path.join(directory, name) })
    })
  }
  let failed = 0
  const bin = (name) => path.join(project, "node_modules", ".bin", name)

  // One type-check for all of them; errors are mapped back to the markdown line.
  const tsc = spawnSync(bin("tsc"), ["-p", project, "--pretty", "false"], { cwd: project, encoding: "utf8" })
  const errors = `${tsc.stdout}${tsc.stderr}`.split("\n").filter((line) => line.includes("snippets/"))
  for (const snippet of all) {
    const own = errors.filter((line) => line.startsWith(path.relative(project, snippet.file)))
    const mapped = own.map((line) =>
      line.replace(
        /^[^(]+\((\d+),(\d+)\)/,
        (_, row, column) => `${snippet.source.split(":")[0]}:${snippet.line + Number(row) - 1}:${column}`,
      ),
    )
    if (mapped.length > 0) {
      failed++
      console.log(`FAIL snippet ${snippet.source} does not type-check\n${mapped.map((l) => `     ${l}`).join("\n")}`)
    }
  }
  if (tsc.status !== 0 && errors.length === 0) {
    failed++
    console.log(`FAIL snippet type-check\n${tsc.stdout}${tsc.stderr}`)
  }

  const tsx = pathToFileURL(path.join(project, "node_modules", "tsx", "dist", "esm", "index.mjs")).href
  for (const snippet of all) {
    if (snippet.words.includes("no-run")) {
      console.log(`ok   snippet ${snippet.source} (type-checked; not run)`)
      continue
    }
    const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-snippet-")))
    fs.writeFileSync(path.join(cwd, "package.json"), "{}\n")
    fs.writeFileSync(path.join(cwd, "notes.ts"), "export const notes = 1\n")
    const runEnv = { ...process.env, ...env, NO_COLOR: "1" }
    const result = isTest(snippet.code)
      ? spawnSync(bin("vitest"), ["run", "--root", project, path.relative(project, snippet.file)], {
          cwd: project,
          env: runEnv,
          encoding: "utf8",
          timeout: 120_000,
        })
      : spawnSync(process.execPath, ["--import", tsx, snippet.file], {
          cwd,
          env: runEnv,
          encoding: "utf8",
          timeout: 120_000,
        })
    fs.rmSync(cwd, { recursive: true, force: true })
    if (result.status === 0) console.log(`ok   snippet ${snippet.source} (${isTest(snippet.code) ? "vitest" : "ran"})`)
    else {
      failed++
      const output = `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ?? ""}`.trim().split("\n").slice(-25)
      console.log(
        `FAIL snippet ${snippet.source} exited ${result.status}\n${output.map((l) => `     ${l}`).join("\n")}`,
      )
    }
  }
  return failed
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
  const argv = process.argv.slice(2)
  if (argv.includes("--list")) {
    for (const file of markdownFiles(repo))
      for (const snippet of extract(fs.readFileSync(path.join(repo, file), "utf8")))
        console.log(`${file}:${snippet.line}${snippet.words.length ? ` [${snippet.words.join(" ")}]` : ""}`)
    process.exit(0)
  }
  const at = argv.indexOf("--project")
  if (at === -1 || argv[at + 1] === undefined) {
    console.error("usage: node scripts/check-snippets.mjs --project <consumer dir>   (pack-check.mjs --keep makes one)")
    process.exit(2)
  }
  const failed = checkSnippets({ repo, project: path.resolve(argv[at + 1]) })
  console.log(`snippets: ${failed} failed`)
  process.exit(failed === 0 ? 0 : 1)
}
