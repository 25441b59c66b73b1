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

/** Polls every 20 ms until `holds()` or `deadlineMs` has passed (a bound for the wait, not a speed claim). */
const until = async (holds: () => boolean, deadlineMs: number): Promise<void> => {
  for (const deadline = Date.now() + deadlineMs; !holds() && Date.now() < deadline; )
    await new Promise((resolve) => setTimeout(resolve, 20))
}

describe("McpServer protocol", () => {
  it("lists every built-in with a title, behaviour annotations, and an output schema for object outputs", async () => {
    const { client } = await connect({ elicit: () => ({ action: "decline" }) })
    // The handshake names the package's own version, as `toolgate-mcp --version` does.
    const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8")) as { version: string }
    expect(client.getServerVersion()).toEqual({ name: "toolgate", version: manifest.version })
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

  it("with the default heartbeat, a silent 3 s command does not time out a client whose 2 s timeout resets on progress", async () => {
    // The real command line (`toolgate-mcp`), so the heartbeat is the default one.
    const { client } = await connect({ entry: "run" })
    const updates: Array<Progress> = []
    const result = (await client.request(
      { method: "tools/call", params: { name: "bash", arguments: { command: "sleep 3; echo finished" } } },
      CallToolResultSchema,
      { timeout: 2000, resetTimeoutOnProgress: true, onprogress: (progress) => void updates.push(progress) },
    )) as CallToolResult
    expect(result.isError).toBeFalsy()
    expect(text(result)).toContain("finished")
    expect(updates.length).toBeGreaterThanOrEqual(2)
    const values = updates.map((update) => update.progress)
    expect(values).toEqual([...values].sort((a, b) => a - b))
    expect(new Set(values).size).toBe(values.length)
    expect(updates.some((update) => /^running \(\d+s\)$/.test(update.message ?? ""))).toBe(true)
  })

  it("--heartbeat sets the heartbeat: at 200 ms a client with a 900 ms timeout that resets on progress sees a 2 s command through", async () => {
    const { client } = await connect({ entry: "run", args: ["--heartbeat", "200"] })
    const updates: Array<Progress> = []
    const result = (await client.request(
      { method: "tools/call", params: { name: "bash", arguments: { command: "sleep 2; echo done" } } },
      CallToolResultSchema,
      { timeout: 900, resetTimeoutOnProgress: true, onprogress: (progress) => void updates.push(progress) },
    )) as CallToolResult
    expect(text(result)).toContain("done")
    expect(updates.length).toBeGreaterThanOrEqual(3)
  })

  it("keeps reporting while a permission ask waits for a person longer than the 2 s timeout, which does not fire", async () => {
    const prompts: Array<string> = []
    const updates: Array<Progress> = []
    // The person answers once the client has seen four heartbeats of the wait: at 1 s apiece, over 3 s after the
    // ask began, so the client's 2 s timeout would have fired without them.
    let heartbeats!: () => void
    const fourHeartbeats = new Promise<void>((resolve) => (heartbeats = resolve))
    const onprogress = (progress: Progress) => {
      updates.push(progress)
      if (updates.filter((update) => update.message === "waiting for permission: edit").length >= 4) heartbeats()
    }
    const { client, directory } = await connect({
      config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
      elicit: async (request) => {
        prompts.push(request.message)
        await fourHeartbeats
        return { action: "accept", content: { decision: "once" } }
      },
    })
    const result = (await client.request(
      { method: "tools/call", params: { name: "write", arguments: { path: "slow.txt", content: "ok" } } },
      CallToolResultSchema,
      { timeout: 2000, resetTimeoutOnProgress: true, onprogress },
    )) as CallToolResult
    expect(result.isError).toBeFalsy()
    expect(fs.readFileSync(path.join(directory, "slow.txt"), "utf8")).toBe("ok")
    expect(prompts).toHaveLength(1)
    expect(updates.some((update) => update.message === "waiting for permission: edit")).toBe(true)
  })

  it("without a progress token nothing resets the client's timeout: a long ask times the client out as it asked", async () => {
    // The person answers only after the client has given up on the call.
    let givenUp!: Promise<unknown>
    const { client } = await connect({
      config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
      elicit: async () => {
        await givenUp
        return { action: "decline" }
      },
    })
    const request = client.request(
      { method: "tools/call", params: { name: "write", arguments: { path: "x.txt", content: "x" } } },
      CallToolResultSchema,
      { timeout: 700 },
    )
    givenUp = request.catch(() => undefined)
    await expect(request).rejects.toThrow(/timed out/i)
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

  it("announces list_changed after a configuration edit and serves the new rules", async () => {
    const { client, directory, changes, listChanged, stderr } = await connect({ entry: "run" })
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("bash")
    expect(changes).toEqual([])
    const announced = listChanged(10_000)
    fs.writeFileSync(
      path.join(directory, "toolgate.json"),
      JSON.stringify({ permissions: [{ action: "bash", resource: "*", effect: "deny" }] }),
    )
    // The edit comes first, then the announcement, then a listing with the new rules.
    await announced
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    expect(names).not.toContain("bash")
    expect(names).toContain("read")
    // An edit that breaks the file keeps the last good rules (and announces nothing).
    fs.writeFileSync(path.join(directory, "toolgate.json"), "{ not json")
    // The reload of the broken file is over once its warning is on stderr (waited for up to 10 s).
    await until(() => stderr().includes("configuration not reloaded"), 10_000)
    expect(stderr()).toContain("configuration not reloaded")
    expect(changes).toHaveLength(1)
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("bash")
  })

  it("hides the question tool from a client without elicitation; a call to it is an unknown tool", async () => {
    const { client, call } = await connect()
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("question")
    const result = await call("question", {
      questions: [{ question: "Go on?", header: "Go", options: [{ label: "Yes", description: "" }] }],
    })
    expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "Unknown tool: question" }] })
  })
})

describe("toolgate-mcp command line", () => {
  const start = (args: ReadonlyArray<string>) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = ChildProcess.spawn(process.execPath, [...serverArgs("run"), ...args], {
        cwd: packageDir,
        env: { ...process.env, XDG_DATA_HOME: tempDir("toolgate-mcp-xdg-") },
      })
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      child.on("error", reject)
      child.on("close", (status) => resolve({ status, stdout, stderr }))
      child.stdin.end()
    })

  const file = () => {
    const where = path.join(tempDir("toolgate-mcp-file-"), "notes.txt")
    fs.writeFileSync(where, "x")
    return where
  }
  const missing = () => path.join(tempDir("toolgate-mcp-missing-"), "nope")

  // Each case: the arguments, the exit code and the exact (single) line on stderr.
  const cases: ReadonlyArray<readonly [string, () => { args: Array<string>; line: string }, number]> = [
    ["no --dir", () => ({ args: [], line: "--dir is required: the project directory whose tools are served" }), 2],
    [
      "--dir that does not exist",
      () => {
        const dir = missing()
        return { args: ["--dir", dir], line: `--dir ${dir} does not exist` }
      },
      1,
    ],
    [
      "--dir that is a regular file",
      () => {
        const dir = file()
        return { args: ["--dir", dir], line: `--dir ${dir} is not a directory` }
      },
      1,
    ],
    [
      "--dir inside a regular file",
      () => {
        const dir = path.join(file(), "sub")
        return { args: [`--dir=${dir}`], line: `--dir ${dir} is not a directory (a part of the path is a file)` }
      },
      1,
    ],
    [
      "--data that is a regular file",
      () => {
        const data = file()
        return {
          args: ["--dir", tempDir("toolgate-mcp-dir-"), "--data", data],
          line: `--data ${data} is not a directory`,
        }
      },
      1,
    ],
    ["a flag without its value", () => ({ args: ["--dir"], line: "--dir needs a value" }), 2],
    [
      "an unknown argument",
      () => ({ args: ["--bogus"], line: "unexpected argument: --bogus (see --help)" }),
      2,
    ],
    [
      "a bad --heartbeat",
      () => ({
        args: ["--dir", tempDir("toolgate-mcp-dir-"), "--heartbeat", "0"],
        line: "--heartbeat 0 is not a whole number of milliseconds (1 or more)",
      }),
      2,
    ],
    [
      "an unknown agent",
      () => ({
        args: ["--dir", tempDir("toolgate-mcp-agent-"), "--agent", "typo"],
        line: 'unknown agent "typo"; the agents of this directory are: build, plan, general, explore',
      }),
      1,
    ],
  ]

  it.each(cases)("%s: its exit code, one line on stderr, nothing on stdout", async (_, make, code) => {
    const { args, line } = make()
    const run = await start(args)
    expect(run.status).toBe(code)
    expect(run.stderr).toBe(`toolgate-mcp: ${line}\n`)
    expect(run.stdout).toBe("")
  })

  it("--help prints the usage and exits 0; --version prints the package version", async () => {
    const [help, version] = await Promise.all([start(["--help"]), start(["--version"])])
    expect(help.status).toBe(0)
    expect(help.stdout.split("\n")[0]).toBe(
      "usage: toolgate-mcp --dir DIR [--agent NAME] [--data DIR] [--heartbeat MS] [--no-watch]",
    )
    expect(help.stdout).toContain(
      "--heartbeat MS   milliseconds between progress heartbeats of a waiting call (default 1000)",
    )
    expect(version.status).toBe(0)
    const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8")) as { version: string }
    expect(version.stdout).toBe(`${manifest.version}\n`)
  })
})
