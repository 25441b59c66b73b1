import * as nodeFs from "node:fs"
import * as path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { LocationMutation } from "../src/index.js"
import { locationLayer, tempDir } from "./support/location.js"

/** Runs `body` with LocationMutation on a fresh Location (`root`, optionally reached through `directory`). */
const withResolver = <A, E>(
  body: (dirs: { root: string; outside: string }) => Effect.Effect<A, E, LocationMutation.Service>,
  options: { readonly viaSymlink?: boolean } = {},
) =>
  Effect.gen(function* () {
    const root = yield* tempDir()
    const outside = yield* tempDir("toolgate-outside-")
    let directory = root
    if (options.viaSymlink === true) {
      directory = path.join(outside, "root-link")
      nodeFs.symlinkSync(root, directory)
    }
    const layer = LocationMutation.layer.pipe(
      Layer.provide(Layer.merge(locationLayer(directory), NodeFileSystem.layer)),
    )
    return yield* body({ root, outside }).pipe(Effect.provide(layer))
  })

const resolve = (input: LocationMutation.ResolveInput) =>
  Effect.flatMap(LocationMutation.Service, (service) => service.resolve(input))

const reasonOf = (input: LocationMutation.ResolveInput) =>
  Effect.flip(resolve(input)).pipe(
    Effect.map((error) => (error._tag === "LocationMutation.PathError" ? error.reason : error._tag)),
  )

describe("LocationMutation", () => {
  it.scoped("resolves an active relative existing file target", () =>
    withResolver(({ root }) =>
      Effect.gen(function* () {
        nodeFs.writeFileSync(path.join(root, "hello.txt"), "hi")
        const target = yield* resolve({ path: "hello.txt", kind: "file" })
        expect(target).toEqual({ canonical: nodeFs.realpathSync(path.join(root, "hello.txt")), resource: "hello.txt" })
        expect("externalDirectory" in target).toBe(false)
      }),
    ),
  )

  it.scoped("resolves an active relative prospective file target", () =>
    withResolver(({ root }) =>
      Effect.gen(function* () {
        nodeFs.mkdirSync(path.join(root, "src"))
        expect(yield* resolve({ path: "src/new.txt", kind: "file" })).toEqual({
          canonical: path.join(root, "src/new.txt"),
          resource: "src/new.txt",
        })
      }),
    ),
  )

  it.scoped("rejects a relative lexical escape instead of promoting it to external authority", () =>
    withResolver(() =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(resolve({ path: "../outside.txt", kind: "file" }))
        expect(error).toBeInstanceOf(LocationMutation.PathError)
        expect(error).toMatchObject({
          _tag: "LocationMutation.PathError",
          path: "../outside.txt",
          reason: "relative_escape",
        })
        // Even when the escape leads to a directory that exists.
        expect(yield* reasonOf({ path: "../../../../../../../../../etc/passwd" })).toBe("relative_escape")
      }),
    ),
  )

  it.scoped("rejects a prospective target below an escaping symlink ancestor", () =>
    withResolver(({ root, outside }) =>
      Effect.gen(function* () {
        nodeFs.symlinkSync(outside, path.join(root, "escape"))
        const error = yield* Effect.flip(resolve({ path: "escape/new.txt", kind: "file" }))
        expect(error).toMatchObject({ path: "escape/new.txt", reason: "location_escape" })
        // Absolute in-Location input through the same link, and an existing target behind it, escape too.
        nodeFs.writeFileSync(path.join(outside, "existing.txt"), "x")
        expect(yield* reasonOf({ path: path.join(root, "escape/new.txt") })).toBe("location_escape")
        expect(yield* reasonOf({ path: "escape/existing.txt" })).toBe("location_escape")
        expect(yield* reasonOf({ path: "escape/missing/deeper.txt" })).toBe("location_escape")
      }),
    ),
  )

  it.scoped("follows an in-location symlink using ordinary filesystem semantics", () =>
    withResolver(({ root }) =>
      Effect.gen(function* () {
        nodeFs.mkdirSync(path.join(root, "actual"))
        nodeFs.symlinkSync(path.join(root, "actual"), path.join(root, "linked"))
        expect(yield* resolve({ path: "linked/new.txt", kind: "file" })).toEqual({
          canonical: path.join(root, "actual/new.txt"),
          resource: "actual/new.txt",
        })
      }),
    ),
  )

  it.scoped("accepts an explicit absolute in-location target without external approval", () =>
    withResolver(({ root }) =>
      Effect.gen(function* () {
        expect(yield* resolve({ path: path.join(root, "new.txt"), kind: "file" })).toEqual({
          canonical: path.join(root, "new.txt"),
          resource: "new.txt",
        })
        expect(yield* resolve({ path: root })).toEqual({ canonical: root, resource: "." })
      }),
    ),
  )

  it.scoped("requires external-directory authorization for an explicit external absolute target", () =>
    withResolver(({ outside }) =>
      Effect.gen(function* () {
        const target = yield* resolve({ path: path.join(outside, "new.txt"), kind: "file" })
        expect(target).toEqual({
          canonical: path.join(outside, "new.txt"),
          resource: `${outside}/new.txt`,
          externalDirectory: {
            action: "external_directory",
            directory: outside,
            resource: `${outside}/*`,
            save: `${outside}/*`,
          },
        })
        expect(LocationMutation.externalDirectoryPermission(target.externalDirectory!)).toEqual({
          action: "external_directory",
          resources: [`${outside}/*`],
          save: [`${outside}/*`],
        })
      }),
    ),
  )

  it.scoped("resolves an existing external file target", () =>
    withResolver(({ outside }) =>
      Effect.gen(function* () {
        nodeFs.writeFileSync(path.join(outside, "existing.txt"), "x")
        const target = yield* resolve({ path: path.join(outside, "existing.txt"), kind: "file" })
        expect(target.externalDirectory?.directory).toBe(outside)
        expect(target.canonical).toBe(path.join(outside, "existing.txt"))
      }),
    ),
  )

  it.scoped("anchors prospective external descendants at their stable existing directory", () =>
    withResolver(({ outside }) =>
      Effect.gen(function* () {
        const target = yield* resolve({ path: path.join(outside, "new/nested/file.txt"), kind: "file" })
        expect(target.canonical).toBe(path.join(outside, "new/nested/file.txt"))
        expect(target.externalDirectory).toMatchObject({ directory: outside, resource: `${outside}/*` })
      }),
    ),
  )

  it("ignores unknown mutation input fields", () => {
    expect(Schema.decodeUnknownSync(LocationMutation.ResolveInput)({ path: "a.txt", reference: "project:x" })).toEqual({
      path: "a.txt",
    })
    expect(Schema.decodeUnknownSync(LocationMutation.ResolveInput)({ path: "d", kind: "directory" })).toEqual({
      path: "d",
      kind: "directory",
    })
  })

  describe("derived", () => {
    it.scoped("an existing external directory with kind directory is its own boundary; kind changes nothing else", () =>
      withResolver(({ outside }) =>
        Effect.gen(function* () {
          nodeFs.mkdirSync(path.join(outside, "dir"))
          const asDirectory = yield* resolve({ path: path.join(outside, "dir"), kind: "directory" })
          const asFile = yield* resolve({ path: path.join(outside, "dir"), kind: "file" })
          expect(asDirectory.externalDirectory?.resource).toBe(`${outside}/dir/*`)
          expect(asFile.externalDirectory?.resource).toBe(`${outside}/dir/*`)
        }),
      ),
    )

    it.scoped("fails non_directory_ancestor below a file", () =>
      withResolver(({ root }) =>
        Effect.gen(function* () {
          nodeFs.writeFileSync(path.join(root, "file.txt"), "x")
          const error = yield* Effect.flip(resolve({ path: "file.txt/child.txt" }))
          expect(error).toMatchObject({ reason: "non_directory_ancestor", path: path.join(root, "file.txt/child.txt") })
        }),
      ),
    )

    it.scoped(
      "refuses an in-location symlink to an outside file, and a dangling link is a prospective internal target",
      () =>
        withResolver(({ root, outside }) =>
          Effect.gen(function* () {
            nodeFs.writeFileSync(path.join(outside, "secret.txt"), "x")
            nodeFs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "secret-link"))
            expect(yield* reasonOf({ path: "secret-link" })).toBe("location_escape")
            nodeFs.symlinkSync(path.join(outside, "missing.txt"), path.join(root, "dangling"))
            expect(yield* resolve({ path: "dangling" })).toEqual({
              canonical: path.join(root, "dangling"),
              resource: "dangling",
            })
          }),
        ),
    )

    it.scoped("keeps an external absolute path external even when it resolves into the Location", () =>
      withResolver(({ root, outside }) =>
        Effect.gen(function* () {
          nodeFs.symlinkSync(root, path.join(outside, "back-in"))
          const target = yield* resolve({ path: path.join(outside, "back-in/new.txt") })
          expect(target.canonical).toBe(path.join(root, "new.txt"))
          expect(target.resource).toBe(`${root}/new.txt`)
          expect(target.externalDirectory?.resource).toBe(`${root}/*`)
        }),
      ),
    )

    it.scoped("uses the realpath of a symlinked Location directory for canonical paths and resources", () =>
      withResolver(
        ({ root, outside }) =>
          Effect.gen(function* () {
            const service = yield* LocationMutation.Service
            expect(service.root).toBe(root)
            expect(yield* resolve({ path: "new.txt" })).toEqual({
              canonical: path.join(root, "new.txt"),
              resource: "new.txt",
            })
            // The Location's own (non-canonical) directory string is lexically internal.
            expect(yield* resolve({ path: path.join(outside, "root-link", "x.txt") })).toEqual({
              canonical: path.join(root, "x.txt"),
              resource: "x.txt",
            })
          }),
        { viaSymlink: true },
      ),
    )

    it.scoped("refuses a NUL byte as invalid_path without touching the filesystem", () =>
      withResolver(() =>
        Effect.gen(function* () {
          expect(yield* reasonOf({ path: "a\0b.txt" })).toBe("invalid_path")
        }),
      ),
    )

    it.scoped("fails a symlink loop with a typed PlatformError, not a defect", () =>
      withResolver(({ root }) =>
        Effect.gen(function* () {
          nodeFs.symlinkSync(path.join(root, "loop2"), path.join(root, "loop1"))
          nodeFs.symlinkSync(path.join(root, "loop1"), path.join(root, "loop2"))
          const error = yield* Effect.flip(resolve({ path: "loop1/new.txt" }))
          expect(["SystemError", "BadArgument"]).toContain(error._tag)
        }),
      ),
    )
  })

  describe("invalid paths are typed errors with a reason", () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      ["a NUL byte", "dir/a\0b.txt", "the path contains a NUL byte"],
      ["a NUL byte in an absolute path", "/tmp/\0", "the path contains a NUL byte"],
      ["an unpaired high surrogate", "bad\uD800.txt", "the path contains an unpaired UTF-16 surrogate"],
      ["an unpaired low surrogate", "\uDC00/x.txt", "the path contains an unpaired UTF-16 surrogate"],
      ["a name longer than 255 bytes", `${"ü".repeat(128)}.txt`, "a name in the path is longer than 255 bytes"],
      ["a path longer than 4095 bytes", `${"d/".repeat(2048)}x`, "the path is longer than 4095 bytes"],
    ]
    for (const [label, input, detail] of cases) {
      it.scoped(`refuses ${label} as invalid_path`, () =>
        withResolver(({ root }) =>
          Effect.gen(function* () {
            const before = nodeFs.readdirSync(root)
            for (const kind of ["file", "directory"] as const) {
              const error = yield* Effect.flip(resolve({ path: input, kind }))
              expect(error).toMatchObject({ _tag: "LocationMutation.PathError", reason: "invalid_path", detail })
              expect(error.message).toBe(detail)
            }
            expect(nodeFs.readdirSync(root)).toEqual(before)
          }),
        ),
      )
    }

    it("accepts well-formed surrogate pairs and names of exactly 255 bytes", () => {
      expect(LocationMutation.invalidPath("emoji-😀.txt")).toBeUndefined()
      expect(LocationMutation.invalidPath(`${"a".repeat(251)}.txt`)).toBeUndefined()
      expect(LocationMutation.invalidPath(`${"a".repeat(252)}.txt`)).toBe("a name in the path is longer than 255 bytes")
    })

    it("gives the reference reasons a readable message", () => {
      expect(new LocationMutation.PathError({ path: "../x", reason: "relative_escape" }).message).toBe(
        "a relative path may not leave the current location",
      )
    })
  })

  describe("recheck", () => {
    const recheck = (input: LocationMutation.ResolveInput, target: LocationMutation.Target) =>
      Effect.flatMap(LocationMutation.Service, (service) => service.recheck(input, target))

    it.scoped("passes while the path still resolves to the same target, existing or prospective", () =>
      withResolver(({ root, outside }) =>
        Effect.gen(function* () {
          nodeFs.writeFileSync(path.join(root, "a.txt"), "a")
          for (const input of [
            { path: "a.txt", kind: "file" as const },
            { path: "new/deeper.txt", kind: "file" as const },
            { path: path.join(outside, "x.txt"), kind: "file" as const },
          ]) {
            yield* recheck(input, yield* resolve(input))
          }
        }),
      ),
    )

    it.scoped("fails with PathChangedError when a link on the way now points elsewhere", () =>
      withResolver(({ root }) =>
        Effect.gen(function* () {
          nodeFs.mkdirSync(path.join(root, "one"))
          nodeFs.mkdirSync(path.join(root, "two"))
          nodeFs.symlinkSync("one", path.join(root, "link"))
          const input = { path: "link/file.txt", kind: "file" as const }
          const target = yield* resolve(input)
          nodeFs.rmSync(path.join(root, "link"))
          nodeFs.symlinkSync("two", path.join(root, "link"))
          const error = yield* Effect.flip(recheck(input, target))
          expect(error).toMatchObject({ _tag: "FileMutation.PathChangedError", path: "link/file.txt" })
          expect(error).toBeInstanceOf(LocationMutation.PathChangedError)
        }),
      ),
    )

    it.scoped("fails with PathChangedError when the path now leads outside", () =>
      withResolver(({ root, outside }) =>
        Effect.gen(function* () {
          nodeFs.mkdirSync(path.join(root, "dir"))
          const input = { path: "dir/file.txt", kind: "file" as const }
          const target = yield* resolve(input)
          nodeFs.renameSync(path.join(root, "dir"), path.join(root, "dir-moved"))
          nodeFs.symlinkSync(outside, path.join(root, "dir"))
          const error = yield* Effect.flip(recheck(input, target))
          expect(error._tag).toBe("FileMutation.PathChangedError")
        }),
      ),
    )
  })
})
