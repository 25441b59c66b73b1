/**
 * The file leaves say why they could not do their work: `read`, `write`, `edit` and `apply_patch` on a missing
 * file, a path outside the Location, a directory, a broken setup (a session that does not exist) and the operating
 * system's refusal each give the model a different, exact text — not one `Unable to read X` for all of them. Real
 * files on a real Location; the refusal of the operating system also as the typed errors the platform produces
 * (root reads every file, so a real EACCES needs an unprivileged user).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { SystemError } from "@effect/platform/Error"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Location, SessionV2, ToolRegistry } from "../src/index.js"
import * as FileFailure from "../src/builtin/internal/file-failure.js"
import { Core } from "../src/entry/testing.js"

const settle = (name: string, input: Record<string, unknown>, sessionID?: string) =>
  Effect.gen(function* () {
    const session = sessionID ?? (yield* (yield* SessionV2.Service).create({ agent: "build" })).id
    const turn = yield* (yield* ToolRegistry.Service).materialize([])
    const settled = yield* turn.settle({
      sessionID: session,
      agent: "build",
      assistantMessageID: "msg_causes",
      call: { id: `call_${name}`, name, input },
    })
    return settled.result
  })

const error = (value: string) => ({ type: "error", value })
const ESCAPE =
  "a relative path may not leave the current location (an absolute path outside it asks for external_directory)"

const patch = (body: string) => ({ patchText: `*** Begin Patch\n${body}\n*** End Patch` })

describe("file leaves name the cause of a failure", () => {
  it.scoped("read", () =>
    Effect.gen(function* () {
      const { directory } = yield* Location.Service
      fs.writeFileSync(path.join(directory, "file.txt"), "x\n")
      expect(yield* settle("read", { path: "missing.txt" })).toEqual(
        error("Unable to read missing.txt: not found (ENOENT)"),
      )
      expect(yield* settle("read", { path: "../outside.txt" })).toEqual(
        error(`Unable to read ../outside.txt: ${ESCAPE}`),
      )
      expect(yield* settle("read", { path: "file.txt/inner" })).toEqual(
        error("Unable to read file.txt/inner: a parent of the path is not a directory"),
      )
      expect(yield* settle("read", { path: "file.txt", offset: 9 })).toEqual(
        error("Unable to read file.txt: offset 9 is out of range"),
      )
      expect(yield* settle("read", { path: "file.txt" }, "ses_gone")).toEqual(
        error("Unable to read file.txt: the session ses_gone does not exist"),
      )
    }).pipe(Effect.provide(Core.layerTest({}))),
  )

  it.scoped("write and edit", () =>
    Effect.gen(function* () {
      const { directory } = yield* Location.Service
      fs.mkdirSync(path.join(directory, "folder"))
      fs.writeFileSync(path.join(directory, "file.txt"), "x\n")
      expect(yield* settle("write", { path: "folder", content: "x" })).toEqual(
        error("Unable to write folder: it is a directory (EISDIR)"),
      )
      expect(yield* settle("write", { path: "../out.txt", content: "x" })).toEqual(
        error(`Unable to write ../out.txt: ${ESCAPE}`),
      )
      expect(yield* settle("write", { path: "file.txt/inner", content: "x" })).toEqual(
        error("Unable to write file.txt/inner: a parent of the path is not a directory"),
      )
      expect(yield* settle("edit", { path: "missing.txt", oldString: "a", newString: "b" })).toEqual(
        error("Unable to edit missing.txt: not found (ENOENT)"),
      )
      expect(yield* settle("edit", { path: "folder", oldString: "a", newString: "b" })).toEqual(
        error("Unable to edit folder: it is a directory (EISDIR)"),
      )
      expect(yield* settle("write", { path: "new.txt", content: "x" }, "ses_gone")).toEqual(
        error("Unable to write new.txt: the session ses_gone does not exist"),
      )
      expect(fs.existsSync(path.join(directory, "new.txt"))).toBe(false)
    }).pipe(Effect.provide(Core.layerTest({}))),
  )

  it.scoped("apply_patch", () =>
    Effect.gen(function* () {
      const { directory } = yield* Location.Service
      fs.writeFileSync(path.join(directory, "a.txt"), "one\n")
      fs.mkdirSync(path.join(directory, "folder"))
      expect(yield* settle("apply_patch", patch("*** Update File: missing.txt\n@@\n-one\n+two"))).toEqual(
        error("Unable to apply patch at missing.txt: not found (ENOENT)"),
      )
      expect(yield* settle("apply_patch", patch("*** Update File: folder\n@@\n-one\n+two"))).toEqual(
        error("Unable to apply patch at folder: it is not a regular file (Directory)"),
      )
      expect(yield* settle("apply_patch", patch("*** Update File: a.txt\n@@\n-zero\n+two"))).toEqual(
        error("Unable to apply patch at a.txt: Failed to find expected lines in a.txt:\nzero"),
      )
      expect(yield* settle("apply_patch", patch("*** Add File: a.txt\n+x"))).toEqual(
        error("Unable to apply patch at a.txt: it already exists"),
      )
      expect(yield* settle("apply_patch", patch("*** Add File: ../b.txt\n+x"))).toEqual(
        error(`Unable to apply patch at ../b.txt: ${ESCAPE}`),
      )
      expect(fs.readFileSync(path.join(directory, "a.txt"), "utf8")).toBe("one\n")
    }).pipe(Effect.provide(Core.layerTest({}))),
  )

  it.scoped("the operating system's refusal, as a real unreadable file (needs a user without root's override)", () =>
    Effect.gen(function* () {
      if (process.getuid?.() === 0) {
        console.log(
          "skipped: running as root, which reads and writes mode-000 files; the typed mapping is tested below",
        )
        return
      }
      const { directory } = yield* Location.Service
      fs.writeFileSync(path.join(directory, "locked.txt"), "x\n")
      fs.chmodSync(path.join(directory, "locked.txt"), 0o000)
      expect(yield* settle("read", { path: "locked.txt" })).toEqual(
        error("Unable to read locked.txt: the operating system denied access (EACCES)"),
      )
      expect(yield* settle("write", { path: "locked.txt", content: "y" })).toEqual(
        error("Unable to write locked.txt: the operating system denied access (EACCES)"),
      )
    }).pipe(Effect.provide(Core.layerTest({}))),
  )
})

describe("FileFailure.cause", () => {
  const system = (reason: SystemError["reason"], code?: string) =>
    new SystemError({
      reason,
      module: "FileSystem",
      method: "open",
      pathOrDescriptor: "/x",
      ...(code === undefined ? {} : { cause: Object.assign(new Error(code), { code }) }),
    })

  it("names the operating system's refusal and I/O errors with their code", () => {
    expect(FileFailure.describe("Unable to read x", system("PermissionDenied", "EACCES"))).toBe(
      "Unable to read x: the operating system denied access (EACCES)",
    )
    expect(FileFailure.describe("Unable to read x", system("PermissionDenied", "EPERM"))).toBe(
      "Unable to read x: the operating system denied access (EPERM)",
    )
    expect(FileFailure.describe("Unable to write x", system("Unknown", "EIO"))).toBe(
      "Unable to write x: I/O error (EIO)",
    )
    expect(FileFailure.describe("Unable to write x", system("Unknown", "ENOSPC"))).toBe(
      "Unable to write x: I/O error: no space left on the device (ENOSPC)",
    )
    expect(FileFailure.describe("Unable to write x", system("Unknown", "EROFS"))).toBe(
      "Unable to write x: the file system is read-only (EROFS)",
    )
    expect(FileFailure.describe("Unable to write x", system("Busy"))).toBe("Unable to write x: the file is busy")
  })

  it("leaves anything it does not know without a cause", () => {
    expect(FileFailure.describe("Unable to read x", new Error("boom"))).toBe("Unable to read x")
    expect(FileFailure.describe("Unable to read x", { _tag: "Other.Error" })).toBe("Unable to read x")
    expect(FileFailure.describe("Unable to read x", undefined)).toBe("Unable to read x")
  })
})
