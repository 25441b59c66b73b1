/**
 * Shared harness of the glob and grep tool tests: the engine matrix (the ripgrep variant is skipped with a printed
 * reason when `rg` is absent), temp-directory trees, and one settle through the real registry with the fake
 * permission service.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, Layer } from "effect"
import {
  ApplicationTools,
  type Location,
  type PermissionV2,
  Search,
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
  toolLayer: Layer.Layer<never, never, Tools.Service | PermissionV2.Service | Location.Service | Search.Service>,
) => {
  const harness = (directory: string, search: Layer.Layer<Search.Service>) =>
    toolLayer.pipe(
      Layer.provideMerge(ToolRegistry.layer),
      Layer.provideMerge(
        Layer.mergeAll(
          ApplicationTools.layer,
          ToolOutputStore.layerPassthrough,
          FakePermission.layer,
          locationLayer(directory),
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
