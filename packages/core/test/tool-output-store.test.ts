import * as fs from "node:fs"
import * as path from "node:path"
import { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, FastCheck, Fiber, Layer, Ref, TestClock } from "effect"
import { Config, Global, type LLM, Location, Project, ToolOutputStore } from "../src/index.js"
import { tempDir } from "./support/location.js"

const { MAX_BYTES, MAX_LINES } = ToolOutputStore

const documents = (...infos: ReadonlyArray<Config.Info>): ReadonlyArray<Config.Entry> =>
  infos.map((info) => ({ type: "document", info }))

/** The real store on a real data directory, with an optional config and file system. */
const storeLayer = (
  data: string,
  options: {
    readonly config?: ReadonlyArray<Config.Entry>
    readonly fileSystem?: Layer.Layer<FileSystem.FileSystem>
  } = {},
) =>
  ToolOutputStore.layer.pipe(
    Layer.provide(
      Layer.mergeAll(
        options.fileSystem ?? NodeFileSystem.layer,
        Global.layerWith({ data, tmp: path.join(data, "tmp") }),
        Config.layerFromEntries(options.config ?? []),
      ),
    ),
  )

/** `bound` on a fresh temp data directory; returns the result and the data directory. */
const boundIn = (output: LLM.ToolOutput, config?: ReadonlyArray<Config.Entry>) =>
  Effect.gen(function* () {
    const data = yield* tempDir()
    const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data, config ? { config } : {}))
    const result = yield* store.bound({ sessionID: "ses_store", toolCallID: "call-1", output })
    return { data, result }
  })

const text = (value: string): LLM.ToolTextContent => ({ type: "text", text: value })
const previewOf = (result: ToolOutputStore.BoundResult): string => {
  const first = result.output.content[0]
  if (first?.type !== "text") throw new Error("expected a text preview first")
  return first.text
}
const bytes = (value: string) => Buffer.byteLength(value, "utf8")
const lineCount = (value: string) => value.split("\n").length
const onlyPath = (result: ToolOutputStore.BoundResult): string => {
  expect(result.outputPaths).toHaveLength(1)
  return result.outputPaths[0]!
}
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** A file system that wraps the real one, overriding some operations (derived ones are re-derived). */
const wrappedFileSystem = (
  override: (real: FileSystem.FileSystem) => Partial<FileSystem.FileSystem>,
): Layer.Layer<FileSystem.FileSystem> =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (real) => FileSystem.make({ ...real, ...override(real) })),
  ).pipe(Layer.provide(NodeFileSystem.layer))

describe("ToolOutputStore reference cases", () => {
  it.scoped("bounds the provider-facing text channel with one managed file", () =>
    Effect.gen(function* () {
      const first = "HEAD-" + "a".repeat(30_000)
      const second = "b".repeat(30_000) + "-TAIL"
      const structured = { kind: "report" }
      const { result } = yield* boundIn({ structured, content: [text(first), text(second)] })
      expect(result.output.structured).toBe(structured)
      const file = onlyPath(result)
      expect(fs.readFileSync(file, "utf8")).toBe(first + second)
      expect(result.output.content).toHaveLength(1)
      const preview = previewOf(result)
      expect(bytes(preview)).toBeLessThanOrEqual(MAX_BYTES)
      expect(preview.startsWith("HEAD-")).toBe(true)
      expect(preview.endsWith("-TAIL")).toBe(true)
    }),
  )

  it.scoped("uses bounded text for oversized structured-only output", () =>
    Effect.gen(function* () {
      const structured = { text: "x".repeat(MAX_BYTES) }
      const { result } = yield* boundIn({ structured, content: [] })
      expect(result.output.structured).toBe(structured)
      const file = onlyPath(result)
      expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual(structured)
      expect(fs.readFileSync(file, "utf8")).toBe(JSON.stringify(structured, null, 2))
      expect(result.output.content).toHaveLength(1)
      expect(result.output.content[0]?.type).toBe("text")
    }),
  )

  it.scoped("preserves native media and structured metadata without applying a settlement media limit", () =>
    Effect.gen(function* () {
      const png = Buffer.alloc(6 * 1024 * 1024, 7).toString("base64")
      const media: LLM.ToolFileContent = { type: "file", uri: `data:image/png;base64,${png}`, mime: "image/png" }
      const output: LLM.ToolOutput = { structured: { caption: "pixel" }, content: [media] }
      const { result } = yield* boundIn(output)
      expect(result.outputPaths).toEqual([])
      expect(result.output).toBe(output)
      expect(result.output.content[0]).toBe(media)
    }),
  )

  it.scoped("preserves structured metadata and native media when bounding text", () =>
    Effect.gen(function* () {
      const full = "t".repeat(MAX_BYTES + 1)
      const media: LLM.ToolFileContent = { type: "file", uri: "data:image/png;base64,AAAA", mime: "image/png" }
      const structured = { path: "/x" }
      const { result } = yield* boundIn({ structured, content: [text(full), media] })
      expect(result.output.structured).toBe(structured)
      expect(result.output.content).toHaveLength(2)
      expect(result.output.content[1]).toBe(media)
      expect(fs.readFileSync(onlyPath(result), "utf8")).toBe(full)
    }),
  )

  it.scoped("does not double-count structured data duplicated in projected text", () =>
    Effect.gen(function* () {
      const same = "d".repeat(30_000)
      const output: LLM.ToolOutput = { structured: { output: same }, content: [text(same)] }
      const { result } = yield* boundIn(output)
      expect(result.outputPaths).toEqual([])
      expect(result.output).toBe(output)
    }),
  )

  it.scoped("fails oversized settlement when complete retention cannot be written", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      fs.writeFileSync(path.join(data, "tool-output"), "not a directory")
      const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data))
      const error = yield* Effect.flip(
        store.bound({
          sessionID: "s",
          toolCallID: "c",
          output: { structured: {}, content: [text("z".repeat(MAX_BYTES + 1))] },
        }),
      )
      expect(error._tag).toBe("ToolOutputStore.StorageError")
      expect(error).toBeInstanceOf(ToolOutputStore.StorageError)
      expect(error.operation).toBe("write")
      expect(error.message.startsWith("Failed to write tool output: ")).toBe(true)
    }),
  )

  it.scoped("does not encode ignored structured metadata when projected content exists", () =>
    Effect.gen(function* () {
      const output: LLM.ToolOutput = { structured: { size: 10n }, content: [text("small")] }
      const { result } = yield* boundIn(output)
      expect(result.output).toBe(output)
      expect(result.outputPaths).toEqual([])
    }),
  )

  it.scoped("preserves interruption while retaining complete output", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const started = yield* Deferred.make<void>()
      // The managed file is open and the first chunk's write never completes.
      const hanging = wrappedFileSystem((real) => ({
        open: (file, options) =>
          Effect.map(real.open(file, options), (handle) =>
            Object.create(handle, {
              writeAll: { value: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never) },
            }),
          ),
      }))
      const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data, { fileSystem: hanging }))
      const fiber = yield* Effect.fork(
        store.bound({
          sessionID: "s",
          toolCallID: "c",
          output: { structured: {}, content: [text("q".repeat(MAX_BYTES + 1))] },
        }),
      )
      yield* Deferred.await(started)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(Cause.isInterrupted(exit.cause)).toBe(true)
        expect(Cause.isInterruptedOnly(exit.cause)).toBe(true)
        expect(Cause.failures(exit.cause).length).toBe(0)
      }
    }),
  )

  it.scoped("honors configured limits", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const store = yield* Effect.provide(
        ToolOutputStore.Service,
        storeLayer(data, { config: documents({ tool_output: { max_lines: 2, max_bytes: 1000 } }) }),
      )
      expect(yield* store.limits()).toEqual({ maxLines: 2, maxBytes: 1000 })
      const result = yield* store.bound({
        sessionID: "s",
        toolCallID: "c",
        output: { structured: {}, content: [text("one\ntwo\nthree")] },
      })
      expect(fs.readFileSync(onlyPath(result), "utf8")).toBe("one\ntwo\nthree")
      const within = yield* store.bound({
        sessionID: "s",
        toolCallID: "c",
        output: { structured: {}, content: [text("one\ntwo")] },
      })
      expect(within.outputPaths).toEqual([])
    }),
  )

  it.scoped("cleans expired managed files and preserves unrelated files", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const directory = path.join(data, "tool-output")
      fs.mkdirSync(directory, { recursive: true })
      const now = Date.now()
      const eightDaysAgo = (now - 8 * 24 * 60 * 60 * 1000) / 1000
      for (const name of ["tool_old", "tool_recent", "keep.txt"]) fs.writeFileSync(path.join(directory, name), name)
      fs.utimesSync(path.join(directory, "tool_old"), eightDaysAgo, eightDaysAgo)
      fs.utimesSync(path.join(directory, "keep.txt"), eightDaysAgo, eightDaysAgo)
      yield* TestClock.setTime(now)
      const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data))
      yield* store.cleanup()
      expect(fs.readdirSync(directory).sort()).toEqual(["keep.txt", "tool_recent"])
    }),
  )
})

describe("ToolOutputStore limits and measurement", () => {
  it.scoped("re-reads the configured limits on every call, later documents overriding earlier keys", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const entries = yield* Ref.make<ReadonlyArray<Config.Entry>>([])
      const config = Layer.succeed(Config.Service, Config.Service.of({ entries: () => Ref.get(entries) }))
      const store = yield* Effect.provide(
        ToolOutputStore.Service,
        ToolOutputStore.layer.pipe(
          Layer.provide(Layer.mergeAll(NodeFileSystem.layer, Global.layerWith({ data }), config)),
        ),
      )
      expect(yield* store.limits()).toEqual({ maxLines: MAX_LINES, maxBytes: MAX_BYTES })
      yield* Ref.set(entries, [
        ...documents({ tool_output: { max_lines: 7, max_bytes: 70 } }, { shell: "sh" }),
        { type: "directory", path: data },
        ...documents({ tool_output: { max_bytes: 90 } }),
      ])
      expect(yield* store.limits()).toEqual({ maxLines: 7, maxBytes: 90 })
    }),
  )

  it.scoped("reads limits from a discovered toolgate.jsonc through Config.layer", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const project = yield* tempDir()
      fs.writeFileSync(path.join(project, "toolgate.jsonc"), `{\n  // small\n  "tool_output": { "max_lines": 3, },\n}`)
      const store = yield* Effect.provide(
        ToolOutputStore.Service,
        ToolOutputStore.layer.pipe(
          Layer.provide(Config.layer),
          Layer.provide(
            Layer.mergeAll(
              NodeFileSystem.layer,
              Global.layerWith({ data, config: path.join(data, "config") }),
              Location.layerWith({ directory: project, project: { id: "p", directory: project } }),
            ),
          ),
        ),
      )
      expect(yield* store.limits()).toEqual({ maxLines: 3, maxBytes: MAX_BYTES })
      const result = yield* store.bound({
        sessionID: "s",
        toolCallID: "c",
        output: { structured: {}, content: [text("1\n2\n3\n4")] },
      })
      expect(result.outputPaths).toHaveLength(1)
    }),
  )

  it.scoped("layerWithoutConfig always uses the defaults", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const store = yield* Effect.provide(
        ToolOutputStore.Service,
        ToolOutputStore.layerWithoutConfig.pipe(
          Layer.provide(Layer.mergeAll(NodeFileSystem.layer, Global.layerWith({ data }))),
        ),
      )
      expect(yield* store.limits()).toEqual({ maxLines: 2000, maxBytes: 51200 })
    }),
  )

  it.scoped("both bounds are inclusive", () =>
    Effect.gen(function* () {
      const config = documents({ tool_output: { max_lines: 3, max_bytes: 10 } })
      const exact = yield* boundIn({ structured: {}, content: [text("ab\ncd\nefgh")] }, config)
      expect(exact.result.outputPaths).toEqual([])
      const overBytes = yield* boundIn({ structured: {}, content: [text("ab\ncd\nefghi")] }, config)
      expect(overBytes.result.outputPaths).toHaveLength(1)
      const overLines = yield* boundIn({ structured: {}, content: [text("a\nb\nc\n")] }, config)
      expect(overLines.result.outputPaths).toHaveLength(1)
      // Multi-byte text: 4 characters, 12 bytes.
      const wide = yield* boundIn({ structured: {}, content: [text("€€€€")] }, config)
      expect(wide.result.outputPaths).toHaveLength(1)
    }),
  )

  it.scoped("measures the indented JSON of structured-only output", () =>
    Effect.gen(function* () {
      const config = documents({ tool_output: { max_lines: 3 } })
      // {"a": 1} pretty-printed is 3 lines; {"a":1,"b":2} is 4.
      const fits = yield* boundIn({ structured: { a: 1 }, content: [] }, config)
      expect(fits.result.outputPaths).toEqual([])
      const spills = yield* boundIn({ structured: { a: 1, b: 2 }, content: [] }, config)
      expect(fs.readFileSync(onlyPath(spills.result), "utf8")).toBe('{\n  "a": 1,\n  "b": 2\n}')
    }),
  )

  it.scoped("fails with an encode StorageError for unencodable structured-only output", () =>
    Effect.gen(function* () {
      const cyclic: Record<string, unknown> = {}
      cyclic.self = cyclic
      for (const structured of [{ size: 1n }, cyclic]) {
        const error = yield* Effect.flip(boundIn({ structured, content: [] }))
        expect(error._tag).toBe("ToolOutputStore.StorageError")
        if (error._tag === "ToolOutputStore.StorageError") {
          expect(error.operation).toBe("encode")
          expect(error.message.startsWith("Failed to encode tool output: ")).toBe(true)
        }
      }
    }),
  )

  it.scoped("measures undefined structured output as the string 'undefined'", () =>
    Effect.gen(function* () {
      const output: LLM.ToolOutput = { structured: undefined, content: [] }
      const { result } = yield* boundIn(output)
      expect(result.output).toBe(output)
    }),
  )

  it("StorageError messages", () => {
    expect(new ToolOutputStore.StorageError({ operation: "write", cause: new Error("disk full") }).message).toBe(
      "Failed to write tool output: disk full",
    )
    expect(new ToolOutputStore.StorageError({ operation: "encode", cause: "bad" }).message).toBe(
      "Failed to encode tool output: bad",
    )
    expect(new ToolOutputStore.StorageError({ operation: "write", cause: new Error("") }).message).toBe(
      "Failed to write tool output",
    )
  })
})

/** The preview rule read literally (split into arrays, iterate by code point): the oracle for the streaming implementation. */
const naivePreview = (full: string, maxLines: number, maxBytes: number) => {
  const lines = full.split("\n")
  const headLines = Math.ceil(maxLines / 2)
  const tailLines = Math.floor(maxLines / 2)
  const headPart = lines.slice(0, headLines).join("\n")
  const tailPart = tailLines > 0 ? lines.slice(lines.length - tailLines).join("\n") : ""
  const sampled = lines.length <= maxLines ? full : tailLines > 0 ? `${headPart}\n${tailPart}` : headPart
  if (bytes(sampled) <= maxBytes)
    return lines.length <= maxLines ? { head: sampled, tail: "" } : { head: headPart, tail: tailPart }
  const points = Array.from(sampled)
  let head = ""
  let used = 0
  for (const point of points) {
    if ((used += bytes(point)) > Math.ceil(maxBytes / 2)) break
    head += point
  }
  let tail = ""
  used = 0
  for (const point of points.reverse()) {
    if ((used += bytes(point)) > Math.floor(maxBytes / 2)) break
    tail = point + tail
  }
  return { head, tail }
}

describe("ToolOutputStore marker and preview arithmetic (derived)", () => {
  it.scoped("the marker names the managed file under <data>/tool-output/<folder>, tool_ + 26 characters", () =>
    Effect.gen(function* () {
      const { data, result } = yield* boundIn({ structured: {}, content: [text("m".repeat(MAX_BYTES + 1))] })
      const file = onlyPath(result)
      // without a Location in context the store files under the unscoped folder (docs/trust/managed-output.md)
      expect(path.dirname(file)).toBe(path.join(data, "tool-output", ToolOutputStore.UNSCOPED_FOLDER))
      expect(path.basename(file)).toMatch(/^tool_[0-9A-Za-z]{26}$/)
      const preview = previewOf(result)
      expect(preview).toContain(`\n\n... output truncated; full content saved to ${file} ...\n\n`)
      expect(bytes(preview)).toBeLessThanOrEqual(MAX_BYTES)
    }),
  )

  it.scoped("a 5000-line text previews the first 998 and last 998 lines, 1999 lines in all", () =>
    Effect.gen(function* () {
      const lines = Array.from({ length: 5000 }, (_, i) => `line-${i}`)
      const { result } = yield* boundIn({ structured: {}, content: [text(lines.join("\n"))] })
      const file = onlyPath(result)
      const shown = previewOf(result).split("\n")
      expect(shown).toHaveLength(1999)
      expect(shown.slice(0, 998)).toEqual(lines.slice(0, 998))
      expect(shown.slice(998, 1001)).toEqual(["", ToolOutputStore.marker(file), ""])
      expect(shown.slice(1001)).toEqual(lines.slice(4002))
    }),
  )

  it.scoped("a single 200 KB line is cut in the middle on whole code points", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data))
      // The marker's size depends only on the path length, which is fixed for a given data directory.
      const markerBytes = bytes(
        ToolOutputStore.marker(
          path.join(data, "tool-output", ToolOutputStore.UNSCOPED_FOLDER, "tool_" + "x".repeat(26)),
        ),
      )
      const budget = MAX_BYTES - markerBytes - 4
      const headBudget = Math.ceil(budget / 2)
      const tailBudget = Math.floor(budget / 2)
      const emoji = "😀" // 4 UTF-8 bytes, 2 UTF-16 units
      // An emoji straddles both budgets: 2 bytes before it fit, the emoji itself does not.
      const head = "h".repeat(headBudget - 2)
      const tail = "t".repeat(tailBudget - 2)
      const middle = "é".repeat(100_000)
      const full = head + emoji + middle + emoji + tail
      expect(bytes(full)).toBeGreaterThan(200_000)
      const result = yield* store.bound({
        sessionID: "s",
        toolCallID: "c",
        output: { structured: {}, content: [text(full)] },
      })
      const file = onlyPath(result)
      expect(fs.readFileSync(file, "utf8")).toBe(full)
      const preview = previewOf(result)
      expect(bytes(ToolOutputStore.marker(file))).toBe(markerBytes)
      expect(preview).toBe(`${head}\n\n${ToolOutputStore.marker(file)}\n\n${tail}`)
      expect(LONE_SURROGATE.test(preview)).toBe(false)
      expect(Buffer.from(preview, "utf8").toString("utf8")).toBe(preview)
      expect(bytes(preview)).toBeLessThanOrEqual(MAX_BYTES)
    }),
  )

  it.scoped("a byte-limited preview keeps a whole emoji that fits", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data))
      const markerBytes = bytes(
        ToolOutputStore.marker(
          path.join(data, "tool-output", ToolOutputStore.UNSCOPED_FOLDER, "tool_" + "x".repeat(26)),
        ),
      )
      const headBudget = Math.ceil((MAX_BYTES - markerBytes - 4) / 2)
      const full = "h".repeat(headBudget - 4) + "😀" + "z".repeat(200_000)
      const result = yield* store.bound({
        sessionID: "s",
        toolCallID: "c",
        output: { structured: {}, content: [text(full)] },
      })
      expect(previewOf(result).startsWith("h".repeat(headBudget - 4) + "😀\n\n...")).toBe(true)
    }),
  )

  it.scoped("limits so small that only the marker fits", () =>
    Effect.gen(function* () {
      const long = "w\n".repeat(100)
      // Four lines leave no room for content: the preview is the marker alone.
      const byLines = yield* boundIn(
        { structured: {}, content: [text(long)] },
        documents({ tool_output: { max_lines: 4 } }),
      )
      expect(previewOf(byLines.result)).toBe(ToolOutputStore.marker(onlyPath(byLines.result)))
      // Too few bytes even for the marker: the marker cut to the byte limit.
      const byBytes = yield* boundIn(
        { structured: {}, content: [text(long)] },
        documents({ tool_output: { max_bytes: 20 } }),
      )
      expect(previewOf(byBytes.result)).toBe(ToolOutputStore.marker(onlyPath(byBytes.result)).slice(0, 20))
    }),
  )

  it.scoped("the frame needs markerBytes + 5 bytes; at markerBytes + 4 only the marker is shown", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const markerBytes = bytes(
        ToolOutputStore.marker(
          path.join(data, "tool-output", ToolOutputStore.UNSCOPED_FOLDER, "tool_" + "x".repeat(26)),
        ),
      )
      const run = (maxBytes: number) =>
        Effect.flatMap(
          Effect.provide(
            ToolOutputStore.Service,
            storeLayer(data, { config: documents({ tool_output: { max_bytes: maxBytes } }) }),
          ),
          (store) =>
            store.bound({
              sessionID: "s",
              toolCallID: "c",
              output: { structured: {}, content: [text("abcdef".repeat(1000))] },
            }),
        )
      const tight = yield* run(markerBytes + 4)
      expect(previewOf(tight)).toBe(ToolOutputStore.marker(onlyPath(tight)))
      const roomy = yield* run(markerBytes + 5)
      expect(previewOf(roomy)).toBe(`a\n\n${ToolOutputStore.marker(onlyPath(roomy))}`)
    }),
  )

  it.scoped("spill files are distinct, created exclusively, and the directory is ensured on every write", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const flags: Array<string | undefined> = []
      const recording = wrappedFileSystem((real) => ({
        open: (file, options) => {
          flags.push(options?.flag)
          return real.open(file, options)
        },
      }))
      const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data, { fileSystem: recording }))
      const big: LLM.ToolOutput = { structured: {}, content: [text("s".repeat(MAX_BYTES + 1))] }
      const first = onlyPath(yield* store.bound({ sessionID: "s", toolCallID: "c", output: big }))
      fs.rmSync(path.join(data, "tool-output"), { recursive: true })
      const second = onlyPath(yield* store.bound({ sessionID: "s", toolCallID: "c", output: big }))
      const third = onlyPath(yield* store.bound({ sessionID: "s", toolCallID: "c", output: big }))
      expect(new Set([first, second, third]).size).toBe(3)
      expect(second < third).toBe(true)
      expect(fs.existsSync(first)).toBe(false)
      expect(fs.readFileSync(second, "utf8")).toBe("s".repeat(MAX_BYTES + 1))
      expect(flags).toEqual(["wx", "wx", "wx"])
    }),
  )

  it("the preview never exceeds either limit and equals a literal reading of the preview rule (property)", () => {
    const piece = FastCheck.oneof(
      FastCheck.constant("\n"),
      FastCheck.string({ unit: "grapheme", maxLength: 30 }),
      FastCheck.string({ unit: "binary", maxLength: 30 }),
    )
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(piece, { maxLength: 80 }).map((pieces) => pieces.join("")),
        FastCheck.integer({ min: 1, max: 60 }),
        FastCheck.integer({ min: 1, max: 1500 }),
        FastCheck.string({ unit: "grapheme", minLength: 1, maxLength: 40 }),
        (full, maxLines, maxBytes, name) => {
          const markerLine = ToolOutputStore.marker(`/data/tool-output/${name}`)
          const shown = ToolOutputStore.boundedPreview(full, markerLine, maxLines, maxBytes)
          const wellFormed = LONE_SURROGATE.test(full) || LONE_SURROGATE.test(markerLine) || !LONE_SURROGATE.test(shown)
          const fast = ToolOutputStore.preview(full, maxLines, maxBytes)
          const oracle = naivePreview(full, maxLines, maxBytes)
          const within = lineCount(full) <= maxLines && bytes(full) <= maxBytes
          return (
            ToolOutputStore.withinLimits(full, maxLines, maxBytes) === within &&
            bytes(shown) <= maxBytes &&
            lineCount(shown) <= maxLines &&
            wellFormed &&
            fast.head === oracle.head &&
            fast.tail === oracle.tail &&
            bytes(fast.head) + bytes(fast.tail) <= maxBytes
          )
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe("ToolOutputStore.cleanupLayer", () => {
  it.scoped("scans at start and then every hour", () =>
    Effect.gen(function* () {
      const scans = yield* Ref.make(0)
      const counting = FileSystem.layerNoop({
        readDirectory: () =>
          Effect.as(
            Ref.update(scans, (n) => n + 1),
            [],
          ),
      })
      yield* Layer.build(
        ToolOutputStore.cleanupLayer.pipe(
          Layer.provide(Layer.merge(counting, Global.layerWith({ data: "/nonexistent-data" }))),
        ),
      )
      yield* TestClock.adjust("30 minutes")
      expect(yield* Ref.get(scans)).toBe(1)
      yield* TestClock.adjust("30 minutes")
      expect(yield* Ref.get(scans)).toBe(2)
      yield* TestClock.adjust("59 minutes")
      expect(yield* Ref.get(scans)).toBe(2)
      yield* TestClock.adjust("1 minute")
      expect(yield* Ref.get(scans)).toBe(3)
    }),
  )

  it.scoped("never fails, even when the managed directory cannot be listed", () =>
    Effect.gen(function* () {
      const failing = FileSystem.layerNoop({})
      const data = yield* tempDir()
      const store = yield* Effect.provide(
        ToolOutputStore.Service,
        ToolOutputStore.layerWithoutConfig.pipe(Layer.provide(Layer.merge(failing, Global.layerWith({ data })))),
      )
      const exit = yield* Effect.exit(store.cleanup())
      expect(Exit.isSuccess(exit)).toBe(true)
    }),
  )

  it.scoped("stops scanning when its scope closes", () =>
    Effect.gen(function* () {
      const scans = yield* Ref.make(0)
      const counting = FileSystem.layerNoop({
        readDirectory: () =>
          Effect.as(
            Ref.update(scans, (n) => n + 1),
            [],
          ),
      })
      yield* Effect.scoped(
        Effect.zipRight(
          Layer.build(
            ToolOutputStore.cleanupLayer.pipe(Layer.provide(Layer.merge(counting, Global.layerWith({ data: "/x" })))),
          ),
          TestClock.adjust("1 hour"),
        ),
      )
      expect(yield* Ref.get(scans)).toBe(2)
      yield* TestClock.adjust("5 hours")
      expect(yield* Ref.get(scans)).toBe(2)
    }),
  )
})

describe("ToolOutputStore per-project folders (docs/trust/managed-output.md)", () => {
  const big = { structured: {}, content: [text("p".repeat(MAX_BYTES + 1))] } satisfies LLM.ToolOutput

  const boundAt = (data: string, location: Location.Interface) =>
    Effect.gen(function* () {
      const store = yield* Effect.provide(
        ToolOutputStore.Service,
        storeLayer(data).pipe(Layer.provide(Location.layerWith(location))),
      )
      return onlyPath(yield* store.bound({ sessionID: "s", toolCallID: "c", output: big }))
    })

  it.scoped("files managed output under the Location's project folder; global Locations get one per directory", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const root = path.join(data, "tool-output")
      const project = yield* boundAt(data, { directory: "/w/a", project: { id: "abc123", directory: "/w" } })
      expect(path.dirname(project)).toBe(path.join(root, "abc123"))
      const one = yield* boundAt(data, { directory: "/tmp/one", project: { id: "global", directory: "/tmp/one" } })
      const two = yield* boundAt(data, { directory: "/tmp/two", project: { id: "global", directory: "/tmp/two" } })
      expect(path.dirname(one)).toBe(path.join(root, Project.storageKey("global", "/tmp/one")))
      expect(path.dirname(one)).not.toBe(path.dirname(two))
      expect(path.basename(path.dirname(one))).toMatch(/^global-[0-9a-f]{40}$/)
      // the full text is on disk in that folder
      expect(fs.readFileSync(one, "utf8")).toBe("p".repeat(MAX_BYTES + 1))
    }),
  )

  it.scoped("a project id that is not a plain token cannot steer the folder out of the managed directory", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const root = path.join(data, "tool-output")
      for (const id of ["../escape", "/abs", "a/b", "..", ""]) {
        const file = yield* boundAt(data, { directory: "/w", project: { id, directory: "/w" } })
        expect(path.dirname(path.dirname(file))).toBe(root)
        expect(path.basename(path.dirname(file))).toMatch(/^id-[0-9a-f]{40}$/)
      }
      expect(fs.existsSync(path.join(data, "escape"))).toBe(false)
    }),
  )

  it.scoped("cleanup removes expired files in every project folder and at the old flat location, nothing else", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const root = path.join(data, "tool-output")
      const now = Date.now()
      const eightDaysAgo = (now - 8 * 24 * 60 * 60 * 1000) / 1000
      const files = {
        tool_flat_old: true,
        tool_flat_new: false,
        "p1/tool_old": true,
        "p1/tool_new": false,
        "p1/keep.txt": false,
        "global-x/tool_old": true,
        "p1/nested/tool_old": false,
      }
      for (const [name, old] of Object.entries(files)) {
        const file = path.join(root, name)
        fs.mkdirSync(path.dirname(file), { recursive: true })
        fs.writeFileSync(file, name)
        if (old || name.endsWith("keep.txt") || name.includes("nested")) fs.utimesSync(file, eightDaysAgo, eightDaysAgo)
      }
      yield* TestClock.setTime(now)
      const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data))
      yield* store.cleanup()
      const left = Object.keys(files).filter((name) => fs.existsSync(path.join(root, name)))
      expect(left.sort()).toEqual(["p1/keep.txt", "p1/nested/tool_old", "p1/tool_new", "tool_flat_new"])
    }),
  )
})

describe("ToolOutputStore spill to the managed file", () => {
  const MiB = 1 << 20

  /** The managed file against the UTF-8 encoding of the whole text at once. */
  const expectSameBytes = (file: string, full: string) => {
    const kept = fs.readFileSync(file)
    const expected = Buffer.from(full, "utf8")
    expect(kept.length).toBe(expected.length)
    expect(kept.equals(expected)).toBe(true)
  }

  /** `bound` of `full` on `store`: the file is byte-identical and the preview is the one computed from the text. */
  const spillAndCheck = (store: ToolOutputStore.Interface, full: string) =>
    Effect.gen(function* () {
      const result = yield* store.bound({
        sessionID: "s",
        toolCallID: "c",
        output: { structured: {}, content: [text(full)] },
      })
      const file = onlyPath(result)
      expectSameBytes(file, full)
      expect(previewOf(result)).toBe(
        ToolOutputStore.boundedPreview(full, ToolOutputStore.marker(file), MAX_LINES, MAX_BYTES),
      )
      fs.rmSync(file)
    })

  it.scoped("multi-byte characters and surrogate pairs at chunk edges are kept byte for byte", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data))
      // The spill encodes the text in chunks of a power of two of bytes (256 KiB for a text under 8 Mi UTF-16 units,
      // 1 MiB from 16 Mi units on), slicing as many units: an ASCII run of one chunk less d units puts the character
      // after it across the first edge, in units or in bytes (d = 1..3 for a pair, 1..2 for a 3-byte character; d = 1..2 at 1 MiB), lone
      // surrogates included. The tail of mixed widths spans further chunks, their edges anywhere.
      const tail = "😀日é\n\uD83Dz".repeat(200_000)
      for (let d = 0; d <= 5; d++) {
        for (const special of ["😀", "日", "é", "\uD83D", "\uDE00", "\uD83D\uD83D\uDE00"]) {
          yield* spillAndCheck(store, "a".repeat(256 * 1024 - d) + special + tail)
        }
      }
      const filler = "x".repeat(16 * MiB)
      for (let d = 1; d <= 2; d++) {
        for (const special of ["😀", "日"]) yield* spillAndCheck(store, "a".repeat(MiB - d) + special + tail + filler)
      }
    }),
  )

  it.scoped("a random mix of every UTF-8 width and lone surrogates over several chunks is kept byte for byte", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data))
      const kinds = ["a", "\n", "é", "日", "😀", "\uD800", "\uDFFF", "🧑‍💻"]
      for (const seed of [1, 2, 3]) {
        let state = seed
        const random = () => (state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32
        let full = ""
        while (full.length < 3 * MiB)
          full += kinds[Math.floor(random() * kinds.length)]!.repeat(1 + Math.floor(random() * 40))
        yield* spillAndCheck(store, full)
      }
    }),
  )

  it.scoped("never writes through a file or a symlink that already exists at the managed path", () =>
    Effect.gen(function* () {
      const data = yield* tempDir()
      const victim = path.join(data, "victim.txt")
      fs.writeFileSync(victim, "victim")
      const planted: Array<string> = []
      // Something appears at the managed path between choosing the name and opening it.
      const racing = wrappedFileSystem((real) => ({
        open: (file, options) =>
          Effect.suspend(() => {
            if (planted.length === 0) fs.writeFileSync(file, "precious")
            else fs.symlinkSync(victim, file)
            planted.push(file)
            return real.open(file, options)
          }),
      }))
      const store = yield* Effect.provide(ToolOutputStore.Service, storeLayer(data, { fileSystem: racing }))
      const big: LLM.ToolOutput = { structured: {}, content: [text("w".repeat(MAX_BYTES + 1))] }
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = yield* Effect.flip(store.bound({ sessionID: "s", toolCallID: "c", output: big }))
        expect(error._tag).toBe("ToolOutputStore.StorageError")
        expect(error.operation).toBe("write")
      }
      expect(planted).toHaveLength(2)
      expect(fs.readFileSync(planted[0]!, "utf8")).toBe("precious")
      expect(fs.lstatSync(planted[1]!).isSymbolicLink()).toBe(true)
      expect(fs.readFileSync(victim, "utf8")).toBe("victim")
      // Nothing else was created next to them.
      expect(fs.readdirSync(path.dirname(planted[0]!)).sort()).toEqual(
        planted.map((file) => path.basename(file)).sort(),
      )
    }),
  )
})
