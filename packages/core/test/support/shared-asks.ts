/**
 * What the tests of pending asks across hosts share (permission-shared.test.ts, permission-shared-retention.test.ts):
 * a host is a Core stack on its own pool; the table is read raw, a claim is written raw as another host's
 * `Approvals.answer` would write it.
 */
import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Core, PermissionV2, SessionV2 } from "../../src/index.js"
import { tempDir } from "./location.js"

export interface Row {
  readonly id: string
  readonly owner_id: string
  readonly status: string
  readonly answer: string | null
  readonly digest: string
  readonly session_id: string
}

export const config = (askTimeout?: number) => ({
  permissions: [{ action: "read", resource: "fault/*", effect: "ask" as const }],
  ...(askTimeout === undefined ? {} : { permission: { ask_timeout: askTimeout } }),
})

/** One stack (a host): a Location on its own pool. */
export const host = (url: string | undefined, askTimeout?: number, at?: string) =>
  Effect.gen(function* () {
    const directory = at ?? (yield* tempDir())
    const data = yield* tempDir()
    return yield* Layer.build(
      Core.layer({
        directory,
        data,
        discover: false,
        config: config(askTimeout),
        ...(url === undefined ? { memoryDatabase: true } : { databaseUrl: url }),
      }),
    )
  })

export const rows = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<Row>`SELECT id, owner_id, status, answer, digest, session_id FROM pending_ask ORDER BY id`,
)

/** Re-reads the table (each read a round trip, no sleeping) until `until` holds; dies after 2000 reads. */
export const waitFor = (until: (rows: ReadonlyArray<Row>) => boolean) =>
  Effect.gen(function* () {
    let last: ReadonlyArray<Row> = []
    for (let i = 0; i < 2000; i++) {
      last = yield* rows
      if (until(last)) return last
      yield* Effect.yieldNow()
    }
    return yield* Effect.dieMessage(`the table never got there: ${JSON.stringify(last)}`)
  })

export const statusOf = (all: ReadonlyArray<Row>, id: string) => all.find((row) => row.id === id)?.status

/** What another host's `Approvals.answer` writes: the claim, then the owner's wake-up (unless `notify` is false). */
export const claim = (id: string, answer: unknown, notify = true) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const won = yield* sql<{ owner_id: string }>`UPDATE pending_ask SET status = 'claimed',
            answer = ${JSON.stringify(answer)}, time_updated = 1 WHERE id = ${id} AND status = 'pending' RETURNING owner_id`
        expect(won.length).toBe(1)
        if (notify) yield* sql`SELECT pg_notify('toolgate_answer', ${won[0]!.owner_id})`
      }),
    ),
  )

export const asserting = (sessionID: string, id: string, file: string) =>
  Effect.flatMap(PermissionV2.Service, (permission) =>
    Effect.fork(permission.assert({ id, sessionID, agent: "build", action: "read", resources: [`fault/${file}`] })),
  )

export const session = Effect.flatMap(SessionV2.Service, (sessions) => sessions.create({ agent: "build" }))
