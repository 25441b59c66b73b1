import { Wildcard } from "@toolgate/core"
import { describe, expect, it } from "vitest"
import { permissionPrompt, wrap } from "../src/describe.js"

const command =
  "for f in src/*.ts; do echo checking $f; npx tsc --noEmit $f || exit 1; done; rm -rf build && mkdir build && cp -r dist/* build/"

describe("permission prompt text", () => {
  it("shows a long bash command whole, wrapped, and what always saves where (a non-git directory)", () => {
    expect(command.length).toBeGreaterThan(100)
    const lines = permissionPrompt({
      id: "per_x",
      sessionID: "ses_x",
      action: "bash",
      resources: [command],
      save: [Wildcard.literal(command)],
      always: {
        action: "bash",
        entries: [{ pattern: Wildcard.literal(command), text: command, literal: true }],
        scope: { kind: "directory", projectID: "global", directory: "/tmp/scratch" },
      },
    })
    expect(lines[0]).toBe("  ? permission: bash")
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100)
    // the resource lines, label and indentation removed, give back the whole command
    const resource = lines.slice(
      1,
      lines.findIndex((line) => line.startsWith("    always")),
    )
    const shown = resource.map((line, i) => (i === 0 ? line.replace(/^ {4}resource: /, "") : line.slice(14)))
    expect(shown.join("")).toBe(command)
    expect(lines.join("\n")).not.toContain("…")
    expect(lines).toContain("    always: saves bash for the directory /tmp/scratch only (no git repository):")
    expect(lines.join("").replace(/\s+/g, " ")).toContain(JSON.stringify(command).replace(/\s+/g, " "))
  })

  it("names the project and marks patterns apart from literals", () => {
    const lines = permissionPrompt({
      id: "per_y",
      sessionID: "ses_y",
      action: "edit",
      resources: ["src/a.ts", "src/b.ts"],
      save: ["*"],
      always: {
        action: "edit",
        entries: [{ pattern: "*", text: "*", literal: false }],
        scope: { kind: "project", projectID: "abc123", directory: "/home/u/repo" },
      },
    })
    expect(lines).toEqual([
      "  ? permission: edit",
      "    resources (2):",
      "      - src/a.ts",
      "      - src/b.ts",
      "    always: saves edit for project abc123 (/home/u/repo, all its directories):",
      "      pattern: *",
    ])
  })

  it("says when always saves nothing", () => {
    expect(permissionPrompt({ id: "per_z", sessionID: "s", action: "question", resources: ["q"] })).toEqual([
      "  ? permission: question",
      "    resource: q",
      "    always: saves nothing (same as once)",
    ])
  })

  it("wrap keeps every character and the text's own line breaks", () => {
    expect(wrap("aaaa bbbb cccc", 10)).toEqual(["aaaa bbbb ", "cccc"])
    expect(wrap("x".repeat(25), 10)).toEqual(["x".repeat(10), "x".repeat(10), "x".repeat(5)])
    expect(wrap("one\ntwo", 10)).toEqual(["one", "two"])
  })
})
