/**
 * Pending asks across processes, in rounds: each round a fresh process A holds 25 asks pending and this process
 * (B) saves one approval covering all of them; every one is released without a reply in A, within the round's own
 * deadline of 1 s.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Core, PermissionSaved } from "../src/index.js"
import * as Children from "./support/children.js"
import { tempDir } from "./support/location.js"

const ROUNDS = 10
const ASKS = 25

describe("pending asks across processes, in rounds", () => {
  it.live(`${ROUNDS} rounds of ${ASKS} asks in A, all released by one approval saved in B`, () =>
    Effect.gen(function* () {
      const failures: Array<string> = []
      for (let round = 0; round < ROUNDS; round++) {
        yield* Effect.scoped(
          Effect.gen(function* () {
            const data = yield* tempDir()
            const a = yield* Children.scoped(Children.fixture("pending-ask.ts"), [data, yield* tempDir(), String(ASKS)])
            const asked = JSON.parse(yield* Children.nextLine(a)) as {
              scope: { kind: "project" | "directory"; projectID: string; directory: string }
            }
            const processB = yield* Layer.build(Core.layerProcess({ data }))
            yield* Effect.flatMap(PermissionSaved.Service, (saved) =>
              saved.add({
                projectID: asked.scope.projectID,
                ...(asked.scope.kind === "directory" ? { directory: asked.scope.directory } : {}),
                action: "read",
                resources: ["fault/*"],
              }),
            ).pipe(Effect.provide(processB))
            const line = yield* Children.nextLine(a).pipe(
              Effect.timeoutFail({ duration: "1 second", onTimeout: () => new Error("not released within 1 s") }),
              Effect.catchAll((error) => Effect.succeed(String(error))),
            )
            if (line !== "released") failures.push(`round ${round}: ${line}`)
          }),
        )
      }
      expect(failures).toEqual([])
    }),
  )
})
