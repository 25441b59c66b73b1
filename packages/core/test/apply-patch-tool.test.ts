import * as fs from "node:fs"
import * as path from "node:path"
import { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Layer } from "effect"
import {
  ApplicationTools,
  ApplyPatchTool,
  FileMutation,
  Global,
  LocationMutation,
  ProtectedPath,
  ToolOutputStore,
  ToolRegistry,
} from "../src/index.js"
import { locationLayer, tempDir } from "./support/location.js"
import * as Permission from "./support/permission.js"

/** Counts reads and can make `remove` of a chosen file die or wait. */
interface Control {
  reads: number
  readsAtApproval: number | undefined
  onRemove: ((file: string) => Effect.Effect<void> | undefined) | undefined
}

const wrappedFileSystem = (control: Control) =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (real) =>
      FileSystem.FileSystem.of({
        ...real,
        readFile: (file) => Effect.suspend(() => ((control.reads += 1), real.readFile(file))),
        readFileString: (file, encoding) =>
          Effect.suspend(() => ((control.reads += 1), real.readFileString(file, encoding))),
        open: (file, options) => Effect.suspend(() => ((control.reads += 1), real.open(file, options))),
        remove: (file, options) =>
          Effect.suspend(() => Effect.zipRight(control.onRemove?.(file) ?? Effect.void, real.remove(file, options))),
      }),
    ),
  ).pipe(Layer.provide(NodeFileSystem.layer))

const registry = ToolRegistry.layer.pipe(
  Layer.provideMerge(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
)

const harness = (dir: string) => {
  const control: Control = { reads: 0, readsAtApproval: undefined, onRemove: undefined }
  const base = Layer.merge(wrappedFileSystem(control), locationLayer(dir))
  // FileMutation reads and removes through verified descriptors, so the read counter and the remove hook sit on its
  // operations.
  const files = FileMutation.layerWith({
    ...FileMutation.io,
    readAll: (handle) => Effect.suspend(() => ((control.reads += 1), FileMutation.io.readAll(handle))),
    unlinkIn: (directory, name) =>
      Effect.zipRight(
        control.onRemove?.(path.join(directory.path, name)) ?? Effect.void,
        FileMutation.io.unlinkIn(directory, name),
      ),
  })
  const protection = ProtectedPath.layer.pipe(Layer.provide(Global.layerWith({ config: `${dir}-no-global-config` })))
  const services = Layer.mergeAll(LocationMutation.layer, files, protection).pipe(Layer.provideMerge(base))
  const layer = ApplyPatchTool.layer.pipe(Layer.provideMerge(Layer.mergeAll(registry, Permission.layer, services)))
  return { control, layer }
}

const identity = { sessionID: "ses_test", agent: "build", assistantMessageID: "msg_tool_test" } as const

const settle = (patchText: string) =>
  Effect.flatMap(ToolRegistry.Service, (r) => r.materialize()).pipe(
    Effect.flatMap((turn) =>
      turn.settle({ ...identity, call: { id: "call-patch", name: "apply_patch", input: { patchText } } }),
    ),
  )

/** Records how many reads had happened when `edit` was approved. */
const watchApproval = (control: Control) =>
  Permission.afterApproval(
    "edit",
    Effect.sync(() => void (control.readsAtApproval = control.reads)),
  )

const patch = (...body: ReadonlyArray<string>) => ["*** Begin Patch", ...body, "*** End Patch"].join("\n")

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

describe("apply_patch", () => {
  it.scoped("registers and sequentially applies add, update, and delete hunks", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      write(path.join(dir, "update.txt"), "before\n")
      write(path.join(dir, "remove.txt"), "remove\n")
      const { control, layer } = harness(dir)
      yield* Effect.gen(function* () {
        const names = yield* Effect.flatMap(ToolRegistry.Service, (r) => r.materialize()).pipe(
          Effect.map((turn) => turn.definitions.map((d) => d.name)),
        )
        expect(names).toEqual(["apply_patch"])
        const hidden = yield* Effect.flatMap(ToolRegistry.Service, (r) =>
          r.materialize([{ action: "edit", resource: "*", effect: "deny" }]),
        )
        expect(hidden.definitions).toEqual([])
        yield* watchApproval(control)
        const settlement = yield* settle(
          patch(
            "*** Add File: nested/new.txt",
            "+created",
            "*** Update File: update.txt",
            "@@",
            "-before",
            "+after",
            "*** Delete File: remove.txt",
          ),
        )
        expect(settlement.result).toEqual({
          type: "text",
          value: "Applied patch sequentially:\nA nested/new.txt\nM update.txt\nD remove.txt",
        })
        const output = settlement.output?.structured as ApplyPatchTool.Output
        expect(output.applied).toEqual([
          { type: "add", resource: "nested/new.txt", target: path.join(dir, "nested/new.txt") },
          { type: "update", resource: "update.txt", target: path.join(dir, "update.txt") },
          { type: "delete", resource: "remove.txt", target: path.join(dir, "remove.txt") },
        ])
        const [added, modified, deleted] = output.files
        expect(added).toMatchObject({ file: "nested/new.txt", status: "added", additions: 1, deletions: 0 })
        expect(added?.patch).toContain("+created")
        expect(modified).toMatchObject({ file: "update.txt", status: "modified", additions: 1, deletions: 1 })
        expect(modified?.patch).toContain("-before\n+after")
        expect(deleted).toMatchObject({ file: "remove.txt", status: "deleted", additions: 0, deletions: 1 })
        expect(deleted?.patch).toContain("-remove")
        expect(yield* Permission.asserts).toEqual([
          {
            action: "edit",
            resources: ["nested/new.txt", "update.txt", "remove.txt"],
            save: ["*"],
            sessionID: "ses_test",
            agent: "build",
            source: { type: "tool", messageID: "msg_tool_test", callID: "call-patch" },
          },
        ])
        expect(control.readsAtApproval).toBe(0)
        expect(control.reads).toBeGreaterThan(0)
      }).pipe(Effect.provide(layer))
      expect(fs.readFileSync(path.join(dir, "nested/new.txt"), "utf8")).toBe("created\n")
      expect(fs.readFileSync(path.join(dir, "update.txt"), "utf8")).toBe("after\n")
      expect(fs.existsSync(path.join(dir, "remove.txt"))).toBe(false)
    }),
  )

  it.scoped("rejects moves before applying any hunk", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      write(path.join(dir, "a.txt"), "x\n")
      const { layer } = harness(dir)
      yield* Effect.gen(function* () {
        const settlement = yield* settle(
          patch("*** Add File: new.txt", "+n", "*** Update File: a.txt", "*** Move to: b.txt", "@@", "-x", "+y"),
        )
        expect(settlement.result).toEqual({ type: "error", value: "apply_patch moves are not supported yet" })
        expect(yield* Permission.asserts).toEqual([])
      }).pipe(Effect.provide(layer))
      expect(fs.existsSync(path.join(dir, "new.txt"))).toBe(false)
    }),
  )

  it.scoped("approves an external directory and the batch before reading external update content", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const outside = yield* tempDir()
      const file = path.join(outside, "ext.txt")
      write(file, "old\n")
      const { control, layer } = harness(dir)
      yield* Effect.gen(function* () {
        yield* watchApproval(control)
        const settlement = yield* settle(patch(`*** Update File: ${file}`, "@@", "-old", "+new"))
        expect(settlement.result).toEqual({ type: "text", value: `Applied patch sequentially:\nM ${file}` })
        expect(yield* Permission.actions).toEqual(["external_directory", "edit"])
        expect(control.readsAtApproval).toBe(0)
      }).pipe(Effect.provide(layer))
      expect(fs.readFileSync(file, "utf8")).toBe("new\n")
    }),
  )

  it.scoped("approves one external directory scope for multiple files under the same parent", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const outside = yield* tempDir()
      write(path.join(outside, "one.txt"), "1\n")
      write(path.join(outside, "two.txt"), "2\n")
      const { layer } = harness(dir)
      yield* Effect.gen(function* () {
        yield* settle(
          patch(
            `*** Delete File: ${path.join(outside, "one.txt")}`,
            `*** Delete File: ${path.join(outside, "two.txt")}`,
          ),
        )
        const asserts = yield* Permission.asserts
        expect(asserts.map((a) => [a.action, a.resources])).toEqual([
          ["external_directory", [`${fs.realpathSync(outside)}/*`]],
          ["edit", [path.join(outside, "one.txt"), path.join(outside, "two.txt")]],
        ])
      }).pipe(Effect.provide(layer))
      expect(fs.readdirSync(outside)).toEqual([])
    }),
  )

  it.scoped("rejects invalid later update before applying an earlier add", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const { layer } = harness(dir)
      const settlement = yield* settle(
        patch("*** Add File: created.txt", "+c", "*** Update File: missing.txt", "@@", "-a", "+b"),
      ).pipe(Effect.provide(layer))
      expect(settlement.result).toEqual({
        type: "error",
        value: "Unable to apply patch at missing.txt: not found (ENOENT)",
      })
      expect(fs.existsSync(path.join(dir, "created.txt"))).toBe(false)
    }),
  )

  it.scoped("rejects an update whose lines are not found, before writing anything", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      write(path.join(dir, "a.txt"), "a\n")
      const { layer } = harness(dir)
      const settlement = yield* settle(
        patch("*** Delete File: a.txt", "*** Update File: a.txt", "@@", "-zzz", "+b"),
      ).pipe(Effect.provide(layer))
      expect(settlement.result).toEqual({
        type: "error",
        value: "Unable to apply patch at a.txt: Failed to find expected lines in a.txt:\nzzz",
      })
      expect(fs.readFileSync(path.join(dir, "a.txt"), "utf8")).toBe("a\n")
    }),
  )

  it.scoped("rejects add hunks targeting an existing file without replacing it", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      write(path.join(dir, "existing.txt"), "keep\n")
      const { layer } = harness(dir)
      const settlement = yield* settle(patch("*** Add File: existing.txt", "+replace")).pipe(Effect.provide(layer))
      expect(settlement.result).toEqual({
        type: "error",
        value: "Unable to apply patch at existing.txt: it already exists",
      })
      expect(fs.readFileSync(path.join(dir, "existing.txt"), "utf8")).toBe("keep\n")
    }),
  )

  it.scoped("rejects an add target that appears during permission approval", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const target = path.join(dir, "appeared.txt")
      const { layer } = harness(dir)
      yield* Effect.gen(function* () {
        yield* Permission.afterApproval(
          "edit",
          Effect.sync(() => fs.writeFileSync(target, "concurrent\n")),
        )
        const settlement = yield* settle(patch("*** Add File: appeared.txt", "+mine"))
        expect(settlement.result).toEqual({
          type: "error",
          value: "Unable to apply patch at appeared.txt: it already exists",
        })
      }).pipe(Effect.provide(layer))
      expect(fs.readFileSync(target, "utf8")).toBe("concurrent\n")
    }),
  )

  it.scoped("reports a partial application when a later commit fails", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const { layer } = harness(dir)
      yield* Effect.gen(function* () {
        yield* Permission.afterApproval(
          "edit",
          Effect.sync(() => fs.writeFileSync(path.join(dir, "late.txt"), "x\n")),
        )
        const settlement = yield* settle(patch("*** Add File: first.txt", "+1", "*** Add File: late.txt", "+2"))
        expect(settlement.result).toEqual({
          type: "error",
          value: "Patch partially applied before failing at late.txt: it already exists. Applied: first.txt",
        })
      }).pipe(Effect.provide(layer))
      expect(fs.readFileSync(path.join(dir, "first.txt"), "utf8")).toBe("1\n")
    }),
  )

  it.scoped("preserves a later commit defect after earlier sequential applications", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      write(path.join(dir, "first.txt"), "1\n")
      write(path.join(dir, "second.txt"), "2\n")
      const { control, layer } = harness(dir)
      control.onRemove = (file) => (file.endsWith("second.txt") ? Effect.die(new Error("remove exploded")) : undefined)
      const exit = yield* Effect.exit(
        settle(patch("*** Delete File: first.txt", "*** Delete File: second.txt")).pipe(Effect.provide(layer)),
      )
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain("remove exploded")
      expect(fs.existsSync(path.join(dir, "first.txt"))).toBe(false)
      expect(fs.existsSync(path.join(dir, "second.txt"))).toBe(true)
    }),
  )

  it.scoped("finishes the sequential commit phase when interrupted after the first mutation", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      write(path.join(dir, "first.txt"), "1\n")
      write(path.join(dir, "second.txt"), "2\n")
      const { control, layer } = harness(dir)
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      control.onRemove = (file) =>
        file.endsWith("second.txt")
          ? Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release))
          : undefined
      const fiber = yield* Effect.fork(
        settle(patch("*** Delete File: first.txt", "*** Delete File: second.txt")).pipe(Effect.provide(layer)),
      )
      yield* Deferred.await(started)
      const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
      expect(fs.existsSync(path.join(dir, "second.txt"))).toBe(true)
      yield* Deferred.succeed(release, undefined)
      const exit = yield* Fiber.join(interrupting)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(fs.existsSync(path.join(dir, "first.txt"))).toBe(false)
      expect(fs.existsSync(path.join(dir, "second.txt"))).toBe(false)
    }),
  )

  it.scoped("validation, permission and path failures", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      write(path.join(dir, "a.txt"), "a\n")
      const { layer } = harness(dir)
      yield* Effect.gen(function* () {
        expect((yield* settle("   \n")).result).toEqual({ type: "error", value: "patchText is required" })
        expect((yield* settle("garbage")).result).toEqual({
          type: "error",
          value: "apply_patch verification failed: Error: Invalid patch format: missing Begin/End markers",
        })
        expect((yield* settle(patch())).result).toEqual({ type: "error", value: "patch rejected: empty patch" })
        expect((yield* settle(patch("*** Delete File: ../escape.txt"))).result).toEqual({
          type: "error",
          value:
            "Unable to apply patch at ../escape.txt: a relative path may not leave the current location (an absolute path outside it asks for external_directory)",
        })
        yield* Permission.deny("edit")
        expect((yield* settle(patch("*** Delete File: a.txt"))).result).toEqual({
          type: "error",
          value: "Permission denied by configured rules for edit: a.txt",
        })
      }).pipe(Effect.provide(layer))
      expect(fs.readFileSync(path.join(dir, "a.txt"), "utf8")).toBe("a\n")
    }),
  )

  it.scoped("keeps a BOM on update and reports the diff without it", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      write(path.join(dir, "bom.txt"), "\uFEFFone\ntwo\n")
      const { layer } = harness(dir)
      const settlement = yield* settle(patch("*** Update File: bom.txt", "@@", " one", "-two", "+three")).pipe(
        Effect.provide(layer),
      )
      const output = settlement.output?.structured as ApplyPatchTool.Output
      expect(output.files[0]?.patch).not.toContain("\uFEFF")
      expect(fs.readFileSync(path.join(dir, "bom.txt"), "utf8")).toBe("\uFEFFone\nthree\n")
    }),
  )
})

describe("apply_patch: read first, protected paths last", () => {
  it.scoped(
    "one read assert for the targets read would not allow, one protected_path assert for the protected ones",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir()
        write(path.join(dir, ".env"), "A=1\n")
        write(path.join(dir, "toolgate.json"), "{}\n")
        const { layer } = harness(dir)
        yield* Effect.gen(function* () {
          yield* Permission.deny("protected_path")
          const settled = yield* settle(
            patch("*** Update File: toolgate.json", "@@", "-{}", "+{ }", "*** Add File: notes.txt", "+n"),
          )
          expect(settled.result).toEqual({
            type: "error",
            value: "Permission denied by configured rules for protected_path: toolgate.json",
          })
          const asserts = yield* Permission.asserts
          expect(asserts.map((input) => [input.action, input.resources])).toEqual([
            ["edit", ["toolgate.json", "notes.txt"]],
            ["protected_path", ["toolgate.json"]],
          ])
        }).pipe(Effect.provide(layer))
        expect(fs.readFileSync(path.join(dir, "toolgate.json"), "utf8")).toBe("{}\n")
        expect(fs.existsSync(path.join(dir, "notes.txt"))).toBe(false)
      }),
  )

  it.scoped("a read deny on a target refuses the whole patch before any target is read", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      write(path.join(dir, ".env"), "A=1\n")
      const { control, layer } = harness(dir)
      yield* Effect.gen(function* () {
        yield* Permission.deny("read")
        const settled = yield* settle(patch("*** Update File: .env", "@@", "-A=1", "+A=2"))
        expect(settled.result).toEqual({ type: "error", value: "Permission denied by configured rules for read: .env" })
        expect(yield* Permission.actions).toEqual(["read"])
      }).pipe(Effect.provide(layer))
      expect(control.reads).toBe(0)
      expect(fs.readFileSync(path.join(dir, ".env"), "utf8")).toBe("A=1\n")
    }),
  )
})
