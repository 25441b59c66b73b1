/**
 * The subpath entries of `@toolgate/core`: each one carries every module of its floor that the main entry exports
 * (the same module objects), `@toolgate/core/tool` settles a tool without loading SQLite, and the main entry loads
 * the sandbox, the egress proxy and the hosts only when they are used (their own entries carry them).
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { SOURCE_NODE_ARGS } from "../../../vitest.shared.js"
import * as Builtins from "../src/entry/builtins.js"
import * as Egress from "../src/entry/egress.js"
import * as Hosts from "../src/entry/hosts.js"
import * as Permission from "../src/entry/permission.js"
import * as SandboxEntry from "../src/entry/sandbox.js"
import * as Testing from "../src/entry/testing.js"
import * as ToolEntry from "../src/entry/tool.js"
import * as Main from "../src/index.js"

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/** `export * as Name from "./folder/…"` lines of src/index.ts, as [Name, folder]. */
const indexNamespaces = (): ReadonlyArray<readonly [string, string]> =>
  [
    ...fs.readFileSync(path.join(packageDir, "src/index.ts"), "utf8").matchAll(/export \* as (\w+) from "\.\/(\w+)\//g),
  ].map((match) => [match[1]!, match[2]!] as const)

const entryOfFolder: Record<string, Record<string, unknown>> = {
  tool: ToolEntry,
  builtin: Builtins,
  shell: Permission,
  agent: Permission,
  journal: Permission,
  permission: Permission,
  approvals: Permission,
}
const entryFile: Record<string, string> = {
  tool: "tool",
  builtin: "builtins",
  shell: "permission",
  agent: "permission",
  journal: "permission",
  permission: "permission",
  approvals: "permission",
}

describe("entries", () => {
  it("src/index.ts is read: it names modules of every floor", () => {
    const folders = new Set(indexNamespaces().map(([, folder]) => folder))
    for (const folder of Object.keys(entryOfFolder)) expect(folders).toContain(folder)
  })

  it("each floor's entry exports every module of that floor that the main entry exports", () => {
    const main = Main as Record<string, unknown>
    const missing = indexNamespaces()
      .filter(([name, folder]) => entryOfFolder[folder] !== undefined && entryOfFolder[folder]![name] !== main[name])
      .map(([name, folder]) => `${name} (${folder}/): add it to src/entry/${entryFile[folder]}.ts`)
    expect(missing).toEqual([])
  })

  it("the tool entry has the tool contract and LLM, and every subpath module is the main entry's own", () => {
    expect(Object.keys(ToolEntry)).toEqual(
      expect.arrayContaining(["ApplicationTools", "LLM", "Tool", "ToolOutputStore", "ToolRegistry", "Tools"]),
    )
    const main = Main as Record<string, unknown>
    for (const entry of [ToolEntry, Builtins, Permission] as ReadonlyArray<Record<string, unknown>>)
      for (const [name, module] of Object.entries(entry)) expect(module, name).toBe(main[name])
  })

  it("the testing entry's Core is Core plus layerTest; the production Core has no test harness", () => {
    expect(Testing.Core.layer).toBe(Main.Core.layer)
    expect(Testing.Core.layerLocation).toBe(Main.Core.layerLocation)
    expect(typeof Testing.Core.layerTest).toBe("function")
    expect("layerTest" in Main.Core).toBe(false)
    expect(Testing.ScriptedModel).toBe(Main.ScriptedModel)
  })

  it("the sandbox, the egress proxy and the hosts are their own entries, not the main entry's", () => {
    expect(Object.keys(SandboxEntry)).toEqual(["Sandbox"])
    expect(Object.keys(Egress)).toEqual(["EgressProxy"])
    expect(Object.keys(Hosts).sort()).toEqual(["ApprovalsDatabase", "SharedAsks"])
    for (const name of ["Sandbox", "EgressProxy", "ApprovalsDatabase", "SharedAsks"])
      expect(Main).not.toHaveProperty(name)
    // The bash leaf's port is the sandbox's own tag: a layer from the sandbox entry provides what BashTool reads.
    expect(SandboxEntry.Sandbox.Service.key).toBe("@toolgate/v2/Sandbox")
  })

  /** Runs test/fixtures/entry-loads.ts: what it settled, and the files of src/ the process loaded. */
  const loadsOf = (mode: "import" | "bash" | "bash-sandbox") =>
    new Promise<{ result?: string; loaded: ReadonlyArray<string> }>((resolve, reject) =>
      execFile(
        process.execPath,
        [...SOURCE_NODE_ARGS, path.join(packageDir, "test/fixtures/entry-loads.ts"), mode],
        { cwd: packageDir },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
      ),
    )
  const OPTIONAL = /^(world\/sandbox|world\/egress|hosts)\//

  it(
    "a fresh process that imports @toolgate/core loads nothing of the sandbox, the egress proxy or the hosts",
    { timeout: 120_000 },
    async () => {
      const run = await loadsOf("import")
      expect(run.loaded).toContain("index.ts")
      expect(run.loaded.filter((file) => OPTIONAL.test(file))).toEqual([])
    },
  )

  it(
    "Core.layer on SQLite settles a bash call with no sandbox configured and loads none of them either",
    { timeout: 120_000 },
    async () => {
      const run = await loadsOf("bash")
      expect(run.result).toContain("Command exited with code 0.")
      expect(run.loaded).toContain("builtin/bash-tool.ts")
      expect(run.loaded.filter((file) => OPTIONAL.test(file))).toEqual([])
    },
  )

  it(
    "the same probe sees the sandbox and the egress proxy load when a Location configures bubblewrap (the check can fail)",
    { timeout: 120_000 },
    async () => {
      const run = await loadsOf("bash-sandbox")
      expect(run.result).toContain("Command exited with code 0.")
      expect(run.loaded).toContain("world/sandbox/sandbox.ts")
      expect(run.loaded).toContain("world/egress/egress-proxy.ts")
      expect(run.loaded.filter((file) => file.startsWith("hosts/"))).toEqual([])
    },
  )

  const settleIn = (entry: "tool" | "main") =>
    new Promise<{ result: unknown; loaded: ReadonlyArray<string> }>((resolve, reject) =>
      execFile(
        process.execPath,
        [...SOURCE_NODE_ARGS, path.join(packageDir, "test/fixtures/tool-entry.ts"), entry],
        { cwd: packageDir },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
      ),
    )

  // The child processes load the sources through tsx: slow on a busy machine, hence the long timeouts.
  it(
    "a fresh process that imports @toolgate/core/tool and settles a tool never loads better-sqlite3",
    { timeout: 120_000 },
    async () => {
      const run = await settleIn("tool")
      expect(run.result).toEqual({ type: "text", value: "echo: hi" })
      expect(run.loaded).toEqual([])
    },
  )

  it(
    "the same probe sees better-sqlite3 when the main entry is imported (the check can fail)",
    { timeout: 120_000 },
    async () => {
      const run = await settleIn("main")
      expect(run.result).toEqual({ type: "text", value: "echo: hi" })
      expect(run.loaded.some((file) => file.includes(`${path.sep}better-sqlite3${path.sep}`))).toBe(true)
    },
  )
})
