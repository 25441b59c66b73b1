/**
 * Pending asks across processes: an ask pending in one process is released when another process saves an approval
 * that covers it, without any reply in the first process (its Location re-checks the saved approvals while asks are
 * pending and the change stamp moved; see docs/permissions.md).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Core, PermissionSaved } from "../src/index.js"
import * as Children from "./support/children.js"
import { tempDir } from "./support/location.js"

describe("pending asks across processes", () => {
  it.live(
    "an ask pending in process A is released within 1 s when process B saves a covering approval",
    () =>
      Effect.gen(function* () {
        const data = yield* tempDir()
        const a = yield* Children.scoped(Children.fixture("pending-ask.ts"), [data, yield* tempDir()])
        const asked = JSON.parse(yield* Children.nextLine(a)) as {
          id: string
          scope: { kind: "project" | "directory"; projectID: string; directory: string }
        }
        expect(asked.id).toBe("per_cross")

        // Process B (this one) saves an approval that covers the pending resource, on the same database.
        const processB = yield* Layer.build(Core.layerProcess({ data }))
        yield* Effect.flatMap(PermissionSaved.Service, (saved) =>
          saved.add({
            projectID: asked.scope.projectID,
            ...(asked.scope.kind === "directory" ? { directory: asked.scope.directory } : {}),
            action: "read",
            resources: ["fault/*"],
          }),
        ).pipe(Effect.provide(processB))

        // Event-driven: A's line arrives when it is released; the 1 s is the test's own deadline.
        const line = yield* Children.nextLine(a).pipe(
          Effect.timeoutFail({ duration: "1 second", onTimeout: () => new Error("not released within 1 s") }),
        )
        expect(line).toBe("released")
        expect((yield* Children.exited(a)).code).toBe(0)
      }).pipe(Effect.scoped),
    60_000,
  )
})
