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
