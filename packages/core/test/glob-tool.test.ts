import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { GlobTool } from "../src/index.js"
import { tempDir } from "./support/location.js"
import * as FakePermission from "./support/permission.js"
import { engines as searchEngines, searchTool, write } from "./support/search-tool.js"

const engines = searchEngines("glob-tool")
const { settle, inLocation } = searchTool(GlobTool.name, GlobTool.layer)

describe.each(engines)("glob ($engine engine)", ({ search, skip }) => {
  it.scoped.skipIf(skip)(
    "glob basic: basename matching, path order, Location-relative entries, absolute model text",
    () =>
      inLocation(search, { "a.ts": "", "src/b.ts": "", "src/readme.md": "", "a/z.ts": "", "a-b/c.ts": "" }, (dir) =>
        Effect.gen(function* () {
          const settled = yield* settle({ pattern: "*.ts" })
          const paths = ["a/z.ts", "a-b/c.ts", "a.ts", "src/b.ts"]
          expect(settled.output?.structured).toEqual(paths.map((p) => ({ path: p, type: "file" })))
          expect(settled.result).toEqual({ type: "text", value: paths.map((p) => path.join(dir, p)).join("\n") })
        }),
      ),
  )

  it.scoped.skipIf(skip)("glob anchored path pattern: src/*.ts does not cross /, src/**/*.ts does", () =>
    inLocation(search, { "src/b.ts": "", "src/x/c.ts": "", "b.ts": "" }, () =>
      Effect.gen(function* () {
        const single = yield* settle({ pattern: "src/*.ts" })
        expect(single.output?.structured).toEqual([{ path: "src/b.ts", type: "file" }])
        const deep = yield* settle({ pattern: "src/**/*.ts" })
        expect(deep.output?.structured).toEqual([
          { path: "src/b.ts", type: "file" },
          { path: "src/x/c.ts", type: "file" },
        ])
      }),
    ),
  )

  it.scoped.skipIf(skip)(
    "glob hidden and ignored: hidden and ignored dirs not walked, .git never, whitelisted .notes.md listed",
    () =>
      inLocation(
        search,
        {
          ".git/HEAD": "ref: refs/heads/main\n",
          ".git/c.md": "",
          ".gitignore": "dist/\n",
          ".cache/a.md": "",
          "dist/b.md": "",
          ".notes.md": "",
          "docs/d.md": "",
        },
        () =>
          Effect.gen(function* () {
            const settled = yield* settle({ pattern: "*.md" })
            expect(settled.output?.structured).toEqual([
              { path: ".notes.md", type: "file" },
              { path: "docs/d.md", type: "file" },
            ])
          }),
      ),
  )

  it.scoped.skipIf(skip)("glob limit: limit 1 returns only the first entry in path order", () =>
    inLocation(search, { "b.ts": "", "a/x.ts": "", "a.ts": "" }, (dir) =>
      Effect.gen(function* () {
        const settled = yield* settle({ pattern: "*.ts", limit: 1 })
        expect(settled.output?.structured).toEqual([{ path: "a/x.ts", type: "file" }])
        expect(settled.result).toEqual({ type: "text", value: path.join(dir, "a/x.ts") })
      }),
    ),
  )

  it.scoped.skipIf(skip)("glob empty: no match gives No files found", () =>
    inLocation(search, { "a.ts": "" }, () =>
      Effect.gen(function* () {
        const settled = yield* settle({ pattern: "*.rs" })
        expect(settled.result).toEqual({ type: "text", value: "No files found" })
        expect(settled.output?.structured).toEqual([])
      }),
    ),
  )

  it.scoped.skipIf(skip)("glob permission: the exact assert, with undefined metadata keys present", () =>
    inLocation(search, { "a.ts": "" }, () =>
      Effect.gen(function* () {
        yield* settle({ pattern: "*.ts" })
        const asserts = yield* FakePermission.asserts
        expect(asserts).toHaveLength(1)
        const [assert] = asserts
        expect(assert).toEqual({
          sessionID: "ses_tool",
          agent: "build",
          source: { type: "tool", messageID: "msg_tool_test", callID: "call-glob" },
          action: "glob",
          resources: ["*.ts"],
          save: ["*"],
          metadata: { root: ".", path: undefined, limit: undefined },
        })
        expect(Object.keys(assert!.metadata!)).toEqual(["root", "path", "limit"])
      }),
    ),
  )

  it.scoped.skipIf(skip)("glob path: searches a relative directory and reports entries relative to the Location", () =>
    inLocation(search, { "a.ts": "", "src/b.ts": "", "src/x/c.ts": "" }, () =>
      Effect.gen(function* () {
        const settled = yield* settle({ pattern: "*.ts", path: "src", limit: 5 })
        expect(settled.output?.structured).toEqual([
          { path: "src/b.ts", type: "file" },
          { path: "src/x/c.ts", type: "file" },
        ])
        const [assert] = yield* FakePermission.asserts
        expect(assert?.metadata).toEqual({ root: "src", path: "src", limit: 5 })
      }),
    ),
  )

  // The reference leaves `path` unconfined; here an outside root needs external_directory first (docs/trust/search.md).
  it.scoped.skipIf(skip)("glob path outside the Location asserts external_directory, then glob", () =>
    Effect.gen(function* () {
      const outside = yield* tempDir()
      write(outside, { "far.ts": "" })
      const result = yield* inLocation(search, {}, (dir) =>
        Effect.gen(function* () {
          const settled = yield* settle({ pattern: "*.ts", path: outside })
          return { dir, settled, asserts: yield* FakePermission.asserts }
        }),
      )
      expect(result.settled.output?.structured).toEqual([
        { path: path.relative(result.dir, path.join(outside, "far.ts")), type: "file" },
      ])
      expect(result.asserts.map((input) => [input.action, input.resources, input.save])).toEqual([
        ["external_directory", [`${outside}/*`], [`${outside}/*`]],
        ["glob", ["*.ts"], ["*"]],
      ])
    }),
  )

  it.scoped.skipIf(skip)("glob path: a denied external_directory names it and nothing is searched", () =>
    Effect.gen(function* () {
      const outside = yield* tempDir()
      write(outside, { "far.ts": "" })
      const result = yield* inLocation(search, {}, () =>
        Effect.gen(function* () {
          yield* FakePermission.deny("external_directory")
          return { settled: yield* settle({ pattern: "*.ts", path: outside }), actions: yield* FakePermission.actions }
        }),
      )
      expect(result.settled.result).toEqual({
        type: "error",
        value: `Permission denied by configured rules for external_directory: ${outside}/*`,
      })
      expect(result.actions).toEqual(["external_directory"])
    }),
  )

  it.scoped.skipIf(skip)("glob path: a relative escape is refused before any permission is asked", () =>
    inLocation(search, { "a.ts": "" }, () =>
      Effect.gen(function* () {
        const settled = yield* settle({ pattern: "*.ts", path: "../" })
        expect(settled.result).toEqual({
          type: "error",
          value:
            "Unable to search ../: a relative path must stay inside the Location (an absolute path outside it needs approval)",
        })
        expect(yield* FakePermission.asserts).toEqual([])
      }),
    ),
  )

  it.scoped.skipIf(skip)("glob pattern with a NUL byte: a tool error before any permission is asked", () =>
    inLocation(search, { "a.ts": "" }, () =>
      Effect.gen(function* () {
        const settled = yield* settle({ pattern: "*.ts\0" })
        expect(settled.result).toEqual({
          type: "error",
          value: "Unable to find files: the pattern contains a NUL byte",
        })
        expect(yield* FakePermission.asserts).toEqual([])
      }),
    ),
  )

  it.scoped.skipIf(skip)("glob failures: a missing path and an invalid glob give the generic message", () =>
    inLocation(search, { "a.ts": "" }, () =>
      Effect.gen(function* () {
        const missing = yield* settle({ pattern: "*.ts", path: "does-not-exist" })
        expect(missing.result).toEqual({ type: "error", value: "Unable to find files matching *.ts" })
        const invalid = yield* settle({ pattern: "{a" })
        expect(invalid.result).toEqual({ type: "error", value: "Unable to find files matching {a" })
      }),
    ),
  )

  it.scoped.skipIf(skip)("glob: a blocked assert names the action and the pattern; nothing is searched", () =>
    inLocation(search, { "a.ts": "" }, () =>
      Effect.gen(function* () {
        yield* FakePermission.deny("glob")
        const settled = yield* settle({ pattern: "*.ts" })
        expect(settled.result).toEqual({ type: "error", value: "Permission denied by configured rules for glob: *.ts" })
      }),
    ),
  )

  it.scoped.skipIf(skip)("glob: a correction reaches the model verbatim", () =>
    inLocation(search, { "a.ts": "" }, () =>
      Effect.gen(function* () {
        const fake = yield* FakePermission.FakePermissionState
        yield* Ref.update(fake.corrected, (map) => new Map([...map, ["glob", "search only src"]]))
        const settled = yield* settle({ pattern: "*.ts" })
        expect(settled.result).toEqual({
          type: "error",
          value:
            "The user rejected permission to use this specific tool call with the following feedback: search only src",
        })
      }),
    ),
  )
})
