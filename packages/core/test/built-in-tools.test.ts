import { readFileSync } from "node:fs"
import { FetchHttpClient, type FileSystem, type HttpClient, type Path } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import {
  AppProcess,
  ApplicationTools,
  BuiltInTools,
  Config,
  Database,
  EventV2,
  FileMutation,
  type Location,
  type PermissionV2,
  Global,
  Image,
  ProtectedPath,
  LocationMutation,
  QuestionV2,
  Search,
  SessionTodo,
  SkillV2,
  ToolOutputStore,
  ToolRegistry,
  type Tools,
  WebSearchTool,
} from "../src/index.js"
import { Sandbox } from "../src/entry/sandbox.js"
import { locationLayer, tempDir } from "./support/location.js"
import * as Permission from "./support/permission.js"

const expected = [
  "apply_patch",
  "bash",
  "edit",
  "glob",
  "grep",
  "question",
  "read",
  "skill",
  "todowrite",
  "webfetch",
  "websearch",
  "write",
]

/** The shared services the caller supplies; checked at compile time against the layer's requirements. */
type Supplied =
  | Tools.Service
  | PermissionV2.Service
  | LocationMutation.Service
  | FileMutation.Service
  | ProtectedPath.Service
  | Config.Service
  | Location.Service
  | QuestionV2.Service
  | SkillV2.Service
  | SessionTodo.Service
  | Image.Service
  | Search.Service
  | AppProcess.Service
  | Sandbox.Service
  | ToolOutputStore.Service
  | HttpClient.HttpClient
  | WebSearchTool.Config
  | FileSystem.FileSystem
  | Path.Path
const requirementsAreSupplied: [Layer.Layer.Context<typeof BuiltInTools.layer>] extends [Supplied] ? true : false = true

/** Every shared Location service the built-ins need, over a real temp Location. */
const services = (root: string) => {
  const platform = Layer.mergeAll(
    NodeContext.layer,
    locationLayer(root),
    Global.layerWith({ config: `${root}/.no-global` }),
  )
  const bus = EventV2.layer.pipe(Layer.provide(platform))
  const registry = ToolRegistry.layer.pipe(
    Layer.provide(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
  )
  return Layer.mergeAll(
    registry,
    Permission.layer,
    LocationMutation.layer,
    FileMutation.layer,
    ProtectedPath.layer,
    Config.layerEmpty,
    QuestionV2.layer.pipe(Layer.provide(bus)),
    SkillV2.layer,
    SessionTodo.layer.pipe(Layer.provide(Layer.merge(bus, Database.layerMemory))),
    Image.layerWithoutAdapter,
    Search.layer,
    AppProcess.layer,
    Sandbox.layerNone,
    ToolOutputStore.layerPassthrough,
    FetchHttpClient.layer,
    WebSearchTool.layerConfig({}),
  ).pipe(Layer.provideMerge(platform))
}

const names = (rules?: ReadonlyArray<ToolRegistry.VisibilityRule>) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize(rules)).pipe(
    Effect.map((turn) => turn.definitions.map((definition) => definition.name)),
  )

const withBuiltIns = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.flatMap(tempDir("toolgate-builtins-"), (root) =>
    Effect.provide(body, BuiltInTools.layer.pipe(Layer.provideMerge(services(root)))),
  )

describe("BuiltInTools", () => {
  it.scoped("registers the 12 built-in tools in the spec order", () =>
    withBuiltIns(
      Effect.gen(function* () {
        expect(requirementsAreSupplied).toBe(true)
        expect(BuiltInTools.names).toEqual(expected)
        expect(yield* names()).toEqual(expected)
        expect(yield* names([])).toEqual(expected)
        // No list, task, lsp, plan_exit, codesearch, multiedit or batch.
        for (const absent of ["list", "task", "lsp", "plan_exit", "codesearch", "multiedit", "batch"]) {
          expect(expected).not.toContain(absent)
        }
      }),
    ),
  )

  it("keeps the still-to-port list as a comment, without the ported edit fuzzy parity", () => {
    const source = readFileSync(new URL("../src/builtin/built-in-tools.ts", import.meta.url), "utf8")
    expect(source).toContain(
      "task, LSP, repo_clone, repo_overview, plan_exit, and code mode. Keep MCP and plugin transforms separate from this static built-in list.",
    )
    expect(source.toLowerCase()).not.toContain("edit fuzzy parity")
  })

  it.scoped("deny everything then allow read leaves only read", () =>
    withBuiltIns(
      Effect.gen(function* () {
        expect(
          yield* names([
            { action: "*", resource: "*", effect: "deny" },
            { action: "read", resource: "*", effect: "allow" },
          ]),
        ).toEqual(["read"])
      }),
    ),
  )

  it.scoped("denying edit hides edit, write and apply_patch (shared edit action)", () =>
    withBuiltIns(
      Effect.gen(function* () {
        expect(yield* names([{ action: "edit", resource: "*", effect: "deny" }])).toEqual(
          expected.filter((name) => !["edit", "write", "apply_patch"].includes(name)),
        )
        // A resource-specific deny is not a whole-tool deny.
        expect(yield* names([{ action: "edit", resource: "*.env", effect: "deny" }])).toEqual(expected)
        expect(yield* names([{ action: "bash", resource: "*", effect: "deny" }])).toEqual(
          expected.filter((name) => name !== "bash"),
        )
      }),
    ),
  )

  it.scoped("the registrations live exactly as long as the built-in layer's scope", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-builtins-scope-")
      const shared = yield* Layer.build(services(root))
      yield* Effect.gen(function* () {
        const scope = yield* Scope.make()
        yield* Layer.buildWithScope(BuiltInTools.layer, scope)
        expect(yield* names()).toEqual(expected)
        yield* Scope.close(scope, Exit.void)
        expect(yield* names()).toEqual([])
      }).pipe(Effect.provide(shared))
    }),
  )

  it.scoped("a composed tool settles through the registry (bash, real shell)", () =>
    withBuiltIns(
      Effect.gen(function* () {
        const turn = yield* Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize())
        const settlement = yield* turn.settle({
          sessionID: "ses_tool_test",
          agent: "build",
          assistantMessageID: "msg_tool_test",
          call: { id: "call-bash", name: "bash", input: { command: "printf composed" } },
        })
        expect(settlement.output?.content).toEqual([
          { type: "text", text: "composed" },
          { type: "text", text: "Command exited with code 0." },
        ])
        expect(yield* Permission.actions).toEqual(["bash"])
      }),
    ),
  )
})
