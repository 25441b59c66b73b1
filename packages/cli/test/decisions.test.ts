import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import type { DecisionJournal } from "@toolgate/core"
import { parseSince } from "../src/decisions.js"
import { tempDir, toolgate } from "./support.js"

/** fixtures/journal-session.ts, bundled from the sources once per run (global-setup.ts). */
const fixture = fileURLToPath(new URL("../test-bundle/journal-session.js", import.meta.url))

/** Runs the scripted session until it prints its line, then kills it with SIGKILL; resolves with that line. */
const sessionKilledAfterAnswers = (
  data: string,
  directory: string,
): Promise<{ readonly sessionID: string; readonly savedID: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fixture, data, directory], {
      stdio: ["ignore", "pipe", "pipe"],
    })
    let stderr = ""
    let line: string | undefined
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    createInterface({ input: child.stdout }).once("line", (first) => {
      line = first
      // Right after the last answer returned: no clean shutdown, no final flush.
      child.kill("SIGKILL")
    })
    child.on("error", reject)
    child.on("exit", (code, signal) => {
      if (line !== undefined && signal === "SIGKILL")
        resolve(JSON.parse(line) as { sessionID: string; savedID: string })
      else reject(new Error(`the session exited with ${code ?? signal} before answering: ${stderr}`))
    })
  })

describe("toolgate decisions", () => {
  it("after a session killed with SIGKILL right after its last answer and a revoke, lists every evaluation with its provenance, ask, answer and the revoke", async () => {
    const home = tempDir()
    const data = tempDir()
    const directory = tempDir()
    fs.mkdirSync(path.join(directory, "notes"))
    const { sessionID, savedID } = await sessionKilledAfterAnswers(data, directory)
    const revoked = await toolgate(["permissions", "revoke", savedID, "--data", data], { home })
    expect(revoked.stderr).toBe("")
    expect(revoked.code).toBe(0)

    const run = await toolgate(["decisions", "--json", "--data", data], { home })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    const entries = JSON.parse(run.stdout) as ReadonlyArray<DecisionJournal.Entry>
    const mine = entries.filter((entry) => entry.sessionID === sessionID)
    expect(mine.length).toBe(entries.filter((entry) => entry.sessionID !== undefined).length)

    for (const [requestID, file, choice] of [
      ["per_journal_once", "a.txt", "once"],
      ["per_journal_always", "b.txt", "always:exact"],
      ["per_journal_reject", "c.txt", "reject"],
    ] as const) {
      const of = mine.filter((entry) => entry.resources.includes(file))
      const kinds = of.map((entry) => entry.kind)
      // Evaluated (by the configured `edit * ask`), asked, then answered.
      expect(kinds.slice(0, 3)).toEqual(["evaluated", "asked", "answered"])
      const evaluated = of.find((entry) => entry.kind === "evaluated")!
      expect(evaluated).toMatchObject({ requestID, action: "edit", resources: [file] })
      expect(evaluated.detail).toEqual({
        agent: "build",
        effect: "ask",
        decisions: [
          {
            resource: file,
            effect: "ask",
            rule: { action: "edit", resource: "*", effect: "ask" },
            origin: { type: "config", index: 1 },
          },
        ],
      })
      const asked = of.find((entry) => entry.kind === "asked")!
      expect(asked.requestID).toBe(requestID)
      expect(asked.kind === "asked" && asked.detail.digest).toMatch(/^[0-9a-f]{64}$/)
      const answered = of.find((entry) => entry.kind === "answered")!
      expect(answered).toMatchObject({ requestID, action: "edit", resources: [file] })
      expect(answered.detail).toMatchObject({ choice, channel: "http", by: "tester" })
      if (choice === "always:exact") expect(answered.kind === "answered" && answered.detail.saved.length).toBe(1)
    }

    // The allowed read before the asks: evaluated only, with the configured rule that allowed it.
    const read = mine.filter((entry) => entry.action === "read")
    expect(read.map((entry) => entry.kind)).toEqual(["evaluated"])
    expect(read[0]!.requestID).toBeUndefined()
    expect(read[0]!.detail).toEqual({
      agent: "build",
      effect: "allow",
      decisions: [
        {
          resource: "notes/read-me.txt",
          effect: "allow",
          rule: { action: "read", resource: "notes/*", effect: "allow" },
          origin: { type: "config", index: 0 },
        },
      ],
    })
    expect(mine.filter((entry) => entry.kind === "evaluated")).toHaveLength(4)

    // The revoke, through the CLI, of the approval the `always` saved.
    const revokes = entries.filter((entry) => entry.kind === "revoked")
    expect(revokes).toHaveLength(1)
    expect(revokes[0]).toMatchObject({ action: "edit", resources: ["b.txt"] })
    expect(revokes[0]!.sessionID).toBeUndefined()
    // (The Location is outside any repository: project `global`, whose approvals are filed under its directory.)
    expect(revokes[0]!.detail).toMatchObject({ savedID, directory: fs.realpathSync(directory), channel: "cli" })

    // The table and the filters read the same entries.
    const table = await toolgate(["decisions", "--data", data, "--session", sessionID, "--kind", "answered"], { home })
    expect(table.code).toBe(0)
    expect(table.stdout).toContain("always:exact via http by tester")
    expect(table.stdout.split("\n").filter((l) => l.includes("answered"))).toHaveLength(3)
    const provenance = await toolgate(["decisions", "--data", data, "--kind", "evaluated", "--kind", "revoked"], {
      home,
    })
    expect(provenance.code).toBe(0)
    expect(provenance.stdout.split("\n").filter((l) => l.includes("config#1"))).toHaveLength(3)
    expect(provenance.stdout).toContain("config#0")
    expect(provenance.stdout).toContain(`${savedID} via cli`)
    const none = await toolgate(["decisions", "--data", data, "--session", "ses_none"], { home })
    expect(none.stdout.trim()).toBe("No decisions recorded.")
  }, 120_000)

  it("refuses a --since that is not a time, an unknown --kind and a --limit below 1, naming the value", async () => {
    const home = tempDir()
    const data = tempDir()
    for (const [args, text] of [
      [["--since", "yesterday"], "--since yesterday is not a time"],
      [["--kind", "approved"], "--kind approved is not one of evaluated"],
      [["--limit", "0"], "--limit 0 must be a whole number of at least 1"],
    ] as const) {
      const run = await toolgate(["decisions", "--data", data, ...args], { home })
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(text)
    }
  }, 60_000)

  it("parseSince reads ages, ISO dates and epoch milliseconds", () => {
    const now = Date.parse("2026-12-02T05:00:00Z")
    expect(parseSince("2h", now)).toBe(now - 7_200_000)
    expect(parseSince("30s", now)).toBe(now - 30_000)
    expect(parseSince("7d", now)).toBe(now - 7 * 86_400_000)
    expect(parseSince("2026-12-01", now)).toBe(Date.parse("2026-12-01"))
    expect(parseSince("2026-12-02T04:00:00Z", now)).toBe(now - 3_600_000)
    expect(parseSince("1764651600000", now)).toBe(1764651600000)
    for (const bad of ["", "yesterday", "2h ago", "12", "2026-13-45"]) expect(parseSince(bad, now)).toBeUndefined()
  })
})
