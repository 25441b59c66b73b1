/**
 * The MCP protocol surface beyond listing and calling: titles, annotations and output schemas; progress during a
 * long command and during a pending ask (so `resetTimeoutOnProgress` clients do not time out); questions answered
 * through elicitation; `list_changed` after a configuration edit; clean startup errors.
 */
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import type { CallToolResult, ElicitRequest, ElicitResult, Progress } from "@modelcontextprotocol/sdk/types.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { BuiltInTools } from "@toolgate/core"
import { connect, packageDir, serverArgs, tempDir, text } from "./support/client.js"

describe("McpServer protocol", () => {
  it("lists every built-in with a title, behaviour annotations, and an output schema for object outputs", async () => {
    const { client } = await connect()
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual([...BuiltInTools.names])
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTypeOf("string")
      expect(tool.annotations?.readOnlyHint, tool.name).toBeTypeOf("boolean")
      expect(tool.annotations?.openWorldHint, tool.name).toBeTypeOf("boolean")
      if (tool.outputSchema !== undefined) expect(tool.outputSchema.type, tool.name).toBe("object")
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    expect(byName.get("read")?.annotations).toMatchObject({ readOnlyHint: true })
    expect(byName.get("glob")?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false })
    expect(byName.get("bash")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true })
    expect(byName.get("webfetch")?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true })
    expect(byName.get("write")?.title).toBe("Write file")
    // A tool whose structured output is an object advertises it, and its results carry matching structuredContent.
    const bash = byName.get("bash")!
    expect(bash.outputSchema?.properties).toHaveProperty("truncated")
    const result = (await client.callTool({ name: "bash", arguments: { command: "echo hi" } })) as CallToolResult
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toMatchObject({ truncated: false, exit: 0 })
  })

  it("reports progress during a 3 s command to a client whose 2 s timeout resets on progress", async () => {
    const { client } = await connect()
    const updates: Array<Progress> = []
    const result = (await client.request(
      { method: "tools/call", params: { name: "bash", arguments: { command: "sleep 3; echo finished" } } },
      CallToolResultSchema,
      { timeout: 2000, resetTimeoutOnProgress: true, onprogress: (progress) => void updates.push(progress) },
    )) as CallToolResult
    expect(result.isError).toBeFalsy()
    expect(text(result)).toContain("finished")
    expect(updates.length).toBeGreaterThanOrEqual(3)
    const values = updates.map((update) => update.progress)
    expect(values).toEqual([...values].sort((a, b) => a - b))
    expect(new Set(values).size).toBe(values.length)
    expect(updates.some((update) => /running/.test(update.message ?? ""))).toBe(true)
  })

  it("keeps reporting while a permission ask waits 3 s for a person, so the 2 s timeout does not fire", async () => {
    const prompts: Array<string> = []
    const { client, directory } = await connect({
      config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
      elicit: async (request) => {
        prompts.push(request.message)
        await new Promise((resolve) => setTimeout(resolve, 3000))
        return { action: "accept", content: { decision: "once" } }
      },
    })
    const updates: Array<Progress> = []
    const result = (await client.request(
      { method: "tools/call", params: { name: "write", arguments: { path: "slow.txt", content: "ok" } } },
      CallToolResultSchema,
      { timeout: 2000, resetTimeoutOnProgress: true, onprogress: (progress) => void updates.push(progress) },
    )) as CallToolResult
    expect(result.isError).toBeFalsy()
    expect(fs.readFileSync(path.join(directory, "slow.txt"), "utf8")).toBe("ok")
    expect(prompts).toHaveLength(1)
    expect(updates.some((update) => update.message === "waiting for permission: edit")).toBe(true)
  })

  it("without a progress token nothing resets the client's timeout: a long ask times the client out as it asked", async () => {
    const { client } = await connect({
      config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
      elicit: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1500))
        return { action: "decline" }
      },
    })
    await expect(
      client.request(
        { method: "tools/call", params: { name: "write", arguments: { path: "x.txt", content: "x" } } },
        CallToolResultSchema,
        { timeout: 700 },
      ),
    ).rejects.toThrow(/timed out/i)
  })

  it("answers the model's questions through elicitation: single and multiple choice, and a typed answer", async () => {
    const forms: Array<ElicitRequest["params"]> = []
    const { call } = await connect({
      elicit: (request) => {
        forms.push(request)
        return { action: "accept", content: { q1: "Blue", q2: ["Cats", "Dogs"], q2_other: "Fish" } }
      },
    })
    const result = await call("question", {
      questions: [
        {
          question: "Which colour?",
          header: "Colour",
          options: [
            { label: "Red", description: "warm" },
            { label: "Blue", description: "cool" },
          ],
        },
        {
          question: "Which pets?",
          header: "Pets",
          multiple: true,
          options: [
            { label: "Cats", description: "" },
            { label: "Dogs", description: "" },
          ],
        },
      ],
    })
    expect(result.isError).toBeFalsy()
    expect(text(result)).toContain("Blue")
    expect(text(result)).toContain("Cats, Dogs, Fish")
    const form = forms[0]! as { requestedSchema: { properties: Record<string, Record<string, unknown>> } }
    expect(form.requestedSchema.properties["q1"]).toMatchObject({
      type: "string",
      title: "Colour",
      oneOf: [
        { const: "Red", title: "Red — warm" },
        { const: "Blue", title: "Blue — cool" },
      ],
    })
    expect(form.requestedSchema.properties["q2"]).toMatchObject({
      type: "array",
      items: { anyOf: [{ const: "Cats" }, { const: "Dogs" }] },
    })
  })

  it("a declined question form dismisses the question (the call ends as interrupted)", async () => {
    const { call } = await connect({ elicit: (): ElicitResult => ({ action: "decline" }) })
    const result = await call("question", {
      questions: [{ question: "Go on?", header: "Go", options: [{ label: "Yes", description: "" }] }],
    })
    expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "Tool execution interrupted" }] })
  })

  it("announces list_changed within 500 ms of a configuration edit and serves the new rules", async () => {
    const { client, directory, changes, listChanged } = await connect({ entry: "run" })
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("bash")
    const announced = listChanged(5_000)
    const editedAt = Date.now()
    fs.writeFileSync(
      path.join(directory, "toolgate.json"),
      JSON.stringify({ permissions: [{ action: "bash", resource: "*", effect: "deny" }] }),
    )
    await announced
    expect(changes[0]! - editedAt).toBeLessThan(500)
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    expect(names).not.toContain("bash")
    expect(names).toContain("read")
    // An edit that breaks the file keeps the last good rules (and announces nothing).
    fs.writeFileSync(path.join(directory, "toolgate.json"), "{ not json")
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(changes).toHaveLength(1)
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("bash")
  })
})

describe("toolgate-mcp startup errors", () => {
  const start = (args: ReadonlyArray<string>) =>
    ChildProcess.spawnSync(process.execPath, [...serverArgs("run"), ...args], {
      cwd: packageDir,
      encoding: "utf8",
      input: "",
      timeout: 60_000,
      env: { ...process.env, XDG_DATA_HOME: tempDir("toolgate-mcp-xdg-") },
    })

  it("a directory that does not exist: exit 1, one line on stderr", () => {
    const missing = path.join(tempDir("toolgate-mcp-missing-"), "nope")
    const run = start(["--dir", missing])
    expect(run.status).toBe(1)
    const lines = run.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^toolgate-mcp: /)
    expect(lines[0]).toContain(missing)
    expect(run.stdout).toBe("")
  })

  it("an unknown agent: exit 1, one line naming the agents", () => {
    const run = start(["--dir", tempDir("toolgate-mcp-agent-"), "--agent", "typo"])
    expect(run.status).toBe(1)
    const lines = run.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toBe(
      'toolgate-mcp: unknown agent "typo"; the agents of this directory are: build, plan, general, explore',
    )
  })

  it("a flag without its value is a usage error (exit 2)", () => {
    const run = start(["--dir"])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("--dir needs a value")
  })
})
