/**
 * bash with real processes and the real output store: the complete output is on disk however large it is (the
 * in-memory capture only feeds the preview), progress reports carry the output as it arrives, the child's
 * environment follows `bash.env`, and a sandboxed command that is blocked says so.
 */
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import {
  AppProcess,
  ApplicationTools,
  BashTool,
  Config,
  EventV2,
  Global,
  LocationMutation,
  type Tool,
  ToolOutputStore,
  ToolRegistry,
} from "../src/index.js"
import { Sandbox } from "../src/entry/sandbox.js"
import { locationLayer, tempDir } from "./support/location.js"
import * as Permission from "./support/permission.js"

const bwrapWorks =
  ChildProcess.spawnSync(
    "bwrap",
    ["--die-with-parent", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"],
    { stdio: "ignore" },
  ).status === 0
if (!bwrapWorks) console.warn("bash-tool-output: bubblewrap is not usable here; the sandboxed bash case is skipped")

/** The bash leaf over real processes, the real store (files under `data`) and the given configuration. */
const environment = (root: string, data: string, bash: typeof Config.Bash.Type = {}) => {
  const location = locationLayer(root)
  const config = Config.layerFromEntries([{ type: "document", info: { bash } }])
  const global = Global.layerWith({ data, tmp: path.join(data, "tmp"), config: path.join(data, "config") })
  const store = ToolOutputStore.layer.pipe(Layer.provide(Layer.mergeAll(NodeContext.layer, global, config, location)))
  const sandbox = Sandbox.layer.pipe(
    Layer.provide(
      Layer.mergeAll(location, global, config, AppProcess.layer, EventV2.layer.pipe(Layer.provide(location))),
    ),
  )
  const registry = ToolRegistry.layer.pipe(Layer.provideMerge(Layer.merge(ApplicationTools.layer, store)))
  return BashTool.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        registry,
        Permission.layer,
        LocationMutation.layer.pipe(Layer.provide(Layer.merge(location, NodeContext.layer))),
        NodeContext.layer,
        config,
        AppProcess.layer,
        sandbox,
      ),
    ),
  )
}

const bash = (command: string, progress?: (update: Tool.Progress) => void) =>
  Effect.gen(function* () {
    const turn = yield* (yield* ToolRegistry.Service).materialize()
    return yield* turn.settle({
      sessionID: "ses_bash_output",
      agent: "build",
      assistantMessageID: "msg_bash_output",
      call: { id: `call_${Math.random().toString(36).slice(2)}`, name: "bash", input: { command, timeout: 120_000 } },
      ...(progress === undefined ? {} : { progress }),
    })
  })

describe.skipIf(process.platform === "win32")("bash output on disk", () => {
  it.live("seq 1 2000000: the saved file is byte-identical to the real output, named first, and the only file", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const root = yield* tempDir()
        const data = yield* tempDir()
        const expected = ChildProcess.execFileSync("seq", ["1", "2000000"], { maxBuffer: 64 * 1024 * 1024 })
        const settlement = yield* bash("seq 1 2000000").pipe(Effect.provide(environment(root, data)))
        expect(settlement.result.type).toBe("text")
        const structured = settlement.output?.structured as { truncated: boolean; outputPath?: string; exit: number }
        expect(structured.exit).toBe(0)
        // The in-memory capture was cut, so `truncated` says so, even though nothing was lost.
        expect(structured.truncated).toBe(true)
        const saved = structured.outputPath!
        expect(saved.startsWith(path.join(data, ToolOutputStore.MANAGED_DIRECTORY))).toBe(true)
        expect(fs.readFileSync(saved).equals(expected)).toBe(true)
        // One file: the complete output. The preview's marker names it; no second, 1 MiB copy is written.
        expect(settlement.outputPaths).toEqual([saved])
        const folder = path.dirname(saved)
        expect(fs.readdirSync(folder)).toEqual([path.basename(saved)])
        const first = settlement.output!.content[0]
        const preview = first?.type === "text" ? first.text : ""
        // The text names the complete file first, then the marker names the same file.
        expect(preview.split("\n")[0]).toBe(BashTool.completeNotice(expected.byteLength, saved))
        expect(preview).toContain(ToolOutputStore.marker(saved))
        const all = settlement.output!.content.map((part) => (part.type === "text" ? part.text : "")).join("\n")
        expect(all).not.toContain(BashTool.CAPTURE_NOTICE)
        expect(all).toContain("Command exited with code 0.")
      }),
    ),
  )

  it.live("a 100 MB output streams to disk with bounded memory", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const root = yield* tempDir()
        const data = yield* tempDir()
        const before = process.memoryUsage().rss
        let peak = before
        const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20)
        const settlement = yield* bash("head -c 104857600 /dev/zero | tr '\\0' 'x'").pipe(
          Effect.provide(environment(root, data)),
          Effect.ensuring(Effect.sync(() => clearInterval(sampler))),
        )
        const structured = settlement.output?.structured as { outputPath: string }
        expect(fs.statSync(structured.outputPath).size).toBe(104_857_600)
        // The capture is 1 MiB and the preview is bounded; 100 MB of output must not be held in memory.
        expect(peak - before).toBeLessThan(64 * 1024 * 1024)
      }),
    ),
  )

  it.live("small outputs stay in memory: no file, no output path", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const root = yield* tempDir()
        const data = yield* tempDir()
        const settlement = yield* bash("echo small").pipe(Effect.provide(environment(root, data)))
        expect(settlement.result).toMatchObject({ type: "content" })
        expect(settlement.outputPaths).toBeUndefined()
        expect((settlement.output?.structured as { outputPath?: string }).outputPath).toBeUndefined()
      }),
    ),
  )

  it.live("progress reports carry the output as it arrives, then the call settles", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const root = yield* tempDir()
        const data = yield* tempDir()
        const reports: Array<Tool.Progress> = []
        const settlement = yield* bash("for i in 1 2 3; do echo line$i; sleep 0.4; done", (update) =>
          reports.push(update),
        ).pipe(Effect.provide(environment(root, data)))
        expect(settlement.result.type).toBe("content")
        expect(reports.length).toBeGreaterThanOrEqual(2)
        expect(reports.map((report) => report.output ?? "").join("")).toBe("line1\nline2\nline3\n")
        expect(reports[0]!.message).toMatch(/^running \(\d+s, \d+ bytes of output\)$/)
      }),
    ),
  )

  it.live("bash.env scrub removes secret variables from an unsandboxed child; set adds values", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const root = yield* tempDir()
        const data = yield* tempDir()
        process.env.TOOLGATE_BASH_TEST_TOKEN = "never-shown"
        yield* Effect.addFinalizer(() => Effect.sync(() => delete process.env.TOOLGATE_BASH_TEST_TOKEN))
        const scrubbed = yield* bash("env").pipe(
          Effect.provide(environment(root, data, { env: { mode: "scrub", set: { TOOLGATE_BASH_SET: "yes" } } })),
        )
        const text = JSON.stringify(scrubbed.result.value)
        expect(text).not.toContain("never-shown")
        expect(text).toContain("TOOLGATE_BASH_SET=yes")
        const inherited = yield* bash("env").pipe(Effect.provide(environment(root, data)))
        expect(JSON.stringify(inherited.result.value)).toContain("TOOLGATE_BASH_TEST_TOKEN=never-shown")
      }),
    ),
  )

  it.live.skipIf(!bwrapWorks)("in the bubblewrap sandbox a write outside fails and the result says why", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const root = yield* tempDir()
        const data = yield* tempDir()
        const target = path.join("/usr", `toolgate-bash-escape-${process.pid}`)
        const settlement = yield* bash(`echo pwned > ${target}; echo inside > inside.txt`).pipe(
          Effect.provide(environment(root, data, { sandbox: { mode: "bubblewrap" } })),
        )
        expect(fs.existsSync(target)).toBe(false)
        expect(fs.readFileSync(path.join(root, "inside.txt"), "utf8")).toBe("inside\n")
        expect(JSON.stringify(settlement.result.value)).toContain("The sandbox blocked a write")
      }),
    ),
  )
})
