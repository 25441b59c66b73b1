import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { ConfinedWalk } from "../src/index.js"

const tree = () => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-walk-")))
  const root = path.join(base, "root")
  const outside = path.join(base, "outside")
  fs.mkdirSync(path.join(root, "a", "b"), { recursive: true })
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(root, "top.md"), "top")
  fs.writeFileSync(path.join(root, "top.txt"), "top")
  fs.writeFileSync(path.join(root, "a", "b", "deep.md"), "deep")
  fs.writeFileSync(path.join(outside, "secret.md"), "secret")
  fs.symlinkSync(outside, path.join(root, "a", "out-dir"))
  fs.symlinkSync(path.join(outside, "secret.md"), path.join(root, "linked.md"))
  fs.symlinkSync(root, path.join(root, "a", "loop"))
  fs.symlinkSync(path.join(root, "top.md"), path.join(root, "a", "inside-link.md"))
  return { base, root, outside }
}

/** What walking the whole of `tree()` from its root finds and skips. */
const expectWholeTree = (
  { root, outside }: { readonly root: string; readonly outside: string },
  files: ReadonlyArray<string>,
  skipped: ReadonlyArray<ConfinedWalk.Outside>,
) => {
  expect(files).toEqual(
    [
      path.join(root, "a", "b", "deep.md"),
      path.join(root, "a", "inside-link.md"),
      path.join(root, "top.md"),
      path.join(root, "top.txt"),
    ].sort(),
  )
  expect(skipped.map((entry) => [entry.entry, entry.real, entry.root]).sort()).toEqual(
    [
      [path.join(root, "a", "out-dir"), outside, root],
      [path.join(root, "linked.md"), path.join(outside, "secret.md"), root],
    ].sort(),
  )
}

describe("ConfinedWalk.walk", () => {
  it.effect("returns the files inside, skips and reports every entry that leaves the root, walks a loop once", () =>
    Effect.gen(function* () {
      const { root, outside } = tree()
      const skipped: Array<ConfinedWalk.Outside> = []
      const files = yield* ConfinedWalk.walk(root, {
        onOutside: (entry) => Effect.sync(() => void skipped.push(entry)),
      })
      expectWholeTree({ root, outside }, files, skipped)
    }).pipe(Effect.provide(NodeFileSystem.layer)),
  )

  it.effect("include filters files by name; recursive false stays in the directory", () =>
    Effect.gen(function* () {
      const { root } = tree()
      const md = yield* ConfinedWalk.walk(root, { include: (name) => name.endsWith(".md"), recursive: false })
      expect(md).toEqual([path.join(root, "top.md")])
    }).pipe(Effect.provide(NodeFileSystem.layer)),
  )

  it.effect("a walked directory outside an explicit root is skipped whole", () =>
    Effect.gen(function* () {
      const { root, outside } = tree()
      const skipped: Array<string> = []
      const files = yield* ConfinedWalk.walk(path.join(root, "a", "out-dir"), {
        root,
        onOutside: (entry) => Effect.sync(() => void skipped.push(entry.real)),
      })
      expect(files).toEqual([])
      expect(skipped).toEqual([outside])
    }).pipe(Effect.provide(NodeFileSystem.layer)),
  )

  it.effect("a directory that cannot be listed fails the walk unless lenient", () =>
    Effect.gen(function* () {
      const { base } = tree()
      const missing = path.join(base, "root", "missing")
      const strict = yield* Effect.exit(ConfinedWalk.walk(missing, { root: path.join(base, "root") }))
      expect(Exit.isFailure(strict)).toBe(true)
      expect(yield* ConfinedWalk.walk(missing, { root: path.join(base, "root"), lenient: true })).toEqual([])
    }).pipe(Effect.provide(NodeFileSystem.layer)),
  )
})

describe("ConfinedWalk.walkSync", () => {
  it("is the same walk: the files inside, every entry leaving the root reported as it is met, a loop walked once", () => {
    const { root, outside } = tree()
    const skipped: Array<ConfinedWalk.Outside> = []
    const files = ConfinedWalk.walkSync(root, { onOutside: (entry) => void skipped.push(entry) })
    expectWholeTree({ root, outside }, files, skipped)
  })

  it("throws the SystemError FileSystem would fail with, naming the method and the path; lenient gives nothing", () => {
    const { root } = tree()
    // A regular file as the walked directory: it resolves, but cannot be listed (root lists anything else it can).
    const file = path.join(root, "top.txt")
    let thrown: unknown
    try {
      ConfinedWalk.walkSync(file, { root })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({ _tag: "SystemError", method: "readDirectory", pathOrDescriptor: file })
    expect(ConfinedWalk.walkSync(file, { root, lenient: true })).toEqual([])
    // A root whose real path cannot be found: a failure, or nothing when lenient.
    const missing = path.join(root, "missing")
    expect(() => ConfinedWalk.walkSync(missing)).toThrow(
      expect.objectContaining({ reason: "NotFound", method: "realPath" }),
    )
    expect(ConfinedWalk.walkSync(missing, { lenient: true })).toEqual([])
  })

  it.effect(
    "walk fails with that error after reporting what it met; a throwing include is a defect, not a failure",
    () =>
      Effect.gen(function* () {
        const { root, outside } = tree()
        const reported: Array<string> = []
        const bad = yield* Effect.exit(
          ConfinedWalk.walk(path.join(root, "top.txt"), {
            root,
            onOutside: (entry) => Effect.sync(() => void reported.push(entry.real)),
          }),
        )
        expect(Exit.isFailure(bad) && bad.cause._tag === "Fail" ? bad.cause.error._tag : undefined).toBe("SystemError")
        const thrower = yield* Effect.exit(
          ConfinedWalk.walk(root, {
            include: () => {
              throw new Error("include failed")
            },
          }),
        )
        expect(Exit.isFailure(thrower) && thrower.cause._tag === "Die").toBe(true)
        const lenient = yield* ConfinedWalk.walk(path.join(root, "a", "b"), { root, lenient: true })
        expect(lenient).toEqual([path.join(root, "a", "b", "deep.md")])
        const away = yield* ConfinedWalk.walk(path.join(root, "a", "out-dir"), {
          root,
          lenient: true,
          onOutside: (entry) => Effect.sync(() => void reported.push(entry.real)),
        })
        expect(away).toEqual([])
        expect(reported).toEqual([outside])
      }),
  )
})

describe("ConfinedWalk.traverse", () => {
  it("without following links: no symlink, FIFO or socket is returned or entered, and no entry leaves the root", () => {
    const { root } = tree()
    spawnSync("mkfifo", [path.join(root, "a", "pipe")])
    const files = [...ConfinedWalk.traverse(root, { symlinks: "skip" })].map((entry) => entry.relative)
    expect(files.sort()).toEqual(["a/b/deep.md", "top.md", "top.txt"])
  })

  it("lists each folder in `compare` order, depth first, lazily", () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-walk-order-")))
    for (const name of ["b", "a-b", "a"]) fs.mkdirSync(path.join(base, name))
    for (const file of ["b/x", "a-b/x", "a/x", "a/\u{1F600}", "a/\uFF01", "Z"])
      fs.writeFileSync(path.join(base, file), "")
    // UTF-8 byte order: U+FF01 (EF BC 81) before U+1F600 (F0 9F 98 80), unlike JavaScript's UTF-16 order.
    const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))
    const walked = ConfinedWalk.traverse(base, { compare: bytes })
    expect(walked.next().value?.relative).toBe("Z")
    expect([...walked].map((entry) => entry.relative)).toEqual(["a/x", "a/\uFF01", "a/\u{1F600}", "a-b/x", "b/x"])
  })

  it("carries what `enter` makes from each folder to the folders and files below it; `accept` chooses entries", () => {
    const { root } = tree()
    fs.writeFileSync(path.join(root, "a", "skip-me"), "")
    const seen: Array<string> = []
    const files = [
      ...ConfinedWalk.traverse<ReadonlyArray<string>>(root, {
        symlinks: "skip",
        initial: [],
        enter: (folder, listing, parent) => {
          seen.push(
            `${folder?.relative ?? "."}: ${listing
              .map((item) => `${item.name}=${item.kind}`)
              .sort()
              .join(" ")}`,
          )
          return [...parent, folder?.name ?? "."]
        },
        accept: (entry, chain) => !entry.name.startsWith("skip") && (entry.directory || chain.length > 0),
      }),
    ].map((entry) => entry.relative)
    expect(files.sort()).toEqual(["a/b/deep.md", "top.md", "top.txt"])
    expect(seen).toEqual(
      expect.arrayContaining([".: a=directory linked.md=other top.md=file top.txt=file", "a/b: deep.md=file"]),
    )
  })

  it("a folder below that cannot be listed is skipped when lenient; the walked directory itself always fails", () => {
    // The walk is lazy: a folder is listed only when the walk gets to it, so one replaced by a file meanwhile cannot
    // be listed (root may list any folder, so a folder without permissions would not show it).
    const walkWithVanishing = (options: ConfinedWalk.TraverseOptions<undefined>) => {
      const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-walk-vanish-")))
      for (const folder of ["1", "2"]) fs.mkdirSync(path.join(base, folder))
      fs.writeFileSync(path.join(base, "1", "f"), "")
      fs.writeFileSync(path.join(base, "2", "g"), "")
      const found: Array<string> = []
      for (const entry of ConfinedWalk.traverse(base, { ...options, compare: (a, b) => a.localeCompare(b) })) {
        found.push(entry.relative)
        if (fs.statSync(path.join(base, "2")).isDirectory()) {
          fs.rmSync(path.join(base, "2"), { recursive: true, force: true })
          fs.writeFileSync(path.join(base, "2"), "")
        }
      }
      return found
    }
    for (const symlinks of ["skip", "follow"] as const) {
      expect(walkWithVanishing({ symlinks, lenient: true })).toEqual(["1/f"])
      expect(() => walkWithVanishing({ symlinks })).toThrow(expect.objectContaining({ _tag: "SystemError" }))
      const missing = path.join(os.tmpdir(), `toolgate-walk-missing-${process.pid}`)
      expect(() => [...ConfinedWalk.traverse(missing, { symlinks, lenient: true })]).toThrow(
        expect.objectContaining({ _tag: "SystemError", reason: "NotFound" }),
      )
    }
  })
})
