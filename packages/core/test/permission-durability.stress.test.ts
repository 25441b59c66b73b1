/**
 * Saved approvals under load from several processes at once (the SIGKILL durability cases are in
 * permission-durability.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Database, Global, PermissionSaved } from "../src/index.js"
import * as Children from "./support/children.js"
import { tempDir } from "./support/location.js"

const script = Children.fixture("save-approvals.ts")

const savedIn = (data: string, projectID: string) =>
  Effect.flatMap(PermissionSaved.Service, (saved) => saved.list({ projectID })).pipe(
    Effect.provide(
      PermissionSaved.layer.pipe(Layer.provideMerge(Database.layer), Layer.provide(Global.layerWith({ data }))),
    ),
  )

describe("saved approvals under concurrent writers", () => {
  it.live(
    "two processes saving 500 approvals each at once both succeed and all 1000 rows exist",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const data = yield* tempDir()
          const a = yield* Children.scoped(script, [data, "proj", "500", "a", "exit"])
          const b = yield* Children.scoped(script, [data, "proj", "500", "b", "exit"])
          const [exitA, exitB] = yield* Effect.all([Children.exited(a), Children.exited(b)], { concurrency: 2 })
          expect(exitA.stderr).not.toContain("SQLITE_BUSY")
          expect(exitB.stderr).not.toContain("SQLITE_BUSY")
          expect([exitA.code, exitB.code]).toEqual([0, 0])
          expect(JSON.parse(yield* Children.nextLine(a))).toEqual({ saved: 500 })
          expect(JSON.parse(yield* Children.nextLine(b))).toEqual({ saved: 500 })
          const rows = yield* savedIn(data, "proj")
          expect(rows).toHaveLength(1000)
          expect(new Set(rows.map((r) => r.resource)).size).toBe(1000)
          expect(new Set(rows.map((r) => r.id)).size).toBe(1000)
        }),
      ),
    180_000,
  )
})
