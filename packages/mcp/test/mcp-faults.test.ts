/**
 * Faults the MCP server must survive and say why, with the official SDK client and the real command line: a 50 MB
 * `write` (legitimate) and a message over the 64 MiB limit (refused for its id, the next call answered), and an
 * "Always allow" whose approval the database refuses to save (the call is allowed once, the model and the log are
 * told, the next call asks again).
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import type { CallToolResult, ElicitRequest } from "@modelcontextprotocol/sdk/types.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { McpTransport } from "../src/index.js"
import { connect, text } from "./support/client.js"

/** better-sqlite3 as `@toolgate/core` loads it (the MCP package does not depend on it). */
const Sqlite = (() => {
  const core = createRequire(createRequire(import.meta.url).resolve("@toolgate/core/package.json"))
  return createRequire(core.resolve("@effect/sql-sqlite-node"))("better-sqlite3") as new (file: string) => {
    exec(sql: string): void
    close(): void
  }
})()

describe("McpServer faults", () => {
  it("a 50 MB write is served; a message over 64 MiB gets an error naming the limit; the next call is answered", async () => {
    const { call, directory } = await connect({ entry: "run" })
    const content = "0123456789abcdef\n".repeat(Math.ceil((50 * 1000 * 1000) / 17))
    const written = await call("write", { path: "big.txt", content })
    expect(written.isError, text(written).slice(0, 400)).toBeFalsy()
    expect(fs.statSync(path.join(directory, "big.txt")).size).toBe(content.length)

    const over = "x".repeat(McpTransport.MAX_MESSAGE_BYTES + 1024)
    const refused = await call("write", { path: "over.txt", content: over }).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(refused).toBeInstanceOf(McpError)
    expect((refused as McpError).code).toBe(-32600)
    expect((refused as McpError).message).toMatch(
      /^MCP error -32600: Invalid Request: the message is \d+ bytes, over this server's limit of 67108864 bytes \(64 MiB\) on one message$/,
    )
    expect(fs.existsSync(path.join(directory, "over.txt"))).toBe(false)

    const read = await call("read", { path: "a.txt" })
    expect(read.structuredContent).toMatchObject({ content: "alpha\n" })
  })

  it('an "always" that cannot be saved is answered once: the model and the log are told, the next call asks again', async () => {
    const prompts: Array<ElicitRequest["params"]> = []
    const { call, directory, data, stderr } = await connect({
      entry: "run",
      config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
      elicit: (request) => {
        prompts.push(request)
        // The form's values are the prompt's choice ids: the widest `always` offered is the reference's "Always allow".
        const ids = ("requestedSchema" in request ? request.requestedSchema.properties["decision"] : undefined) as
          { readonly enum?: ReadonlyArray<string> } | undefined
        const widest = (ids?.enum ?? []).filter((id) => id.startsWith("always:")).at(-1)
        return { action: "accept", content: { decision: widest ?? "always" } }
      },
    })
    // A real failure of the INSERT that saves the approval, from SQLite itself.
    const database = new Sqlite(path.join(data, "toolgate.db"))
    try {
      database.exec(
        "CREATE TRIGGER refuse_saves BEFORE INSERT ON permission BEGIN SELECT RAISE(ABORT, 'saving is refused by the test'); END",
      )
    } finally {
      database.close()
    }

    const first = (await call("write", { path: "one.txt", content: "1" })) as CallToolResult
    expect(first.isError).toBeFalsy()
    expect(fs.readFileSync(path.join(directory, "one.txt"), "utf8")).toBe("1")
    const note = first.content.at(-1)
    expect(note?.type).toBe("text")
    expect(note?.type === "text" ? note.text : "").toMatch(
      /^Note: the user chose "Always allow" for edit, but the approval could not be saved \(.*toolgate\.db: .*saving is refused by the test.*\); this call was allowed once only, and the next one will ask again\.$/,
    )
    expect(stderr()).toMatch(
      /McpServer: the \\"always\\" approval of permission request per_\w+ \(edit\) could not be saved; answered once instead: .*saving is refused by the test/,
    )

    // Nothing was saved, so the next edit asks again (and is again allowed once).
    const second = await call("write", { path: "two.txt", content: "2" })
    expect(second.isError).toBeFalsy()
    expect(prompts).toHaveLength(2)
  })
})
