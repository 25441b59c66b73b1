/**
 * The cost of checking at use in `read` (see docs/trust/check-at-use.md): 10k settlements of `read` on a small text
 * file through a real Location (real PermissionV2, a rule that allows the read), with the checks and without them,
 * in the same run. "without" is the same leaf on the previous mechanics: no second resolution after the permission
 * step, and the file opened by realpath + path-based open (no O_NOFOLLOW, no descriptor check). "with" is the
 * shipped leaf: resolve again, open with O_NOFOLLOW, verify /proc/self/fd/N. Both run interleaved in chunks so a
 * noisy machine hits both alike; the process CPU time (all threads, including the file-system pool) is reported next
 * to the wall time because it is far less disturbed by other processes. Target: with/without ≤ 1.10.
 *
 * Run: npx tsx bench/read-checks.ts
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { FileSystem } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { Core, LocationMutation, ReadTool, ReadToolFileSystem, SessionV2, Tools, ToolRegistry } from "@toolgate/core"

const SETTLEMENTS = 10_000
const CHUNK = 500
const ROUNDS = 2

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-read-")))
const data = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-data-"))
fs.mkdirSync(path.join(dir, "src"))
const text = Array.from(
  { length: 60 },
  (_, i) => `export const value${i} = ${i} // a line of ordinary source text`,
).join("\n")
fs.writeFileSync(path.join(dir, "src", "app.ts"), text)

/**
 * The previous `read` of a small text file, kept for the baseline: realpath, then a path-based open that follows
 * links, then the same binary check and strict UTF-8 decode. Only the whole-file text path is needed here.
 */
const legacyFiles = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const current = yield* ReadToolFileSystem.Service
  const read: ReadToolFileSystem.Interface["read"] = (input, resource) =>
    Effect.gen(function* () {
      const real = yield* fs.realPath(input)
      return yield* Effect.scoped(
        Effect.gen(function* () {
          const file = yield* fs.open(real, { flag: "r" })
          const info = yield* file.stat
          const size = Number(info.size)
          const next = (bytes: number) => Effect.map(file.readAlloc(bytes), Option.getOrUndefined)
          const first = (yield* next(Math.min(64 * 1024, size || 4 * 1024))) ?? new Uint8Array()
          if (ReadToolFileSystem.binary(resource, first)) {
            return yield* new ReadToolFileSystem.BinaryFileError({ resource })
          }
          const decoder = new TextDecoder("utf-8", { fatal: true })
          const parts = [decoder.decode(first, { stream: true })]
          while (true) {
            const chunk = yield* next(64 * 1024)
            if (chunk === undefined) break
            parts.push(decoder.decode(chunk, { stream: true }))
          }
          parts.push(decoder.decode())
          return {
            uri: pathToFileURL(real).href,
            name: path.basename(real),
            content: parts.join(""),
            encoding: "utf8" as const,
            mime: ReadToolFileSystem.mimeType(real),
          }
        }),
      )
    }).pipe(Effect.orDie)
  return ReadToolFileSystem.Service.of({ ...current, read })
})

/** The previous LocationMutation: no second resolution. */
const legacyMutation = Effect.map(LocationMutation.Service, (current) =>
  LocationMutation.Service.of({ ...current, recheck: () => Effect.void }),
)

const main = Effect.gen(function* () {
  // The same leaf on the legacy services, registered next to the shipped `read`.
  const legacyTool = yield* ReadTool.tool.pipe(
    Effect.provideServiceEffect(ReadToolFileSystem.Service, legacyFiles),
    Effect.provideServiceEffect(LocationMutation.Service, legacyMutation),
  )
  yield* (yield* Tools.Service).register({ read_legacy: legacyTool })
  const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
  const turn = yield* (yield* ToolRegistry.Service).materialize([])
  let id = 0
  const settle = (name: string) =>
    turn.settle({
      sessionID: session.id,
      agent: "build",
      assistantMessageID: "msg_bench",
      call: { id: `call_${id++}`, name, input: { path: "src/app.ts" } },
    })

  // Both variants return the same file.
  const [withChecks, without] = [yield* settle("read"), yield* settle("read_legacy")]
  const content = (settled: ToolRegistry.Settlement) => JSON.stringify(settled.result).includes("value59")
  if (!content(withChecks) || !content(without)) throw new Error("a variant did not read the file")

  const cpu = () => {
    const usage = process.cpuUsage()
    return (usage.user + usage.system) / 1000
  }
  const run = (name: string) =>
    Effect.gen(function* () {
      const start = performance.now()
      const startCpu = cpu()
      for (let i = 0; i < CHUNK; i++) yield* settle(name)
      return { wall: performance.now() - start, cpu: cpu() - startCpu }
    })
  const add = (total: { wall: number; cpu: number }, part: { wall: number; cpu: number }) => {
    total.wall += part.wall
    total.cpu += part.cpu
  }

  // Warm-up, then interleaved chunks.
  for (let i = 0; i < 2; i++) {
    yield* run("read")
    yield* run("read_legacy")
  }
  const totals: Array<{ checked: { wall: number; cpu: number }; legacy: { wall: number; cpu: number } }> = []
  for (let round = 0; round < ROUNDS; round++) {
    const checked = { wall: 0, cpu: 0 }
    const legacy = { wall: 0, cpu: 0 }
    for (let chunk = 0; chunk < SETTLEMENTS / CHUNK; chunk++) {
      if (chunk % 2 === 0) {
        add(legacy, yield* run("read_legacy"))
        add(checked, yield* run("read"))
      } else {
        add(checked, yield* run("read"))
        add(legacy, yield* run("read_legacy"))
      }
    }
    totals.push({ checked, legacy })
    console.log(
      `round ${round + 1} (${SETTLEMENTS} settlements each): without checks ${legacy.wall.toFixed(0)} ms wall / ${legacy.cpu.toFixed(0)} ms cpu, with checks ${checked.wall.toFixed(0)} ms wall / ${checked.cpu.toFixed(0)} ms cpu; ratio wall ${(checked.wall / legacy.wall).toFixed(3)}, cpu ${(checked.cpu / legacy.cpu).toFixed(3)}`,
    )
  }
  const best = (pick: (total: (typeof totals)[number]) => number) => Math.min(...totals.map(pick))
  const wall = { checked: best((t) => t.checked.wall), legacy: best((t) => t.legacy.wall) }
  const used = { checked: best((t) => t.checked.cpu), legacy: best((t) => t.legacy.cpu) }
  const perCall = (ms: number) => `${((ms * 1000) / SETTLEMENTS).toFixed(1)} µs`
  console.log(`without checks: ${perCall(wall.legacy)} wall, ${perCall(used.legacy)} cpu per settlement (best round)`)
  console.log(`with checks   : ${perCall(wall.checked)} wall, ${perCall(used.checked)} cpu per settlement (best round)`)
  console.log(
    `ratio with/without: wall ${(wall.checked / wall.legacy).toFixed(3)}x, cpu ${(used.checked / used.legacy).toFixed(3)}x (target ≤ 1.10x)`,
  )
})

const layer = Core.layer({
  directory: dir,
  data,
  memoryDatabase: true,
  discover: false,
  config: { permissions: [{ action: "read", resource: "*", effect: "allow" }] },
})

Effect.runPromise(Effect.scoped(Effect.provide(main, layer)))
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => {
    fs.rmSync(dir, { recursive: true, force: true })
    fs.rmSync(data, { recursive: true, force: true })
  })
