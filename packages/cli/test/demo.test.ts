import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { section, tempDir, toolgate } from "./support.js"

const TOOLS = ["read", "glob", "grep", "todowrite", "edit", "apply_patch", "write", "bash", "question"]

// Each test has its own directories, so they run side by side (most of a run is process start-up).
describe.concurrent("toolgate demo", () => {
  it("runs the scripted session end to end with --yes", async () => {
    const home = tempDir()
    const dir = path.join(tempDir(), "project")
    const data = path.join(home, "demo-data")
    const run = await toolgate(["demo", "--yes", "--dir", dir, "--data", data], { home })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)

    // Every tool appears in the calls table, completed, with an outcome.
    const calls = section(run.stdout, "Calls").slice(2)
    expect(calls).toHaveLength(10)
    for (const tool of TOOLS) {
      const row = calls.find((line) => line.split(/\s{2,}/)[2] === tool)
      expect(row, `row for ${tool}`).toBeDefined()
      expect(row).toMatch(/ completed  \S/)
    }
    expect(run.stdout).toContain("Session finished after 10 turns: 10 tool calls, 10 completed, 0 failed.")

    // Every ask was answered once by --yes: three edits (edit, apply_patch, write) and the bash command.
    const decisions = section(run.stdout, "Permission decisions").slice(2)
    expect(decisions.map((line) => line.trim().split(/\s{2,}/)[0])).toEqual(["edit", "edit", "edit", "bash"])
    expect(decisions.every((line) => /\s+once\s+--yes$/.test(line))).toBe(true)
    expect(decisions[1]).toContain("src/format.ts, src/currency.ts")

    // The bash output was bounded into a managed file under --data that holds the full output.
    const truncated = section(run.stdout, "Truncated outputs").slice(2)
    expect(truncated).toHaveLength(1)
    const saved = truncated[0]!.trim().split(/\s{2,}/)[2]!
    expect(saved.startsWith(path.join(data, "tool-output"))).toBe(true)
    const full = fs.readFileSync(saved, "utf8")
    expect(full.length).toBeGreaterThan(50 * 1024)
    expect(full).toContain("check finished: 3000 modules ok")
    expect(run.stdout).toMatch(/… running bash .* \ds/)

    // The edits are on disk: the fuzzy edit kept the file's indentation, the patch and the write applied.
    const inventory = fs.readFileSync(path.join(dir, "src/inventory.ts"), "utf8")
    expect(inventory).toContain(
      "        if (quantity < 0) throw new Error(`Cannot restock a negative quantity: ${quantity}`)\n        const book",
    )
    expect(fs.readFileSync(path.join(dir, "src/format.ts"), "utf8")).toContain("currency.format(cents / 100)")
    expect(fs.existsSync(path.join(dir, "src/currency.ts"))).toBe(true)
    expect(fs.readFileSync(path.join(dir, "CHANGELOG.md"), "utf8")).toContain("rejects negative quantities")
    expect(fs.existsSync(path.join(data, "toolgate.db"))).toBe(true)
  })

  it("drives the prompts from stdin: once, always, reject with a message; saved approvals can be listed and revoked", async () => {
    const home = tempDir()
    const dir = path.join(tempDir(), "project")
    const data = path.join(home, "prompt-data")
    // edit: once; apply_patch: always (saves edit *, so the write is not asked); bash: reject with feedback;
    // question: option 2.
    const input = ["once", "always", "reject too slow for a demo, skip the check", "2", ""].join("\n")
    const run = await toolgate(["demo", "--dir", dir, "--data", data], { home, input })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)

    const decisions = section(run.stdout, "Permission decisions")
      .slice(2)
      .map((line) => line.trim().split(/\s{2,}/))
    expect(decisions).toEqual([
      ["edit", "src/inventory.ts", "once", "stdin"],
      ["edit", "src/format.ts, src/currency.ts", "always", "stdin"],
      // The bash ask lists the command's asking segments (docs/shell.md), not the whole string; a test and an
      // arithmetic expansion over a variable the gate cannot know are unresolved, so they ask first.
      [
        "bash",
        expect.stringMatching(/^unresolved:\[ \$i -lt 24 \], unresolved:\$\(\(i\+1\)\)/),
        "reject: too slow for a demo, skip the check",
        "stdin",
      ],
    ])
    // The rejection feedback is what the model sees as the bash call's error; the session goes on.
    expect(run.stdout).toMatch(
      /\n {2}✗ bash rejected \(\d+\.\ds\)\n {4}│ The user rejected permission to use this specific tool call with the following feedback: too slow for a demo, skip the check\n/,
    )
    const calls = section(run.stdout, "Calls")
      .slice(2)
      .map((line) => line.trim().split(/\s{2,}/))
    expect(calls.map((row) => [row[1], row[3]])).toEqual([
      ["read", "completed"],
      ["glob", "completed"],
      ["grep", "completed"],
      ["todowrite", "completed"],
      ["edit", "completed"],
      ["apply_patch", "completed"],
      ["write", "completed"],
      ["bash", "rejected"],
      ["question", "completed"],
      ["todowrite", "completed"],
    ])
    expect(run.stdout).toContain('"The check passed. Should the next release be 0.4.0?"="Not yet"')
    expect(section(run.stdout, "Truncated outputs")).toEqual(["  (none)"])
    expect(fs.existsSync(path.join(dir, "CHANGELOG.md"))).toBe(true)

    // The `always` reply saved one approval, for the demo's (non-git) directory only.
    const listed = await toolgate(["permissions", "list", "--data", data], { home })
    expect(listed.code).toBe(0)
    const rows = listed.stdout
      .trim()
      .split("\n")
      .slice(2)
      .map((line) => line.trim().split(/\s{2,}/))
    // Each row says when it was saved, by whom, through which channel, and until when (a plain always: never).
    expect(rows).toEqual([
      [
        expect.stringMatching(/^psv_/),
        "global",
        dir,
        "edit",
        "*",
        expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        os.userInfo().username,
        "cli",
        "never",
      ],
    ])
    const other = await toolgate(["permissions", "list", "--project", "elsewhere", "--data", data], { home })
    expect(other.stdout.trim()).toBe("No saved approvals for project elsewhere.")

    const id = rows[0]![0]!
    const revoked = await toolgate(["permissions", "revoke", "--data", data, id], { home })
    expect(revoked.code).toBe(0)
    expect(revoked.stdout).toContain(`Revoked ${id}: edit *`)
    const after = await toolgate(["permissions", "list", "--data", data], { home })
    expect(after.stdout.trim()).toBe("No saved approvals.")
    const again = await toolgate(["permissions", "revoke", "--data", data, id], { home })
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`toolgate: No saved approval with id ${id}`)
  })

  it("stops the session when a permission is rejected without a message: exit 3, the edit labelled rejected", async () => {
    const home = tempDir()
    const dir = path.join(tempDir(), "project")
    const run = await toolgate(["demo", "--dir", dir], { home, input: "reject\n" })
    expect(run.code).toBe(3)
    expect(run.stderr).toBe("toolgate: the demo session was stopped: the user rejected edit on src/inventory.ts\n")
    expect(run.stdout).toContain(
      "Session stopped by the user after 4 turns: 5 tool calls, 4 completed, 0 failed, 1 rejected.",
    )
    expect(run.stdout).toMatch(/\n {2}✗ edit rejected \(\d+\.\ds\)\n/)
    expect(
      section(run.stdout, "Calls")
        .slice(2)
        .at(-1)
        ?.trim()
        .split(/\s{2,}/)
        .slice(1, 4),
    ).toEqual(["edit", "src/inventory.ts", "rejected"])
    // The default data directory comes from XDG_DATA_HOME.
    expect(fs.existsSync(path.join(home, "data", "toolgate", "toolgate.db"))).toBe(true)
    expect(fs.readFileSync(path.join(dir, "src/inventory.ts"), "utf8")).not.toContain("negative quantity")
  })
})

describe.concurrent("toolgate usage errors", () => {
  it("--version prints the package version", async () => {
    const run = await toolgate(["--version"], { home: tempDir() })
    const manifest = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string
    }
    expect(run.code).toBe(0)
    expect(run.stdout.trim()).toBe(manifest.version)
  })

  it("exits 2 on an unknown flag or command", async () => {
    const home = tempDir()
    const [flag, command] = await Promise.all([
      toolgate(["demo", "--bogus"], { home }),
      toolgate(["permissions", "grant"], { home }),
    ])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain("--bogus")
    expect(command.code).toBe(2)
  })

  it("exits 1 with a clear message for a bad directory", async () => {
    const home = tempDir()
    const file = path.join(home, "not-a-dir")
    fs.writeFileSync(file, "x")
    const busy = tempDir()
    fs.writeFileSync(path.join(busy, "keep.txt"), "mine")
    const missingParent = path.join(home, "no", "such", "place")
    const [notDirectory, notEmpty, missing, data] = await Promise.all([
      toolgate(["demo", "--yes", "--dir", file], { home }),
      toolgate(["demo", "--yes", "--dir", busy], { home }),
      toolgate(["demo", "--yes", "--dir", missingParent], { home }),
      toolgate(["permissions", "list", "--data", file], { home }),
    ])
    expect(notDirectory.code).toBe(1)
    expect(notDirectory.stderr.trim()).toBe(`toolgate: --dir ${file} is not a directory`)
    expect(notEmpty.code).toBe(1)
    expect(notEmpty.stderr).toContain(`toolgate: --dir ${busy} is not empty`)
    expect(fs.readdirSync(busy)).toEqual(["keep.txt"])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain(`the parent directory ${path.dirname(missingParent)} does not exist`)
    expect(data.code).toBe(1)
    expect(data.stderr).toContain(`--data ${file} is not a directory`)
  })
})
