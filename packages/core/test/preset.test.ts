/**
 * The `guarded` preset, loaded the way a user picks it: one line in a real `toolgate.json` found by discovery
 * (`Core.layer`), with real files, real bash and a loopback web server. Asserted: what asks, what runs, what is on
 * disk afterwards, and what the model reads. Beside it the reference default, which a project without a preset
 * keeps.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import {
  AgentV2,
  BashTool,
  Config,
  Core,
  EventV2,
  PermissionV2,
  SessionV2,
  ToolRegistry,
  WebAddress,
} from "../src/index.js"
import { loopbackServer, respond } from "./support/loopback-server.js"

type Answer = (request: PermissionV2.Request) => { readonly reply: PermissionV2.Reply; readonly message?: string }
const reject: Answer = () => ({ reply: "reject", message: "no" })
const REJECTED = "The user rejected permission to use this specific tool call with the following feedback: no"

/** A project with a toolgate.json, a secret and a file outside it; its Location on the real Core. */
const project = (config: Record<string, unknown>) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-preset-")))
  const directory = path.join(root, "project")
  fs.mkdirSync(directory)
  fs.writeFileSync(path.join(directory, "toolgate.json"), JSON.stringify(config))
  fs.writeFileSync(path.join(directory, "notes.txt"), "inside notes\n")
  fs.writeFileSync(path.join(directory, "victim.txt"), "keep me\n")
  fs.writeFileSync(path.join(directory, ".env"), "API_KEY=SECRET_ENV_VALUE\n")
  fs.writeFileSync(path.join(root, "outside.txt"), "OUTSIDE_CONTENT\n")
  const asked: Array<PermissionV2.Request> = []
  const state = { answer: reject }
  const answerer = Layer.scopedDiscard(
    Effect.gen(function* () {
      const permission = yield* PermissionV2.Service
      yield* (yield* EventV2.Service).listen((envelope) => {
        asked.push(envelope.data)
        Effect.runFork(Effect.ignore(permission.reply({ requestID: envelope.data.id, ...state.answer(envelope.data) })))
      }, PermissionV2.Event.Asked)
    }),
  )
  const resolver = Layer.succeed(WebAddress.Resolver, {
    resolve: (hostname: string) =>
      hostname.endsWith(".test")
        ? Effect.succeed([{ address: "127.0.0.1", family: 4 as const }])
        : Effect.fail(new WebAddress.ResolveError({ hostname, detail: "ENOTFOUND" })),
  })
  const core = Core.layer({ directory, memoryDatabase: true, data: path.join(root, "data") })
  const layer = Layer.provideMerge(answerer, core).pipe(Layer.provide(resolver))
  return { root, directory, asked, state, layer }
}

const call = (name: string, input: Record<string, unknown>) =>
  Effect.gen(function* () {
    const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
    const turn = yield* (yield* ToolRegistry.Service).materialize([])
    const settled = yield* turn.settle({
      sessionID: session.id,
      agent: "build",
      assistantMessageID: "msg_preset",
      call: { id: `call_${name}`, name, input },
    })
    return settled.result
  })

const bash = (command: string) => call("bash", { command })
/** The model-visible text of a bash result (its content parts joined). */
const shown = (result: { readonly type: string; readonly value: unknown }): string =>
  result.type === "content"
    ? (result.value as ReadonlyArray<{ readonly type: string; readonly text?: string }>)
        .map((part) => part.text ?? "")
        .join("")
    : String(result.value)
const text = (value: string) => ({ type: "text", value })

describe("preset: guarded", () => {
  it("is a top-level key of toolgate.json: guarded or reference, anything else fails naming the file", () => {
    expect(Config.parseDocument("/p/toolgate.json", '{ "preset": "guarded" }')).toMatchObject({
      _tag: "Right",
      right: { info: { preset: "guarded" } },
    })
    const bad = Config.parseDocument("/p/toolgate.json", '{ "preset": "strict" }')
    expect(bad._tag).toBe("Left")
    if (bad._tag === "Left") expect(bad.left.message).toMatch(/^Invalid config in \/p\/toolgate\.json at preset: /)
  })

  it.scoped("read-only commands on files inside run without asking; their output reaches the model", () => {
    const { directory, asked, layer } = project({ preset: "guarded" })
    return Effect.gen(function* () {
      expect(shown(yield* bash("cat notes.txt"))).toMatch(/^inside notes\n/)
      expect(shown(yield* bash("head -n 1 notes.txt && wc -l notes.txt && pwd"))).toContain(
        `inside notes\n1 notes.txt\n${directory}\n`,
      )
      expect(shown(yield* bash("grep inside notes.txt"))).toMatch(/^inside notes\n/)
      expect(asked).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.scoped("a secret, a file outside, other commands, recursion and unfollowed options ask; nothing runs", () => {
    const { root, directory, asked, layer } = project({ preset: "guarded" })
    return Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [command: string, action: string]> = [
        ["cat .env", "read"],
        ["head ../outside.txt", "external_directory"],
        ["rm -f victim.txt", "bash"],
        // The copy's destination is outside: that is asked first.
        ["cp victim.txt ../copied.txt", "external_directory"],
        ["echo changed > victim.txt", "bash"],
        ["grep -r SECRET .", "bash"],
        ["grep -f .env notes.txt", "bash"],
        ["wc --files0-from=list.txt", "bash"],
        // An operand of a program the gate does not model that names a place outside: asked first.
        ["ls ..", "external_directory"],
        ["ls", "bash"],
        ["git log -p", "bash"],
        ["cat notes.txt > ../leak.txt", "external_directory"],
      ]
      for (const [command, action] of cases) {
        const before = asked.length
        const result = yield* bash(command)
        expect(result, command).toEqual({ type: "error", value: REJECTED })
        expect(
          asked.slice(before).map((request) => request.action),
          command,
        ).toEqual([action])
      }
      expect(fs.readFileSync(path.join(directory, "victim.txt"), "utf8")).toBe("keep me\n")
      expect(fs.existsSync(path.join(root, "copied.txt"))).toBe(false)
      expect(fs.existsSync(path.join(root, "leak.txt"))).toBe(false)
    }).pipe(Effect.provide(layer))
  })

  it.scoped("writes inside are allowed, a write outside asks; read and edit tools keep the read rules", () => {
    const { root, directory, asked, layer } = project({ preset: "guarded" })
    return Effect.gen(function* () {
      expect(yield* call("write", { path: "new.txt", content: "x" })).toEqual(
        text("Created file successfully: new.txt"),
      )
      expect(yield* call("write", { path: path.join(root, "out.txt"), content: "x" })).toEqual({
        type: "error",
        value: REJECTED,
      })
      expect(yield* call("read", { path: ".env" })).toEqual({ type: "error", value: REJECTED })
      expect(asked.map((request) => request.action)).toEqual(["external_directory", "read"])
      expect(fs.existsSync(path.join(directory, "new.txt"))).toBe(true)
      expect(fs.existsSync(path.join(root, "out.txt"))).toBe(false)
    }).pipe(Effect.provide(layer))
  })

  it.scoped("webfetch asks once per host: always saves the origin, a new host asks again", () => {
    const { asked, state, layer } = project({
      preset: "guarded",
      // The test hosts resolve to loopback; allow that explicitly so only the preset's ask remains.
      permissions: [{ action: "webfetch", resource: "private:*", effect: "allow" }],
    })
    return Effect.gen(function* () {
      const server = yield* loopbackServer(respond("page"))
      state.answer = () => ({ reply: "always" })
      const at = (host: string, page: string) => `http://${host}:${server.port}/${page}`
      expect(yield* call("webfetch", { url: at("docs.test", "a"), format: "text" })).toEqual(text("page"))
      expect(yield* call("webfetch", { url: at("docs.test", "b"), format: "text" })).toEqual(text("page"))
      state.answer = reject
      expect(yield* call("webfetch", { url: at("other.test", "a"), format: "text" })).toEqual({
        type: "error",
        value: REJECTED,
      })
      expect(asked.map((request) => [request.action, request.resources, request.save])).toEqual([
        ["webfetch", [at("docs.test", "a")], [`http://docs.test:${server.port}/*`]],
        ["webfetch", [at("other.test", "a")], [`http://other.test:${server.port}/*`]],
      ])
      expect(server.hits.map((hit) => hit.url)).toEqual(["/a", "/b"])
    }).pipe(Effect.provide(layer))
  })

  it.scoped(
    "a later document can choose the reference again; the build agent's rules show which one is in force",
    () => {
      const { directory, layer } = project({ preset: "guarded" })
      fs.mkdirSync(path.join(directory, ".toolgate"))
      fs.writeFileSync(path.join(directory, ".toolgate", "toolgate.json"), JSON.stringify({ preset: "reference" }))
      return Effect.gen(function* () {
        const build = yield* (yield* AgentV2.Service).get("build")
        expect(build?.permissions.filter((rule) => rule.action === "bash")).toEqual([])
      }).pipe(Effect.provide(layer))
    },
  )

  it("every command the preset allows has its file arguments checked by the bash leaf (or takes none)", () => {
    for (const command of AgentV2.GUARDED_READ_ONLY_COMMANDS) {
      expect(command === "pwd" || BashTool.READERS.has(command), command).toBe(true)
    }
  })
})

describe("no preset: the reference default", () => {
  it.scoped(
    "bash is allowed wholesale (the reference's `* * allow`): cat .env, rm and cp out run; the read tool still asks",
    () => {
      const { directory, asked, layer } = project({})
      return Effect.gen(function* () {
        const build = yield* (yield* AgentV2.Service).get("build")
        expect(build?.permissions[0]).toEqual({ action: "*", resource: "*", effect: "allow" })
        expect(build?.permissions.filter((rule) => rule.action === "bash")).toEqual([])
        // The reference default: rm and cat .env run without an ask; a copy to outside asks external_directory,
        // like any write outside the Location (docs/shell.md).
        expect(shown(yield* bash("cat .env && rm victim.txt && cp notes.txt copied.txt && echo done"))).toMatch(
          /^API_KEY=SECRET_ENV_VALUE\ndone\n/,
        )
        expect(fs.existsSync(path.join(directory, "victim.txt"))).toBe(false)
        expect(yield* bash("cp notes.txt ../copied.txt")).toEqual({ type: "error", value: REJECTED })
        expect(fs.existsSync(path.join(path.dirname(directory), "copied.txt"))).toBe(false)
        expect(yield* call("read", { path: ".env" })).toEqual({ type: "error", value: REJECTED })
        expect(asked.map((request) => request.action)).toEqual(["external_directory", "read"])
      }).pipe(Effect.provide(layer))
    },
  )
})
