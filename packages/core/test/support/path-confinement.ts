/**
 * The path-confinement fixture: a tree with links into and out of a Location, a generator of hostile paths over it,
 * a snapshot of everything outside the Location, and `generatedRun`, which resolves and writes `numRuns` generated
 * paths and checks that nothing outside changed and every failure is typed. The default suite runs a short sample
 * (path-confinement.test.ts), the stress project 10,000 (path-confinement.stress.test.ts).
 */
import * as nodeFs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck, Layer } from "effect"
import {
  ApplicationTools,
  Config,
  EditTool,
  FileMutation,
  Image,
  LocationMutation,
  ReadTool,
  ReadToolFileSystem,
  ToolOutputStore,
  ToolRegistry,
  WriteTool,
} from "../../src/index.js"
import * as RecordingFs from "./file-system.js"
import * as Leaf from "./leaf.js"
import { locationLayer, tempDir } from "./location.js"
import * as FakePermission from "./permission.js"

/** Every entry below `dir` except `skip`: type plus content or link target, without following links. */
export const snapshot = (dir: string, skip: string): Map<string, string> => {
  const entries = new Map<string, string>()
  const walk = (current: string) => {
    for (const name of nodeFs.readdirSync(current)) {
      const full = path.join(current, name)
      if (full === skip) continue
      const info = nodeFs.lstatSync(full)
      const key = path.relative(dir, full)
      if (info.isSymbolicLink()) entries.set(key, `link:${nodeFs.readlinkSync(full)}`)
      else if (info.isDirectory()) {
        entries.set(key, "dir")
        walk(full)
      } else entries.set(key, `file:${nodeFs.readFileSync(full, "utf8")}`)
    }
  }
  walk(dir)
  return entries
}

/** A fresh realpath directory below `parent`, removed with the scope. */
export const tempDirIn = (parent: string) =>
  Effect.acquireRelease(
    Effect.sync(() => nodeFs.realpathSync(nodeFs.mkdtempSync(path.join(parent, "toolgate-confinement-")))),
    (dir) => Effect.sync(() => nodeFs.rmSync(dir, { recursive: true, force: true })),
  )

/** A Location with in- and out-pointing symlinks, chains, dangling links, a loop and unicode names. */
export const buildTree = (box: string) => {
  const root = path.join(box, "root")
  const outside = path.join(box, "outside")
  const link = (target: string, at: string) => nodeFs.symlinkSync(target, path.join(root, at))
  nodeFs.mkdirSync(path.join(root, "a/b"), { recursive: true })
  nodeFs.mkdirSync(path.join(root, "ünïcödé"))
  nodeFs.mkdirSync(path.join(outside, "sub"), { recursive: true })
  nodeFs.writeFileSync(path.join(root, "file.txt"), "inside")
  nodeFs.writeFileSync(path.join(outside, "secret.txt"), "secret")
  nodeFs.writeFileSync(path.join(box, "sibling.txt"), "sibling")
  link(path.join(root, "a"), "in-link")
  link("file.txt", "in-file-link")
  link(outside, "out-link")
  link("../outside/sub", "out-relative-link")
  link(path.join(outside, "secret.txt"), "out-file-link")
  link("chain2", "chain1")
  link("out-link", "chain2")
  link("chain-in2", "chain-in1")
  link("a/b", "chain-in2")
  link(path.join(outside, "missing.txt"), "dangling-out")
  link(path.join(outside, "missing-dir/deeper"), "dangling-out-dir")
  link(path.join(outside, "new-dir"), "dangling-out-near")
  link("missing-in", "dangling-in")
  link("loop2", "loop1")
  link("loop1", "loop2")
  link(box, "box-link")
  nodeFs.symlinkSync(root, path.join(outside, "back-in"))
  nodeFs.symlinkSync(path.join(outside, "sub"), path.join(outside, "sub-link"))
  return { root, outside }
}

const SEGMENTS = [
  "..",
  ".",
  "",
  "a",
  "b",
  "file.txt",
  "in-link",
  "in-file-link",
  "out-link",
  "out-relative-link",
  "out-file-link",
  "chain1",
  "chain-in1",
  "dangling-out",
  "dangling-out-dir",
  "dangling-out-near",
  "dangling-in",
  "loop1",
  "box-link",
  "back-in",
  "sub",
  "sub-link",
  "secret.txt",
  "root",
  "outside",
  "ünïcödé",
  "日本語.txt",
  "emoji-😀",
  "new.txt",
  "x\0y",
  "~",
  "...",
  " ",
]

const pathArbitrary = (roots: { box: string; root: string; outside: string }) => {
  const segment = FastCheck.oneof(
    { weight: 8, arbitrary: FastCheck.constantFrom(...SEGMENTS) },
    { weight: 1, arbitrary: FastCheck.string({ unit: "grapheme", maxLength: 6 }) },
    { weight: 1, arbitrary: FastCheck.string({ unit: "binary", maxLength: 4 }) },
  )
  const prefix = FastCheck.constantFrom(
    "",
    "",
    "",
    "./",
    "../",
    `${roots.root}/`,
    `${roots.root}`,
    `${roots.outside}/`,
    `${roots.box}/`,
    "/",
    "//",
  )
  return FastCheck.tuple(prefix, FastCheck.array(segment, { minLength: 0, maxLength: 6 }), FastCheck.boolean()).map(
    ([start, segments, trailing]) => `${start}${segments.join("/")}${trailing ? "/" : ""}`,
  )
}

const EXPECTED_FAILURES = new Set([
  "LocationMutation.PathError",
  "FileMutation.PathChangedError",
  "SystemError",
  "BadArgument",
])

/**
 * Resolves and writes `numRuns` generated paths (plus hand-picked ones) with some concurrency over one shared tree:
 * nothing outside the Location may change, and every failure must be a typed error, never a defect.
 */
export const generatedRun = (numRuns: number) =>
  Effect.gen(function* () {
    // tmpfs keeps many resolve + write round trips fast where it exists; the semantics are the same.
    const box = yield* tempDirIn(nodeFs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir())
    const { root, outside } = buildTree(box)
    const before = snapshot(box, root)
    const layer = Layer.mergeAll(LocationMutation.layer, FileMutation.layer).pipe(
      Layer.provide(Layer.merge(locationLayer(root), NodeFileSystem.layer)),
    )
    const context = yield* Layer.build(layer)
    const stats = { runs: 0, written: 0, external: 0, failed: new Map<string, number>() }

    const attempt = (input: string) =>
      Effect.gen(function* () {
        const mutation = yield* LocationMutation.Service
        const files = yield* FileMutation.Service
        const target = yield* mutation.resolve({ path: input, kind: "file" })
        if (target.externalDirectory !== undefined) return "external" as const
        // The invariant behind the write: an internal target is canonical and inside the Location root.
        expect(LocationMutation.isWithin(root, target.canonical)).toBe(true)
        expect(path.isAbsolute(target.resource)).toBe(false)
        yield* files.write({ target, content: "fuzz" })
        expect(LocationMutation.isWithin(root, nodeFs.realpathSync(target.canonical))).toBe(true)
        return "written" as const
      })

    const violations: Array<string> = []
    const check = (input: string) =>
      Effect.exit(attempt(input)).pipe(
        Effect.map((exit) => {
          stats.runs++
          if (Exit.isSuccess(exit)) {
            if (exit.value === "written") stats.written++
            else stats.external++
            return
          }
          const cause = exit.cause
          // A defect (including a failed `expect` inside `attempt`) or an interruption is a violation.
          if (Cause.isDie(cause) || Cause.isInterrupted(cause)) {
            violations.push(`${JSON.stringify(input)}: ${Cause.pretty(cause)}`)
            return
          }
          for (const error of Cause.failures(cause)) {
            if (!EXPECTED_FAILURES.has(error._tag)) violations.push(`${JSON.stringify(input)}: ${error._tag}`)
            stats.failed.set(error._tag, (stats.failed.get(error._tag) ?? 0) + 1)
          }
        }),
      )

    // One deterministic sample of `numRuns` generated paths, run with some concurrency over one shared tree:
    // concurrent mutations of the same tree are part of what confinement must survive.
    const handpicked = [
      "dangling-out",
      "dangling-out/",
      "dangling-out-dir/new.txt",
      "dangling-out-near/new.txt",
      "dangling-in",
      "chain1/new.txt",
      "out-relative-link/new.txt",
      "out-file-link",
      "in-file-link",
      "box-link/sibling.txt",
      "a/../../outside/new.txt",
      `${root}/../sibling.txt`,
      `${root}/out-link/new.txt`,
      `${outside}/back-in/new.txt`,
      "loop1/new.txt",
      "file.txt/child.txt",
      "new\0.txt",
    ]
    const generated = FastCheck.sample(pathArbitrary({ box, root, outside }), { numRuns, seed: 20260723 })
    const paths = [...handpicked, ...generated]
    yield* Effect.forEach(paths, check, { concurrency: 16, discard: true }).pipe(Effect.provide(context))

    expect(violations.slice(0, 5)).toEqual([])
    expect(stats.runs).toBe(numRuns + handpicked.length)
    expect(snapshot(box, root)).toEqual(before)
    // The generator reaches every branch: writes, external targets and each kind of refusal.
    expect(stats.written).toBeGreaterThan(numRuns / 100)
    expect(stats.external).toBeGreaterThan(numRuns / 100)
    expect(stats.failed.get("LocationMutation.PathError")).toBeGreaterThan(numRuns / 100)
    expect(stats.failed.get("FileMutation.PathChangedError")).toBeGreaterThan(0)
    expect(stats.failed.get("SystemError")).toBeGreaterThan(0)
    console.log(
      `path confinement: ${stats.runs} paths; written ${stats.written}, external ${stats.external}, ` +
        `failures ${JSON.stringify(Object.fromEntries(stats.failed))}`,
    )
  })
