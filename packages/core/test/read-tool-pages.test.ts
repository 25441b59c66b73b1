/**
 * read pages as the model receives them, through a real Location (`Core.layerTest`): a real materialization and the
 * real output store (`ToolOutputStore.layer`), so a page that did not fit would be cut by `bound` and show up as an
 * output path. Every page must fit, and reading on (by `offset`, and by `column` for cut lines) must give back the
 * file exactly.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, FastCheck, Runtime } from "effect"
import { ReadToolFileSystem, SessionV2, ToolOutputStore, ToolRegistry } from "../src/index.js"
import { Core } from "../src/entry/testing.js"

const location = (prefix: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

const session = Effect.flatMap(SessionV2.Service, (sessions) => sessions.create({ agent: "build" }))

let calls = 0
const read = (sessionID: string, input: { path: string; offset?: number; column?: number; limit?: number }) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize([])).pipe(
    Effect.flatMap((turn) =>
      turn.settle({
        sessionID,
        agent: "build",
        assistantMessageID: "msg_read",
        call: { id: `call_${++calls}`, name: "read", input },
      }),
    ),
  )

/** One model-facing line: `<n>: <text>` or `<n> (from column <c>): <text>`, maybe with a continuation hint. */
const LINE = /^(\d+)(?: \(from column (\d+)\))?: (.*)$/
const HINT = / \[line (\d+) has (\d+) chars; read the rest with offset=(\d+) column=(\d+)\]$/
const SUFFIX = /\.\.\. \(line truncated to (\d+) chars\)$/
const NEXT = /read with offset=(\d+)\)$/

interface Parsed {
  readonly lines: ReadonlyArray<{ line: number; column: number; text: string; rest?: number }>
  readonly next?: number
}

/** Parses a page's text the way a careful reader would (content is generated without brackets or parentheses). */
const parse = (text: string): Parsed => {
  const rows = text.split("\n")
  const trailer = rows.pop()!
  expect(trailer).toMatch(/^\(.*\)$/)
  if (rows.length > 0) expect(rows.pop()).toBe("")
  const lines = rows.map((row) => {
    const match = LINE.exec(row)
    expect(match, row.slice(0, 80)).not.toBeNull()
    let body = match![3]!
    const hint = HINT.exec(body)
    if (hint === null) return { line: Number(match![1]), column: Number(match![2] ?? 1), text: body }
    body = body.slice(0, hint.index)
    const suffix = SUFFIX.exec(body)
    expect(suffix).not.toBeNull()
    body = body.slice(0, suffix!.index)
    expect(body.length).toBe(Number(suffix![1]))
    return { line: Number(match![1]), column: Number(match![2] ?? 1), text: body, rest: Number(hint[4]) }
  })
  const next = NEXT.exec(trailer)
  return next === null ? { lines } : { lines, next: Number(next[1]) }
}

/** Reads `file` completely as a model would and checks every page against the output limits. */
const readAll = (sessionID: string, file: string, limits: ToolOutputStore.Limits) =>
  Effect.gen(function* () {
    const got = new Map<number, string>()
    let pages = 0
    const page = (input: { path: string; offset?: number; column?: number; limit?: number }) =>
      Effect.gen(function* () {
        const settlement = yield* read(sessionID, input)
        pages++
        expect(settlement.outputPaths ?? []).toEqual([])
        expect(settlement.result.type, JSON.stringify(settlement.result).slice(0, 200)).toBe("text")
        const text = settlement.result.value as string
        expect(ToolOutputStore.withinLimits(text, limits.maxLines, limits.maxBytes)).toBe(true)
        return parse(text)
      })
    let next: number | undefined = undefined
    let first = true
    while (first || next !== undefined) {
      const parsed: Parsed = yield* page(first ? { path: file } : { path: file, offset: next! })
      first = false
      for (const row of parsed.lines) {
        expect(got.has(row.line)).toBe(false)
        expect(row.column).toBe(1)
        let text = row.text
        let rest = row.rest
        while (rest !== undefined) {
          const more = yield* page({ path: file, offset: row.line, column: rest, limit: 1 })
          expect(more.lines).toHaveLength(1)
          expect(more.lines[0]).toMatchObject({ line: row.line, column: rest })
          text += more.lines[0]!.text
          rest = more.lines[0]!.rest
        }
        got.set(row.line, text)
      }
      next = parsed.next
    }
    const lines = [...got.keys()]
    expect(lines).toEqual(lines.map((_, index) => index + 1))
    return { lines: [...got.values()], pages }
  })

const fileLines = (body: string) => {
  const lines = body.split("\n")
  if (lines.at(-1) === "") lines.pop()
  return lines
}

const defaults = { maxLines: ToolOutputStore.MAX_LINES, maxBytes: ToolOutputStore.MAX_BYTES }
const DEFAULT_DIR = location("toolgate-read-pages-")

layer(Core.layerTest({ directory: DEFAULT_DIR, permission: "always" }), { timeout: 120_000 })(
  "read pages with the default limits",
  (it) => {
    it.effect("a 60 KB, 3,000-line file arrives page by page, every line exactly once, nothing cut by bound", () =>
      Effect.gen(function* () {
        const body = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} `.padEnd(19, "·")).join("\n") + "\n"
        expect(Buffer.byteLength(body)).toBeGreaterThan(60_000)
        fs.writeFileSync(path.join(DEFAULT_DIR, "big.txt"), body)
        const sessionID = (yield* session).id
        const { lines, pages } = yield* readAll(sessionID, "big.txt", defaults)
        expect(lines).toEqual(fileLines(body))
        expect(pages).toBeGreaterThanOrEqual(2)

        // Programs keep the structured page: the same lines, with `next` and the last line shown.
        const settlement = yield* read(sessionID, { path: "big.txt" })
        const structured = settlement.output?.structured as ReadToolFileSystem.TextPage
        expect(structured.type).toBe("text-page")
        expect(structured.content.split("\n")).toEqual(fileLines(body).slice(0, structured.last!))
        expect(structured.next).toBe(structured.last! + 1)
      }),
    )

    it.effect("a small file is read whole, numbered, with its structured Content", () =>
      Effect.gen(function* () {
        fs.writeFileSync(path.join(DEFAULT_DIR, "small.ts"), "export const a = 1\r\n\nexport const b = 2\n")
        const settlement = yield* read((yield* session).id, { path: "small.ts" })
        expect(settlement.result).toEqual({
          type: "text",
          value: "1: export const a = 1\n2: \n3: export const b = 2\n\n(lines 1-3 shown; end of file)",
        })
        expect(settlement.output?.structured).toMatchObject({
          encoding: "utf8",
          mime: "text/typescript",
          content: "export const a = 1\r\n\nexport const b = 2\n",
        })
      }),
    )

    it.effect("TypeScript sources are text, whatever the extension table says", () =>
      Effect.gen(function* () {
        const sessionID = (yield* session).id
        for (const [name, mime] of [
          ["a.ts", "text/typescript"],
          ["b.mts", "text/typescript"],
          ["c.cts", "text/typescript"],
          ["d.tsx", "text/tsx"],
          ["e.unknownext", "text/plain"],
          ["f.json", "application/json"],
        ] as const) {
          fs.writeFileSync(path.join(DEFAULT_DIR, name), "x\n")
          const whole = yield* read(sessionID, { path: name })
          expect(whole.output?.structured).toMatchObject({ mime })
          const paged = yield* read(sessionID, { path: name, offset: 1 })
          expect(paged.output?.structured).toMatchObject({ type: "text-page", mime })
        }
        expect(ReadToolFileSystem.mimeType("x.ts")).toBe("text/typescript")
      }),
    )

    it.effect("a 300,000-character line is read in full by column; a column past the end is a clear error", () =>
      Effect.gen(function* () {
        const long = Array.from({ length: 300_000 }, (_, i) => "abcdefghij"[i % 10]).join("")
        fs.writeFileSync(path.join(DEFAULT_DIR, "minified.js"), `first\n${long}\nlast\n`)
        const sessionID = (yield* session).id
        const { lines, pages } = yield* readAll(sessionID, "minified.js", defaults)
        expect(lines).toEqual(["first", long, "last"])
        expect(pages).toBe(1 + Math.ceil(300_000 / ReadToolFileSystem.MAX_LINE_LENGTH) - 1)
        const first = yield* read(sessionID, { path: "minified.js" })
        expect(first.result.value).toContain(
          `2: ${long.slice(0, 2000)}${ReadToolFileSystem.LINE_SUFFIX} [line 2 has 300000 chars; read the rest with offset=2 column=2001]`,
        )
        const past = yield* read(sessionID, { path: "minified.js", offset: 1, column: 7 })
        expect(past.result).toEqual({ type: "error", value: "Column 7 is past the end of line 1 (5 chars)" })
      }),
    )

    it.effect("a directory page is a list of entries with a trailer", () =>
      Effect.gen(function* () {
        const dir = path.join(DEFAULT_DIR, "listing")
        fs.mkdirSync(path.join(dir, "sub"), { recursive: true })
        fs.writeFileSync(path.join(dir, "a.txt"), "a")
        fs.writeFileSync(path.join(dir, "b.txt"), "b")
        const sessionID = (yield* session).id
        const all = yield* read(sessionID, { path: "listing" })
        expect(all.result).toEqual({
          type: "text",
          value: `sub${path.sep}\na.txt\nb.txt\n\n(entries 1-3 shown; end of directory)`,
        })
        const page = yield* read(sessionID, { path: "listing", offset: 2, limit: 1 })
        expect(page.result).toEqual({
          type: "text",
          value: "a.txt\n\n(entries 2-2 shown; more follow: read with offset=3)",
        })
        expect(page.output?.structured).toEqual({
          entries: [{ path: "a.txt", type: "file" }],
          truncated: true,
          next: 3,
        })
      }),
    )
  },
)

const TIGHT_DIR = location("toolgate-read-tight-")
const tight = { maxLines: 40, maxBytes: 3000 }

layer(
  Core.layerTest({
    directory: TIGHT_DIR,
    permission: "always",
    config: { tool_output: { max_lines: tight.maxLines, max_bytes: tight.maxBytes } },
  }),
  { timeout: 300_000 },
)("read pages under configured tool_output limits", (it) => {
  // Letters, accents, CJK and astral characters (surrogate pairs); no brackets, so the reader's parse is exact.
  const alphabet = ["a", "b", " ", "é", "世", "😀", "-", "z"]
  const line = FastCheck.tuple(FastCheck.nat({ max: 6000 }), FastCheck.integer({ min: 1, max: 7 })).map(
    ([length, step]) => {
      let text = ""
      for (let i = 0; text.length < length; i++) text += alphabet[(i * step) % alphabet.length]
      return text
    },
  )
  const sample = FastCheck.record({
    lines: FastCheck.array(FastCheck.oneof(line, FastCheck.stringMatching(/^[a-z ]{0,40}$/)), {
      minLength: 1,
      maxLength: 60,
    }),
    trailing: FastCheck.boolean(),
  })

  it.effect("property: reading every page (and every cut line by column) reconstructs the file exactly", () =>
    Effect.gen(function* () {
      const sessionID = (yield* session).id
      const runtime = yield* Effect.runtime<ToolRegistry.Service>()
      let index = 0
      yield* Effect.promise(() =>
        FastCheck.assert(
          FastCheck.asyncProperty(sample, (input) =>
            Runtime.runPromise(runtime)(
              Effect.gen(function* () {
                const name = `case-${index++}.txt`
                const body = input.lines.join("\n") + (input.trailing ? "\n" : "")
                fs.writeFileSync(path.join(TIGHT_DIR, name), body)
                const { lines } = yield* readAll(sessionID, name, tight)
                expect(lines.join("\n") + (input.trailing ? "\n" : "")).toBe(
                  fileLines(body).join("\n") + (input.trailing ? "\n" : ""),
                )
                expect(lines).toEqual(fileLines(body))
              }),
            ),
          ),
          { numRuns: 30, seed: 1301 },
        ),
      )
    }),
  )
})

describe("read page text", () => {
  it("renders the interface suffix and the continuation hint together", () => {
    const page: ReadToolFileSystem.TextPage = {
      type: "text-page",
      content: `abc${ReadToolFileSystem.lineSuffix(3)}`,
      mime: "text/plain",
      offset: 4,
      column: 10,
      truncated: false,
      last: 4,
      cut: [{ line: 4, column: 13, length: 20 }],
    }
    expect(ReadToolFileSystem.renderTextPage(page)).toBe(
      "4 (from column 10): abc... (line truncated to 3 chars) [line 4 has 20 chars; read the rest with offset=4 column=13]\n\n(lines 4-4 shown; end of file)",
    )
    expect(ReadToolFileSystem.lineSuffix(ReadToolFileSystem.MAX_LINE_LENGTH)).toBe(ReadToolFileSystem.LINE_SUFFIX)
  })
})
