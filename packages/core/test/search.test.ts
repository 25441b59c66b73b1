import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Either, Exit, FastCheck, Fiber } from "effect"
import { Search } from "../src/index.js"
import { alive, pollWhile } from "./support/process-tree.js"

const hasRg = spawnSync("rg", ["--version"]).status === 0
if (!hasRg) console.warn("search: `rg` is not on PATH; ripgrep engine and differential tests are skipped")

const node = Search.make({ _tag: "node" })
const ripgrep = Search.make({ _tag: "ripgrep", rgPath: "rg" })
const engines = [
  { engine: "node", search: node, skip: false },
  { engine: "ripgrep", search: ripgrep, skip: !hasRg },
] as const

const makeDir = (files: Record<string, string | Buffer>): string => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-search-")))
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), content)
  }
  return root
}

const withDir = <A>(files: Record<string, string | Buffer>, body: (dir: string) => Promise<A>): Promise<A> => {
  const dir = makeDir(files)
  return body(dir).finally(() => fs.rmSync(dir, { recursive: true, force: true }))
}

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(effect))

describe("path form and order", () => {
  it("normalizePath strips ./ repeatedly, then leading slashes, then turns \\ into /", () => {
    expect(Search.normalizePath("././a/b")).toBe("a/b")
    expect(Search.normalizePath(".\\a\\b")).toBe("a/b")
    expect(Search.normalizePath("//a/b")).toBe("a/b")
    expect(Search.normalizePath("./.hidden/x")).toBe(".hidden/x")
  })

  it("comparePaths is component-wise UTF-8 byte order with prefixes first", () => {
    const component = FastCheck.stringOf(FastCheck.constantFrom("a", "b", "-", ".", "é", "\uFF21", "😀", "Z"), {
      minLength: 1,
      maxLength: 3,
    })
    const pathArb = FastCheck.array(component, { minLength: 1, maxLength: 3 }).map((parts) => parts.join("/"))
    FastCheck.assert(
      FastCheck.property(pathArb, pathArb, (a, b) => {
        const left = a.split("/").map((part) => Buffer.from(part))
        const right = b.split("/").map((part) => Buffer.from(part))
        let expected = 0
        for (let i = 0; i < Math.min(left.length, right.length) && expected === 0; i++) {
          expected = Buffer.compare(left[i]!, right[i]!)
        }
        if (expected === 0) expected = left.length - right.length
        return Math.sign(Search.comparePaths(a, b)) === Math.sign(expected)
      }),
    )
    expect(["a.ts", "a-b/c.ts", "a/z.ts"].sort(Search.comparePaths)).toEqual(["a/z.ts", "a-b/c.ts", "a.ts"])
    expect(["\uFF21", "😀"].sort(Search.comparePaths)).toEqual(["\uFF21", "😀"])
  })
})

describe("ripgrep arguments", () => {
  it("are exactly the documented ones", () => {
    expect(Search.globArgs("*.ts")).toEqual([
      "--no-config",
      "--files",
      "--sort=path",
      "--glob=*.ts",
      "--glob=!**/.git/**",
      ".",
    ])
    expect(Search.grepArgs("a(b", "*.md", undefined)).toEqual([
      "--no-config",
      "--json",
      "--hidden",
      "--no-messages",
      "--sort=path",
      "--glob=*.md",
      "--glob=!**/.git/**",
      "--",
      "a(b",
      ".",
    ])
    expect(Search.grepArgs("-x", undefined, "file.txt")).toEqual([
      "--no-config",
      "--json",
      "--hidden",
      "--no-messages",
      "--sort=path",
      "--glob=!**/.git/**",
      "--",
      "-x",
      "file.txt",
    ])
  })
})

describe("engine selection", () => {
  it.effect("an explicit rgPath wins; otherwise rg on PATH when it runs", () =>
    Effect.gen(function* () {
      expect(yield* Search.detect({ rgPath: "/opt/rg" })).toEqual({ _tag: "ripgrep", rgPath: "/opt/rg" })
      expect(yield* Search.detect()).toEqual(hasRg ? { _tag: "ripgrep", rgPath: "rg" } : { _tag: "node" })
    }),
  )
})

describe.each(engines)("shared engine rules ($engine)", ({ search, skip }) => {
  it.skipIf(skip)("limit stops early: a huge record after the limit is never reached", () =>
    withDir({ "a.txt": "needle\nneedle\n", "b.txt": `${"z".repeat(70_000)} needle\n` }, async (cwd) => {
      expect(await run(search.grep({ cwd, pattern: "needle", limit: 1 }))).toEqual(
        Either.right([
          {
            entry: { path: "a.txt", type: "file" },
            line: 1,
            offset: 0,
            text: "needle\n",
            submatches: [{ text: "needle", start: 0, end: 6 }],
          },
        ]),
      )
      const all = await run(search.grep({ cwd, pattern: "needle", limit: 10 }))
      expect(all).toEqual(Either.left(new Search.Error({ message: "Ripgrep JSON record exceeded 65536 bytes" })))
    }),
  )

  it.skipIf(skip)("an explicitly named file is searched even when hidden or outside the include glob", () =>
    withDir({ ".secret.md": "needle\n", "other.ts": "needle\n" }, async (cwd) => {
      const result = await run(search.grep({ cwd, pattern: "needle", file: ".secret.md", include: "*.ts", limit: 10 }))
      expect(Either.map(result, (rows) => rows.map((row) => row.entry.path))).toEqual(Either.right([".secret.md"]))
    }),
  )

  it.skipIf(skip)("a file containing NUL is not searched; symlinks are not followed", () =>
    withDir({ "bin.dat": Buffer.from("needle\0\n"), "real/t.txt": "needle\n" }, async (cwd) => {
      fs.symlinkSync(path.join(cwd, "real"), path.join(cwd, "link"))
      fs.symlinkSync(path.join(cwd, "real/t.txt"), path.join(cwd, "t-link.txt"))
      const grep = await run(search.grep({ cwd, pattern: "needle", limit: 10 }))
      expect(Either.map(grep, (rows) => rows.map((row) => row.entry.path))).toEqual(Either.right(["real/t.txt"]))
      const glob = await run(search.glob({ cwd, pattern: "*.txt", limit: 10 }))
      expect(glob).toEqual(Either.right([{ path: "real/t.txt", type: "file" }]))
    }),
  )

  it.skipIf(skip)("a missing cwd is a Search.Error", async () => {
    const result = await run(
      search.glob({ cwd: path.join(os.tmpdir(), "toolgate-missing-dir-xyz"), pattern: "*", limit: 5 }),
    )
    expect(Either.isLeft(result) && result.left._tag).toBe("Search.Error")
  })

  it.skipIf(skip)("an invalid regex is an InvalidPatternError; an invalid glob is a Search.Error", () =>
    withDir({ "a.txt": "x\n" }, async (cwd) => {
      const grep = await run(search.grep({ cwd, pattern: "a(", limit: 5 }))
      expect(Either.isLeft(grep) && grep.left).toMatchObject({ _tag: "Search.InvalidPatternError", pattern: "a(" })
      for (const pattern of ["{a", "[a", "[z-a]", "a\\", "{a,{b}}"]) {
        const glob = await run(search.glob({ cwd, pattern, limit: 5 }))
        expect(Either.isLeft(glob) && glob.left).toMatchObject({
          _tag: "Search.Error",
          message: expect.stringContaining(`error parsing glob '${pattern}'`),
        })
      }
    }),
  )
})

describe.each(engines)("inputs the operating system cannot take ($engine)", ({ search, skip }) => {
  it.skipIf(skip)("NUL bytes and lone surrogates are a Search.InvalidInputError naming the field, never a defect", () =>
    withDir({ "a.txt": "needle\n" }, async (cwd) => {
      const cases = [
        [search.glob({ cwd, pattern: "*\0", limit: 5 }), "pattern", "nul_byte"],
        [search.glob({ cwd: `${cwd}\0`, pattern: "*", limit: 5 }), "path", "nul_byte"],
        [search.glob({ cwd, pattern: "\uD83D", limit: 5 }), "pattern", "malformed_unicode"],
        [search.grep({ cwd, pattern: "a\0", limit: 5 }), "pattern", "nul_byte"],
        [search.grep({ cwd, pattern: "a", include: "*.txt\0", limit: 5 }), "include", "nul_byte"],
        [search.grep({ cwd, pattern: "a", file: "a.txt\0", limit: 5 }), "path", "nul_byte"],
        [search.grep({ cwd, pattern: "a", include: "\uDE00x", limit: 5 }), "include", "malformed_unicode"],
      ] as const
      for (const [effect, field, reason] of cases) {
        const exit = await Effect.runPromiseExit<unknown, unknown>(effect)
        expect(exit).toMatchObject({ _tag: "Failure", cause: { _tag: "Fail" } })
        expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toMatchObject({
          value: { _tag: "Search.InvalidInputError", field, reason },
        })
      }
      // A well-formed pair (an emoji) is fine.
      expect(await run(search.grep({ cwd, pattern: "\uD83D\uDE00", limit: 5 }))).toEqual(Either.right([]))
    }),
  )
})

describe("ripgrep process handling", () => {
  it("a spawn that Node refuses synchronously is a Search.Error, not a defect", async () => {
    const engine = Search.make({ _tag: "ripgrep", rgPath: "rg\0" })
    const exit = await Effect.runPromiseExit(engine.glob({ cwd: os.tmpdir(), pattern: "*", limit: 1 }))
    expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toMatchObject({ value: { _tag: "Search.Error" } })
  })

  const script = (dir: string, body: string) => {
    const file = path.join(dir, "fake-rg")
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
    return Search.make({ _tag: "ripgrep", rgPath: file })
  }
  const emit = (json: string) => `printf '%s\\n' '${json}'`
  const grep = (engine: Search.Interface, cwd: string) => run(engine.grep({ cwd, pattern: "p", limit: 10 }))

  it("exit codes, stderr and malformed output", () =>
    withDir({}, async (dir) => {
      expect(await grep(script(dir, "echo '  boom  ' >&2; exit 3"), dir)).toEqual(
        Either.left(new Search.Error({ message: "boom" })),
      )
      expect(await grep(script(dir, "exit 4"), dir)).toEqual(
        Either.left(new Search.Error({ message: "ripgrep failed with code 4" })),
      )
      expect(await grep(script(dir, "exit 1"), dir)).toEqual(Either.right([]))
      const invalidJson = await grep(script(dir, "echo '{nope'"), dir)
      expect(Either.isLeft(invalidJson) && invalidJson.left.message).toBe("Invalid ripgrep JSON output")
      const bytes = `{"type":"match","data":{"path":{"bytes":"YQ=="},"lines":{"text":"p\\n"},"line_number":1,"absolute_offset":0,"submatches":[]}}`
      const invalidMatch = await grep(script(dir, `${emit(bytes)}`), dir)
      expect(Either.isLeft(invalidMatch) && invalidMatch.left.message).toBe("Invalid ripgrep match output")
      const row = `{"type":"match","data":{"path":{"text":"./x"},"lines":{"text":"p\\n"},"line_number":1,"absolute_offset":0,"submatches":[{"match":{"text":"p"},"start":0,"end":1}]}}`
      const partial = await grep(
        script(dir, `echo '{"type":"begin"}'; ${emit(row)}; echo 'some io error' >&2; exit 2`),
        dir,
      )
      expect(Either.map(partial, (rows) => rows.map((r) => r.entry.path))).toEqual(Either.right(["x"]))
      const invalid = await grep(script(dir, "echo 'regex parse error: x' >&2; exit 2"), dir)
      expect(invalid).toEqual(
        Either.left(new Search.InvalidPatternError({ pattern: "p", message: "regex parse error: x" })),
      )
      const many = Array.from({ length: 200 }, (_, i) => `{"match":{"text":"p"},"start":${i},"end":${i + 1}}`).join(",")
      const wide = `{"type":"match","data":{"path":{"text":"x"},"lines":{"text":"p"},"line_number":1,"absolute_offset":0,"submatches":[${many}]}}`
      const capped = await grep(script(dir, `${emit(wide)}`), dir)
      expect(Either.map(capped, (rows) => rows[0]?.submatches.length)).toEqual(Either.right(100))
    }))

  it("stderr is capped at 8 KiB and a missing binary is a Search.Error", () =>
    withDir({}, async (dir) => {
      const result = await grep(script(dir, "head -c 20000 /dev/zero | tr '\\0' e >&2; exit 5"), dir)
      expect(Either.isLeft(result) && result.left.message.length).toBe(8192)
      const missing = await grep(Search.make({ _tag: "ripgrep", rgPath: path.join(dir, "no-such-rg") }), dir)
      expect(Either.isLeft(missing) && missing.left._tag).toBe("Search.Error")
    }))

  /** The pid the fake rg wrote to `file`, once it has (bounded: 30 s). */
  const pidFrom = async (file: string): Promise<number> => {
    await Effect.runPromise(pollWhile(() => !/^\d+\n$/.test(readOr(file)), 30_000))
    const pid = Number(readOr(file))
    expect(pid, "the fake rg did not start").toBeGreaterThan(0)
    return pid
  }
  const readOr = (file: string): string => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "")

  it("interrupting a search kills the child", () =>
    withDir({}, async (dir) => {
      const started = path.join(dir, "started")
      const marker = path.join(dir, "finished")
      const engine = script(dir, `echo $$ > ${started}; sleep 30; touch ${marker}`)
      const fiber = Effect.runFork(engine.grep({ cwd: dir, pattern: "p", limit: 10 }))
      const pid = await pidFrom(started)
      await Effect.runPromise(Fiber.interrupt(fiber))
      // Killed, the script is gone long before its sleep ends, and never reaches `touch`.
      await Effect.runPromise(pollWhile(() => alive(pid), 10_000))
      expect(alive(pid)).toBe(false)
      expect(fs.existsSync(marker)).toBe(false)
    }))

  it("the child is killed once limit + 1 rows were seen", () =>
    withDir({}, async (dir) => {
      const started = path.join(dir, "started")
      const marker = path.join(dir, "finished")
      const row = `{"type":"match","data":{"path":{"text":"x"},"lines":{"text":"p"},"line_number":1,"absolute_offset":0,"submatches":[]}}`
      const engine = script(dir, `echo $$ > ${started}; ${emit(row)}; ${emit(row)}; sleep 30; touch ${marker}`)
      const result = await run(engine.grep({ cwd: dir, pattern: "p", limit: 1 }))
      expect(Either.map(result, (rows) => rows.length)).toEqual(Either.right(1))
      const pid = await pidFrom(started)
      await Effect.runPromise(pollWhile(() => alive(pid), 10_000))
      expect(alive(pid)).toBe(false)
      expect(fs.existsSync(marker)).toBe(false)
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// Differential tests: the Node engine against real rg on generated trees.

const dirs = ["", "src/", "src/deep/", "lib/", ".hidden/", "build/", "node_modules/pkg/", "a-b/", "a/", "docs/"]
const names = ["a.ts", "b.js", ".env", "x.md", "keep.log", "debug.log", "README.md", "é.txt", "a"]
const rootIgnoreLines = [
  "*.log",
  "!keep.log",
  "build/",
  "/docs/x.md",
  "node_modules",
  "lib/**/b.js",
  ".hidden/",
  "!.env",
  "src/*.md",
  "a",
  "deep/",
  "!src/deep/",
  "**/a.ts",
  "#comment",
  "/a-b",
]
const nestedIgnoreLines = ["!*.log", "a.ts", "!x.md", "*.md", "deep", "/b.js"]
const dotIgnoreLines = ["b.js", "!build/", "*.txt", "!debug.log"]

const treeArb = FastCheck.record({
  files: FastCheck.uniqueArray(
    FastCheck.record({
      dir: FastCheck.constantFrom(...dirs),
      name: FastCheck.constantFrom(...names),
      needle: FastCheck.boolean(),
    }),
    { minLength: 1, maxLength: 18, selector: (file) => file.dir + file.name },
  ),
  git: FastCheck.boolean(),
  gitignore: FastCheck.subarray(rootIgnoreLines),
  nested: FastCheck.subarray(nestedIgnoreLines),
  dotIgnore: FastCheck.subarray(dotIgnoreLines),
  exclude: FastCheck.subarray(["*.js", "README.md"]),
})

const globPatterns = [
  "*.ts",
  "**/*.md",
  "src/**",
  "*.{ts,js}",
  ".env",
  "*",
  "**/b.js",
  "src/*.log",
  "!*.ts",
  "a",
  "[a-c].*",
  "deep/",
  "src/deep/**",
  "a**",
]
const includes = [undefined, "*.ts", "*.{md,log}", "src/**", "!*.md", ".*"]

const materialize = (tree: typeof treeArb extends FastCheck.Arbitrary<infer T> ? T : never) => {
  const files: Record<string, string> = {}
  for (const file of tree.files) {
    // A file name may collide with a directory of the same path; keep the directory.
    if (dirs.some((dir) => dir.startsWith(`${file.dir}${file.name}/`))) continue
    files[file.dir + file.name] = file.needle ? `line\nthe needle é\nneedle again\n` : "hay\n"
  }
  if (tree.gitignore.length > 0) files[".gitignore"] = tree.gitignore.join("\n") + "\n"
  if (tree.nested.length > 0) files["src/.gitignore"] = tree.nested.join("\n") + "\n"
  if (tree.dotIgnore.length > 0) files[".ignore"] = tree.dotIgnore.join("\n") + "\n"
  if (tree.git) {
    files[".git/HEAD"] = "ref: refs/heads/main\n"
    files[".git/info/exclude"] = tree.exclude.join("\n") + "\n"
  }
  return files
}

describe.skipIf(!hasRg)("differential: Node engine versus rg", () => {
  it("glob and grep give identical rows on generated trees", { timeout: 120_000 }, async () => {
    await FastCheck.assert(
      FastCheck.asyncProperty(treeArb, async (tree) =>
        withDir(materialize(tree), async (cwd) => {
          for (const pattern of globPatterns) {
            const expected = await run(ripgrep.glob({ cwd, pattern, limit: 1000 }))
            const actual = await run(node.glob({ cwd, pattern, limit: 1000 }))
            expect({ pattern, rows: actual }).toEqual({ pattern, rows: expected })
          }
          for (const include of includes) {
            const expected = await run(ripgrep.grep({ cwd, pattern: "needle", include, limit: 1000 }))
            const actual = await run(node.grep({ cwd, pattern: "needle", include, limit: 1000 }))
            expect({ include, rows: actual }).toEqual({ include, rows: expected })
          }
        }),
      ),
      { numRuns: 25 },
    )
  })

  it("ignore files of parent directories apply up to the repository root; .ignore above it too", () =>
    withDir(
      {
        ".ignore": "outer-ignored.txt\n",
        ".gitignore": "outer-git.txt\n",
        "repo/.git/HEAD": "x\n",
        "repo/.gitignore": "*.log\n",
        "repo/sub/a.log": "needle\n",
        "repo/sub/outer-ignored.txt": "needle\n",
        "repo/sub/outer-git.txt": "needle\n",
        "repo/sub/kept.txt": "needle\n",
      },
      async (dir) => {
        const cwd = path.join(dir, "repo/sub")
        for (const engine of [ripgrep, node]) {
          const rows = await run(engine.grep({ cwd, pattern: "needle", limit: 100 }))
          expect(Either.map(rows, (all) => all.map((row) => row.entry.path))).toEqual(
            Either.right(["kept.txt", "outer-git.txt"]),
          )
        }
      },
    ))

  it("whitelisting globs override hidden and gitignored entries the same way (O3)", () =>
    withDir(
      {
        ".git/HEAD": "x\n",
        ".gitignore": "*.md\nignored/\n",
        ".hidden/a.md": "needle\n",
        "ignored/b.md": "needle\n",
        "c.md": "needle\n",
        ".d.md": "needle\n",
      },
      async (cwd) => {
        for (const pattern of ["*.md", "**", ".hidden/*.md", "ignored/**", "{.hidden,ignored}"]) {
          const expected = await run(ripgrep.glob({ cwd, pattern, limit: 100 }))
          expect(await run(node.glob({ cwd, pattern, limit: 100 }))).toEqual(expected)
        }
        const expected = await run(ripgrep.glob({ cwd, pattern: "*.md", limit: 100 }))
        expect(Either.map(expected, (rows) => rows.map((row) => row.path))).toEqual(Either.right([".d.md", "c.md"]))
      },
    ))

  it("regexes meaning the same in both dialects give identical matches", () =>
    withDir({ "a.txt": "foo bar\r\nBaz qux 12\n\tindent é ü\nlast-line", "b.txt": "x\n\nfoo\n" }, async (cwd) => {
      for (const pattern of ["^foo", "qux \\d+", "\\bba", "[a-z]+$", "é|ü", "^$", "o{2}", "\\r", "^\\t", "line$"]) {
        const expected = await run(ripgrep.grep({ cwd, pattern, limit: 100 }))
        expect({ pattern, rows: await run(node.grep({ cwd, pattern, limit: 100 })) }).toEqual({
          pattern,
          rows: expected,
        })
      }
    }))
})
