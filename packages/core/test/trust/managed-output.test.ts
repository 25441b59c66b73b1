/**
 * Managed tool output is kept per project and only the current project's folder is readable without an ask
 * (docs/trust/managed-output.md). Two real Locations share one data directory, as two sessions on one machine do;
 * project B tries to read, glob and grep project A's managed output through the real built-in tools.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import { Core } from "../../src/entry/testing.js"
import {
  ApplicationTools,
  EventV2,
  Location,
  PermissionV2,
  SessionV2,
  Tool,
  ToolOutputStore,
  ToolRegistry,
} from "../../src/index.js"
import { tempDir } from "../support/location.js"

const SECRET = "A-PRIVATE-OUTPUT-7f3c"

/** A tool whose output is far over the limit, so it is kept in a managed file. */
const big = Tool.make({
  description: "Produces a large text",
  input: Schema.Struct({ tag: Schema.String }),
  output: Schema.String,
  execute: ({ tag }) => Effect.sync(() => `${tag} line\n`.repeat(Math.ceil((ToolOutputStore.MAX_BYTES * 2) / 10))),
})

const env = (() => {
  const copy: NodeJS.ProcessEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }
  for (const name of ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"]) delete copy[name]
  return copy
})()

const gitRepository = (dir: string, content: string) => {
  const run = (...args: Array<string>) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: dir, env })
  run("init", "-q")
  fs.writeFileSync(path.join(dir, "a.txt"), content)
  run("add", "a.txt")
  run("commit", "-q", "-m", content)
}

type LocationContext = Context.Context<Layer.Layer.Success<ReturnType<typeof Core.layerLocation>>>

/** A Location on `directory` over the shared process services; every ask is recorded and rejected. */
const locationAt = (directory: string, shared: Layer.Layer<Core.ProcessServices>) =>
  Effect.gen(function* () {
    const context: LocationContext = yield* Layer.build(
      Core.layerLocation({ directory, discover: false }).pipe(Layer.provide(shared)),
    )
    const asks: Array<PermissionV2.Request> = []
    const permission = Context.get(context, PermissionV2.Service)
    yield* Context.get(context, EventV2.Service).listen((envelope) => {
      const request = envelope.data
      asks.push(request)
      Effect.runFork(Effect.ignore(permission.reply({ requestID: request.id, reply: "reject", message: "not yours" })))
    }, PermissionV2.Event.Asked)
    const session = yield* Effect.provide(
      Effect.flatMap(SessionV2.Service, (sessions) => sessions.create({ agent: "build" })),
      context,
    )
    let calls = 0
    const settle = (name: string, input: unknown) =>
      Effect.provide(
        Effect.gen(function* () {
          const turn = yield* (yield* ToolRegistry.Service).materialize([])
          return yield* turn.settle({
            sessionID: session.id,
            agent: "build",
            assistantMessageID: "msg_managed",
            call: { id: `call-${++calls}`, name, input },
          })
        }),
        context,
      )
    return { context, asks, settle, location: Context.get(context, Location.Service) }
  })

const text = (result: unknown) => JSON.stringify(result)

const setup = (kind: "directories" | "repositories") =>
  Effect.gen(function* () {
    const data = yield* tempDir()
    const one = yield* tempDir()
    const two = yield* tempDir()
    if (kind === "repositories") {
      gitRepository(one, "project a")
      gitRepository(two, "project b")
    }
    const shared = Layer.succeedContext(yield* Layer.build(Core.layerProcess({ data, memoryDatabase: true })))
    yield* Effect.provide(
      Effect.flatMap(ApplicationTools.Service, (tools) => tools.register({ big })),
      shared,
    )
    const a = yield* locationAt(one, shared)
    const b = yield* locationAt(two, shared)
    return { data, a, b }
  })

describe.each(["directories", "repositories"] as const)("managed output of two projects (%s)", (kind) => {
  it.live("project B cannot read, glob or grep project A's managed output without an ask", () =>
    Effect.gen(function* () {
      const { data, a, b } = yield* setup(kind)
      expect(a.location.project.id === b.location.project.id && kind === "repositories").toBe(false)
      const produced = yield* a.settle("big", { tag: SECRET })
      const file = produced.outputPaths![0]!
      const folder = path.dirname(file)
      expect(path.dirname(folder)).toBe(path.join(data, "tool-output"))
      expect(path.basename(folder)).toBe(ToolOutputStore.folderOf(a.location))
      expect(fs.readFileSync(file, "utf8")).toContain(SECRET)

      // A reads its own managed output without an ask
      const own = yield* a.settle("read", { path: file })
      expect(own.result.type).not.toBe("error")
      expect(text(own.result)).toContain(SECRET)
      expect(a.asks).toEqual([])

      // B: every attempt asks (and is rejected here): nothing of A's output comes back
      for (const [name, input] of [
        ["read", { path: file }],
        ["glob", { pattern: "*", path: folder }],
        ["grep", { pattern: SECRET, path: folder }],
        ["grep", { pattern: SECRET, path: file }],
      ] as const) {
        const before = b.asks.length
        const settled = yield* b.settle(name, input)
        expect(settled.result.type, `${name} ${JSON.stringify(input)}`).toBe("error")
        expect(text(settled)).not.toContain(SECRET)
        expect(text(settled)).not.toContain(path.basename(file))
        const asked = b.asks.slice(before)
        expect(asked.length).toBeGreaterThan(0)
        expect(asked[0]!.action).toBe("external_directory")
        expect(asked[0]!.resources.some((resource) => resource.startsWith(folder))).toBe(true)
      }
    }).pipe(Effect.scoped),
  )

  it.live("B's own managed output stays readable without an ask, and lands in B's own folder", () =>
    Effect.gen(function* () {
      const { a, b } = yield* setup(kind)
      const fromA = (yield* a.settle("big", { tag: "a" })).outputPaths![0]!
      const fromB = (yield* b.settle("big", { tag: "b-output" })).outputPaths![0]!
      expect(path.dirname(fromA)).not.toBe(path.dirname(fromB))
      const read = yield* b.settle("read", { path: fromB })
      expect(read.result.type).not.toBe("error")
      expect(text(read.result)).toContain("b-output")
      expect(b.asks).toEqual([])
    }).pipe(Effect.scoped),
  )
})
