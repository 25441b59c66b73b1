import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { GrepTool, type Search, type ToolRegistry } from "../src/index.js"
import { tempDir } from "./support/location.js"
import * as FakePermission from "./support/permission.js"
import { engines as searchEngines, searchTool, write } from "./support/search-tool.js"

const engines = searchEngines("grep-tool")
const { settle, inLocation } = searchTool(GrepTool.name, GrepTool.layer)

const structured = (settled: ToolRegistry.Settlement) => settled.output?.structured as ReadonlyArray<Search.Match>
const places = (settled: ToolRegistry.Settlement) =>
  structured(settled).map((match) => `${match.entry.path}:${match.line}`)

describe.each(engines)("grep ($engine engine)", ({ search, skip }) => {
  it.scoped.skipIf(skip)("grep basic: line, offset, text with its newline, byte submatches, model text", () =>
    inLocation(search, { "src/haystack.ts": "needle\nother\n" }, (dir) =>
      Effect.gen(function* () {
        const settled = yield* settle({ pattern: "needle" })
        expect(structured(settled)).toEqual([
          {
            entry: { path: "src/haystack.ts", type: "file" },
            line: 1,
            offset: 0,
            text: "needle\n",
            submatches: [{ text: "needle", start: 0, end: 6 }],
          },
        ])
        expect(settled.result).toEqual({
          type: "text",
          value: `Found 1 matches\n${path.join(dir, "src/haystack.ts")}:\n  Line 1: needle\n`,
        })
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep on a FIFO inside the Location settles at once: skipped with a note, never opened", () =>
    inLocation(search, { "src/a.ts": "needle\n" }, (dir) =>
      Effect.gen(function* () {
        const fifo = path.join(dir, "src", "pipe")
        expect(spawnSync("mkfifo", [fifo]).status).toBe(0)
        // Nobody ever writes to the FIFO: opening it for reading would block until a writer came.
        const settled = yield* settle({ pattern: "needle", path: "src/pipe" })
        expect(structured(settled)).toEqual([])
        expect(settled.result).toEqual({
          type: "text",
          value:
            "No files found\n\n(Matches in 1 file skipped because it is not a regular file (a FIFO, socket or device).)",
        })
        // A walk over its directory skips it too and finds the regular file.
        expect(places(yield* settle({ pattern: "needle", path: "src" }))).toEqual(["src/a.ts:1"])
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep model text groups consecutive matches per file with a blank line between groups", () =>
    inLocation(search, { "a.txt": "needle one\nneedle two", "b.txt": "x needle\n" }, (dir) =>
      Effect.gen(function* () {
        const settled = yield* settle({ pattern: "needle" })
        expect(settled.result).toEqual({
          type: "text",
          value: [
            "Found 3 matches",
            `${path.join(dir, "a.txt")}:`,
            "  Line 1: needle one\n",
            "  Line 2: needle two",
            "",
            `${path.join(dir, "b.txt")}:`,
            "  Line 1: x needle\n",
          ].join("\n"),
        })
        expect(structured(settled).map((match) => match.offset)).toEqual([0, 11, 0])
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep hidden included, .git excluded", () =>
    inLocation(search, { ".git/HEAD": "needle\n", ".git/objects/x": "needle\n", ".config/x": "needle\n" }, () =>
      Effect.gen(function* () {
        const settled = yield* settle({ pattern: "needle" })
        expect(places(settled)).toEqual([".config/x:1"])
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep include: *.ts restricts matches to .ts files", () =>
    inLocation(search, { "a.ts": "needle\n", "a.js": "needle\n", "src/b.ts": "needle\n", "src/b.md": "needle\n" }, () =>
      Effect.gen(function* () {
        const settled = yield* settle({ pattern: "needle", include: "*.ts" })
        expect(places(settled)).toEqual(["a.ts:1", "src/b.ts:1"])
        const braces = yield* settle({ pattern: "needle", include: "*.{ts,md}" })
        expect(places(braces)).toEqual(["a.ts:1", "src/b.md:1", "src/b.ts:1"])
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep single file: an absolute managed tool-output file is searched alone", () =>
    Effect.gen(function* () {
      const managed = yield* tempDir()
      write(managed, { tool_01: "first\nneedle here\n", tool_02: "needle elsewhere\n" })
      const result = yield* inLocation(search, { "a.txt": "needle\n" }, (dir) =>
        Effect.map(settle({ pattern: "needle", path: path.join(managed, "tool_01") }), (settled) => ({ dir, settled })),
      )
      expect(structured(result.settled)).toEqual([
        {
          entry: { path: path.relative(result.dir, path.join(managed, "tool_01")), type: "file" },
          line: 2,
          offset: 6,
          text: "needle here\n",
          submatches: [{ text: "needle", start: 0, end: 6 }],
        },
      ])
      expect(result.settled.result).toMatchObject({
        value: `Found 1 matches\n${path.join(managed, "tool_01")}:\n  Line 2: needle here\n`,
      })
    }),
  )

  // The reference leaves `path` unconfined; here an outside root needs external_directory first and the matched
  // file's read rules apply (docs/trust/search.md).
  it.scoped.skipIf(skip)(
    "grep outside file: external_directory on its folder, then grep; read is evaluated without an ask",
    () =>
      Effect.gen(function* () {
        const managed = yield* tempDir()
        write(managed, { tool_01: "needle\n" })
        const asserts = yield* inLocation(search, {}, () =>
          Effect.zipRight(settle({ pattern: "needle", path: path.join(managed, "tool_01") }), FakePermission.asserts),
        )
        expect(asserts.map((input) => [input.action, input.resources])).toEqual([
          ["external_directory", [`${managed}/*`]],
          ["grep", ["needle"]],
        ])
      }),
  )

  it.scoped.skipIf(skip)("grep read rules: files whose read is denied are withheld and counted in the text", () =>
    inLocation(search, { "a.txt": "needle\n", "b.txt": "needle\n" }, () =>
      Effect.gen(function* () {
        yield* FakePermission.deny("read")
        const settled = yield* settle({ pattern: "needle" })
        expect(settled.output?.structured).toEqual([])
        expect(settled.result).toEqual({
          type: "text",
          value: "No files found\n\n(Matches in 2 files withheld because the read permission rules deny reading them.)",
        })
        expect(yield* FakePermission.actions).toEqual(["grep"])
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep path: a relative escape and a symlink out are refused before any permission", () =>
    Effect.gen(function* () {
      const outside = yield* tempDir()
      write(outside, { "x.txt": "needle\n" })
      const result = yield* inLocation(search, { "a.txt": "needle\n" }, (dir) =>
        Effect.gen(function* () {
          fs.symlinkSync(outside, path.join(dir, "out"))
          const escape = yield* settle({ pattern: "needle", path: "../missing" })
          const link = yield* settle({ pattern: "needle", path: "out" })
          return { escape, link, asserts: yield* FakePermission.asserts }
        }),
      )
      expect(result.escape.result).toEqual({
        type: "error",
        value:
          "Unable to search ../missing: a relative path must stay inside the Location (an absolute path outside it needs approval)",
      })
      expect(result.link.result).toEqual({
        type: "error",
        value: "Unable to search out: it leads outside the Location through a symbolic link",
      })
      expect(result.asserts).toEqual([])
    }),
  )

  it.scoped.skipIf(skip)("grep root swapped during the ask: resolved again, refused, nothing searched", () =>
    Effect.gen(function* () {
      const outside = yield* tempDir()
      write(outside, { "x.txt": "needle outside\n" })
      const result = yield* inLocation(search, { "sub/a.txt": "needle\n", "other/b.txt": "needle other\n" }, (dir) =>
        Effect.gen(function* () {
          const swap = (target: string) =>
            Effect.sync(() => {
              fs.rmSync(path.join(dir, "sub"), { recursive: true, force: true })
              fs.symlinkSync(target, path.join(dir, "sub"))
            })
          yield* FakePermission.afterApproval("grep", swap(path.join(dir, "other")))
          const inside = yield* settle({ pattern: "needle", path: "sub" })
          fs.rmSync(path.join(dir, "sub"))
          fs.mkdirSync(path.join(dir, "sub"))
          yield* FakePermission.afterApproval("grep", swap(outside))
          const out = yield* settle({ pattern: "needle", path: "sub" })
          return { inside, out }
        }),
      )
      expect(result.inside.result).toEqual({
        type: "error",
        value: "Unable to search sub: it resolved to another place after permission was asked",
      })
      // Refused on the second resolution (`LocationMutation.recheck`): the root changed, whatever it leads to now.
      expect(result.out.result).toEqual({
        type: "error",
        value: "Unable to search sub: it resolved to another place after permission was asked",
      })
    }),
  )

  it.scoped.skipIf(skip)("grep NUL in pattern, include or path: tool errors, nothing asked", () =>
    inLocation(search, { "a.txt": "needle\n" }, () =>
      Effect.gen(function* () {
        expect((yield* settle({ pattern: "a\0" })).result).toEqual({
          type: "error",
          value: "Unable to grep: the pattern contains a NUL byte",
        })
        expect((yield* settle({ pattern: "a", include: "\0" })).result).toEqual({
          type: "error",
          value: "Unable to grep: the include contains a NUL byte",
        })
        expect((yield* settle({ pattern: "a", path: "x\0" })).result).toEqual({
          type: "error",
          value: "Unable to search x\\u0000: the path contains a NUL byte",
        })
        expect(yield* FakePermission.asserts).toEqual([])
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep missing path: searches the parent directory", () =>
    inLocation(search, { "src/a.ts": "needle\n", "b.ts": "needle\n" }, () =>
      Effect.gen(function* () {
        const settled = yield* settle({ pattern: "needle", path: "src/nope.ts" })
        expect(places(settled)).toEqual(["src/a.ts:1"])
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep invalid pattern: ( gives Unable to grep for (", () =>
    inLocation(search, { "a.ts": "needle\n" }, () =>
      Effect.gen(function* () {
        const settled = yield* settle({ pattern: "(" })
        expect(settled.result).toEqual({ type: "error", value: "Unable to grep for (" })
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep ordering and limit: files in path order, lines in order, limit cuts in that order", () =>
    inLocation(search, { "b.ts": "needle\nx\nneedle\n", "a.ts": "needle\n", "a/x.ts": "x\nneedle\n" }, () =>
      Effect.gen(function* () {
        const all = yield* settle({ pattern: "needle" })
        expect(places(all)).toEqual(["a/x.ts:2", "a.ts:1", "b.ts:1", "b.ts:3"])
        const limited = yield* settle({ pattern: "needle", limit: 3 })
        expect(places(limited)).toEqual(["a/x.ts:2", "a.ts:1", "b.ts:1"])
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep long line: 3000 characters are cut to 2000 plus ...; a line over 64 KiB fails", () =>
    Effect.gen(function* () {
      const long = `${"x".repeat(2994)}needle\n`
      const cut = yield* inLocation(search, { "long.txt": long }, () => settle({ pattern: "needle" }))
      expect(structured(cut)[0]?.text).toBe(`${long.slice(0, 2000)}...`)
      expect(structured(cut)[0]?.submatches).toEqual([{ text: "needle", start: 2994, end: 3000 }])
      const huge = yield* inLocation(search, { "huge.txt": `${"y".repeat(70_000)} needle\n` }, () =>
        settle({ pattern: "needle" }),
      )
      expect(huge.result).toEqual({ type: "error", value: "Unable to grep for needle" })
    }),
  )

  it.scoped.skipIf(skip)("grep multibyte offsets: in `é needle` the submatch starts at byte 3", () =>
    inLocation(search, { "m.txt": "ü\né needle é needle\n" }, () =>
      Effect.gen(function* () {
        const [match] = structured(yield* settle({ pattern: "needle" }))
        expect(match?.offset).toBe(3)
        expect(match?.submatches).toEqual([
          { text: "needle", start: 3, end: 9 },
          { text: "needle", start: 13, end: 19 },
        ])
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep permission: the exact assert, with undefined metadata keys present", () =>
    inLocation(search, { "a.ts": "needle\n" }, () =>
      Effect.gen(function* () {
        yield* settle({ pattern: "needle" })
        const [assert, ...rest] = yield* FakePermission.asserts
        expect(rest).toEqual([])
        expect(assert).toEqual({
          sessionID: "ses_tool",
          agent: "build",
          source: { type: "tool", messageID: "msg_tool_test", callID: "call-grep" },
          action: "grep",
          resources: ["needle"],
          save: ["*"],
          metadata: { root: ".", path: undefined, include: undefined, limit: undefined },
        })
        expect(Object.keys(assert!.metadata!)).toEqual(["root", "path", "include", "limit"])
        yield* settle({ pattern: "needle", path: "src", include: "*.ts", limit: 2 })
        const asserts = yield* FakePermission.asserts
        expect(asserts[1]?.metadata).toEqual({ root: ".", path: "src", include: "*.ts", limit: 2 })
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep empty: no match gives No files found", () =>
    inLocation(search, { "a.ts": "hay\n" }, () =>
      Effect.gen(function* () {
        const settled = yield* settle({ pattern: "needle" })
        expect(settled.result).toEqual({ type: "text", value: "No files found" })
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep: blocked and corrected asserts map through toToolFailure", () =>
    inLocation(search, { "a.ts": "needle\n" }, () =>
      Effect.gen(function* () {
        const fake = yield* FakePermission.FakePermissionState
        yield* Ref.update(fake.corrected, (map) => new Map([...map, ["grep", "look in docs"]]))
        const corrected = yield* settle({ pattern: "needle" })
        expect(corrected.result).toEqual({
          type: "error",
          value:
            "The user rejected permission to use this specific tool call with the following feedback: look in docs",
        })
        yield* FakePermission.deny("grep")
        const blocked = yield* settle({ pattern: "needle" })
        expect(blocked.result).toEqual({
          type: "error",
          value: "Permission denied by configured rules for grep: needle",
        })
      }),
    ),
  )
})
