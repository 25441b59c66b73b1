/**
 * Faults of the output store on a full disk (a tmpfs the test mounts; skipped with the reason when not root): a
 * failed write removes the partial file it made — the bound's spill file and bash's capture — so the disk is not
 * kept full and the next call works. Real bash, real files.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { BashTool, Core, SessionV2, ToolOutputStore, ToolRegistry } from "../../src/index.js"
import { tempDir } from "../support/location.js"
import { deadline, fill, tmpfs } from "../support/faults.js"

const config = { permissions: [{ action: "bash", resource: "*", effect: "allow" as const }] }

const bash = (sessionID: string, command: string) =>
  Effect.gen(function* () {
    const turn = yield* (yield* ToolRegistry.Service).materialize()
    return yield* turn.settle({
      sessionID,
      agent: "build",
      assistantMessageID: "msg_full",
      call: { id: `call_${Math.random().toString(36).slice(2)}`, name: "bash", input: { command } },
    })
  }).pipe(deadline(`bash ${command}`, 60_000))

/** The managed files (`tool_*`) under the data directory's tool-output folder. */
const managed = (data: string): Array<string> => {
  const root = path.join(data, ToolOutputStore.MANAGED_DIRECTORY)
  if (!fs.existsSync(root)) return []
  return fs
    .readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((name) => path.basename(name).startsWith("tool_"))
    .map((name) => path.join(root, name))
}

const THREE_MB = 3 * 1024 * 1024
const big = `head -c ${THREE_MB} /dev/zero | tr '\\0' x`

describe("output store on a full disk", () => {
  it.live(
    "no space at all: the call fails saying why, leaves no file, and small and later calls work",
    () =>
      Effect.gen(function* () {
        const mounted = yield* tmpfs(16 * 1024 * 1024, "faults/tool-output-store: the full disk")
        if (Option.isNone(mounted)) return
        const data = mounted.value
        yield* Effect.gen(function* () {
          const { id } = yield* (yield* SessionV2.Service).create({ agent: "build" })
          const filler = fill(data)
          // The capture cannot take the part past 1 MiB, and the bound cannot keep the 1 MiB text either.
          const failed = yield* Effect.flip(bash(id, big))
          expect(failed).toBeInstanceOf(ToolOutputStore.StorageError)
          expect(failed.message).toBe("Failed to write tool output: ENOSPC: no space left on device, write")
          expect(managed(data)).toEqual([])
          // A call whose output needs no file works on the full disk.
          const small = yield* bash(id, "echo ok")
          expect(small.result).toEqual({
            type: "content",
            value: [
              { type: "text", text: "ok\n" },
              { type: "text", text: "Command exited with code 0." },
            ],
          })

          fs.rmSync(filler)
          const after = yield* bash(id, big)
          const structured = after.output?.structured as { truncated: boolean; outputPath: string }
          expect(structured.truncated).toBe(true)
          expect(after.outputPaths).toEqual([structured.outputPath])
          expect(managed(data)).toEqual([structured.outputPath])
          expect(fs.statSync(structured.outputPath).size).toBe(THREE_MB)
        }).pipe(Effect.provide(Core.layer({ directory: yield* tempDir(), data, discover: false, config })))
      }).pipe(Effect.scoped),
    120_000,
  )

  it.live(
    "space for part of the output: the partial capture goes, the call still keeps its 1 MiB and says what was lost",
    () =>
      Effect.gen(function* () {
        const mounted = yield* tmpfs(16 * 1024 * 1024, "faults/tool-output-store: the nearly full disk")
        if (Option.isNone(mounted)) return
        const data = mounted.value
        yield* Effect.gen(function* () {
          const { id } = yield* (yield* SessionV2.Service).create({ agent: "build" })
          const filler = fill(data)
          // Free 1.5 MiB: the capture dies past it, its removal makes room for the bound's 1 MiB spill.
          fs.truncateSync(filler, fs.statSync(filler).size - 1.5 * 1024 * 1024)
          const settlement = yield* bash(id, big)
          expect(settlement.result.type).toBe("text")
          const structured = settlement.output?.structured as { truncated: boolean; outputPath?: string; exit: number }
          expect(structured).toEqual({ exit: 0, truncated: true })
          const text = settlement.output!.content.map((part) => (part.type === "text" ? part.text : "")).join("\n")
          expect(text).toContain(BashTool.CAPTURE_NOTICE)
          // One file: the bound's spill of the 1 MiB the tool kept; the partial capture is gone.
          expect(settlement.outputPaths?.length).toBe(1)
          expect(managed(data)).toEqual(settlement.outputPaths)
          expect(text).toContain(ToolOutputStore.marker(settlement.outputPaths![0]!))
          fs.rmSync(filler)
        }).pipe(Effect.provide(Core.layer({ directory: yield* tempDir(), data, discover: false, config })))
      }).pipe(Effect.scoped),
    120_000,
  )
})
