/**
 * The CLI's prompt path shows the truth: a permission prompt (describe.ts → Screen) and a question's choices show
 * every C0/C1 control, DEL, escape sequence, bidi override and invisible character as a visible escape. Fed with a
 * synthetic request holding all of them, and with real asks of a real Location (bash commands and a file name that
 * would display as something else).
 */
import type { Writable } from "node:stream"
import { PermissionV2, Printable, SessionV2, ToolRegistry, Wildcard } from "@toolgate/core"
import { Core } from "@toolgate/core/testing"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as Hostile from "../../core/test/support/hostile-text.js"
import { questionChoices } from "../src/answers.js"
import { permissionPrompt } from "../src/describe.js"
import * as Screen from "../src/screen.js"

/** What a non-terminal Screen writes for `lines`. */
const printed = (lines: ReadonlyArray<string>): string => {
  let out = ""
  const stream = { isTTY: false, write: (chunk: string) => ((out += chunk), true) } as unknown as Writable
  const screen = Screen.make(stream as NodeJS.WriteStream)
  for (const line of lines) screen.line(line)
  return out
}

const hostileRequest = (resources: ReadonlyArray<string>): PermissionV2.Request => ({
  id: PermissionV2.ID.make("per_hostile"),
  sessionID: "ses_hostile",
  action: "bash",
  resources,
  save: resources.map(Wildcard.literal),
  always: {
    action: "bash",
    entries: [
      ...resources.map((text) => ({ pattern: Wildcard.literal(text), text, literal: true })),
      { pattern: `${Hostile.EVERYTHING} *`, text: `${Hostile.EVERYTHING} *`, literal: false },
    ],
    scope: { kind: "directory", projectID: "global", directory: `/tmp/x${Hostile.EVERYTHING}` },
  },
})

describe("CLI permission prompt", () => {
  it("shows every control, escape, bidi and invisible character of every field as a visible escape", () => {
    const resources = [Hostile.EVERYTHING, ...Hostile.DISGUISED.map((item) => item.raw)]
    const out = printed(permissionPrompt(hostileRequest(resources), 100_000))
    expect(Hostile.rawFound(out, { newlines: true })).toEqual([])
    // One line per field: no resource broke the layout with a line break of its own.
    expect(out.split("\n").filter((line) => line !== "")).toHaveLength(2 + resources.length + 1 + resources.length + 1)
    for (const resource of resources) expect(out).toContain(`      - ${Printable.show(resource)}\n`)
    for (const { shown } of Hostile.DISGUISED) expect(out).toContain(shown)
    expect(out).toContain(`exactly: ${Printable.quote(Hostile.EVERYTHING)}`)
  })

  it("shows a single disguised command exactly", () => {
    for (const { raw, shown } of Hostile.DISGUISED) {
      const lines = permissionPrompt(hostileRequest([raw]), 100_000)
      expect(lines[1]).toBe(`    resource: ${shown}`)
      expect(Printable.parse(lines[1]!.slice("    resource: ".length))).toBe(raw)
    }
  })

  it("question choices show the model's labels escaped and answer with the label itself", () => {
    const choices = questionChoices({
      question: "pick",
      header: "h",
      options: [
        { label: `ok${Hostile.EVERYTHING}`, description: `d${Hostile.EVERYTHING}` },
        { label: "plain", description: "" },
      ],
    })
    expect(Hostile.rawFound(JSON.stringify(choices.map(({ title, description }) => [title, description])))).toEqual([])
    expect(choices[0]).toEqual({
      title: Printable.show(`ok${Hostile.EVERYTHING}`),
      value: `ok${Hostile.EVERYTHING}`,
      description: Printable.show(`d${Hostile.EVERYTHING}`),
    })
  })

  it("real asks of a Location: bash commands and a file name are shown as what they are", async () => {
    const asked: Array<PermissionV2.Request> = []
    const name = "notes\u202etxt.hs\x1b[2K"
    const calls = [
      ...Hostile.DISGUISED.map((item, i) => ({ id: `b${i}`, name: "bash", input: { command: item.raw } })),
      { id: "w", name: "write", input: { path: name, content: "x" } },
    ]
    await Effect.runPromise(
      Effect.gen(function* () {
        const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
        const turn = yield* (yield* ToolRegistry.Service).materialize([])
        for (const call of calls) {
          const settled = yield* turn.settle({ sessionID: session.id, agent: "build", assistantMessageID: "m", call })
          expect(settled.result).toMatchObject({ type: "error" })
        }
      }).pipe(
        Effect.provide(
          Core.layerTest({
            config: {
              permissions: [
                { action: "bash", resource: "*", effect: "ask" },
                { action: "edit", resource: "*", effect: "ask" },
              ],
            },
            permission: (request) => {
              asked.push(request)
              return { reply: "reject", message: "not now" }
            },
          }),
        ),
        Effect.scoped,
      ),
    )
    expect(asked.length).toBeGreaterThanOrEqual(calls.length)
    const out = printed(asked.flatMap((request) => permissionPrompt(request, 100_000)))
    expect(Hostile.rawFound(out, { newlines: true })).toEqual([])
    // Every command is shown whole (escaped) above its resources: what the user approves is what the shell runs.
    for (const fragment of Hostile.DISGUISED.map(({ shown }) => `command: ${shown}`)) {
      expect(out).toContain(fragment)
    }
    expect(out).toContain(Printable.show(name))
  })
})
