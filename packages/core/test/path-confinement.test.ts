/**
 * Path confinement: generated paths go through `LocationMutation.resolve` and then `FileMutation.write` for every
 * target without `externalDirectory`. Nothing may be written outside the Location, and every failure must be a
 * typed error (PathError, PathChangedError or PlatformError), never a defect.
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
} from "../src/index.js"
import * as RecordingFs from "./support/file-system.js"
import * as Leaf from "./support/leaf.js"
import { locationLayer, tempDir } from "./support/location.js"
import * as FakePermission from "./support/permission.js"

import { buildTree, generatedRun, snapshot, tempDirIn } from "./support/path-confinement.js"

describe("path confinement", () => {
  it.scopedLive(
    "1,000 generated paths write nothing outside the Location and fail only with typed errors (10,000 in the stress project)",
    () => generatedRun(1_000),
  )

  it.scoped("the snapshot detects an escape when FileMutation's descriptor checks are blinded (meta-test)", () =>
    Effect.gen(function* () {
      const box = yield* tempDir("toolgate-confinement-")
      const { root, outside } = buildTree(box)
      const before = snapshot(box, root)
      // Descriptor operations that follow every link and verify nothing: plain path-based opens.
      const { O_NOFOLLOW, O_EXCL } = nodeFs.constants
      const attempt = <A>(target: string, run: () => A) =>
        Effect.try({
          try: run,
          catch: (error) => FileMutation.io.systemError("open", target, error as NodeJS.ErrnoException),
        })
      const blinded: FileMutation.Io = {
        ...FileMutation.io,
        openDirectory: (dir) => attempt(dir, () => ({ fd: nodeFs.openSync(dir, "r"), path: dir, via: dir })),
        ensureDirectory: (dir) =>
          attempt(dir, () => {
            nodeFs.mkdirSync(dir, { recursive: true })
            return { fd: nodeFs.openSync(dir, "r"), path: dir, via: dir }
          }),
        openIn: (directory, name, flag, mode) => {
          const file = path.join(directory.path, name)
          return attempt(file, () => ({ fd: nodeFs.openSync(file, flag & ~(O_NOFOLLOW | O_EXCL), mode), path: file }))
        },
      }
      const layer = Layer.merge(
        LocationMutation.layer.pipe(Layer.provide(Layer.merge(locationLayer(root), NodeFileSystem.layer))),
        FileMutation.layerWith(blinded),
      )
      yield* Effect.gen(function* () {
        const target = yield* (yield* LocationMutation.Service).resolve({ path: "dangling-out", kind: "file" })
        expect(target).toEqual({ canonical: path.join(root, "dangling-out"), resource: "dangling-out" })
        yield* (yield* FileMutation.Service).write({ target, content: "escaped" })
      }).pipe(Effect.provide(layer))
      expect(nodeFs.readFileSync(path.join(outside, "missing.txt"), "utf8")).toBe("escaped")
      expect(snapshot(box, root)).not.toEqual(before)
    }),
  )

  describe("a symlink swapped in during approval", () => {
    const withTools = <A, E>(body: (dirs: { root: string; outside: string }) => Effect.Effect<A, E, Leaf.Services>) =>
      Effect.gen(function* () {
        const root = yield* tempDir()
        const outside = yield* tempDir("toolgate-outside-")
        nodeFs.writeFileSync(path.join(outside, "secret.txt"), "secret")
        return yield* body({ root, outside }).pipe(
          Effect.provide(Leaf.layer(root, Layer.merge(WriteTool.layer, EditTool.layer))),
        )
      })

    it.scoped("write refuses a parent directory replaced by a link to the outside", () =>
      withTools(({ root, outside }) =>
        Effect.gen(function* () {
          nodeFs.mkdirSync(path.join(root, "sub"))
          const before = snapshot(outside, "")
          yield* FakePermission.afterApproval(
            "edit",
            Effect.sync(() => {
              nodeFs.renameSync(path.join(root, "sub"), path.join(root, "sub-moved"))
              nodeFs.symlinkSync(outside, path.join(root, "sub"))
            }),
          )
          const settled = yield* Leaf.settle("write", { path: "sub/target.txt", content: "payload" })
          expect(settled.result).toEqual({
            type: "error",
            value:
              "Unable to write sub/target.txt: it changed after it was checked (a symbolic link was swapped in, or the file moved); nothing was done",
          })
          expect(yield* FakePermission.actions).toEqual(["edit"])
          expect(yield* RecordingFs.writes).toEqual([])
          expect(snapshot(outside, "")).toEqual(before)
          expect(nodeFs.existsSync(path.join(outside, "target.txt"))).toBe(false)
        }),
      ),
    )

    it.scoped("write refuses a target file replaced by a link to an outside file", () =>
      withTools(({ root, outside }) =>
        Effect.gen(function* () {
          nodeFs.writeFileSync(path.join(root, "victim.txt"), "mine")
          yield* FakePermission.afterApproval(
            "edit",
            Effect.sync(() => {
              nodeFs.rmSync(path.join(root, "victim.txt"))
              nodeFs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "victim.txt"))
            }),
          )
          const settled = yield* Leaf.settle("write", { path: "victim.txt", content: "payload" })
          expect(settled.result).toEqual({
            type: "error",
            value:
              "Unable to write victim.txt: it changed after it was checked (a symbolic link was swapped in, or the file moved); nothing was done",
          })
          expect(nodeFs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("secret")
          expect(yield* RecordingFs.writes).toEqual([])
        }),
      ),
    )

    it.scoped("edit refuses a target file replaced by a link to an outside file", () =>
      withTools(({ root, outside }) =>
        Effect.gen(function* () {
          nodeFs.writeFileSync(path.join(root, "victim.txt"), "secret")
          yield* FakePermission.afterApproval(
            "edit",
            Effect.sync(() => {
              nodeFs.rmSync(path.join(root, "victim.txt"))
              nodeFs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "victim.txt"))
            }),
          )
          const settled = yield* Leaf.settle("edit", { path: "victim.txt", oldString: "secret", newString: "owned" })
          expect(settled.result).toEqual({
            type: "error",
            value:
              "Unable to edit victim.txt: it changed after it was checked (a symbolic link was swapped in, or the file moved); nothing was done",
          })
          expect(nodeFs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("secret")
          expect(yield* RecordingFs.writes).toEqual([])
        }),
      ),
    )
  })

  describe("read resolves again after its ask", () => {
    const OUTSIDE = "OUTSIDE_READ_BYTES"
    const readLayer = (root: string) => {
      const base = Layer.mergeAll(locationLayer(root), FakePermission.layer, NodeFileSystem.layer)
      const services = Layer.mergeAll(
        LocationMutation.layer,
        ReadToolFileSystem.layer,
        Image.layer.pipe(Layer.provide(Config.layerFromEntries([]))),
        ToolRegistry.layer.pipe(
          Layer.provideMerge(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
        ),
      ).pipe(Layer.provideMerge(base))
      return ReadTool.layer.pipe(Layer.provideMerge(services))
    }
    const withRead = <A, E>(
      body: (dirs: {
        root: string
        outside: string
      }) => Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof readLayer>>>,
    ) =>
      Effect.gen(function* () {
        const root = yield* tempDir()
        const outside = yield* tempDir("toolgate-outside-")
        nodeFs.mkdirSync(path.join(outside, "other"))
        nodeFs.writeFileSync(path.join(outside, "file.txt"), `${OUTSIDE} file\n`)
        nodeFs.writeFileSync(path.join(outside, "outside-only.txt"), `${OUTSIDE} only\n`)
        nodeFs.writeFileSync(path.join(outside, "other", "a.txt"), `${OUTSIDE} other\n`)
        return yield* body({ root, outside }).pipe(Effect.provide(readLayer(root)))
      })
    const settleRead = (input: unknown) =>
      Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize()).pipe(
        Effect.flatMap((turn) => turn.settle({ ...Leaf.identity, call: { id: "call-read", name: "read", input } })),
      )
    const changed = (file: string) => ({
      type: "error",
      value: `Unable to read ${file}: it changed after it was checked; nothing was read`,
    })

    it.scoped("a parent directory replaced by a link to the outside during the ask is refused", () =>
      withRead(({ root, outside }) =>
        Effect.gen(function* () {
          nodeFs.mkdirSync(path.join(root, "sub"))
          nodeFs.writeFileSync(path.join(root, "sub", "file.txt"), "inside\n")
          yield* FakePermission.afterApproval(
            "read",
            Effect.sync(() => {
              nodeFs.renameSync(path.join(root, "sub"), path.join(root, "sub-moved"))
              nodeFs.symlinkSync(outside, path.join(root, "sub"))
            }),
          )
          const settled = yield* settleRead({ path: "sub/file.txt" })
          expect(settled.result).toEqual(changed("sub/file.txt"))
          expect(JSON.stringify(settled)).not.toContain(OUTSIDE)
        }),
      ),
    )

    it.scoped("a file replaced by a link to an outside file during the ask is refused", () =>
      withRead(({ root, outside }) =>
        Effect.gen(function* () {
          nodeFs.writeFileSync(path.join(root, "victim.txt"), "inside\n")
          yield* FakePermission.afterApproval(
            "read",
            Effect.sync(() => {
              nodeFs.rmSync(path.join(root, "victim.txt"))
              nodeFs.symlinkSync(path.join(outside, "file.txt"), path.join(root, "victim.txt"))
            }),
          )
          const settled = yield* settleRead({ path: "victim.txt" })
          expect(settled.result).toEqual(changed("victim.txt"))
          expect(JSON.stringify(settled)).not.toContain(OUTSIDE)
        }),
      ),
    )

    it.scoped("a directory listing swapped for an outside directory during the ask is refused", () =>
      withRead(({ root, outside }) =>
        Effect.gen(function* () {
          nodeFs.mkdirSync(path.join(root, "listed"))
          nodeFs.writeFileSync(path.join(root, "listed", "mine.txt"), "inside\n")
          yield* FakePermission.afterApproval(
            "read",
            Effect.sync(() => {
              nodeFs.renameSync(path.join(root, "listed"), path.join(root, "listed-moved"))
              nodeFs.symlinkSync(outside, path.join(root, "listed"))
            }),
          )
          const settled = yield* settleRead({ path: "listed" })
          expect(settled.result).toEqual(changed("listed"))
          expect(JSON.stringify(settled)).not.toContain("outside-only.txt")
        }),
      ),
    )

    it.scoped("an approved external file whose directory is swapped during the ask is refused", () =>
      withRead(({ outside }) =>
        Effect.gen(function* () {
          nodeFs.mkdirSync(path.join(outside, "shared"))
          nodeFs.writeFileSync(path.join(outside, "shared", "a.txt"), "approved bytes\n")
          yield* FakePermission.afterApproval(
            "read",
            Effect.sync(() => {
              nodeFs.renameSync(path.join(outside, "shared"), path.join(outside, "shared-moved"))
              nodeFs.symlinkSync(path.join(outside, "other"), path.join(outside, "shared"))
            }),
          )
          const file = path.join(outside, "shared", "a.txt")
          const settled = yield* settleRead({ path: file })
          expect(yield* FakePermission.actions).toEqual(["external_directory", "read"])
          expect(settled.result).toEqual(changed(file))
          expect(JSON.stringify(settled)).not.toContain(OUTSIDE)
        }),
      ),
    )

    it.scoped("a link repointed during the ask is refused although the approved file is still there", () =>
      withRead(({ root }) =>
        Effect.gen(function* () {
          nodeFs.writeFileSync(path.join(root, "approved.txt"), "approved\n")
          nodeFs.writeFileSync(path.join(root, "other.txt"), "other\n")
          nodeFs.symlinkSync("approved.txt", path.join(root, "link.txt"))
          yield* FakePermission.afterApproval(
            "read",
            Effect.sync(() => {
              nodeFs.rmSync(path.join(root, "link.txt"))
              nodeFs.symlinkSync("other.txt", path.join(root, "link.txt"))
            }),
          )
          const settled = yield* settleRead({ path: "link.txt" })
          expect((yield* FakePermission.asserts).map((input) => input.resources)).toEqual([["approved.txt"]])
          expect(settled.result).toEqual(changed("link.txt"))
          expect(JSON.stringify(settled)).not.toContain("other")
        }),
      ),
    )

    it.scoped("a NUL byte or an unpaired surrogate is a model-visible tool error, asked for nothing", () =>
      withRead(() =>
        Effect.gen(function* () {
          expect((yield* settleRead({ path: "a\0b.txt" })).result).toEqual({
            type: "error",
            value: "Unable to read a\0b.txt: the path contains a NUL byte",
          })
          expect((yield* settleRead({ path: "x\uDC00" })).result).toEqual({
            type: "error",
            value: "Unable to read x\uDC00: the path contains an unpaired UTF-16 surrogate",
          })
          expect(yield* FakePermission.actions).toEqual([])
        }),
      ),
    )

    it.scoped("a path that still names the approved file is read", () =>
      withRead(({ root }) =>
        Effect.gen(function* () {
          nodeFs.writeFileSync(path.join(root, "steady.txt"), "steady\n")
          yield* FakePermission.afterApproval(
            "read",
            Effect.sync(() => nodeFs.writeFileSync(path.join(root, "unrelated.txt"), "x")),
          )
          const settled = yield* settleRead({ path: "steady.txt" })
          expect(settled.result.type).not.toBe("error")
          expect(JSON.stringify(settled)).toContain("steady")
        }),
      ),
    )
  })
})
