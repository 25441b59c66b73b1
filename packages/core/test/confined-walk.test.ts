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

describe("ConfinedWalk.walk", () => {
  it.effect("returns the files inside, skips and reports every entry that leaves the root, walks a loop once", () =>
    Effect.gen(function* () {
      const { root, outside } = tree()
      const skipped: Array<ConfinedWalk.Outside> = []
      const files = yield* ConfinedWalk.walk(root, {
        onOutside: (entry) => Effect.sync(() => void skipped.push(entry)),
      })
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
