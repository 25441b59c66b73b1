/**
 * Settlement overhead: materialize once, settle 100k calls of a small echo tool, and compare with running the same
 * `execute` Effect directly in the same run. Target: settle ≤ 2× the bare call.
 *
 * Run: npx tsx bench/settle.ts
 */
import { Effect, Layer, Schema } from "effect"
import { ApplicationTools, Tool, ToolOutputStore, ToolRegistry } from "@toolgate/core"

const CALLS = 100_000
const ROUNDS = 5

const Echo = Schema.Struct({ text: Schema.String })
const execute = (input: { readonly text: string }) => Effect.succeed({ text: input.text })
const echo = Tool.make({
  description: "Echo",
  input: Echo,
  output: Echo,
  execute,
  toModelOutput: ({ output }) => [{ type: "text", text: output.text }],
})

const identity = { sessionID: "ses_bench", agent: "build", assistantMessageID: "msg_bench" }
const input = { text: "hello" }

const time = (effect: Effect.Effect<void>) => {
  const start = performance.now()
  Effect.runSync(effect)
  return performance.now() - start
}

const main = Effect.gen(function* () {
  const registry = yield* ToolRegistry.Service
  yield* registry.register({ echo })
  const turn = yield* registry.materialize()
  const calls = Array.from({ length: CALLS }, (_, i) => ({
    ...identity,
    call: { id: `call_${i}`, name: "echo", input },
  }))

  const bare = Effect.forEach(calls, () => execute(input), { discard: true })
  const settled = Effect.forEach(calls, (call) => turn.settle(call), { discard: true }) as Effect.Effect<void>

  const bareTimes: Array<number> = []
  const settleTimes: Array<number> = []
  for (let round = 0; round < ROUNDS; round++) {
    bareTimes.push(time(bare))
    settleTimes.push(time(settled))
  }
  const best = (times: Array<number>) => Math.min(...times)
  const bareMs = best(bareTimes)
  const settleMs = best(settleTimes)
  console.log(`bare execute : ${(CALLS / (bareMs / 1000)).toFixed(0)} calls/s (${bareMs.toFixed(1)} ms for ${CALLS})`)
  console.log(
    `settle       : ${(CALLS / (settleMs / 1000)).toFixed(0)} calls/s (${settleMs.toFixed(1)} ms for ${CALLS})`,
  )
  console.log(`overhead per call: ${(((settleMs - bareMs) * 1000) / CALLS).toFixed(2)} µs`)
  console.log(`ratio settle/bare: ${(settleMs / bareMs).toFixed(2)}x (target ≤ 2x)`)
})

const layer = ToolRegistry.layer.pipe(Layer.provide([ApplicationTools.layer, ToolOutputStore.layerPassthrough]))
Effect.runSync(Effect.scoped(Effect.provide(main, layer)))
