/**
 * The cost of the broadened, case-insensitive secret family on `read` (see docs/trust/secrets.md): 10,000 real `read`
 * settlements of an ordinary file on a real Location, by an agent carrying the reference's three `.env` rules versus
 * one carrying `AgentV2.secretRules`, rounds interleaved. Target: ≤ 1.10×.
 *
 * Run: npx tsx bench/secret-rules.ts
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { AgentV2, type Config, SessionV2, ToolRegistry } from "@toolgate/core"
import { Core } from "@toolgate/core/testing"

const CALLS = 10_000
const ROUNDS = 3

type Rule = typeof Config.PermissionRule.Type
const base: ReadonlyArray<Rule> = [
  { action: "*", resource: "*", effect: "allow" },
  { action: "external_directory", resource: "*", effect: "ask" },
  { action: "read", resource: "*", effect: "allow" },
]
const referenceRules: ReadonlyArray<Rule> = [
  ...base,
  { action: "read", resource: "*.env", effect: "ask" },
  { action: "read", resource: "*.env.*", effect: "ask" },
  { action: "read", resource: "*.env.example", effect: "allow" },
]
const familyRules: ReadonlyArray<Rule> = [...base, ...AgentV2.secretRules]

const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-secrets-")))
fs.writeFileSync(path.join(directory, "notes.txt"), "hello\n")

const program = Effect.gen(function* () {
  const sessions = yield* SessionV2.Service
  const registry = yield* ToolRegistry.Service
  const loop = (agent: string) =>
    Effect.gen(function* () {
      const session = yield* sessions.create({ agent })
      const turn = yield* registry.materialize([])
      const start = performance.now()
      for (let i = 0; i < CALLS; i++) {
        const settled = yield* turn.settle({
          sessionID: session.id,
          agent,
          assistantMessageID: "msg_bench",
          call: { id: `c${i}`, name: "read", input: { path: "notes.txt" } },
        })
        if (settled.result.type === "error") throw new Error(JSON.stringify(settled.result))
      }
      return performance.now() - start
    })
  yield* loop("reference_rules")
  yield* loop("family_rules")
  let reference = 0
  let family = 0
  for (let round = 0; round < ROUNDS; round++) {
    reference += yield* loop("reference_rules")
    family += yield* loop("family_rules")
  }
  const ratio = family / reference
  console.log(
    `read × ${CALLS} (${ROUNDS} rounds): reference .env rules ${(reference / ROUNDS).toFixed(0)} ms, ` +
      `secret family ${(family / ROUNDS).toFixed(0)} ms, ratio ${ratio.toFixed(3)} (target ≤ 1.10)`,
  )
}).pipe(
  Effect.provide(
    Core.layerTest({
      directory,
      config: {
        agents: {
          reference_rules: { mode: "primary", permissions: [...referenceRules] },
          family_rules: { mode: "primary", permissions: [...familyRules] },
        },
      },
    }),
  ),
  Effect.scoped,
)

Effect.runPromise(program).finally(() => fs.rmSync(directory, { recursive: true, force: true }))
