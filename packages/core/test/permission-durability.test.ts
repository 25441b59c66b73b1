import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Tracer } from "effect"
import { Database, Global, PermissionSaved } from "../src/index.js"
import * as Children from "./support/children.js"
import { tempDir } from "./support/location.js"

const script = Children.fixture("save-approvals.ts")

const processLayer = (data: string) =>
  PermissionSaved.layer.pipe(Layer.provideMerge(Database.layer), Layer.provide(Global.layerWith({ data })))

const savedIn = (data: string, projectID: string) =>
  Effect.flatMap(PermissionSaved.Service, (saved) => saved.list({ projectID })).pipe(Effect.provide(processLayer(data)))

/** Every span started while `effect` runs, through the tracer in force (the spans keep their attributes). */
const recordingSpans = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const spans: Array<Tracer.Span> = []
    const inner = yield* Effect.tracer
    const tracer = Tracer.make({
      span: (...args) => {
        const span = inner.span(...args)
        spans.push(span)
        return span
      },
      context: inner.context,
    })
    const value = yield* Effect.withTracer(effect, tracer)
    return { value, spans }
  })

const ancestors = (span: Tracer.Span): Array<string> => {
  const names: Array<string> = []
  let parent = span.parent
  while (Option.isSome(parent) && parent.value._tag === "Span") {
    names.push(parent.value.name)
    parent = parent.value.parent
  }
  return names
}

describe("saved approvals are durable across processes", () => {
  it.live(
    "a row saved by a process killed with SIGKILL is found by a fresh connection",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const data = yield* tempDir()
          const child = yield* Children.scoped(script, [data, "proj", "1", "approved", "hold"])
          const printed = JSON.parse(yield* Children.nextLine(child)) as { rows: Array<PermissionSaved.Info> }
          expect(printed.rows).toHaveLength(1)
          child.process.kill("SIGKILL")
          expect((yield* Children.exited(child)).signal).toBe("SIGKILL")
          const rows = yield* savedIn(data, "proj")
          expect(rows).toEqual(printed.rows)
          expect(rows[0]).toMatchObject({ projectID: "proj", action: "bash", resource: "approved-0" })
        }),
      ),
    120_000,
  )

  it.live(
    "a revoke that has returned survives a SIGKILL right after it: the row is gone, the others stay",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const data = yield* tempDir()
          const child = yield* Children.scoped(script, [data, "proj", "3", "approved", "hold"])
          const printed = JSON.parse(yield* Children.nextLine(child)) as { rows: Array<PermissionSaved.Info> }
          expect(printed.rows).toHaveLength(3)
          const revoked = printed.rows.find((row) => row.resource === "approved-1")!
          child.send(`revoke ${revoked.id}`)
          expect(JSON.parse(yield* Children.nextLine(child))).toEqual({ revoked: revoked.id })
          child.process.kill("SIGKILL")
          expect((yield* Children.exited(child)).signal).toBe("SIGKILL")
          const rows = yield* savedIn(data, "proj")
          expect(rows.map((row) => row.resource).sort()).toEqual(["approved-0", "approved-2"])
          expect(rows.some((row) => row.id === revoked.id)).toBe(false)
        }),
      ),
    120_000,
  )

  it.live(
    "a revoke commits with synchronous = FULL on the connection that ran the DELETE",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const saved = yield* PermissionSaved.Service
          const sql = yield* SqlClient.SqlClient
          yield* sql`INSERT INTO project (id, worktree) VALUES ('proj', '/')`
          yield* saved.add({ projectID: "proj", action: "bash", resources: ["a", "b"] })
          const [row] = (yield* saved.list({ projectID: "proj" })).filter((info) => info.resource === "a")
          const level = () => Effect.map(sql<{ synchronous: number }>`PRAGMA synchronous`, ([r]) => r?.synchronous)
          // Outside a durable commit the connection runs NORMAL (1).
          expect(yield* level()).toBe(1)
          const { spans } = yield* recordingSpans(saved.remove(row!.id))
          const durable = spans.filter((span) => span.name === "Database.durably")
          expect(durable).toHaveLength(1)
          // Read back inside the transaction that deleted the row, on the same connection.
          expect(durable[0]!.attributes.get("db.synchronous")).toBe(Database.DURABLE_SYNCHRONOUS)
          const deletes = spans.filter((span) =>
            String(span.attributes.get("db.query.text") ?? "").startsWith("DELETE FROM permission"),
          )
          expect(deletes).toHaveLength(1)
          expect(ancestors(deletes[0]!)).toContain("Database.durably")
          expect(ancestors(deletes[0]!)).toContain("PermissionSaved.remove")
          expect(yield* level()).toBe(1)
          expect((yield* saved.list({ projectID: "proj" })).map((info) => info.resource)).toEqual(["b"])
        }).pipe(Effect.provide(Layer.unwrapScoped(Effect.map(tempDir(), processLayer)))),
      ),
    60_000,
  )
})
