/**
 * Settlement overhead, with the real output store (`ToolOutputStore.layer` over a temp data directory, as `Core`
 * builds it), against three baselines timed in the same process and the same run, all on one echo tool:
 *
 * 1. the bare `execute` Effect;
 * 2. the AI SDK path: zod `safeParse` + `execute` of an AI SDK `tool()` (also reported: `await safeParseAsync` +
 *    `await execute`, which is what the AI SDK's loop really does per call);
 * 3. `@effect/ai`'s `Toolkit.handle` (schema decode + handler + result encode).
 *
 * The echo's executor returns `Effect.succeed`, which settlement continues in place. The same tool is also timed
 * with asynchronous executors, each next to the same executor called bare: one made once with `Effect.fnUntraced`
 * (target: its settlement ≤ 1.5× the synchronous one), and one written `(input) => Effect.gen(function* () …)`, which
 * allocates a generator function on every call (its own cost, not the settlement's: compare the overheads).
 *
 * The reference for the asynchronous target is timed in the same run: a model settlement written against Effect's
 * public API that does nothing but what any settlement must (one suspend around the executor, the settled success
 * continued in place, anything else through one match into a continuation that holds the call), over the same two
 * executors. What the model adds going asynchronous, added to toolgate's synchronous settle, is what the target
 * allows at best without reading Effect's internal primitives. Plain JavaScript is timed too: a generator function
 * created on every call against one made once (what an inline `Effect.gen` costs before Effect runs anything).
 *
 * Targets: toolgate settle ≤ 2× the AI SDK zod path, and ≥ 8× faster than `Toolkit.handle`. Every figure is the
 * minimum over several rounds (after a warm-up round) of the process CPU time, which a loaded machine disturbs far
 * less than wall time.
 *
 * Run: node --expose-gc --import tsx --conditions=@toolgate/source bench/settle.ts
 * (`--gate`: a short run that ends with a `GATE` line of figures for scripts/bench-gate.mjs)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Tool as AiTool, Toolkit } from "@effect/ai"
import { NodeFileSystem } from "@effect/platform-node"
import { ApplicationTools, Config, Global, Tool, ToolOutputStore, ToolRegistry } from "@toolgate/core"
import { tool as aiSdkTool } from "ai"
import { Effect, Exit, Layer, Schema } from "effect"
import { z } from "zod"
import { report } from "./gate-report.js"

const gate = process.argv.includes("--gate")
const CALLS = gate ? 50_000 : 100_000
const HANDLE_CALLS = gate ? 2_000 : 20_000
const ROUNDS = gate ? 5 : 7

const Echo = Schema.Struct({ text: Schema.String })
const execute = (input: { readonly text: string }) => Effect.succeed({ text: input.text })
const echo = Tool.make({
  description: "Echo",
  input: Echo,
  output: Echo,
  execute,
  toModelOutput: ({ output }) => [{ type: "text", text: output.text }],
})
// The same tool with an executor written as `Effect.gen` (as the built-in leaves are): its result is not a settled
// Effect, so settlement continues through a match instead of in place.
const executeGen = (input: { readonly text: string }) =>
  Effect.gen(function* () {
    return { text: input.text }
  })
const echoGen = Tool.make({
  description: "Echo",
  input: Echo,
  output: Echo,
  execute: executeGen,
  toModelOutput: ({ output }) => [{ type: "text", text: output.text }],
})
// The same body made once with `Effect.fnUntraced`: no generator function per call.
const executeFn = Effect.fnUntraced(function* (input: { readonly text: string }) {
  return { text: input.text }
})
const echoFn = Tool.make({
  description: "Echo",
  input: Echo,
  output: Echo,
  execute: executeFn,
  toModelOutput: ({ output }) => [{ type: "text", text: output.text }],
})

// The public-API model settlement (the reference): the same shape as a settlement, with nothing of its own to do.
// The continuation is returned by a function, not written as an `onSuccess:` property, so a transpiler that keeps
// names (tsx) does not name it on every call.
type Echoed = { readonly text: string }
const modelDone = (id: string, value: Echoed) => Effect.succeed({ id, text: value.text })
const modelFail = (error: unknown) => Effect.succeed({ id: "", text: String(error) })
const modelContinue = (id: string) => (value: Echoed) => modelDone(id, value)
const modelSettle = (id: string, run: (input: Echoed) => Effect.Effect<Echoed>, value: Echoed) =>
  Effect.suspend(() => {
    const effect = run(value)
    if (Exit.isExit(effect) && Exit.isSuccess(effect))
      return modelDone(id, (effect as Exit.Success<Echoed, never>).value)
    return Effect.matchEffect(effect, { onFailure: modelFail, onSuccess: modelContinue(id) })
  })

function* generatorMadeOnce(input: Echoed) {
  return input.text
}

// The AI SDK version of the same tool: a zod input schema and a plain (or async) execute.
const zodInput = z.object({ text: z.string() })
const syncExecute = (input: { readonly text: string }) => ({ text: input.text })
const aiEcho = aiSdkTool({
  description: "Echo",
  inputSchema: zodInput,
  execute: async (input: { text: string }) => ({ text: input.text }),
})
const aiOptions = { toolCallId: "call_bench", messages: [] } as unknown as Parameters<
  NonNullable<typeof aiEcho.execute>
>[1]

// The @effect/ai version: same schema, a handler that runs the same `execute`.
const EffectAiEcho = AiTool.make("echo", { description: "Echo", parameters: { text: Schema.String }, success: Echo })
const EffectAiToolkit = Toolkit.make(EffectAiEcho)
const effectAiHandlers = EffectAiToolkit.toLayer({ echo: (params) => execute(params) })

const identity = { sessionID: "ses_bench", agent: "build", assistantMessageID: "msg_bench" }
const input = { text: "hello" }

const perCall = (ms: number, calls: number) => (ms * 1000) / calls

/** Process CPU time (user + system) of `run`, in ms. */
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / 1000
}

// With `--expose-gc` (as the gate runs) each timed loop starts on a collected heap and ends with a young-generation
// collection inside its window, so it pays for its own short-lived garbage and not for another loop's.
const gc = (globalThis as { gc?: (options?: { type: "minor" | "major"; execution: "sync" }) => void }).gc
const before = () => gc?.()
const after = () => gc?.({ type: "minor", execution: "sync" })

const timeSync = (run: () => void): number => {
  before()
  const start = process.cpuUsage()
  run()
  after()
  return cpuMs(start)
}

const timeAsync = async (run: () => Promise<void>): Promise<number> => {
  before()
  const start = process.cpuUsage()
  await run()
  after()
  return cpuMs(start)
}

const main = async () => {
  const data = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-settle-")))
  const layer = ToolRegistry.layer.pipe(
    Layer.provideMerge(ApplicationTools.layer),
    Layer.provide(ToolOutputStore.layer),
    Layer.provide(Layer.mergeAll(NodeFileSystem.layer, Global.layerWith({ data, tmp: data }), Config.layerEmpty)),
  )
  try {
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const registry = yield* ToolRegistry.Service
          yield* registry.register({ echo, echoGen, echoFn })
          const turn = yield* registry.materialize()
          const calls = Array.from({ length: CALLS }, (_, i) => ({
            ...identity,
            call: { id: `call_${i}`, name: "echo", input },
          }))
          const toolkit = yield* Effect.provide(EffectAiToolkit, effectAiHandlers)

          // Sanity: every path answers the echo.
          const settled = yield* turn.settle(calls[0]!)
          if (settled.result.type !== "text" || settled.result.value !== "hello")
            throw new Error(`settle answered ${JSON.stringify(settled.result)}`)
          for (const name of ["echoGen", "echoFn"]) {
            const other = yield* turn.settle({ ...calls[0]!, call: { ...calls[0]!.call, name } })
            if (other.result.type !== "text" || other.result.value !== "hello")
              throw new Error(`settle (${name}) answered ${JSON.stringify(other.result)}`)
          }
          const handled = yield* toolkit.handle("echo", input)
          if (handled.result.text !== "hello") throw new Error("Toolkit.handle did not echo")

          const bare = Effect.forEach(calls, () => execute(input), { discard: true })
          const bareGen = Effect.forEach(calls, () => executeGen(input), { discard: true })
          const bareFn = Effect.forEach(calls, () => executeFn(input), { discard: true })
          const settle = Effect.forEach(calls, (call) => turn.settle(call), { discard: true }) as Effect.Effect<void>
          const genCalls = calls.map((input) => ({ ...input, call: { ...input.call, name: "echoGen" } }))
          const settleGen = Effect.forEach(genCalls, (call) => turn.settle(call), {
            discard: true,
          }) as Effect.Effect<void>
          const fnCalls = calls.map((input) => ({ ...input, call: { ...input.call, name: "echoFn" } }))
          const settleFn = Effect.forEach(fnCalls, (call) => turn.settle(call), {
            discard: true,
          }) as Effect.Effect<void>
          const modelSync = Effect.forEach(calls, (call) => modelSettle(call.call.id, execute, input), {
            discard: true,
          })
          const modelFn = Effect.forEach(calls, (call) => modelSettle(call.call.id, executeFn, input), {
            discard: true,
          })
          const handleCalls = calls.slice(0, HANDLE_CALLS)
          const handle = Effect.forEach(handleCalls, () => toolkit.handle("echo", input), {
            discard: true,
          }) as Effect.Effect<void>
          // The results feed a sink so the loop cannot be optimised away.
          let sink = 0
          const zodSync = () => {
            for (let i = 0; i < CALLS; i++) {
              const parsed = zodInput.safeParse(input)
              if (!parsed.success) throw parsed.error
              sink += syncExecute(parsed.data).text.length
            }
          }
          // Plain JavaScript, no Effect: a generator function created on every call (what an inline `Effect.gen`
          // executor makes) against one made once, each run to its end.
          const jsGeneratorPerCall = () => {
            for (let i = 0; i < CALLS; i++) {
              const text = input.text
              sink += (function* () {
                return text
              })().next().value!.length
            }
          }
          const jsGeneratorOnce = () => {
            for (let i = 0; i < CALLS; i++) sink += generatorMadeOnce(input).next().value!.length
          }
          const zodAsync = async () => {
            for (let i = 0; i < CALLS; i++) {
              const parsed = await zodInput.safeParseAsync(input)
              if (!parsed.success) throw parsed.error
              await aiEcho.execute!(parsed.data, aiOptions)
            }
          }

          const times = {
            bare: [] as number[],
            bareGen: [] as number[],
            bareFn: [] as number[],
            settle: [] as number[],
            settleGen: [] as number[],
            settleFn: [] as number[],
            zod: [] as number[],
            zodAsync: [] as number[],
            modelSync: [] as number[],
            modelFn: [] as number[],
            jsPerCall: [] as number[],
            jsOnce: [] as number[],
          }
          const handleTimes: number[] = []
          for (let round = 0; round <= ROUNDS; round++) {
            const bareMs = timeSync(() => Effect.runSync(bare))
            const bareGenMs = timeSync(() => Effect.runSync(bareGen))
            const bareFnMs = timeSync(() => Effect.runSync(bareFn))
            const settleMs = timeSync(() => Effect.runSync(settle))
            const settleGenMs = timeSync(() => Effect.runSync(settleGen))
            const settleFnMs = timeSync(() => Effect.runSync(settleFn))
            const modelSyncMs = timeSync(() => Effect.runSync(modelSync))
            const modelFnMs = timeSync(() => Effect.runSync(modelFn))
            const zodMs = timeSync(zodSync)
            const zodAsyncMs = yield* Effect.promise(() => timeAsync(zodAsync))
            const handleMs = timeSync(() => Effect.runSync(handle))
            const jsPerCallMs = timeSync(jsGeneratorPerCall)
            const jsOnceMs = timeSync(jsGeneratorOnce)
            if (round === 0) continue // warm-up
            times.bare.push(bareMs)
            times.bareGen.push(bareGenMs)
            times.bareFn.push(bareFnMs)
            times.settle.push(settleMs)
            times.settleGen.push(settleGenMs)
            times.settleFn.push(settleFnMs)
            times.modelSync.push(modelSyncMs)
            times.modelFn.push(modelFnMs)
            times.jsPerCall.push(jsPerCallMs)
            times.jsOnce.push(jsOnceMs)
            times.zod.push(zodMs)
            times.zodAsync.push(zodAsyncMs)
            handleTimes.push(handleMs)
          }
          if (sink === 0) throw new Error("zod path did not run")
          const best = (values: number[], calls: number) => perCall(Math.min(...values), calls)
          const us = {
            bare: best(times.bare, CALLS),
            bareGen: best(times.bareGen, CALLS),
            bareFn: best(times.bareFn, CALLS),
            settle: best(times.settle, CALLS),
            settleGen: best(times.settleGen, CALLS),
            settleFn: best(times.settleFn, CALLS),
            zod: best(times.zod, CALLS),
            zodAsync: best(times.zodAsync, CALLS),
            modelSync: best(times.modelSync, CALLS),
            modelFn: best(times.modelFn, CALLS),
            jsPerCall: best(times.jsPerCall, CALLS),
            jsOnce: best(times.jsOnce, CALLS),
            handle: best(handleTimes, HANDLE_CALLS),
          }
          const row = (label: string, value: number) => console.log(`${label.padEnd(48)} ${value.toFixed(3)} µs/call`)
          console.log(
            `process CPU time, min of ${ROUNDS} rounds (after one warm-up), ${CALLS} calls (${HANDLE_CALLS} for handle)`,
          )
          row("bare execute (Effect.succeed)", us.bare)
          row("bare execute (Effect.fnUntraced)", us.bareFn)
          row("bare execute (inline Effect.gen)", us.bareGen)
          row("toolgate settle, real ToolOutputStore", us.settle)
          row("  same, executor made with Effect.fnUntraced", us.settleFn)
          row("  same, executor written as inline Effect.gen", us.settleGen)
          row("public-API model settlement, Effect.succeed", us.modelSync)
          row("  same, Effect.fnUntraced executor", us.modelFn)
          row("plain JS: a generator function made per call", us.jsPerCall)
          row("plain JS: a generator function made once", us.jsOnce)
          row("AI SDK: zod safeParse + execute", us.zod)
          row("AI SDK: await safeParseAsync + await execute", us.zodAsync)
          row("@effect/ai Toolkit.handle", us.handle)
          const overhead = us.settle - us.bare
          const figures = {
            settle_over_bare: us.settle / us.bare,
            settle_over_ai_sdk_zod: us.settle / us.zod,
            settle_over_ai_sdk_await: us.settle / us.zodAsync,
            handle_over_settle: us.handle / us.settle,
            async_settle_over_sync: us.settleFn / us.settle,
            async_overhead_over_sync: (us.settleFn - us.bareFn) / overhead,
            gen_overhead_over_sync: (us.settleGen - us.bareGen) / overhead,
          }
          console.log(`settle / bare execute                  : ${(us.settle / us.bare).toFixed(2)}x`)
          console.log(
            `settle / AI SDK zod path               : ${figures.settle_over_ai_sdk_zod.toFixed(2)}x (target ≤ 2x)`,
          )
          console.log(`settle / AI SDK await path             : ${figures.settle_over_ai_sdk_await.toFixed(2)}x`)
          console.log(
            `Toolkit.handle / settle                : ${figures.handle_over_settle.toFixed(1)}x faster (target ≥ 8x)`,
          )
          console.log(
            `settle (fnUntraced) / settle           : ${figures.async_settle_over_sync.toFixed(2)}x (target ≤ 1.5x) ${figures.async_settle_over_sync <= 1.5 ? "PASS" : "MISS"}`,
          )
          // What going asynchronous adds (the executor's own extra cost and one match frame), toolgate against the
          // model; toolgate's synchronous settle plus the model's extra is the ratio the public API allows.
          const extra = us.settleFn - us.settle
          const modelExtra = us.modelFn - us.modelSync
          console.log(
            `async extra, toolgate / public-API model: ${extra.toFixed(3)} / ${modelExtra.toFixed(3)} µs = ${(extra / modelExtra).toFixed(2)}x; settle + the model's extra = ${((us.settle + modelExtra) / us.settle).toFixed(2)}x settle`,
          )
          console.log(
            `settlement overhead, async / sync      : fnUntraced ${figures.async_overhead_over_sync.toFixed(2)}x, inline Effect.gen ${figures.gen_overhead_over_sync.toFixed(2)}x (overhead = settle − the same executor bare)`,
          )
          console.log(
            `settle (inline Effect.gen) / settle    : ${(us.settleGen / us.settle).toFixed(2)}x (the generator function per call, see docs/performance.md)`,
          )
          if (gate) report("settle", figures)
        }).pipe(Effect.provide(layer)),
      ),
    )
  } finally {
    fs.rmSync(data, { recursive: true, force: true })
  }
}

await main()
