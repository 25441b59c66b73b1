import * as nodeFs from "node:fs"
import * as path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Either, Fiber, Layer, Ref, Schedule } from "effect"
import { FileMutation, LocationMutation } from "../src/index.js"
import { locationLayer, tempDir } from "./support/location.js"

/** Observes content writes: how many run at once (at most), and an optional gate every write waits on. */
interface WriteProbe {
  readonly active: Ref.Ref<number>
  readonly peak: Ref.Ref<number>
  readonly gate: Ref.Ref<Deferred.Deferred<void> | undefined>
  /** Completed once a write is inside `replaceContent`. */
  readonly entered: Ref.Ref<Deferred.Deferred<void> | undefined>
}
class Probe extends Context.Tag("test/WriteProbe")<Probe, WriteProbe>() {}

/** FileMutation on descriptor operations whose content write is probed, plus the probe. */
const probedFileMutation = Layer.unwrapEffect(
  Effect.gen(function* () {
    const probe: WriteProbe = {
      active: yield* Ref.make(0),
      peak: yield* Ref.make(0),
      gate: yield* Ref.make<Deferred.Deferred<void> | undefined>(undefined),
      entered: yield* Ref.make<Deferred.Deferred<void> | undefined>(undefined),
    }
    const replaceContent: FileMutation.Io["replaceContent"] = (handle, data) =>
      Effect.gen(function* () {
        const now = yield* Ref.updateAndGet(probe.active, (n) => n + 1)
        yield* Ref.update(probe.peak, (peak) => Math.max(peak, now))
        const entered = yield* Ref.get(probe.entered)
        if (entered !== undefined) yield* Deferred.succeed(entered, undefined)
        const gate = yield* Ref.get(probe.gate)
        if (gate !== undefined) yield* Deferred.await(gate)
        else yield* Effect.sleep("5 millis")
        yield* FileMutation.io.replaceContent(handle, data)
        yield* Ref.update(probe.active, (n) => n - 1)
      })
    return Layer.merge(FileMutation.layerWith({ ...FileMutation.io, replaceContent }), Layer.succeed(Probe, probe))
  }),
)

type Services = FileMutation.Service | LocationMutation.Service | Probe

/** Runs `body` with FileMutation and LocationMutation on a fresh Location (`root`) and an outside directory. */
const withMutation = <A, E>(body: (dirs: { root: string; outside: string }) => Effect.Effect<A, E, Services>) =>
  Effect.gen(function* () {
    const root = yield* tempDir()
    const outside = yield* tempDir("toolgate-outside-")
    const layer = Layer.mergeAll(probedFileMutation, LocationMutation.layer).pipe(
      Layer.provideMerge(Layer.merge(NodeFileSystem.layer, locationLayer(root))),
    )
    return yield* body({ root, outside }).pipe(Effect.provide(layer))
  })

const resolve = (file: string) =>
  Effect.flatMap(LocationMutation.Service, (service) => service.resolve({ path: file, kind: "file" }))
const files = FileMutation.Service

const bytes = (text: string) => new TextEncoder().encode(text)
const BOM = Buffer.from([0xef, 0xbb, 0xbf])

describe("FileMutation", () => {
  it.scopedLive("stable write results", () =>
    withMutation(({ root }) =>
      Effect.gen(function* () {
        const mutation = yield* files
        const target = yield* resolve("result.txt")
        expect(yield* mutation.write({ target, content: "one" })).toEqual({
          operation: "write",
          target: path.join(root, "result.txt"),
          resource: "result.txt",
          existed: false,
        })
        expect(yield* mutation.write({ target, content: bytes("two") })).toMatchObject({ existed: true })
        expect(yield* mutation.writeTextPreservingBom({ target, content: "three" })).toMatchObject({ existed: true })
        expect(yield* mutation.writeIfUnchanged({ target, expected: bytes("three"), content: "four" })).toEqual({
          operation: "write",
          target: path.join(root, "result.txt"),
          resource: "result.txt",
          existed: true,
        })
        expect(yield* mutation.remove({ target })).toEqual({
          operation: "remove",
          target: path.join(root, "result.txt"),
          resource: "result.txt",
          existed: true,
        })
        expect(yield* mutation.create({ target, content: "five" })).toMatchObject({
          operation: "write",
          existed: false,
        })
        expect(nodeFs.readFileSync(path.join(root, "result.txt"), "utf8")).toBe("five")
      }),
    ),
  )

  it.scopedLive("parent directory creation", () =>
    withMutation(({ root }) =>
      Effect.gen(function* () {
        const mutation = yield* files
        yield* mutation.write({ target: yield* resolve("a/b/c.txt"), content: "abc" })
        yield* mutation.writeTextPreservingBom({ target: yield* resolve("d/e/f.txt"), content: "def" })
        yield* mutation.create({ target: yield* resolve("g/h/i.txt"), content: "ghi" })
        expect(nodeFs.readFileSync(path.join(root, "a/b/c.txt"), "utf8")).toBe("abc")
        expect(nodeFs.readFileSync(path.join(root, "d/e/f.txt"), "utf8")).toBe("def")
        expect(nodeFs.readFileSync(path.join(root, "g/h/i.txt"), "utf8")).toBe("ghi")
      }),
    ),
  )

  it.scopedLive("exactly one BOM", () =>
    withMutation(({ root }) =>
      Effect.gen(function* () {
        const mutation = yield* files
        const fresh = yield* resolve("fresh.txt")
        expect(yield* mutation.writeTextPreservingBom({ target: fresh, content: "\uFEFF\uFEFFx" })).toMatchObject({
          existed: false,
        })
        expect(nodeFs.readFileSync(path.join(root, "fresh.txt"))).toEqual(Buffer.concat([BOM, Buffer.from("x")]))
        nodeFs.writeFileSync(path.join(root, "marked.txt"), Buffer.concat([BOM, Buffer.from("old")]))
        const marked = yield* resolve("marked.txt")
        yield* mutation.writeTextPreservingBom({ target: marked, content: "\uFEFFnew" })
        expect(nodeFs.readFileSync(path.join(root, "marked.txt"))).toEqual(Buffer.concat([BOM, Buffer.from("new")]))
        yield* mutation.writeTextPreservingBom({ target: marked, content: "newer" })
        expect(nodeFs.readFileSync(path.join(root, "marked.txt"))).toEqual(Buffer.concat([BOM, Buffer.from("newer")]))
        nodeFs.writeFileSync(path.join(root, "plain.txt"), "old")
        yield* mutation.writeTextPreservingBom({ target: yield* resolve("plain.txt"), content: "new" })
        expect(nodeFs.readFileSync(path.join(root, "plain.txt"), "utf8")).toBe("new")
      }),
    ),
  )

  it.scopedLive("create rejects a target that appears after resolution", () =>
    withMutation(({ root }) =>
      Effect.gen(function* () {
        const target = yield* resolve("appears.txt")
        nodeFs.writeFileSync(path.join(root, "appears.txt"), "concurrent")
        const error = yield* Effect.flip((yield* files).create({ target, content: "mine" }))
        expect(error).toBeInstanceOf(FileMutation.TargetExistsError)
        expect(error).toMatchObject({ _tag: "FileMutation.TargetExistsError", path: path.join(root, "appears.txt") })
        expect(nodeFs.readFileSync(path.join(root, "appears.txt"), "utf8")).toBe("concurrent")
      }),
    ),
  )

  it.scopedLive("create succeeds if an existing target disappeared", () =>
    withMutation(({ root }) =>
      Effect.gen(function* () {
        nodeFs.writeFileSync(path.join(root, "gone.txt"), "old")
        const target = yield* resolve("gone.txt")
        nodeFs.rmSync(path.join(root, "gone.txt"))
        expect(yield* (yield* files).create({ target, content: "new" })).toMatchObject({ existed: false })
        expect(nodeFs.readFileSync(path.join(root, "gone.txt"), "utf8")).toBe("new")
      }),
    ),
  )

  it.scopedLive("removals, including external targets", () =>
    withMutation(({ root, outside }) =>
      Effect.gen(function* () {
        const mutation = yield* files
        nodeFs.writeFileSync(path.join(root, "inside.txt"), "x")
        nodeFs.writeFileSync(path.join(outside, "outside.txt"), "x")
        expect(yield* mutation.remove({ target: yield* resolve("inside.txt") })).toMatchObject({
          existed: true,
          resource: "inside.txt",
        })
        const external = yield* resolve(path.join(outside, "outside.txt"))
        expect(external.externalDirectory).toBeDefined()
        expect(yield* mutation.remove({ target: external })).toEqual({
          operation: "remove",
          target: path.join(outside, "outside.txt"),
          resource: `${outside}/outside.txt`,
          existed: true,
        })
        expect(nodeFs.existsSync(path.join(root, "inside.txt"))).toBe(false)
        expect(nodeFs.existsSync(path.join(outside, "outside.txt"))).toBe(false)
      }),
    ),
  )

  it.scopedLive("missing target", () =>
    withMutation(() =>
      Effect.gen(function* () {
        expect(yield* (yield* files).remove({ target: yield* resolve("missing.txt") })).toMatchObject({
          existed: false,
        })
      }),
    ),
  )

  it.scopedLive("concurrent writes to one canonical path are serialised", () =>
    withMutation(({ root }) =>
      Effect.gen(function* () {
        const mutation = yield* files
        const probe = yield* Probe
        const target = yield* resolve("shared.txt")
        // Two resolutions of one canonical path (relative and absolute) share the lock.
        const alias = yield* resolve(path.join(root, "shared.txt"))
        yield* Effect.all(
          Array.from({ length: 6 }, (_, i) =>
            mutation.write({ target: i % 2 === 0 ? target : alias, content: `v${i}` }),
          ),
          { concurrency: "unbounded" },
        )
        expect(yield* Ref.get(probe.peak)).toBe(1)
        expect(nodeFs.readFileSync(path.join(root, "shared.txt"), "utf8")).toMatch(/^v\d$/)
      }),
    ),
  )

  it.scopedLive("distinct targets proceed independently", () =>
    withMutation(() =>
      Effect.gen(function* () {
        const mutation = yield* files
        const probe = yield* Probe
        const gate = yield* Deferred.make<void>()
        yield* Ref.set(probe.gate, gate)
        const first = yield* Effect.fork(mutation.write({ target: yield* resolve("first.txt"), content: "1" }))
        const second = yield* Effect.fork(mutation.write({ target: yield* resolve("second.txt"), content: "2" }))
        // Both writes are inside writeFile at the same time: the first one's lock does not hold up the second.
        yield* Effect.repeat(Ref.get(probe.active), { until: (n) => n === 2, schedule: Schedule.spaced("1 millis") })
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(Fiber.zip(first, second))
        expect(yield* Ref.get(probe.peak)).toBe(2)
      }),
    ),
  )

  it.scopedLive("only one of two concurrent conditional writes from the same bytes succeeds", () =>
    withMutation(({ root }) =>
      Effect.gen(function* () {
        const mutation = yield* files
        nodeFs.writeFileSync(path.join(root, "cas.txt"), "original")
        const target = yield* resolve("cas.txt")
        const results = yield* Effect.all(
          ["left", "right"].map((content) =>
            Effect.either(mutation.writeIfUnchanged({ target, expected: bytes("original"), content })),
          ),
          { concurrency: "unbounded" },
        )
        const successes = results.filter(Either.isRight)
        const failures = results.filter(Either.isLeft).map((result) => result.left)
        expect(successes).toHaveLength(1)
        expect(failures).toHaveLength(1)
        expect(failures[0]).toBeInstanceOf(FileMutation.StaleContentError)
        expect(["left", "right"]).toContain(nodeFs.readFileSync(path.join(root, "cas.txt"), "utf8"))
      }),
    ),
  )

  it.scopedLive("stale conditional write rejected", () =>
    withMutation(({ root }) =>
      Effect.gen(function* () {
        const mutation = yield* files
        nodeFs.writeFileSync(path.join(root, "stale.txt"), "current")
        const error = yield* Effect.flip(
          mutation.writeIfUnchanged({
            target: yield* resolve("stale.txt"),
            expected: bytes("outdated"),
            content: "mine",
          }),
        )
        expect(error).toMatchObject({ _tag: "FileMutation.StaleContentError", path: path.join(root, "stale.txt") })
        expect(nodeFs.readFileSync(path.join(root, "stale.txt"), "utf8")).toBe("current")
        // A vanished file is stale too.
        const missing = yield* Effect.flip(
          mutation.writeIfUnchanged({ target: yield* resolve("missing.txt"), expected: bytes(""), content: "mine" }),
        )
        expect(missing._tag).toBe("FileMutation.StaleContentError")
        expect(nodeFs.existsSync(path.join(root, "missing.txt"))).toBe(false)
      }),
    ),
  )

  it.scopedLive("a started write is uninterruptible", () =>
    withMutation(({ root }) =>
      Effect.gen(function* () {
        const mutation = yield* files
        const probe = yield* Probe
        const gate = yield* Deferred.make<void>()
        const entered = yield* Deferred.make<void>()
        yield* Ref.set(probe.gate, gate)
        yield* Ref.set(probe.entered, entered)
        const fiber = yield* Effect.fork(mutation.write({ target: yield* resolve("steady.txt"), content: "done" }))
        yield* Deferred.await(entered)
        const interruption = yield* Effect.fork(Fiber.interrupt(fiber))
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(interruption)
        expect(nodeFs.readFileSync(path.join(root, "steady.txt"), "utf8")).toBe("done")
      }),
    ),
  )

  describe("symlink swapped in after resolution (PathChangedError)", () => {
    it.scopedLive("an ancestor replaced by a link to the outside is refused and nothing is written outside", () =>
      withMutation(({ root, outside }) =>
        Effect.gen(function* () {
          const mutation = yield* files
          nodeFs.mkdirSync(path.join(root, "dir"))
          const target = yield* resolve("dir/file.txt")
          nodeFs.renameSync(path.join(root, "dir"), path.join(root, "dir-moved"))
          nodeFs.symlinkSync(outside, path.join(root, "dir"))
          const attempts: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
            mutation.write({ target, content: "x" }),
            mutation.writeTextPreservingBom({ target, content: "x" }),
            mutation.create({ target, content: "x" }),
            mutation.writeIfUnchanged({ target, expected: bytes(""), content: "x" }),
            mutation.remove({ target }),
          ]
          for (const attempt of attempts) {
            const error = yield* Effect.flip(attempt)
            expect(error).toMatchObject({
              _tag: "FileMutation.PathChangedError",
              path: path.join(root, "dir/file.txt"),
            })
          }
          expect(nodeFs.readdirSync(outside)).toEqual([])
        }),
      ),
    )

    it.scopedLive("a target replaced by a symlink is refused and the link's target is untouched", () =>
      withMutation(({ root, outside }) =>
        Effect.gen(function* () {
          const mutation = yield* files
          nodeFs.writeFileSync(path.join(root, "victim.txt"), "mine")
          nodeFs.writeFileSync(path.join(outside, "secret.txt"), "secret")
          const target = yield* resolve("victim.txt")
          nodeFs.rmSync(path.join(root, "victim.txt"))
          nodeFs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "victim.txt"))
          const error = yield* Effect.flip(mutation.write({ target, content: "overwrite" }))
          expect(error._tag).toBe("FileMutation.PathChangedError")
          expect(nodeFs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("secret")
        }),
      ),
    )
  })

  describe("hard links", () => {
    it.scopedLive("write, writeTextPreservingBom and writeIfUnchanged replace a multiply-linked file", () =>
      withMutation(({ root, outside }) =>
        Effect.gen(function* () {
          const mutation = yield* files
          const other = path.join(outside, "other-link.txt")
          const file = path.join(root, "linked.txt")
          nodeFs.writeFileSync(other, "shared")
          nodeFs.chmodSync(other, 0o640)
          const target = yield* resolve("linked.txt")
          const steps: ReadonlyArray<readonly [Effect.Effect<unknown, unknown>, string]> = [
            [mutation.write({ target, content: "one" }), "one"],
            [mutation.writeTextPreservingBom({ target, content: "two" }), "two"],
            [mutation.writeIfUnchanged({ target, expected: bytes("shared"), content: "three" }), "three"],
          ]
          for (const [step, expected] of steps) {
            nodeFs.rmSync(file, { force: true })
            nodeFs.linkSync(other, file)
            expect(nodeFs.statSync(file).nlink).toBe(2)
            yield* step
            expect(nodeFs.readFileSync(file, "utf8")).toBe(expected)
            expect(nodeFs.readFileSync(other, "utf8")).toBe("shared")
            expect(nodeFs.statSync(other).nlink).toBe(1)
            // The replacement keeps the permission bits and leaves no temporary file behind.
            expect(nodeFs.statSync(file).mode & 0o777).toBe(0o640)
            expect(nodeFs.readdirSync(root)).toEqual(["linked.txt"])
          }
        }),
      ),
    )

    it.scopedLive("a file with one link is written in place (same inode)", () =>
      withMutation(({ root }) =>
        Effect.gen(function* () {
          nodeFs.writeFileSync(path.join(root, "single.txt"), "old")
          const inode = nodeFs.statSync(path.join(root, "single.txt")).ino
          yield* (yield* files).write({ target: yield* resolve("single.txt"), content: "new" })
          expect(nodeFs.statSync(path.join(root, "single.txt")).ino).toBe(inode)
          expect(nodeFs.readFileSync(path.join(root, "single.txt"), "utf8")).toBe("new")
        }),
      ),
    )

    it.scopedLive("removing a multiply-linked name leaves the other link's bytes", () =>
      withMutation(({ root, outside }) =>
        Effect.gen(function* () {
          nodeFs.writeFileSync(path.join(outside, "keep.txt"), "kept")
          nodeFs.linkSync(path.join(outside, "keep.txt"), path.join(root, "keep.txt"))
          yield* (yield* files).remove({ target: yield* resolve("keep.txt") })
          expect(nodeFs.existsSync(path.join(root, "keep.txt"))).toBe(false)
          expect(nodeFs.readFileSync(path.join(outside, "keep.txt"), "utf8")).toBe("kept")
        }),
      ),
    )
  })

  describe("descriptor checks", () => {
    it.scopedLive("missing parents below a directory swapped for an outside link are never created outside", () =>
      withMutation(({ root, outside }) =>
        Effect.gen(function* () {
          const mutation = yield* files
          nodeFs.mkdirSync(path.join(root, "top"))
          const target = yield* resolve("top/new/deeper/file.txt")
          nodeFs.renameSync(path.join(root, "top"), path.join(root, "top-moved"))
          nodeFs.symlinkSync(outside, path.join(root, "top"))
          for (const attempt of [
            mutation.write({ target, content: "x" }),
            mutation.create({ target, content: "x" }),
            mutation.writeTextPreservingBom({ target, content: "x" }),
          ]) {
            const error = yield* Effect.flip(attempt)
            expect(error).toMatchObject({
              _tag: "FileMutation.PathChangedError",
              path: path.join(root, "top/new/deeper/file.txt"),
            })
          }
          expect(nodeFs.readdirSync(outside)).toEqual([])
          expect(nodeFs.readdirSync(path.join(root, "top-moved"))).toEqual([])
        }),
      ),
    )

    it.scopedLive("a file created at another place than the verified one is removed and the create fails", () =>
      withMutation(({ root, outside }) =>
        Effect.gen(function* () {
          // A directory handle whose lookups go somewhere else than the place it was verified at: what a lost race
          // looks like where names cannot be looked up through a verified descriptor.
          const fd = nodeFs.openSync(root, "r")
          const astray = { fd, path: root, via: outside }
          const error = yield* Effect.flip(
            FileMutation.io.openIn(astray, "new.txt", FileMutation.io.flags.createExclusive),
          ).pipe(Effect.ensuring(Effect.sync(() => nodeFs.closeSync(fd))))
          expect(error).toMatchObject({ _tag: "FileMutation.PathChangedError", path: path.join(root, "new.txt") })
          expect(nodeFs.readdirSync(outside)).toEqual([])
          expect(nodeFs.readdirSync(root)).toEqual([])
        }),
      ),
    )

    it.scopedLive("a special file at the target is refused without writing", () =>
      withMutation(({ root }) =>
        Effect.gen(function* () {
          nodeFs.mkdirSync(path.join(root, "a-directory"))
          const error = yield* Effect.flip(
            (yield* files).write({ target: yield* resolve("a-directory"), content: "x" }),
          )
          expect(error._tag).toBe("SystemError")
          expect(nodeFs.statSync(path.join(root, "a-directory")).isDirectory()).toBe(true)
        }),
      ),
    )

    it.scopedLive("read returns the bytes through a verified descriptor and refuses a swapped path", () =>
      withMutation(({ root, outside }) =>
        Effect.gen(function* () {
          const mutation = yield* files
          nodeFs.mkdirSync(path.join(root, "dir"))
          nodeFs.writeFileSync(path.join(root, "dir", "file.txt"), "inside")
          nodeFs.writeFileSync(path.join(outside, "file.txt"), "OUTSIDE")
          const target = yield* resolve("dir/file.txt")
          expect(Buffer.from(yield* mutation.read({ target })).toString()).toBe("inside")
          nodeFs.renameSync(path.join(root, "dir"), path.join(root, "dir-moved"))
          nodeFs.symlinkSync(outside, path.join(root, "dir"))
          const error = yield* Effect.flip(mutation.read({ target }))
          expect(error._tag).toBe("FileMutation.PathChangedError")
          nodeFs.rmSync(path.join(root, "dir"))
          nodeFs.symlinkSync(path.join(outside, "file.txt"), path.join(root, "dir"))
          nodeFs.writeFileSync(path.join(root, "victim.txt"), "mine")
          const victim = yield* resolve("victim.txt")
          nodeFs.rmSync(path.join(root, "victim.txt"))
          nodeFs.symlinkSync(path.join(outside, "file.txt"), path.join(root, "victim.txt"))
          expect((yield* Effect.flip(mutation.read({ target: victim })))._tag).toBe("FileMutation.PathChangedError")
        }),
      ),
    )
  })
})
