/**
 * `FsError.fromErrno`: the error of a failed node:fs call is the `SystemError` `NodeFileSystem` gives for the same
 * failure (same reason, module and method), compared on real failures in a temp directory; EPERM, which
 * `NodeFileSystem` leaves `Unknown`, is `PermissionDenied`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { FileSystem } from "@effect/platform"
import type { SystemError } from "@effect/platform/Error"
import { NodeFileSystem } from "@effect/platform-node"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FsError } from "../src/index.js"
import { tempDir } from "./support/location.js"

/** The error node:fs throws from `run`. */
const thrown = (run: () => unknown): NodeJS.ErrnoException => {
  try {
    run()
  } catch (error) {
    return error as NodeJS.ErrnoException
  }
  throw new Error("the call did not fail")
}

it.scoped("each failure is the SystemError NodeFileSystem gives for it", () =>
  Effect.gen(function* () {
    const dir = yield* tempDir()
    const file = path.join(dir, "file.txt")
    fs.writeFileSync(file, "x")
    fs.symlinkSync(file, path.join(dir, "link"))
    const system = yield* FileSystem.FileSystem
    // Each case: the errno, our error for the node:fs call, and what FileSystem does with the same target.
    const reading = (target: string) => ({
      ours: FsError.fromErrno(
        "readFile",
        target,
        thrown(() => fs.readFileSync(target)),
      ),
      theirs: system.readFile(target),
    })
    const cases = [
      { code: "ENOENT", ...reading(path.join(dir, "missing")) },
      { code: "ENOTDIR", ...reading(path.join(file, "x")) },
      { code: "EISDIR", ...reading(dir) },
      {
        code: "EEXIST",
        ours: FsError.fromErrno(
          "makeDirectory",
          dir,
          thrown(() => fs.mkdirSync(dir)),
        ),
        theirs: system.makeDirectory(dir),
      },
    ]
    for (const { code, ours, theirs } of cases) {
      const error = (yield* Effect.flip(theirs)) as SystemError
      expect(error._tag).toBe("SystemError")
      expect((ours as SystemError).cause).toMatchObject({ code })
      expect({
        tag: ours._tag,
        reason: (ours as SystemError).reason,
        module: ours.module,
        method: ours.method,
      }).toEqual({ tag: error._tag, reason: error.reason, module: error.module, method: error.method })
    }
    // O_NOFOLLOW on a symlink: ELOOP, a bad resource.
    const loop = thrown(() => fs.openSync(path.join(dir, "link"), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW))
    expect(loop.code).toBe("ELOOP")
    expect((FsError.fromErrno("open", path.join(dir, "link"), loop) as SystemError).reason).toBe("BadResource")
  }).pipe(Effect.provide(NodeFileSystem.layer)),
)

it("the table: EPERM is PermissionDenied, a code it does not name is Unknown", () => {
  expect(FsError.reasonOf("EPERM")).toBe("PermissionDenied")
  expect(FsError.reasonOf("EACCES")).toBe("PermissionDenied")
  expect(FsError.reasonOf("EBUSY")).toBe("Busy")
  expect(FsError.reasonOf("EMFILE")).toBe("Unknown")
  expect(FsError.reasonOf(undefined)).toBe("Unknown")
})
