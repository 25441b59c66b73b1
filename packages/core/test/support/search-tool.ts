/**
 * Shared harness of the glob and grep tool tests: the engine matrix (the ripgrep variant is skipped with a printed
 * reason when `rg` is absent), temp-directory trees, and one settle through the real registry with the fake
 * permission service. `realLocation` is the whole Location (real PermissionV2, built-in agents, SQLite) with a
 * chosen engine, whose permission asks are recorded and answered by the test.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { Context, Effect, Layer, Queue } from "effect"
import {
  ApplicationTools,
  type Config,
  Core,
  EventV2,
  type Location,
  LocationMutation,
  PermissionV2,
  Search,
  SessionV2,
  type Tools,
  ToolOutputStore,
  ToolRegistry,
} from "../../src/index.js"
import { locationLayer, tempDir } from "./location.js"
import * as FakePermission from "./permission.js"

/** True when `rg` is on PATH. */
export const hasRg = spawnSync("rg", ["--version"]).status === 0

/** Both engines; the ripgrep one is marked `skip` (with a printed reason) when `rg` is absent. */
export const engines = (suite: string) => {
  if (!hasRg) console.warn(`${suite}: \`rg\` is not on PATH; the ripgrep engine variant is skipped`)
  return [
    { engine: "node", search: Search.layerNode, skip: false },
    { engine: "ripgrep", search: Search.layerRipgrep("rg"), skip: !hasRg },
  ] as const
}

/** Writes `files` (relative path → content) under `root`, creating directories. */
export const write = (root: string, files: Record<string, string>) => {
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), content)
  }
}

/** A settle helper and a Location builder for the tool registered by `toolLayer` as `name`. */
export const searchTool = (
  name: string,
  toolLayer: Layer.Layer<
    never,
    never,
    Tools.Service | PermissionV2.Service | Location.Service | LocationMutation.Service | Search.Service
  >,
) => {
  const harness = (directory: string, search: Layer.Layer<Search.Service>) =>
    toolLayer.pipe(
      Layer.provideMerge(ToolRegistry.layer),
      Layer.provideMerge(
        Layer.mergeAll(
          ApplicationTools.layer,
          ToolOutputStore.layerPassthrough,
          FakePermission.layer,
          LocationMutation.layer.pipe(Layer.provideMerge(locationLayer(directory)), Layer.provide(NodeContext.layer)),
          search,
        ),
      ),
    )

  /** Materializes with no permissions and settles one call. */
  const settle = (input: Record<string, unknown>) =>
    Effect.gen(function* () {
      const turn = yield* (yield* ToolRegistry.Service).materialize()
      return yield* turn.settle({
        sessionID: "ses_tool",
        agent: "build",
        assistantMessageID: "msg_tool_test",
        call: { id: `call-${name}`, name, input },
      })
    })

  /** Builds a Location in a fresh temp dir with `files`, then runs `body` against the tool. */
  const inLocation = <A, E2, R>(
    search: Layer.Layer<Search.Service>,
    files: Record<string, string>,
    body: (directory: string) => Effect.Effect<A, E2, R>,
  ) =>
    Effect.gen(function* () {
      const directory = yield* tempDir()
      write(directory, files)
      return yield* body(directory).pipe(Effect.provide(harness(directory, search)))
    })

  return { settle, inLocation }
}

/** How the test answers one permission ask. */
export type Answer = (request: PermissionV2.Request) => {
  readonly reply: PermissionV2.Reply
  readonly message?: string
}

/** Rejects with a message, so the call fails with the feedback and the run goes on. */
export const rejectWithMessage: Answer = () => ({ reply: "reject", message: "no" })

/** The asks a `realLocation` received, and the current answer (replace `answer` to change it). */
export interface AskLog {
  readonly requests: Array<PermissionV2.Request>
  answer: Answer
}

/** The ask log of a `realLocation`. */
export class Asks extends Context.Tag("test/SearchAsks")<Asks, AskLog>() {}

const responder = Layer.scoped(
  Asks,
  Effect.gen(function* () {
    const events = yield* EventV2.Service
    const permission = yield* PermissionV2.Service
    const log: AskLog = { requests: [], answer: rejectWithMessage }
    const queue = yield* events.queue(PermissionV2.Event.Asked)
    const answer = (envelope: EventV2.EnvelopeOf<typeof PermissionV2.Event.Asked>) => {
      const request = envelope.data
      log.requests.push(request)
      return Effect.ignore(permission.reply({ requestID: request.id, ...log.answer(request) }))
    }
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(queue), answer)))
    return log
  }),
)

/**
 * A complete Location on `directory` (configuration only from `config`) over the given engine, with an in-memory
 * database and a temp data directory, and a responder that records every ask and rejects it with a message unless
 * the test changes `Asks.answer`.
 */
export const realLocation = (options: {
  readonly directory: string
  readonly search: Layer.Layer<Search.Service>
  readonly config?: Config.Info
}) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const data = yield* tempDir("toolgate-data-")
      const location = Core.layerLocation({
        directory: options.directory,
        discover: false,
        ...(options.config === undefined ? {} : { config: options.config }),
      })
      return responder.pipe(
        Layer.provideMerge(location),
        Layer.provideMerge(options.search),
        Layer.provideMerge(Core.layerProcess({ data, memoryDatabase: true })),
      )
    }),
  )

/** Settles one call of `name` through a fresh materialization, in a new `build` session. */
export const settleReal = (name: string, input: unknown) =>
  Effect.gen(function* () {
    const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
    const turn = yield* (yield* ToolRegistry.Service).materialize([])
    return yield* turn.settle({
      sessionID: session.id,
      agent: "build",
      assistantMessageID: "msg_trust",
      call: { id: `call_${name}`, name, input },
    })
  })
