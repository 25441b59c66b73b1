import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Core } from "../src/entry/testing.js"
import { BuiltInTools, Location, PermissionV2, SessionV2, ToolRegistry } from "../src/index.js"

const identity = (sessionID: string) => ({ sessionID, agent: "build", assistantMessageID: "msg_core" })

describe("Core", () => {
  it.live("layerTest wires a complete Location with the twelve built-in tools", () =>
    Effect.gen(function* () {
      const location = yield* Location.Service
      fs.writeFileSync(path.join(location.directory, "hello.txt"), "hello\n")
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      const turn = yield* (yield* ToolRegistry.Service).materialize([])
      expect(turn.definitions.map((definition) => definition.name)).toEqual([...BuiltInTools.names])
      const read = yield* turn.settle({
        ...identity(session.id),
        call: { id: "c1", name: "read", input: { path: "hello.txt" } },
      })
      expect(read.result).toEqual({ type: "text", value: "1: hello\n\n(lines 1-1 shown; end of file)" })
      expect(read.output?.structured).toMatchObject({ content: "hello\n", encoding: "utf8" })
    }).pipe(Effect.provide(Core.layerTest()), Effect.scoped),
  )

  it.live("layerTest answers permission asks with the scripted reply", () =>
    Effect.gen(function* () {
      const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
      const turn = yield* (yield* ToolRegistry.Service).materialize([])
      const written = yield* turn.settle({
        ...identity(session.id),
        call: { id: "c2", name: "write", input: { path: "notes.txt", content: "x" } },
      })
      expect(written.result).toEqual({
        type: "error",
        value: "The user rejected permission to use this specific tool call with the following feedback: not here",
      })
      expect(yield* (yield* PermissionV2.Service).list()).toEqual([])
    }).pipe(
      Effect.provide(
        Core.layerTest({
          config: { permissions: [{ action: "edit", resource: "*", effect: "ask" }] },
          permission: () => ({ reply: "reject", message: "not here" }),
        }),
      ),
      Effect.scoped,
    ),
  )
})
