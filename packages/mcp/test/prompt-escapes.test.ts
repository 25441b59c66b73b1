/**
 * The MCP elicitation path shows the truth: a permission prompt and a question form show every C0/C1 control, DEL,
 * escape sequence, bidi override and invisible character as a visible escape. Fed with a synthetic request holding
 * all of them, and through a real server and the official SDK client (bash commands, a file name, a question).
 */
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import { Approvals, PermissionV2, Printable, Wildcard } from "@toolgate/core"
import * as Hostile from "../../core/test/support/hostile-text.js"
import { promptMessage, questionMessage, questionSchema } from "../src/prompts.js"
import { connect, text } from "./support/client.js"

/** The message above the approval form of `request` (no tool call, no deadline). */
const messageOf = (request: PermissionV2.Request): string =>
  promptMessage(Approvals.prompt(request, undefined, 0, undefined))

const request = (resources: ReadonlyArray<string>): PermissionV2.Request => ({
  id: PermissionV2.ID.make("per_hostile"),
  sessionID: "ses_hostile",
  action: `bash${Hostile.EVERYTHING}`,
  resources,
  save: resources.map(Wildcard.literal),
  always: {
    action: "bash",
    entries: [
      ...resources.map((text) => ({ pattern: Wildcard.literal(text), text, literal: true })),
      { pattern: `${Hostile.EVERYTHING} *`, text: `${Hostile.EVERYTHING} *`, literal: false },
    ],
    scope: { kind: "project", projectID: `prj${Hostile.EVERYTHING}`, directory: `/srv/${Hostile.EVERYTHING}` },
  },
})

describe("MCP elicitation prompts", () => {
  it("a permission message shows every field escaped, one resource per line", () => {
    const resources = [Hostile.EVERYTHING, ...Hostile.DISGUISED.map((item) => item.raw)]
    const message = messageOf(request(resources))
    expect(Hostile.rawFound(message, { newlines: true })).toEqual([])
    const lines = message.split("\n")
    expect(lines[0]).toBe(`Allow ${Printable.show(`bash${Hostile.EVERYTHING}`)} on ${resources.length} resources?`)
    expect(lines.slice(1, 1 + resources.length)).toEqual(resources.map((resource) => `  - ${Printable.show(resource)}`))
    // Then the choices, each with what it saves (the always entries, escaped too).
    expect(lines[1 + resources.length]).toBe("Choices:")
    expect(lines.length).toBeGreaterThan(2 + resources.length)
    for (const { raw, shown } of Hostile.DISGUISED) expect(messageOf(request([raw])).split("\n")[0]).toContain(shown)
  })

  it("a question form shows the model's header, question, labels and descriptions escaped; answers keep the label", () => {
    const label = `yes${Hostile.EVERYTHING}`
    const form: QuestionRequest = {
      id: "que_x",
      sessionID: "ses_x",
      questions: [
        {
          header: `h${Hostile.EVERYTHING}`,
          question: `q${Hostile.EVERYTHING}`,
          options: [{ label, description: `d${Hostile.EVERYTHING}` }],
          multiple: true,
        },
      ],
    }
    const schema = questionSchema(form as never)
    expect(Hostile.rawFound(JSON.stringify(schema).replaceAll(JSON.stringify(label).slice(1, -1), ""))).toEqual([])
    expect(Hostile.rawFound(JSON.parse(JSON.stringify(schema)).properties.q1.title)).toEqual([])
    const items = (schema.properties.q1 as { items: { anyOf: Array<{ const: string; title: string }> } }).items.anyOf
    expect(items[0]!.const).toBe(label)
    expect(Hostile.rawFound(items[0]!.title)).toEqual([])
    expect(Hostile.rawFound(questionMessage(form as never), { newlines: true, tabs: true })).toEqual([])
  })

  it("through a real server: bash commands, a file name and a question reach the client escaped", async () => {
    const elicited: Array<ElicitRequest["params"]> = []
    const { call } = await connect({
      config: {
        permissions: [
          { action: "bash", resource: "*", effect: "ask" },
          { action: "edit", resource: "*", effect: "ask" },
        ],
      },
      elicit: (params): ElicitResult => {
        elicited.push(params)
        return "requestedSchema" in params && params.requestedSchema.properties["decision"] !== undefined
          ? { action: "accept", content: { decision: "reject", feedback: "not now" } }
          : { action: "decline" }
      },
    })
    for (const { raw } of Hostile.DISGUISED) {
      const result = await call("bash", { command: raw })
      expect(text(result)).toContain("not now")
    }
    const name = "notes\u202etxt.hs\x1b[2K"
    expect(text(await call("write", { path: name, content: "x" }))).toContain("not now")
    await call("question", {
      questions: [{ question: "Go\x1b[2K on?", header: "G\u202eo", options: [{ label: "Y\x9bes", description: "" }] }],
    })
    const messages = elicited.map((params) => params.message)
    expect(messages.length).toBeGreaterThanOrEqual(Hostile.DISGUISED.length + 2)
    // Every text of every elicitation, except a choice's `const` (the label the answer carries back).
    const shownTexts = (value: unknown): ReadonlyArray<string> =>
      typeof value === "string"
        ? [value]
        : Array.isArray(value)
          ? value.flatMap(shownTexts)
          : value !== null && typeof value === "object"
            ? Object.entries(value).flatMap(([key, inner]) => (key === "const" ? [] : shownTexts(inner)))
            : []
    for (const params of elicited) {
      expect(Hostile.rawFound(shownTexts(params).join("\n"), { newlines: true, tabs: true })).toEqual([])
    }
    // Every command is shown whole (escaped) above its resources: what the user approves is what the shell runs.
    for (const fragment of Hostile.DISGUISED.map(({ shown }) => `command: ${shown}`)) {
      expect(
        messages.some((message) => message.includes(fragment)),
        fragment,
      ).toBe(true)
    }
    expect(messages.some((message) => message.startsWith(`Allow edit on ${Printable.show(name)}?\n`))).toBe(true)
    expect(messages).toContain("Go\\x1b[2K on?")
    const form = elicited.find((params) => params.message === "Go\\x1b[2K on?")!
    expect(JSON.stringify(form)).toContain(JSON.stringify({ const: "Y\x9bes", title: "Y\\x9bes" }))
  })
})

type QuestionRequest = {
  readonly id: string
  readonly sessionID: string
  readonly questions: ReadonlyArray<{
    readonly header: string
    readonly question: string
    readonly options: ReadonlyArray<{ readonly label: string; readonly description: string }>
    readonly multiple?: boolean
  }>
}
