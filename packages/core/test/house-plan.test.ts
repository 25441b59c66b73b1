/**
 * The house plan's checks (scripts/check-cycles.mjs over scripts/floors.mjs, and scripts/house-plan.mjs): an import
 * that reaches outside the process from a floor whose row does not list it fails, a type-only one does not, a floor
 * that lists a kind it no longer imports fails, and the floor table of docs/architecture.md is the generated one.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "@effect/vitest"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

const run = (script: string, ...args: ReadonlyArray<string>) =>
  new Promise<{ code: number; out: string }>((resolve) =>
    execFile(process.execPath, [path.join(repo, "scripts", script), ...args], { cwd: repo }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : ((error.code as number | undefined) ?? 1), out: stdout + stderr }),
    ),
  )

const made: Array<string> = []
afterEach(() => {
  for (const directory of made.splice(0)) fs.rmSync(directory, { recursive: true, force: true })
})

/** A src tree of the given files (path relative to src → text). */
const tree = (files: Record<string, string>): string => {
  const src = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-house-plan-"))
  made.push(src)
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(src, file)), { recursive: true })
    fs.writeFileSync(path.join(src, file), text)
  }
  return src
}

describe("check-cycles: what each floor reaches outside the process", () => {
  it("fails when a floor imports a kind its row does not list, naming the file, the module and the kind", async () => {
    const src = tree({
      "values/ok.ts": 'import * as path from "node:path"\nexport const a = path.sep\n',
      "shell/reads.ts": 'import * as fs from "node:fs"\nexport const b = fs.existsSync\n',
      "agent/types.ts": 'import type * as fs from "node:fs"\nexport type C = typeof fs\n',
    })
    const { code, out } = await run("check-cycles.mjs", src)
    expect(code).toBe(1)
    expect(out).toContain('operating system: shell/reads.ts imports "node:fs" (files)')
    expect(out).not.toContain("agent/types.ts")
    expect(out).toContain("1 operating-system finding(s)")
  })

  it("fails when a floor lists a kind none of its modules imports any more", async () => {
    const src = tree({ "serve/page.ts": "export const page = '<html></html>'\n" })
    const { code, out } = await run("check-cycles.mjs", src)
    expect(code).toBe(1)
    expect(out).toContain("serve/ no longer imports anything that reaches network")
  })

  it("passes a tree whose floors import what their rows list", async () => {
    const src = tree({
      "values/ok.ts": "export const a = 1\n",
      "serve/listen.ts": 'import { createServer } from "node:http"\nexport const s = createServer\n',
    })
    const { code, out } = await run("check-cycles.mjs", src)
    expect(out).toContain("0 operating-system finding(s)")
    expect(code).toBe(0)
  })
})

describe("house-plan", () => {
  it("the floor table of docs/architecture.md is the generated one, and names every public module", async () => {
    const { code, out } = await run("house-plan.mjs", "--check")
    expect(out).toContain("docs/architecture.md is current")
    expect(code).toBe(0)
    const page = fs.readFileSync(path.join(repo, "docs/architecture.md"), "utf8")
    const entries = [
      path.join(repo, "packages/core/src/index.ts"),
      ...fs
        .readdirSync(path.join(repo, "packages/core/src/entry"))
        .map((name) => path.join(repo, "packages/core/src/entry", name)),
    ]
    const names = entries.flatMap((file) =>
      [...fs.readFileSync(file, "utf8").matchAll(/^export \* as (\w+) from/gm)].map((match) => match[1]!),
    )
    expect(names.length).toBeGreaterThan(50)
    for (const name of names) expect(page, name).toContain(`\`${name}\``)
  })
})
