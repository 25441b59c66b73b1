/**
 * Plugins on a real Location (`Core.layer`: temp directories, a SQLite file, configuration discovery): a plugin from
 * code registers a tool that is gated, bounded and goes stale when the plugin closes, and hooks journaled under its
 * name; a module named by a project's `toolgate.json` is not imported until a `project_program` approval (its
 * side effect on disk is checked), then loads; a module from the user's configuration directory loads at once; a
 * module that cannot be loaded fails the Location closed, naming the file and the field.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Layer, Schema, Scope } from "effect"
import {
  Approvals,
  type Config,
  Core,
  DecisionJournal,
  Hooks,
  PermissionV2,
  Plugin,
  SessionV2,
  Tool,
  ToolRegistry,
} from "../src/index.js"

const temp = (prefix: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

type Services = Core.ProcessServices | Layer.Layer.Success<ReturnType<typeof Core.layerLocation>>

/**
 * Runs `body` in a fresh Location with its own SQLite file and configuration directory (`XDG_CONFIG_HOME`, restored
 * afterwards); `setup` writes files before the Location opens.
 */
const inLocation = <A, E>(
  options: {
    readonly config?: Config.Info
    readonly discover?: boolean
    readonly setup?: (dirs: { readonly directory: string; readonly userConfig: string }) => void
  },
  body: (dirs: {
    readonly directory: string
    readonly userConfig: string
  }) => Effect.Effect<A, E, Services | Scope.Scope>,
) =>
  Effect.suspend(() => {
    const directory = temp("toolgate-plugin-")
    const data = temp("toolgate-plugin-data-")
    const configHome = temp("toolgate-plugin-config-")
    const userConfig = path.join(configHome, "toolgate")
    fs.mkdirSync(userConfig)
    const previous = process.env["XDG_CONFIG_HOME"]
    process.env["XDG_CONFIG_HOME"] = configHome
    options.setup?.({ directory, userConfig })
    return Effect.scoped(body({ directory, userConfig })).pipe(
      Effect.provide(
        Core.layer({
          directory,
          data,
          ...(options.config === undefined ? {} : { config: options.config }),
          discover: options.discover ?? true,
        }),
      ),
      Effect.ensuring(
        Effect.sync(() => {
          if (previous === undefined) delete process.env["XDG_CONFIG_HOME"]
          else process.env["XDG_CONFIG_HOME"] = previous
          for (const dir of [directory, data, configHome]) fs.rmSync(dir, { recursive: true, force: true })
        }),
      ),
    )
  })

const newSession = Effect.flatMap(SessionV2.Service, (sessions) => sessions.create({ agent: "build" }))

const settleWith = (turn: ToolRegistry.Materialization, sessionID: string, name: string, input: unknown, id: string) =>
  turn.settle({ sessionID, agent: "build", assistantMessageID: "msg_plugin", call: { id, name, input } })

const settle = (sessionID: string, name: string, input: unknown, id = `call_${name}`) =>
  Effect.flatMap(
    Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize([])),
    (turn) => settleWith(turn, sessionID, name, input, id),
  )

const toolNames = Effect.map(
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize([])),
  (turn) => turn.definitions.map((definition) => definition.name),
)

const nextPrompt = Effect.gen(function* () {
  const approvals = yield* Approvals.Service
  for (let i = 0; i < 10_000; i++) {
    const [prompt] = yield* approvals.pending()
    if (prompt !== undefined) return prompt
    yield* Effect.yieldNow()
  }
  throw new Error("no prompt")
})

const answer = (prompt: Approvals.Prompt, choice: string, message?: string) =>
  Effect.flatMap(Approvals.Service, (approvals) =>
    approvals.answer({
      requestID: prompt.request.id,
      digest: prompt.digest,
      choice,
      channel: "test",
      ...(message === undefined ? {} : { message }),
    }),
  )

/**
 * A plugin module that writes `marker` when it is imported and registers `<tool>` (echo) through the API the loader
 * gives it, so it needs no import of its own.
 */
const pluginModule = (marker: string, tool: string) => `import * as fs from "node:fs"
fs.writeFileSync(${JSON.stringify(marker)}, "imported")
export default ({ Plugin, Tool, Effect, Schema }) =>
  Plugin.make({
    name: "marker",
    tools: {
      ${tool}: Tool.make({
        description: "Echo from a module",
        input: Schema.Struct({ text: Schema.String }),
        output: Schema.String,
        execute: (input) => Effect.succeed("module says " + input.text),
      }),
    },
  })
`

describe("Plugin", () => {
  it.live("a plugin from code: its tool is gated, bounded, goes stale when it closes; its hooks carry its name", () =>
    inLocation(
      {
        discover: false,
        config: {
          permissions: [
            { action: "notes", resource: "*", effect: "ask" },
            { action: "notes", resource: "public/*", effect: "allow" },
          ],
        },
      },
      () =>
        Effect.gen(function* () {
          const runs: Array<string> = []
          const notes = Plugin.make({
            name: "notes",
            tools: Effect.map(PermissionV2.Service, (permission) => ({
              notes_read: Tool.make({
                description: "Read a note",
                input: Schema.Struct({ path: Schema.String }),
                output: Schema.String,
                execute: (input, context) =>
                  permission
                    .assert({ ...PermissionV2.fromToolCall(context), action: "notes", resources: [input.path] })
                    .pipe(
                      Effect.mapError(
                        PermissionV2.leafFailure((error) => new Tool.Failure({ message: String(error) })),
                      ),
                      Effect.zipRight(Effect.sync(() => runs.push(input.path))),
                      // A note of 3 MB: the tool returns all of it; the registry bounds it once.
                      Effect.as("line of a long note\n".repeat(160_000)),
                    ),
              }),
            })),
            hooks: {
              "tool.before": (call) =>
                Effect.succeed(
                  call.tool === "notes_read" && String((call.input as { path: string }).path).endsWith(".key")
                    ? Hooks.deny("keys are not notes")
                    : Hooks.proceed,
                ),
            },
          })
          const pluginScope = yield* Scope.make()
          yield* Plugin.register(notes).pipe(Scope.extend(pluginScope))
          const session = yield* newSession
          expect(yield* toolNames).toContain("notes_read")

          // Allowed by a rule, and bounded: the model gets a preview, the whole note is kept in a managed file.
          const big = yield* settle(session.id, "notes_read", { path: "public/big" }, "call_big")
          expect(big.result.type).toBe("text")
          expect(String(big.result.value).length).toBeLessThan(3_000_000 / 10)
          expect(big.outputPaths?.length).toBe(1)
          expect(fs.statSync(big.outputPaths![0]!).size).toBeGreaterThan(3_000_000)

          // Gated: `private/*` asks; a rejection means the tool body never ran past its assert.
          const asked = yield* Effect.fork(settle(session.id, "notes_read", { path: "private/diary" }, "call_private"))
          const prompt = yield* nextPrompt
          expect(prompt.request.action).toBe("notes")
          expect(prompt.request.resources).toEqual(["private/diary"])
          yield* answer(prompt, "reject", "not that one")
          expect((yield* Fiber.join(asked)).result.type).toBe("error")

          // The plugin's hook, journaled with its name.
          const denied = yield* settle(session.id, "notes_read", { path: "public/id.key" }, "call_key")
          expect(denied.result).toEqual({
            type: "error",
            value: "Denied by hook:notes/tool.before: keys are not notes",
          })
          const journal = yield* DecisionJournal.Service
          const hooks = (yield* journal.query({ kinds: ["hook"] })).flatMap((entry) =>
            entry.kind === "hook" ? [entry.detail.origin] : [],
          )
          expect(hooks).toEqual(["hook:notes/tool.before"])
          expect(runs).toEqual(["public/big"])

          // Closing the plugin withdraws its tool: a call advertised before is stale, the next turn does not list it.
          const turn = yield* Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize([]))
          yield* Scope.close(pluginScope, Exit.void)
          expect(
            (yield* settleWith(turn, session.id, "notes_read", { path: "public/a" }, "call_stale")).result,
          ).toEqual({
            type: "error",
            value: "Stale tool call: notes_read",
          })
          expect(yield* toolNames).not.toContain("notes_read")
          // Its hooks are gone with it.
          expect((yield* Hooks.Service).has("tool.before")).toBe(false)
        }),
    ),
  )

  it.live("a module named by a project's toolgate.json is not imported until a project_program approval", () => {
    let marker = ""
    let module = ""
    return inLocation(
      {
        setup: ({ directory }) => {
          marker = path.join(directory, "imported.txt")
          module = path.join(directory, "plugins", "marker.mjs")
          fs.mkdirSync(path.dirname(module))
          fs.writeFileSync(module, pluginModule(marker, "marker_echo"))
          fs.writeFileSync(path.join(directory, "toolgate.json"), JSON.stringify({ plugins: ["./plugins/marker.mjs"] }))
        },
      },
      () =>
        Effect.gen(function* () {
          const plugins = yield* Plugin.Service
          expect(yield* plugins.plugins()).toEqual([
            {
              module,
              document: expect.stringMatching(/toolgate\.json$/),
              field: "plugins[0]",
              origin: "project",
              state: { _tag: "waiting" },
            },
          ])
          // Opening the project ran nothing: the module's side effect is not on disk, its tool is not there.
          expect(fs.existsSync(marker)).toBe(false)
          expect(yield* toolNames).not.toContain("marker_echo")

          const session = yield* newSession
          // Rejected: still not imported.
          const rejected = yield* Effect.fork(Effect.exit(plugins.approve(module, { sessionID: session.id })))
          const first = yield* nextPrompt
          expect(first.request.action).toBe("project_program")
          expect(first.request.resources).toEqual([module])
          expect(first.request.metadata).toMatchObject({ command: module })
          yield* answer(first, "reject", "not today")
          const exit = yield* Fiber.join(rejected)
          expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toMatchObject({
            _tag: "PermissionV2.CorrectedError",
          })
          expect(fs.existsSync(marker)).toBe(false)
          expect((yield* plugins.plugins())[0]!.state).toEqual({ _tag: "waiting" })

          // Approved once (through the approval protocol every channel speaks): imported and registered.
          const approved = yield* Effect.fork(plugins.approve(module, { sessionID: session.id }))
          yield* answer(yield* nextPrompt, "once")
          yield* Fiber.join(approved)
          expect(fs.readFileSync(marker, "utf8")).toBe("imported")
          expect((yield* plugins.plugins())[0]!.state).toEqual({ _tag: "loaded" })
          expect((yield* settle(session.id, "marker_echo", { text: "hi" })).result).toEqual({
            type: "text",
            value: "module says hi",
          })
        }),
    )
  })

  it.live("a module from the user's configuration directory loads when the Location opens", () => {
    let marker = ""
    return inLocation(
      {
        setup: ({ directory, userConfig }) => {
          marker = path.join(directory, "user-imported.txt")
          fs.writeFileSync(path.join(userConfig, "mine.mjs"), pluginModule(marker, "mine_echo"))
          fs.writeFileSync(path.join(userConfig, "toolgate.json"), JSON.stringify({ plugins: ["./mine.mjs"] }))
        },
      },
      () =>
        Effect.gen(function* () {
          expect(fs.readFileSync(marker, "utf8")).toBe("imported")
          const [status] = yield* (yield* Plugin.Service).plugins()
          expect(status).toMatchObject({ origin: "user", state: { _tag: "loaded" } })
          expect(yield* toolNames).toContain("mine_echo")
        }),
    )
  })

  it.live("a module that cannot be loaded fails the Location closed, naming the file and the field", () => {
    let document = ""
    return Effect.gen(function* () {
      const exit = yield* Effect.exit(
        inLocation(
          {
            setup: ({ userConfig }) => {
              document = path.join(userConfig, "toolgate.json")
              fs.writeFileSync(path.join(userConfig, "not-a-plugin.mjs"), "export default 42\n")
              fs.writeFileSync(document, JSON.stringify({ plugins: ["./missing.mjs", "./not-a-plugin.mjs"] }))
            },
          },
          () => Effect.void,
        ),
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      expect(error).toBeInstanceOf(Plugin.LoadError)
      expect((error as Plugin.LoadError).message).toContain(`${document}: plugins[0]: cannot load the plugin`)
      expect((error as Plugin.LoadError).module).toBe(path.join(path.dirname(document), "missing.mjs"))
    })
  })
})
