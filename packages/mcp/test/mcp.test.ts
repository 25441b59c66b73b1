import * as fs from "node:fs"
import * as path from "node:path"
import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { BuiltInTools } from "@toolgate/core"
import { McpServer } from "../src/index.js"
import { connect, text } from "./support/client.js"

describe("McpServer over stdio", () => {
  it("lists the built-ins, calls glob and read, announces a registration, and flags unknown tools", async () => {
    const { client, directory, data, changes, listChanged, call } = await connect()
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true })

    // This client cannot elicit, so the question tool is not listed (it could never be answered).
    const listed = await client.listTools()
    expect(listed.tools.map((tool) => tool.name)).toEqual(BuiltInTools.names.filter((name) => name !== "question"))
    const read = listed.tools.find((tool) => tool.name === "read")!
    expect(read.inputSchema.type).toBe("object")
    expect(read.inputSchema.properties).toHaveProperty("path")

    const globbed = await call("glob", { pattern: "*.txt" })
    expect(globbed.isError).toBeFalsy()
    expect(text(globbed)).toContain(path.join(directory, "a.txt"))
    expect(text(globbed)).not.toContain("b.md")

    const contents = await call("read", { path: "a.txt" })
    expect(contents.isError).toBeFalsy()
    expect(contents.structuredContent).toMatchObject({ content: "alpha\n", encoding: "utf8" })
    // The model reads numbered lines; programs keep the structured Content.
    expect(text(contents)).toBe("1: alpha\n\n(lines 1-1 shown; end of file)")

    const invalid = await call("read", { file: "a.txt" })
    expect(invalid.isError).toBe(true)
    expect(text(invalid)).toMatch(/^Invalid tool input: /)

    const unknown = await call("nope", {})
    expect(unknown).toMatchObject({ isError: true, content: [{ type: "text", text: "Unknown tool: nope" }] })

    // No change, no notification: everything so far (listing, calls) announced nothing.
    expect(changes).toEqual([])
    // A registration in the server's Location is announced once, and the listing after it has the new tool.
    const announced = listChanged(10_000)
    fs.writeFileSync(path.join(data, "register-now"), "")
    await announced
    const relisted = await client.listTools()
    expect(relisted.tools.map((tool) => tool.name)).toContain("echo")
    expect(relisted.tools).toHaveLength(12)
    // Nothing more was announced: a ping round trip after the listing is answered after any queued notification.
    await client.ping()
    expect(changes).toHaveLength(1)
    expect(await call("echo", { text: "hi" })).toMatchObject({ content: [{ type: "text", text: "echo: hi" }] })
  })

  it("refuses an ask with a clear message when the client cannot elicit; never allows it silently", async () => {
    const { directory, call } = await connect({
      config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
    })
    const written = await call("write", { path: "new.txt", content: "x" })
    expect(written.isError).toBe(true)
    expect(text(written)).toBe(
      `The user rejected permission to use this specific tool call with the following feedback: ${McpServer.NO_PROMPT}`,
    )
    expect(fs.existsSync(path.join(directory, "new.txt"))).toBe(false)
  })

  it("answers asks through elicitation: allow once writes, decline refuses", async () => {
    const prompts: Array<string> = []
    const forms: Array<any> = []
    let decision: ElicitResult = { action: "accept", content: { decision: "once" } }
    const { directory, call } = await connect({
      config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
      elicit: (request) => {
        prompts.push(request.message)
        if ("requestedSchema" in request) forms.push(request.requestedSchema)
        return decision
      },
    })
    const allowed = await call("write", { path: "new.txt", content: "hello" })
    expect(allowed.isError).toBeFalsy()
    expect(fs.readFileSync(path.join(directory, "new.txt"), "utf8")).toBe("hello")
    // the prompt names every choice and what each saves and where: this non-git directory only
    const where = `saves edit for the directory ${directory} only (no git repository):`
    expect(prompts).toHaveLength(1)
    const message = prompts[0]!
    // the action and resource, the tool call with its full input, the diff of the write, then the choices
    expect(message).toMatch(
      /^Allow edit on new\.txt\?\ntool: write \(call [^\n]+\)\ninput:\n  path: "new\.txt"\n  content: "hello"\ndiff:\n/,
    )
    expect(message).toContain("\n  +hello\n")
    expect(message.slice(message.indexOf("\nChoices:\n") + 1)).toBe(
      [
        "Choices:",
        "  once — Allow once (this call only)",
        '  always:exact — Always allow exactly this: saved, grants edit "new.txt" exactly',
        `    ${where}`,
        '      exactly: "new.txt"',
        // `*` is also this top-level file's directory pattern: offered once, under the narrower id.
        "  always:directory — Always allow in this directory: saved, grants edit *",
        `    ${where}`,
        "      pattern: *",
        "  session — Allow for this session: grants edit * until the session ends, nothing saved",
        "    allows edit until the session ends:",
        "      pattern: *",
        "  reject — Reject",
      ].join("\n"),
    )
    expect(forms[0]?.properties["decision"]).toMatchObject({
      enum: ["once", "always:exact", "always:directory", "session", "reject"],
      enumNames: [
        "Allow once (this call only)",
        'Always allow exactly this: saved, grants edit "new.txt" exactly',
        "Always allow in this directory: saved, grants edit *",
        "Allow for this session: grants edit * until the session ends, nothing saved",
        "Reject",
      ],
    })

    decision = { action: "decline" }
    const declined = await call("write", { path: "other.txt", content: "x" })
    expect(declined.isError).toBe(true)
    expect(text(declined)).toContain(McpServer.DECLINED_IN_CLIENT)
    expect(fs.existsSync(path.join(directory, "other.txt"))).toBe(false)

    decision = { action: "accept", content: { decision: "reject", feedback: "use notes.md instead" } }
    const corrected = await call("write", { path: "third.txt", content: "x" })
    expect(text(corrected)).toBe(
      "The user rejected permission to use this specific tool call with the following feedback: use notes.md instead",
    )
  })
})
