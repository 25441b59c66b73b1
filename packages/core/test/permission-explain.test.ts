import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { NodeContext } from "@effect/platform-node"
import {
  AgentV2,
  BashTool,
  Config,
  Database,
  Global,
  Location,
  LocationMutation,
  PermissionExplain,
  PermissionSaved,
  Project,
  ShellCommand,
} from "../src/index.js"
import { tempDir } from "./support/location.js"

/** Two configuration files, a markdown agent file and saved rows, on a real Location and a real SQLite database. */
const setup = Effect.gen(function* () {
  const root = yield* tempDir("toolgate-explain-")
  const work = path.join(root, "work")
  const folder = path.join(work, ".toolgate")
  fs.mkdirSync(path.join(folder, "agents"), { recursive: true })
  fs.writeFileSync(
    path.join(folder, "agents", "build.md"),
    "---\npermissions:\n  - { action: bash, resource: 'git push *', effect: deny }\n---\nBuild.\n",
  )
  const first = path.join(root, "toolgate.json")
  const second = path.join(work, "toolgate.json")
  const entries: ReadonlyArray<Config.Entry> = [
    {
      type: "document",
      path: first,
      info: { permissions: [{ action: "bash", resource: "*", effect: "ask" }] },
    },
    {
      type: "document",
      path: second,
      info: {
        permissions: [{ action: "bash", resource: "ls *", effect: "allow" }],
        agents: { build: { permissions: [{ action: "bash", resource: "rm *", effect: "deny" }] } },
      },
    },
    { type: "directory", path: folder },
  ]
  const place = Layer.mergeAll(
    Location.layer({ directory: work }).pipe(Layer.orDie),
    Global.layerWith({ data: path.join(root, "data"), tmp: path.join(root, "tmp"), home: path.join(root, "home") }),
    Config.layerFromEntries(entries),
  )
  const plan = BashTool.layerPlan.pipe(Layer.provide(Layer.merge(LocationMutation.layer, NodeContext.layer)))
  const layer = PermissionExplain.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(AgentV2.layer, PermissionSaved.layer, ShellCommand.layer, plan)),
    Layer.provideMerge(place),
    Layer.provideMerge(NodeContext.layer),
    Layer.provideMerge(Database.layerMemory),
  )
  return { layer, work, first, second, folder }
})

describe("PermissionExplain", () => {
  it.scoped("traces every rule with its origin, the winner per segment and the decision", () =>
    Effect.gen(function* () {
      const { layer, work, first, second, folder } = yield* setup
      yield* Effect.gen(function* () {
        const store = yield* PermissionSaved.Service
        yield* store.add({ ...Project.approvalScope("global", work), action: "bash", resources: ["git status *"] })
        const [row] = yield* store.list(Project.approvalScope("global", work))
        const explain = yield* PermissionExplain.Service

        const trace = yield* explain.explain({
          agent: "build",
          action: "bash",
          command: "ls -la; git status; rm -rf x; git push origin",
        })
        expect(trace.effect).toBe("deny")
        expect(trace.resources.map((r) => [r.segment, r.effect])).toEqual([
          ["ls -la", "allow"],
          ["git status", "allow"],
          ["rm -rf x", "deny"],
          ["git push origin", "deny"],
        ])
        const [ls, status, rm, push] = trace.resources
        expect(ls!.winner?.origin).toEqual({ type: "config", path: second, index: 0 })
        expect(status!.winner?.origin).toEqual({ type: "saved", id: row!.id, timeCreated: row!.timeCreated })
        expect(rm!.winner?.origin).toEqual({ type: "agent", path: second, agent: "build", index: 0, file: false })
        expect(push!.winner?.origin).toEqual({
          type: "agent",
          path: path.join(folder, "agents", "build.md"),
          agent: "build",
          index: 0,
          file: true,
        })
        // The built-in `* * allow` and the first file's `bash * ask` were considered too, in order.
        const origins = ls!.considered.map((entry) => entry.origin.type)
        expect(origins[0]).toBe("builtin")
        expect(
          ls!.considered.find((entry) => entry.rule.resource === "*" && entry.rule.effect === "ask")?.origin,
        ).toEqual({ type: "config", path: first, index: 0 })
        expect(ls!.considered.map((entry) => entry.position)).toEqual(
          [...ls!.considered.map((entry) => entry.position)].sort((a, b) => a - b),
        )

        const text = PermissionExplain.render(trace)
        expect(text).toContain("agent build, action bash: deny")
        expect(text).toContain(`=> #`)
        expect(text).toContain(`(${second} permissions[0])`)
        expect(text).toContain(`saved approval ${row!.id}`)

        const read = yield* explain.explain({ agent: "build", action: "read", resources: [".env", "src/a.ts"] })
        expect(read.resources.map((r) => [r.resource, r.effect, r.winner?.origin.type])).toEqual([
          [".env", "ask", "builtin"],
          ["src/a.ts", "allow", "builtin"],
        ])
        const unresolved = yield* explain.explain({ agent: "build", action: "bash", command: "$CMD" })
        expect(unresolved.resources[0]!.effect).toBe("ask")
        expect(unresolved.resources[0]!.resource).toBe("unresolved:$CMD")
        const missing = yield* Effect.flip(explain.explain({ agent: "nobody", action: "bash", resources: ["x"] }))
        expect(missing.message).toBe("No agent nobody")
      }).pipe(Effect.provide(layer))
    }),
  )
})
