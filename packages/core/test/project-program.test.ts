/**
 * The `project_program` approval over the real permission stack (SQLite in memory, a real Location): the exact
 * program is the resource, a wildcard allow does not allow it, and `always` saves exactly that program.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, type Scope } from "effect"
import {
  AgentV2,
  Approvals,
  Config,
  Database,
  DecisionJournal,
  EventV2,
  Location,
  PermissionSaved,
  PermissionV2,
  ProjectProgram,
  SessionV2,
  Wildcard,
} from "../src/index.js"
import { tempDir } from "./support/location.js"
import { agentControl } from "./support/permission-stack.js"

const stack = (directory: string) =>
  Approvals.layer.pipe(
    Layer.provideMerge(PermissionV2.layer),
    Layer.provideMerge(
      Layer.mergeAll(
        EventV2.layer,
        AgentV2.layerEmpty,
        SessionV2.layer,
        PermissionSaved.layer,
        DecisionJournal.layer,
        Config.layerEmpty,
      ),
    ),
    Layer.provideMerge(Location.layer({ directory }).pipe(Layer.orDie)),
    Layer.provideMerge(Database.layerMemory),
  )

type Services = Layer.Layer.Success<ReturnType<typeof stack>>

const scoped = <A, E>(name: string, rules: PermissionV2.Ruleset, body: () => Effect.Effect<A, E, Services | Scope.Scope>) =>
  it.scoped(name, () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(stack(yield* tempDir()))
      return yield* Effect.provide(
        Effect.gen(function* () {
          yield* (yield* agentControl)("test", rules)
          yield* (yield* SessionV2.Service).create({ id: "ses_a", agent: "test" })
          return yield* body()
        }),
        context,
      )
    }),
  )

const server = (command: ReadonlyArray<string>): ProjectProgram.Request => ({
  sessionID: "ses_a",
  kind: "MCP server",
  name: "github",
  document: "/repo/toolgate.json",
  program: { command },
})

const pendingPrompt = Effect.gen(function* () {
  const approvals = yield* Approvals.Service
  for (;;) {
    const [prompt] = yield* approvals.pending()
    if (prompt !== undefined) return prompt
    yield* Effect.yieldNow()
  }
})

describe("ProjectProgram", () => {
  it("resource quotes every argument that is not a plain word, so one argument cannot pose as two", () => {
    expect(ProjectProgram.resource({ command: ["npx", "-y", "@scope/server@1.2.3", "/tmp/a b"] })).toBe(
      'npx -y @scope/server@1.2.3 "/tmp/a b"',
    )
    expect(ProjectProgram.resource({ command: ["sh", "-c", "rm -rf ~; echo"] })).toBe('sh -c "rm -rf ~; echo"')
    expect(ProjectProgram.resource({ url: "https://mcp.example.com/mcp" })).toBe("https://mcp.example.com/mcp")
  })

  scoped("a wildcard allow does not start a program; the prompt shows it and always saves exactly it", [
    { action: "*", resource: "*", effect: "allow" },
  ], () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Service
      const saved = yield* PermissionSaved.Service
      const fiber = yield* Effect.fork(ProjectProgram.approve(yield* PermissionV2.Service, server(["node", "srv.js"])))
      const prompt = yield* pendingPrompt
      expect(prompt.request.action).toBe("project_program")
      expect(prompt.request.resources).toEqual(["node srv.js"])
      expect(prompt.command).toBe("node srv.js")
      expect(prompt.choices.map((choice) => choice.id)).toEqual(["once", "session", "always:pattern", "reject"])
      const always = prompt.choices.find((choice) => choice.id === "always:pattern")!
      expect(always.saves).toEqual([{ pattern: Wildcard.literal("node srv.js"), text: "node srv.js", literal: true }])
      yield* approvals.answer({ requestID: prompt.request.id, digest: prompt.digest, choice: "always:pattern", channel: "http" })
      expect(yield* Fiber.await(fiber)).toEqual(Exit.void)
      expect((yield* saved.list()).map((row) => [row.action, row.resource])).toEqual([
        ["project_program", Wildcard.literal("node srv.js")],
      ])
      // The same program starts at once; a changed one asks again.
      yield* ProjectProgram.approve(yield* PermissionV2.Service, server(["node", "srv.js"]))
      const changed = yield* Effect.fork(
        ProjectProgram.approve(yield* PermissionV2.Service, server(["node", "srv.js", "--evil"])),
      )
      const next = yield* pendingPrompt
      expect(next.request.resources).toEqual(["node srv.js --evil"])
      yield* approvals.answer({ requestID: next.request.id, digest: next.digest, choice: "once", channel: "http" })
      expect(yield* Fiber.await(changed)).toEqual(Exit.void)
    }),
  )

  scoped("a caller's wildcard save is ignored: always saves the exact program", [], () =>
    Effect.gen(function* () {
      const permission = yield* PermissionV2.Service
      const approvals = yield* Approvals.Service
      const input = { ...ProjectProgram.assertInput(server(["node", "a.js"])), save: ["*"] }
      const fiber = yield* Effect.fork(permission.assert(input))
      const prompt = yield* pendingPrompt
      expect(prompt.choices.find((choice) => choice.lifetime === "always")!.saves.map((s) => s.pattern)).toEqual([
        Wildcard.literal("node a.js"),
      ])
      yield* approvals.answer({ requestID: prompt.request.id, digest: prompt.digest, choice: "reject", channel: "test" })
      yield* Fiber.await(fiber)
    }),
  )

  scoped("a rule naming project_program exactly allows it", [
    { action: "project_program", resource: "node *", effect: "allow" },
  ], () =>
    Effect.gen(function* () {
      yield* ProjectProgram.approve(yield* PermissionV2.Service, server(["node", "x.js"]))
      expect(yield* (yield* Approvals.Service).pending()).toEqual([])
    }),
  )
})
