/**
 * Check at use, as a property (see docs/trust/check-at-use.md): generated paths — `..`, symlink chains in and out,
 * dangling links, loops, unicode (composed and decomposed), NUL and unpaired surrogates, trailing slashes and dots,
 * case variants — go through the real `read`, `write`, `edit` and `apply_patch` tools of a real Location whose rules
 * allow reading and editing inside, with every ask rejected. Nothing outside the Location may change, no result may
 * carry an outside byte or name, and every failure is a tool error (never a defect).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FastCheck } from "effect"
import type { Config, ToolRegistry } from "../../src/index.js"
import { caller, realLocation } from "../support/check-at-use.js"
import { tempDir } from "../support/location.js"

const OUTSIDE_MARK = "OUTSIDE_BYTES_2b7d"
/** A second line of every outside file that no generated input names: returned, it can only have been read. */
const OUTSIDE_TAIL = "OUTSIDE_TAIL_91c4"
const OUTSIDE_NAME = "outside-only-entry.txt"
/** The bytes of the outside file that is hard-linked into the Location: readable (a documented limit), never changed. */
const LINKED_MARK = "LINKED_BYTES_e80f"

const config: Config.Info = {
  permissions: [
    { action: "read", resource: "*", effect: "allow" },
    { action: "edit", resource: "*", effect: "allow" },
  ],
}

/** Every entry below `dir` (links not followed): kind plus bytes or link target. */
const snapshot = (dir: string): Map<string, string> => {
  const entries = new Map<string, string>()
  const walk = (current: string) => {
    for (const name of fs.readdirSync(current)) {
      const full = path.join(current, name)
      const info = fs.lstatSync(full)
      const key = path.relative(dir, full)
      if (info.isSymbolicLink()) entries.set(key, `link:${fs.readlinkSync(full)}`)
      else if (info.isDirectory()) {
        entries.set(key, "dir")
        walk(full)
      } else entries.set(key, `file:${fs.readFileSync(full, "latin1")}`)
    }
  }
  walk(dir)
  return entries
}

/** The outside tree: secrets, a subdirectory, a link back into the Location. */
const plantOutside = (outside: string, root: string) => {
  fs.mkdirSync(path.join(outside, "sub"), { recursive: true })
  fs.writeFileSync(path.join(outside, "secret.txt"), `${OUTSIDE_MARK} secret\n${OUTSIDE_TAIL}\n`)
  fs.writeFileSync(path.join(outside, "sub", "deep.txt"), `${OUTSIDE_MARK} deep\n${OUTSIDE_TAIL}\n`)
  fs.writeFileSync(path.join(outside, OUTSIDE_NAME), `${OUTSIDE_MARK} name\n${OUTSIDE_TAIL}\n`)
  fs.writeFileSync(path.join(outside, "linked.txt"), `${LINKED_MARK} linked\n`)
  fs.symlinkSync(root, path.join(outside, "back-in"))
}

/** (Re)builds the Location tree: inside files, links in, out, chained, dangling, looping, and a hard link out. */
const plantInside = (root: string, outside: string) => {
  for (const name of fs.readdirSync(root)) fs.rmSync(path.join(root, name), { recursive: true, force: true })
  const link = (target: string, at: string) => fs.symlinkSync(target, path.join(root, at))
  fs.mkdirSync(path.join(root, "a/b"), { recursive: true })
  fs.mkdirSync(path.join(root, "ünïcödé"))
  fs.writeFileSync(path.join(root, "file.txt"), "inside\n")
  fs.writeFileSync(path.join(root, "a/b/c.txt"), "inside c\n")
  link(path.join(root, "a"), "in-link")
  link("file.txt", "in-file-link")
  link(outside, "out-link")
  link(path.join(outside, "secret.txt"), "out-file-link")
  link("chain2", "chain1")
  link("out-link", "chain2")
  link(path.join(outside, "missing.txt"), "dangling-out")
  link(path.join(outside, "new-dir/deeper"), "dangling-out-dir")
  link("loop2", "loop1")
  link("loop1", "loop2")
  link(path.dirname(root), "box-link")
  // A hard link of an outside file: the one multiply-linked name inside (reading it is a documented limit).
  try {
    fs.linkSync(path.join(outside, "linked.txt"), path.join(root, "hard-link.txt"))
  } catch {
    // Different filesystems: no hard link possible, the case simply does not occur.
  }
}

const SEGMENTS = [
  "..",
  ".",
  "",
  "a",
  "b",
  "c.txt",
  "file.txt",
  "FILE.TXT",
  "File.txt",
  "file.txt.",
  "file.txt..",
  "in-link",
  "in-file-link",
  "out-link",
  "OUT-LINK",
  "out-link.",
  "out-file-link",
  "chain1",
  "dangling-out",
  "dangling-out-dir",
  "loop1",
  "box-link",
  "back-in",
  "sub",
  "secret.txt",
  "Secret.TXT",
  "deep.txt",
  "hard-link.txt",
  "ünïcödé",
  "u\u0308nïcödé",
  "日本語.txt",
  "emoji-😀",
  "new.txt",
  "x\0y",
  "\uD800",
  "~",
  "...",
  " ",
]

const pathArbitrary = (roots: { box: string; root: string; outside: string }) => {
  const segment = FastCheck.oneof(
    { weight: 10, arbitrary: FastCheck.constantFrom(...SEGMENTS) },
    { weight: 1, arbitrary: FastCheck.string({ unit: "grapheme", maxLength: 5 }) },
    { weight: 1, arbitrary: FastCheck.string({ unit: "binary", maxLength: 3 }) },
  )
  const prefix = FastCheck.constantFrom(
    "",
    "",
    "",
    "./",
    "../",
    `${roots.root}/`,
    `${roots.outside}/`,
    `${roots.box}/`,
    "/",
  )
  const suffix = FastCheck.constantFrom("", "", "", "/", "/.", "//", ".")
  return FastCheck.tuple(prefix, FastCheck.array(segment, { minLength: 1, maxLength: 5 }), suffix).map(
    ([start, segments, end]) => `${start}${segments.join("/")}${end}`,
  )
}

type Tool = "read" | "write" | "edit" | "apply_patch"

const inputOf = (tool: Tool, target: string, variant: number): unknown => {
  switch (tool) {
    case "read":
      return { path: target }
    case "write":
      return { path: target, content: "PROPERTY WRITE\n" }
    case "edit":
      return { path: target, oldString: [OUTSIDE_MARK, "inside", LINKED_MARK][variant % 3], newString: "EDITED" }
    case "apply_patch": {
      const body =
        variant % 4 === 0
          ? [`*** Add File: ${target}`, "+PATCHED"]
          : variant % 4 === 1
            ? [`*** Update File: ${target}`, "@@", `-${OUTSIDE_MARK} secret`, "+PATCHED"]
            : variant % 4 === 2
              ? [`*** Update File: ${target}`, "@@", `-${LINKED_MARK} linked`, "+PATCHED"]
              : [`*** Delete File: ${target}`]
      return { patchText: ["*** Begin Patch", ...body, "*** End Patch"].join("\n") }
    }
  }
}

const text = (settled: ToolRegistry.Settlement) => JSON.stringify(settled)

describe("check at use: generated paths", () => {
  it.live(
    "read, write, edit and apply_patch touch and return nothing outside without an ask (every ask rejected)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const box = yield* tempDir("toolgate-paths-")
          const root = path.join(box, "root")
          const outside = path.join(box, "outside")
          fs.mkdirSync(root)
          fs.mkdirSync(outside)
          plantOutside(outside, root)
          plantInside(root, outside)
          const before = snapshot(outside)
          const stats = { calls: 0, errors: 0, succeeded: 0 }

          yield* Effect.gen(function* () {
            const settle = yield* caller
            const property = FastCheck.asyncProperty(
              FastCheck.constantFrom<Tool>("read", "write", "edit", "apply_patch"),
              pathArbitrary({ box, root, outside }),
              FastCheck.nat(11),
              async (tool, target, variant) => {
                const exit = await Effect.runPromiseExit(settle(tool, inputOf(tool, target, variant)))
                stats.calls++
                // Tool errors are results; a defect or an interruption here would be a failed exit.
                expect(Exit.isSuccess(exit), `${tool} ${JSON.stringify(target)} did not settle`).toBe(true)
                if (!Exit.isSuccess(exit)) return
                // A refused call changed nothing; after a successful one the tree is planted afresh.
                if (exit.value.result.type === "error") stats.errors++
                else {
                  stats.succeeded++
                  plantInside(root, outside)
                }
                const body = text(exit.value)
                // The model's own input may name the outside mark (a patch's expected lines echoed in its error);
                // the tail line no input names is returned only when an outside file was read.
                if (!JSON.stringify(inputOf(tool, target, variant)).includes(OUTSIDE_MARK))
                  expect(body.includes(OUTSIDE_MARK), `${tool} ${JSON.stringify(target)} returned outside bytes`).toBe(
                    false,
                  )
                expect(body.includes(OUTSIDE_TAIL), `${tool} ${JSON.stringify(target)} returned outside bytes`).toBe(
                  false,
                )
                expect(body.includes(OUTSIDE_NAME), `${tool} ${JSON.stringify(target)} returned an outside name`).toBe(
                  false,
                )
                expect(snapshot(outside), `${tool} ${JSON.stringify(target)} changed the outside`).toEqual(before)
              },
            )
            yield* Effect.promise(() => FastCheck.assert(property, { numRuns: 400 }))
          }).pipe(Effect.provide(realLocation(root, config)))

          console.log(`paths: ${stats.calls} calls, ${stats.succeeded} succeeded, ${stats.errors} tool errors`)
          expect(stats.succeeded).toBeGreaterThan(0)
          expect(stats.errors).toBeGreaterThan(0)
        }),
      ),
    120_000,
  )
})
