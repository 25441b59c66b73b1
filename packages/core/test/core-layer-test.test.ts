/**
 * `Core.layerTest` is what embedders' unit tests use; every module it wires is exercised through it here.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Exit, Schema, Scope } from "effect"
import {
  AgentV2,
  ApplicationTools,
  Config,
  EventV2,
  FileMutation,
  Global,
  Location,
  LocationMutation,
  PermissionSaved,
  PermissionV2,
  QuestionV2,
  SessionTodo,
  SessionV2,
  SkillV2,
  Tool,
  ToolOutputStore,
  ToolRegistry,
  Tools,
} from "../src/index.js"
import { Core } from "../src/entry/testing.js"

const testLayer = Core.layerTest({
  config: {
    tool_output: { max_lines: 50 },
    permissions: [{ action: "edit", resource: "guarded/*", effect: "ask" }],
  },
  permission: (request) =>
    request.resources.some((resource) => resource.includes("reject"))
      ? { reply: "reject", message: "no" }
      : { reply: "always" },
  question: (request) => request.questions.map((question) => [question.options[0]?.label ?? ""]),
})

const newSession = Effect.flatMap(SessionV2.Service, (sessions) => sessions.create({ agent: "build" }))
const settle = (sessionID: string, name: string, input: unknown, id = `call_${name}`) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize([])).pipe(
    Effect.flatMap((turn) =>
      turn.settle({ sessionID, agent: "build", assistantMessageID: "msg_core", call: { id, name, input } }),
    ),
  )

layer(testLayer)("Core.layerTest", (it) => {
  it.effect("Global points at a temp data directory and Database is migrated", () =>
    Effect.gen(function* () {
      const global = yield* Global.Service
      expect(fs.existsSync(global.data)).toBe(true)
      const sql = yield* SqlClient.SqlClient
      const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
      expect(tables.map((table) => table.name)).toEqual(
        expect.arrayContaining(["permission", "project", "session", "todo", "tool_call"]),
      )
    }),
  )

  it.effect("Config carries the given document; Location is a realpath in the global project", () =>
    Effect.gen(function* () {
      const entries = yield* (yield* Config.Service).entries()
      expect(Config.latest(entries, "tool_output")).toEqual({ max_lines: 50 })
      const location = yield* Location.Service
      expect(fs.realpathSync(location.directory)).toBe(location.directory)
      expect(location.project.id).toBe("global")
    }),
  )

  it.effect("AgentV2 has the built-in agents with the configured rules appended", () =>
    Effect.gen(function* () {
      const build = yield* (yield* AgentV2.Service).resolve()
      expect(build?.id).toBe("build")
      expect(build?.permissions.at(-1)).toEqual({ action: "edit", resource: "guarded/*", effect: "ask" })
    }),
  )

  it.effect("PermissionV2 + PermissionSaved: a scripted always is saved for the project", () =>
    Effect.gen(function* () {
      const session = yield* newSession
      const result = yield* settle(session.id, "write", { path: "guarded/a.txt", content: "a" })
      expect(result.result).toEqual({ type: "text", value: "Created file successfully: guarded/a.txt" })
      const saved = yield* (yield* PermissionSaved.Service).list({ projectID: "global" })
      // Cut to the configured rule that asked (`guarded/*`), never the tool's `*`.
      expect(saved.map((row) => [row.action, row.resource])).toEqual([["edit", "guarded/*"]])
      expect(yield* (yield* PermissionV2.Service).list()).toEqual([])
    }),
  )

  it.effect("EventV2 carries the permission events", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* (yield* EventV2.Service).listen((envelope) => void seen.push(envelope.type))
          const session = yield* newSession
          yield* (yield* PermissionV2.Service).ask({
            sessionID: session.id,
            action: "external_directory",
            resources: ["/reject/*"],
          })
        }),
      )
      expect(seen).toContain("permission.v2.asked")
    }),
  )

  it.effect("ToolOutputStore bounds with the configured line limit into the temp data directory", () =>
    Effect.gen(function* () {
      const store = yield* ToolOutputStore.Service
      expect(yield* store.limits()).toEqual({ maxLines: 50, maxBytes: ToolOutputStore.MAX_BYTES })
      const text = Array.from({ length: 200 }, (_, i) => `line ${i}`).join("\n")
      const bounded = yield* store.bound({
        sessionID: "ses_x",
        toolCallID: "c",
        output: { structured: {}, content: [{ type: "text", text }] },
      })
      expect(bounded.outputPaths).toHaveLength(1)
      expect(bounded.outputPaths[0]!.startsWith(Global.toolOutput(yield* Global.Service))).toBe(true)
      expect(fs.readFileSync(bounded.outputPaths[0]!, "utf8")).toBe(text)
    }),
  )

  it.effect("ApplicationTools and Tools register into the same catalogue", () =>
    Effect.gen(function* () {
      const extra = Tool.make({
        description: "extra",
        input: Schema.Struct({}),
        output: Schema.String,
        execute: () => Effect.succeed("ok"),
      })
      const scope = yield* Scope.make()
      yield* Scope.extend((yield* ApplicationTools.Service).register({ app_extra: extra }), scope)
      yield* Scope.extend((yield* Tools.Service).register({ loc_extra: extra }), scope)
      const names = (yield* (yield* ToolRegistry.Service).materialize([])).definitions.map(
        (definition) => definition.name,
      )
      expect(names[0]).toBe("app_extra")
      expect(names).toContain("loc_extra")
      expect(names).toHaveLength(14)
      yield* Scope.close(scope, Exit.void)
    }),
  )

  it.effect("LocationMutation and FileMutation confine and write", () =>
    Effect.gen(function* () {
      const mutation = yield* LocationMutation.Service
      const target = yield* mutation.resolve({ path: "nested/file.txt" })
      expect(target.resource).toBe("nested/file.txt")
      const written = yield* (yield* FileMutation.Service).create({ target, content: "x" })
      expect(written.existed).toBe(false)
      expect(yield* Effect.flip(mutation.resolve({ path: "../escape.txt" }))).toMatchObject({
        reason: "relative_escape",
      })
    }),
  )

  it.effect("QuestionV2 answers through the scripted question replies", () =>
    Effect.gen(function* () {
      const session = yield* newSession
      const result = yield* settle(session.id, "question", {
        questions: [
          {
            question: "Which?",
            header: "Pick",
            options: [
              { label: "First", description: "1" },
              { label: "Second", description: "2" },
            ],
          },
        ],
      })
      expect(result.result).toEqual({
        type: "text",
        value:
          'User has answered your questions: "Which?"="First". You can now continue with the user\'s answers in mind.',
      })
      expect(yield* (yield* QuestionV2.Service).list()).toEqual([])
    }),
  )

  it.effect("SessionTodo persists todowrite in SQLite", () =>
    Effect.gen(function* () {
      const session = yield* newSession
      const todos = [{ content: "ship", status: "pending", priority: "high" }]
      yield* settle(session.id, "todowrite", { todos })
      expect(yield* (yield* SessionTodo.Service).get(session.id)).toEqual(todos)
    }),
  )

  it.effect("SkillV2 discovers skills under the Location", () =>
    Effect.gen(function* () {
      const location = yield* Location.Service
      const dir = path.join(location.directory, ".toolgate", "skills", "demo")
      fs.mkdirSync(dir, { recursive: true })
      fs.writeFileSync(path.join(dir, "SKILL.md"), "---\nname: demo\ndescription: A demo skill\n---\nDo the demo.\n")
      const skills = yield* (yield* SkillV2.Service).list()
      expect(skills.map((skill) => skill.name)).toContain("demo")
    }),
  )
})
