import * as fs from "node:fs"
import * as path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Ref } from "effect"
import {
  ApplicationTools,
  Config,
  Global,
  Image,
  LocationMutation,
  ReadTool,
  ReadToolFileSystem,
  ToolOutputStore,
  ToolRegistry,
} from "../src/index.js"
import { tempDir } from "./support/location.js"
import * as Permission from "./support/permission.js"
import { dimensions, png } from "./support/png.js"

const CWD = "/work/fake-location"
const MISSING = "missing/deeper/file.txt"

/** Resolves against CWD; MISSING fails non_directory_ancestor; absolute outside paths get `<dirname>/*`. */
const fakeResolve: LocationMutation.Interface["resolve"] = (input) => {
  if (input.path === MISSING) {
    return Effect.fail(new LocationMutation.PathError({ path: input.path, reason: "non_directory_ancestor" }))
  }
  const canonical = path.resolve(CWD, input.path)
  if (LocationMutation.isWithin(CWD, canonical)) {
    return Effect.succeed({ canonical, resource: path.relative(CWD, canonical) || "." })
  }
  const resource = `${path.dirname(canonical)}/*`
  return Effect.succeed({
    canonical,
    resource: canonical,
    externalDirectory: {
      action: "external_directory",
      directory: path.dirname(canonical),
      resource,
      save: resource,
    },
  })
}

const fakeMutation = Layer.succeed(
  LocationMutation.Service,
  LocationMutation.Service.of({
    root: CWD,
    contains: (canonical) => LocationMutation.isWithin(CWD, canonical),
    resolve: fakeResolve,
    recheck: (input, target) =>
      fakeResolve(input).pipe(
        Effect.catchTag("LocationMutation.PathError", () =>
          Effect.fail(new LocationMutation.PathChangedError({ path: input.path })),
        ),
        Effect.flatMap((again) =>
          again.canonical === target.canonical
            ? Effect.void
            : Effect.fail(new LocationMutation.PathChangedError({ path: input.path })),
        ),
      ),
  }),
)

interface Calls {
  readonly inspect: Array<string>
  readonly read: Array<{ readonly path: string; readonly resource: string; readonly page: unknown }>
  readonly list: Array<{ readonly path: string; readonly page: unknown }>
}

const content = (name: string, text: string): ReadToolFileSystem.Content => ({
  uri: `file://${CWD}/${name}`,
  name,
  content: text,
  encoding: "utf8",
  mime: "text/plain",
})

const media = (name: string, bytes: Buffer, mime = "image/png"): ReadToolFileSystem.Content => ({
  uri: `file://${CWD}/${name}`,
  name,
  content: bytes.toString("base64"),
  encoding: "base64",
  mime,
})

/** A fake ReadToolFileSystem recording its calls. */
const fakeFiles = (
  calls: Calls,
  impl: {
    readonly inspect?: ReadToolFileSystem.Interface["inspect"]
    readonly read?: ReadToolFileSystem.Interface["read"]
    readonly list?: ReadToolFileSystem.Interface["list"]
  },
) =>
  Layer.succeed(
    ReadToolFileSystem.Service,
    ReadToolFileSystem.Service.of({
      inspect: (file) =>
        Effect.suspend(() => (calls.inspect.push(file), impl.inspect?.(file) ?? Effect.succeed("file" as const))),
      read: (file, resource, page) =>
        Effect.suspend(() => {
          calls.read.push({ path: file, resource, page })
          return impl.read?.(file, resource, page) ?? Effect.succeed(content(path.basename(file), "hello"))
        }),
      list: (dir, page) =>
        Effect.suspend(() => {
          calls.list.push({ path: dir, page })
          return impl.list?.(dir, page) ?? Effect.succeed({ entries: [], truncated: false })
        }),
    }),
  )

const passthroughRegistry = ToolRegistry.layer.pipe(
  Layer.provideMerge(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
)

interface Options {
  readonly inspect?: ReadToolFileSystem.Interface["inspect"]
  readonly read?: ReadToolFileSystem.Interface["read"]
  readonly list?: ReadToolFileSystem.Interface["list"]
  readonly image?: ReadonlyArray<Config.Entry>
  readonly imageLayer?: Layer.Layer<Image.Service, never, Config.Service>
  /** A real ToolOutputStore under this data directory instead of the passthrough store. */
  readonly data?: string
}

const harness = (options: Options = {}) => {
  const calls: Calls = { inspect: [], read: [], list: [] }
  const config = Config.layerFromEntries(options.image ?? [])
  const registry =
    options.data === undefined
      ? passthroughRegistry
      : ToolRegistry.defaultLayer.pipe(
          Layer.provide(
            Layer.mergeAll(NodeFileSystem.layer, Global.layerWith({ data: options.data, tmp: options.data }), config),
          ),
        )
  const layer = ReadTool.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        registry,
        Permission.layer,
        fakeMutation,
        fakeFiles(calls, options),
        (options.imageLayer ?? Image.layer).pipe(Layer.provide(config)),
      ),
    ),
  )
  return { calls, layer }
}

const identity = { sessionID: "ses_test", agent: "build", assistantMessageID: "msg_tool_test" } as const

const settle = (input: unknown) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize()).pipe(
    Effect.flatMap((turn) => turn.settle({ ...identity, call: { id: "call-read", name: "read", input } })),
  )

const definitions = (rules?: ReadonlyArray<ToolRegistry.VisibilityRule>) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize(rules)).pipe(
    Effect.map((turn) => turn.definitions.map((definition) => definition.name)),
  )

const source = { type: "tool", messageID: "msg_tool_test", callID: "call-read" } as const

describe("read", () => {
  it.effect("registers, authorizes, and reads through the location filesystem", () => {
    const { calls, layer } = harness({ read: () => Effect.succeed(content("README.md", "# readme\n")) })
    return Effect.gen(function* () {
      expect(yield* definitions()).toEqual(["read"])
      expect(yield* definitions([{ action: "read", resource: "*", effect: "deny" }])).toEqual([])
      const settlement = yield* settle({ path: "README.md" })
      // The model reads numbered lines; programs keep the structured Content.
      expect(settlement.result).toEqual({ type: "text", value: "1: # readme\n\n(lines 1-1 shown; end of file)" })
      expect(settlement.output?.structured).toEqual(content("README.md", "# readme\n"))
      expect(yield* Permission.asserts).toEqual([
        { action: "read", resources: ["README.md"], save: ["*"], sessionID: "ses_test", agent: "build", source },
      ])
      expect(calls.read).toEqual([
        {
          path: `${CWD}/README.md`,
          resource: "README.md",
          page: {
            offset: undefined,
            limit: undefined,
            limits: { maxLines: ToolOutputStore.MAX_LINES, maxBytes: ToolOutputStore.MAX_BYTES },
          },
        },
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("asks for external_directory approval before reading an external absolute path", () => {
    const { calls, layer } = harness()
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: "/elsewhere/notes/file.txt" })
      expect(settlement.result.type).toBe("text")
      const asserts = yield* Permission.asserts
      expect(asserts.map(({ action, resources, save }) => ({ action, resources, save }))).toEqual([
        { action: "external_directory", resources: ["/elsewhere/notes/*"], save: ["/elsewhere/notes/*"] },
        { action: "read", resources: ["/elsewhere/notes/file.txt"], save: ["*"] },
      ])
      expect(calls.inspect).toEqual(["/elsewhere/notes/file.txt"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("returns a small PNG as native media instead of durable base64 text", () => {
    const bytes = png(1, 1)
    const { layer } = harness({ read: () => Effect.succeed(media("pixel.png", bytes)) })
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: "pixel.png" })
      expect(settlement.result).toEqual({
        type: "content",
        value: [
          { type: "text", text: "Image read successfully" },
          {
            type: "file",
            uri: `data:image/png;base64,${bytes.toString("base64")}`,
            mime: "image/png",
            name: "pixel.png",
          },
        ],
      })
      expect(settlement.output?.structured).toEqual({
        uri: `file://${CWD}/pixel.png`,
        name: "pixel.png",
        content: bytes.toString("base64"),
        encoding: "base64",
        mime: "image/png",
      })
    }).pipe(Effect.provide(layer))
  })

  it.scoped("preserves a PNG above the generic text limit as native media", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const bytes = png(256, 256, { noisy: true })
      expect(bytes.toString("base64").length).toBeGreaterThan(50 * 1024)
      const { layer } = harness({ data, read: () => Effect.succeed(media("noise.png", bytes)) })
      const settlement = yield* settle({ path: "noise.png" }).pipe(Effect.provide(layer))
      expect(settlement.outputPaths).toBeUndefined()
      expect(settlement.result).toEqual({
        type: "content",
        value: [
          { type: "text", text: "Image read successfully" },
          {
            type: "file",
            uri: `data:image/png;base64,${bytes.toString("base64")}`,
            mime: "image/png",
            name: "noise.png",
          },
        ],
      })
    }),
  )

  it.effect("returns the original image when the resizer is unavailable", () => {
    const bytes = png(16, 1)
    const { layer } = harness({
      read: () => Effect.succeed(media("wide.png", bytes)),
      image: [{ type: "document", info: { attachments: { image: { max_width: 4 } } } }],
      imageLayer: Image.layerWithoutAdapter,
    })
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: "wide.png" })
      expect(settlement.result).toMatchObject({
        type: "content",
        value: [{ type: "text" }, { type: "file", uri: `data:image/png;base64,${bytes.toString("base64")}` }],
      })
    }).pipe(Effect.provide(layer))
  })

  it.effect("rejects invalid image data returned by the filesystem", () => {
    const { layer } = harness({ read: () => Effect.succeed(media("truncated.png", png(8, 8).subarray(0, 24))) })
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: "truncated.png" })
      expect(settlement.result).toEqual({ type: "error", value: "Image could not be decoded: truncated.png" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("rejects oversized images when resizing is disabled", () => {
    const { layer } = harness({
      read: () => Effect.succeed(media("wide.png", png(16, 1))),
      image: [{ type: "document", info: { attachments: { image: { auto_resize: false, max_width: 4 } } } }],
    })
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: "wide.png" })
      expect(settlement.result.type).toBe("error")
      expect(settlement.result.value).toContain("exceeding configured limits 4x2000")
    }).pipe(Effect.provide(layer))
  })

  it.effect("resizes images to configured dimensions before returning media", () => {
    const { layer } = harness({
      read: () => Effect.succeed(media("wide.png", png(16, 1))),
      image: [{ type: "document", info: { attachments: { image: { max_width: 4 } } } }],
    })
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: "wide.png" })
      expect(settlement.result.type).toBe("content")
      const file = (settlement.result.value as ReadonlyArray<{ type: string; uri?: string }>)[1]!
      const size = dimensions(Buffer.from(file.uri!.split(",")[1]!, "base64"))
      expect(size.width).toBeLessThanOrEqual(4)
      expect(size.height).toBeLessThanOrEqual(2000)
    }).pipe(Effect.provide(layer))
  })

  it.effect("enforces max base64 bytes after resize attempts", () => {
    const { layer } = harness({
      read: () => Effect.succeed(media("pixel.png", png(2, 2))),
      image: [{ type: "document", info: { attachments: { image: { max_base64_bytes: 1 } } } }],
    })
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: "pixel.png" })
      expect(settlement.result.type).toBe("error")
      expect(settlement.result.value).toContain("/1 bytes")
    }).pipe(Effect.provide(layer))
  })

  it.scoped("returns supported image contents despite a misleading binary extension", () =>
    Effect.gen(function* () {
      // The real filesystem part sniffs the magic bytes before looking at the extension.
      const dir = yield* tempDir()
      const bytes = png(1, 1)
      const file = path.join(dir, "pixel.bin")
      yield* Effect.sync(() => fs.writeFileSync(file, bytes))
      const real = yield* Effect.flatMap(ReadToolFileSystem.Service, (files) => files.read(file, "pixel.bin")).pipe(
        Effect.provide(ReadToolFileSystem.layer),
        Effect.provide(NodeFileSystem.layer),
      )
      const { layer } = harness({ read: () => Effect.succeed(real) })
      const settlement = yield* settle({ path: "pixel.bin" }).pipe(Effect.provide(layer))
      expect(settlement.result).toMatchObject({
        type: "content",
        value: [{ type: "text" }, { type: "file", mime: "image/png", name: "pixel.bin" }],
      })
    }),
  )

  it.effect("returns expected filesystem failures to the model", () => {
    const { calls, layer } = harness({
      read: (_, resource) => Effect.fail(new ReadToolFileSystem.BinaryFileError({ resource })),
    })
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: "archive.dat", offset: 2, limit: 1 })
      expect(settlement.result).toEqual({ type: "error", value: "Cannot read binary file: archive.dat" })
      expect(calls.read[0]?.page).toEqual({
        offset: 2,
        limit: 1,
        limits: { maxLines: ToolOutputStore.MAX_LINES, maxBytes: ToolOutputStore.MAX_BYTES },
      })
    }).pipe(Effect.provide(layer))
  })

  it.effect(
    "maps the other typed read failures to Unable to read with their cause and keeps the media limit message",
    () => {
      const failures: Array<ReadToolFileSystem.ReadError> = [
        new ReadToolFileSystem.MalformedUtf8Error({ resource: "x.txt" }),
        new ReadToolFileSystem.OffsetOutOfRangeError({ offset: 9 }),
        new ReadToolFileSystem.PathKindError({ resource: "x.txt", expected: "a file" }),
        new ReadToolFileSystem.MediaIngestLimitError({ resource: "x.txt", maximumBytes: 20971520 }),
      ]
      let next = 0
      const { layer } = harness({ read: () => Effect.fail(failures[next++]!) })
      return Effect.gen(function* () {
        const results = []
        for (let i = 0; i < failures.length; i++) results.push((yield* settle({ path: "x.txt" })).result)
        expect(results).toEqual([
          { type: "error", value: "Unable to read x.txt: the file is not valid UTF-8 text" },
          { type: "error", value: "Unable to read x.txt: offset 9 is out of range" },
          { type: "error", value: "Unable to read x.txt: it is neither a regular file nor a directory" },
          { type: "error", value: "Media exceeds 20971520 byte ingestion limit: x.txt" },
        ])
      }).pipe(Effect.provide(layer))
    },
  )

  it.effect("preserves unexpected filesystem defects", () => {
    const { calls, layer } = harness({ inspect: () => Effect.die(new Error("inspect exploded")) })
    return Effect.gen(function* () {
      const exit = yield* Effect.exit(settle({ path: "README.md" }))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause) && Cause.pretty(exit.cause)).toContain("inspect exploded")
      expect(calls.read).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("does not read when permission is denied", () => {
    const { calls, layer } = harness()
    return Effect.gen(function* () {
      yield* Permission.deny("read")
      const settlement = yield* settle({ path: "README.md" })
      expect(settlement.result).toEqual({
        type: "error",
        value: "Permission denied by configured rules for read: README.md",
      })
      expect(calls.read).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("returns missing paths as model-visible tool failures", () => {
    const { calls, layer } = harness()
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: MISSING })
      expect(settlement.result).toEqual({
        type: "error",
        value: `Unable to read ${MISSING}: a parent of the path is not a directory`,
      })
      expect(yield* Permission.asserts).toEqual([])
      expect(calls.read).toEqual([])
      expect(calls.inspect).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("lists a bounded directory page through read", () => {
    const { calls, layer } = harness({ inspect: () => Effect.succeed("directory") })
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: "src", offset: 2, limit: 10 })
      expect(settlement.result).toEqual({ type: "text", value: "(no entries from 2)" })
      expect(settlement.output?.structured).toEqual({ entries: [], truncated: false })
      expect((yield* Permission.asserts).map((input) => input.resources)).toEqual([["src"]])
      expect(calls.list).toEqual([
        {
          path: `${CWD}/src`,
          page: {
            offset: 2,
            limit: 10,
            limits: { maxLines: ToolOutputStore.MAX_LINES, maxBytes: ToolOutputStore.MAX_BYTES },
          },
        },
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("does not list a directory when permission is denied", () => {
    const { calls, layer } = harness({ inspect: () => Effect.succeed("directory") })
    return Effect.gen(function* () {
      yield* Permission.deny("read")
      const settlement = yield* settle({ path: "src" })
      expect(settlement.result).toEqual({ type: "error", value: "Permission denied by configured rules for read: src" })
      expect(calls.list).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("preserves unexpected resolution defects", () => {
    const { calls, layer } = harness({ inspect: () => Effect.die("boom") })
    return Effect.gen(function* () {
      const exit = yield* Effect.exit(settle({ path: "src" }))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(calls.read).toEqual([])
      expect(calls.list).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("forwards pagination and returns bounded text pages with continuation", () => {
    const page: ReadToolFileSystem.TextPage = {
      type: "text-page",
      content: "hello",
      mime: "text/plain",
      offset: 2,
      truncated: true,
      next: 3,
    }
    const { calls, layer } = harness({ read: () => Effect.succeed(page) })
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: "notes.txt", offset: 2, limit: 1 })
      expect(settlement.result).toEqual({
        type: "text",
        value: "2: hello\n\n(lines 2-2 shown; the file continues: read with offset=3)",
      })
      expect(settlement.output?.structured).toEqual(page)
      expect(calls.read[0]?.page).toEqual({
        offset: 2,
        limit: 1,
        limits: { maxLines: ToolOutputStore.MAX_LINES, maxBytes: ToolOutputStore.MAX_BYTES },
      })
    }).pipe(Effect.provide(layer))
  })

  it.effect("rejects unsupported binary discovered by a direct read", () => {
    const { layer } = harness({
      read: () => Effect.succeed(media("late-binary", Buffer.from([1, 2, 3]), "application/octet-stream")),
    })
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: "late-binary" })
      expect(settlement.result).toEqual({ type: "error", value: "Cannot read binary file: late-binary" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("maps corrected permission feedback verbatim", () => {
    const { layer } = harness()
    return Effect.gen(function* () {
      const fake = yield* Permission.FakePermissionState
      yield* Ref.set(fake.corrected, new Map([["read", "use the docs folder"]]))
      const settlement = yield* settle({ path: "README.md" })
      expect(settlement.result).toEqual({
        type: "error",
        value:
          "The user rejected permission to use this specific tool call with the following feedback: use the docs folder",
      })
    }).pipe(Effect.provide(layer))
  })

  it.effect("rejects invalid input: limit above 2000", () => {
    const { calls, layer } = harness()
    return Effect.gen(function* () {
      const settlement = yield* settle({ path: "README.md", limit: 2001 })
      expect(settlement.result.type).toBe("error")
      expect(String(settlement.result.value)).toMatch(/^Invalid tool input: /)
      expect(calls.inspect).toEqual([])
    }).pipe(Effect.provide(layer))
  })
})
