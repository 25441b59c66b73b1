import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, FastCheck, Layer, Option, Scope, TestClock } from "effect"
import { Config, Core, Database, DecisionJournal, Location, type PermissionExplain } from "../src/index.js"

const temp = () => fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-journal-"))
const onFile = (file: string) => DecisionJournal.layer.pipe(Layer.provideMerge(Database.layerFile(file)))
const fresh = () => onFile(path.join(temp(), "toolgate.db"))

const evaluated = (sessionID: string, resource: string): DecisionJournal.Draft => ({
  kind: "evaluated",
  projectID: "p1",
  sessionID,
  action: "read",
  resources: [resource],
  detail: {
    agent: "build",
    effect: "allow",
    decisions: [
      {
        resource,
        effect: "allow",
        rule: { action: "read", resource: "*", effect: "allow" },
        origin: { type: "config", path: "/repo/toolgate.json", index: 0 },
      },
    ],
  },
})

const answered = (sessionID: string, requestID: string): DecisionJournal.Draft => ({
  kind: "answered",
  projectID: "p1",
  sessionID,
  requestID,
  action: "edit",
  resources: ["src/a.ts"],
  detail: {
    choice: "always:exact",
    lifetime: "always",
    scope: "exact",
    channel: "http",
    by: "alice",
    saved: ["src/a.ts"],
    where: { projectID: "p1", directory: "" },
    ttlMillis: 60_000,
    until: 60_000,
  },
})

/** Rows on disk, read past the journal (which would write its buffer first). */
const rowsOnDisk = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ n: number }>`SELECT COUNT(*) AS n FROM decision`, ([row]) => Number(row!.n)),
)

/** Lets forked fibers run until `done` holds (at most 1000 turns of the scheduler). */
const until = <E, R>(done: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1000; i++) {
      if (yield* done) return
      yield* Effect.yieldNow()
    }
    throw new Error("condition never held")
  })

describe("DecisionJournal", () => {
  it.effect("append and query: every kind reads back as written, oldest first, with id and time", () =>
    Effect.gen(function* () {
      const journal = yield* DecisionJournal.Service
      yield* TestClock.adjust(1000)
      const drafts: ReadonlyArray<DecisionJournal.Draft> = [
        evaluated("s1", "/repo/a"),
        {
          kind: "asked",
          projectID: "p1",
          sessionID: "s1",
          requestID: "per_1",
          action: "edit",
          resources: ["src/a.ts"],
          detail: {
            digest: "d".repeat(64),
            save: ["*"],
            choices: ["once", "reject"],
            tool: { name: "edit", callID: "c1" },
          },
        },
        answered("s1", "per_1"),
        {
          kind: "expired",
          projectID: "p1",
          sessionID: "s1",
          requestID: "per_2",
          action: "bash",
          resources: ["ls"],
          detail: { timeoutMillis: 500 },
        },
        {
          kind: "auto-resolved",
          projectID: "p1",
          sessionID: "s2",
          requestID: "per_3",
          action: "edit",
          resources: ["src/a.ts"],
          detail: {
            cause: "per_1",
            decisions: [
              { resource: "src/a.ts", effect: "allow", origin: { type: "saved", id: "psv_1", timeCreated: 1000 } },
            ],
          },
        },
        {
          kind: "cascaded",
          projectID: "p1",
          sessionID: "s1",
          requestID: "per_4",
          action: "bash",
          resources: ["rm x"],
          detail: { cause: "per_9", choice: "reject" },
        },
        {
          kind: "revoked",
          projectID: "p1",
          action: "edit",
          resources: ["src/a.ts"],
          detail: { savedID: "psv_1", directory: "", channel: "cli" },
        },
      ]
      yield* journal.append(drafts)
      const entries = yield* journal.query()
      expect(entries.map(({ id: _, time: __, ...rest }) => rest)).toEqual(drafts)
      for (const entry of entries) {
        expect(entry.id).toMatch(/^dec_[0-9a-f]{12}[0-9A-Za-z]{14}$/)
        expect(entry.time).toBe(1000)
      }
      expect(new Set(entries.map((e) => e.id)).size).toBe(drafts.length)
      // A revoke has no session or request: the keys are absent, not undefined.
      expect(Object.keys(entries.at(-1)!).sort()).toEqual([
        "action",
        "detail",
        "id",
        "kind",
        "projectID",
        "resources",
        "time",
      ])
    }).pipe(Effect.provide(fresh())),
  )

  it.effect("the query narrows by project, session, request, kind and time; limit keeps the newest, oldest first", () =>
    Effect.gen(function* () {
      const journal = yield* DecisionJournal.Service
      for (let i = 0; i < 6; i++) {
        yield* journal.append([evaluated(i % 2 === 0 ? "even" : "odd", `/f${i}`)])
        yield* TestClock.adjust(10)
      }
      yield* journal.append([{ ...answered("even", "per_x"), projectID: "p2" }])
      const names = (entries: ReadonlyArray<DecisionJournal.Entry>) => entries.map((e) => e.resources[0])
      expect(names(yield* journal.query({ sessionID: "even" }))).toEqual(["/f0", "/f2", "/f4", "src/a.ts"])
      expect(names(yield* journal.query({ sessionID: "even", projectID: "p1" }))).toEqual(["/f0", "/f2", "/f4"])
      expect(names(yield* journal.query({ since: 30 }))).toEqual(["/f3", "/f4", "/f5", "src/a.ts"])
      expect(names(yield* journal.query({ kinds: ["answered"] }))).toEqual(["src/a.ts"])
      expect(names(yield* journal.query({ kinds: [] }))).toEqual([])
      expect(names(yield* journal.query({ requestID: "per_x" }))).toEqual(["src/a.ts"])
      expect(names(yield* journal.query({ limit: 2 }))).toEqual(["/f5", "src/a.ts"])
      expect(names(yield* journal.query({ sessionID: "odd", since: 10, limit: 1 }))).toEqual(["/f5"])
      expect(yield* journal.query({ limit: 0 })).toEqual([])
    }).pipe(Effect.provide(fresh())),
  )

  it.effect("record buffers: nothing is written until the interval, a batch, a query, an append or close", () =>
    Effect.gen(function* () {
      const journal = yield* DecisionJournal.Service
      let built = 0
      yield* journal.record(evaluated("s", "/a"))
      yield* journal.record(() => {
        built++
        return evaluated("s", "/b")
      })
      expect(yield* rowsOnDisk).toBe(0)
      // The function is called when the batch is written, not when it is recorded.
      expect(built).toBe(0)
      yield* TestClock.adjust(DecisionJournal.FLUSH_INTERVAL_MS)
      yield* until(Effect.map(rowsOnDisk, (n) => n === 2))
      expect(built).toBe(1)
      // An append writes what is buffered in its own transaction, before its entries.
      yield* TestClock.adjust(5)
      yield* journal.record(evaluated("s", "/c"))
      yield* journal.append([answered("s", "per_1")])
      expect(yield* rowsOnDisk).toBe(4)
      const entries = yield* journal.query({ sessionID: "s" })
      expect(entries.map((e) => e.kind)).toEqual(["evaluated", "evaluated", "evaluated", "answered"])
      // Recorded entries keep the time they were recorded at.
      expect(entries.map((e) => e.time)).toEqual([0, 0, 1005, 1005])
    }).pipe(Effect.provide(fresh())),
  )

  it.effect("FLUSH_BATCH recorded entries are written without waiting for the interval", () =>
    Effect.gen(function* () {
      const journal = yield* DecisionJournal.Service
      for (let i = 0; i < DecisionJournal.FLUSH_BATCH; i++) yield* journal.record(evaluated("s", `/f${i}`))
      yield* until(Effect.map(rowsOnDisk, (n) => n === DecisionJournal.FLUSH_BATCH))
    }).pipe(Effect.provide(fresh())),
  )

  it.effect("closing the layer writes the buffer; a new layer on the file reads it back", () =>
    Effect.gen(function* () {
      const file = path.join(temp(), "toolgate.db")
      const scope = yield* Scope.make()
      const first = yield* Layer.buildWithScope(onFile(file), scope)
      const journal = Option.getOrThrow(
        Option.fromNullable(first.unsafeMap.get(DecisionJournal.Service.key)),
      ) as DecisionJournal.Interface
      yield* journal.record(evaluated("s", "/a"))
      yield* journal.record(evaluated("s", "/b"))
      yield* Scope.close(scope, Exit.void)
      const entries = yield* Effect.flatMap(DecisionJournal.Service, (again) => again.query()).pipe(
        Effect.provide(onFile(file)),
      )
      expect(entries.map((e) => e.resources[0])).toEqual(["/a", "/b"])
    }),
  )

  it.effect("appendInTransaction commits and rolls back with the change it records", () =>
    Effect.gen(function* () {
      const journal = yield* DecisionJournal.Service
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE change (name TEXT NOT NULL)`
      const change = (name: string) => sql`INSERT INTO change (name) VALUES (${name})`
      const changes = Effect.map(sql<{ name: string }>`SELECT name FROM change`, (rows) => rows.map((r) => r.name))

      yield* journal.record(evaluated("s", "/buffered"))
      yield* journal.transaction(
        Effect.zipRight(change("saved"), journal.appendInTransaction([answered("s", "per_1")])),
      )
      expect(yield* changes).toEqual(["saved"])
      expect((yield* journal.query()).map((e) => e.kind)).toEqual(["evaluated", "answered"])

      // A change that fails after its entry was appended: neither stays, and the buffer is kept for later.
      yield* journal.record(evaluated("s", "/kept"))
      const failed = yield* journal
        .transaction(
          Effect.gen(function* () {
            yield* change("lost")
            yield* journal.appendInTransaction([answered("s", "per_2")])
            return yield* Effect.fail("save refused" as const)
          }),
        )
        .pipe(Effect.flip)
      expect(failed).toBe("save refused")
      expect(yield* changes).toEqual(["saved"])
      expect(yield* rowsOnDisk).toBe(2)
      expect((yield* journal.query()).map((e) => e.resources[0])).toEqual(["/buffered", "src/a.ts", "/kept"])

      // Nested in a caller's own transaction it is a savepoint: the caller's rollback takes the entry with it.
      const outer = yield* sql
        .withTransaction(
          Effect.zipRight(
            journal.transaction(
              Effect.zipRight(change("nested"), journal.appendInTransaction([answered("s", "per_3")])),
            ),
            Effect.fail("outer failed" as const),
          ),
        )
        .pipe(Effect.flip)
      expect(outer).toBe("outer failed")
      expect(yield* changes).toEqual(["saved"])
      expect(yield* journal.query({ requestID: "per_3" })).toEqual([])
    }).pipe(Effect.provide(fresh())),
  )

  it.effect("appendInTransaction outside a transaction is a defect and writes nothing", () =>
    Effect.gen(function* () {
      const journal = yield* DecisionJournal.Service
      const unsafe = journal.appendInTransaction([answered("s", "per_1")]) as Effect.Effect<void, unknown>
      const exit = yield* Effect.exit(unsafe)
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      expect(yield* rowsOnDisk).toBe(0)
    }).pipe(Effect.provide(fresh())),
  )

  it.effect("a draft whose detail does not fit its kind: a defect for append, left out of a batch", () =>
    Effect.gen(function* () {
      const journal = yield* DecisionJournal.Service
      const wrong = { ...answered("s", "per_1"), kind: "expired" } as unknown as DecisionJournal.Draft
      const exit = yield* Effect.exit(journal.append([wrong]))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      yield* journal.record(wrong)
      yield* journal.record(() => {
        throw new Error("detail could not be built")
      })
      yield* journal.record(evaluated("s", "/fine"))
      expect((yield* journal.query()).map((e) => e.resources[0])).toEqual(["/fine"])
    }).pipe(Effect.provide(fresh())),
  )

  it.effect("a failed write keeps the buffer and reports a typed QueryError; the next write takes it", () =>
    Effect.gen(function* () {
      const journal = yield* DecisionJournal.Service
      const sql = yield* SqlClient.SqlClient
      yield* journal.record(evaluated("s", "/a"))
      // Every insert aborts, as on a full disk.
      yield* sql`CREATE TRIGGER decision_refuse BEFORE INSERT ON decision BEGIN SELECT RAISE(ABORT, 'no space left'); END`
      const error = yield* Effect.flip(journal.flush)
      expect(error._tag).toBe("Database.QueryError")
      expect(error.message).toContain("no space left")
      const appended = yield* Effect.flip(journal.append([answered("s", "per_1")]))
      expect(appended._tag).toBe("Database.QueryError")
      expect(yield* rowsOnDisk).toBe(0)
      yield* sql`DROP TRIGGER decision_refuse`
      yield* journal.flush
      expect((yield* journal.query()).map((e) => e.kind)).toEqual(["evaluated"])
    }).pipe(Effect.provide(fresh())),
  )

  it.effect("prune: older than a time, all but the newest N, per project or everywhere", () =>
    Effect.gen(function* () {
      const journal = yield* DecisionJournal.Service
      for (let i = 0; i < 5; i++) {
        yield* journal.append([evaluated("s", `/p1-${i}`), { ...evaluated("s", `/p2-${i}`), projectID: "p2" }])
        yield* TestClock.adjust(100)
      }
      const names = Effect.map(journal.query(), (entries) => entries.map((e) => e.resources[0]))
      expect(yield* journal.prune({ projectID: "p1", olderThan: 200 })).toBe(2)
      expect(yield* names).toEqual(["/p2-0", "/p2-1", "/p1-2", "/p2-2", "/p1-3", "/p2-3", "/p1-4", "/p2-4"])
      expect(yield* journal.prune({ projectID: "p2", keep: 1 })).toBe(4)
      expect(yield* names).toEqual(["/p1-2", "/p1-3", "/p1-4", "/p2-4"])
      expect(yield* journal.prune({ keep: 2 })).toBe(2)
      expect(yield* names).toEqual(["/p1-4", "/p2-4"])
      expect(yield* journal.prune({ keep: 5, olderThan: 0 })).toBe(0)
      expect(yield* journal.prune({ olderThan: 10_000 })).toBe(2)
      expect(yield* names).toEqual([])
    }).pipe(Effect.provide(fresh())),
  )

  it.effect("query agrees with filtering the appended entries in memory", () =>
    Effect.gen(function* () {
      const journal = yield* DecisionJournal.Service
      const sql = yield* SqlClient.SqlClient
      const draft = FastCheck.record({
        session: FastCheck.constantFrom("a", "b", "c"),
        kind: FastCheck.constantFrom("evaluated" as const, "answered" as const),
        advance: FastCheck.integer({ min: 0, max: 3 }),
      })
      const query = FastCheck.record(
        {
          sessionID: FastCheck.constantFrom("a", "b", "c"),
          since: FastCheck.integer({ min: 0, max: 40 }),
          kinds: FastCheck.subarray(["evaluated", "answered"] as const),
          limit: FastCheck.integer({ min: 0, max: 12 }),
        },
        { requiredKeys: [] },
      )
      const samples = FastCheck.sample(FastCheck.tuple(FastCheck.array(draft, { maxLength: 20 }), query), 40)
      for (const [drafts, q] of samples) {
        yield* sql`DELETE FROM decision`
        const start = (yield* TestClock.currentTimeMillis) as number
        for (const d of drafts) {
          yield* TestClock.adjust(d.advance)
          yield* journal.append([d.kind === "evaluated" ? evaluated(d.session, "/x") : answered(d.session, "per")])
        }
        const all = yield* journal.query()
        const since = q.since === undefined ? undefined : start + q.since
        const expected = all.filter(
          (e) =>
            (q.sessionID === undefined || e.sessionID === q.sessionID) &&
            (since === undefined || e.time >= since) &&
            (q.kinds === undefined || q.kinds.includes(e.kind as "evaluated")),
        )
        const got = yield* journal.query({ ...q, since })
        expect(got).toEqual(q.limit === undefined ? expected : expected.slice(Math.max(0, expected.length - q.limit)))
      }
    }).pipe(Effect.provide(fresh())),
  )

  it("Origin has the shape of PermissionExplain.Origin", () => {
    const origin = (value: PermissionExplain.Origin): DecisionJournal.Origin => value
    expect(origin({ type: "agent", path: undefined, agent: "build", index: 2, file: false }).type).toBe("agent")
  })

  it.scoped(
    "retention: a Location prunes its project's entries by retention_days and max_entries, on open and hourly",
    () =>
      Effect.gen(function* () {
        const DAY = 86_400_000
        const directory = temp()
        const processContext = yield* Layer.build(fresh())
        const journal = Context.get(processContext, DecisionJournal.Service)
        const open = (info: Config.Info) =>
          Layer.build(
            DecisionJournal.layerRetention.pipe(
              Layer.provideMerge(Location.layer({ directory })),
              Layer.provide(Config.layerFromEntries([{ type: "document", info }])),
            ),
          ).pipe(
            Effect.provide(processContext),
            Effect.map((context) => Context.get(context, Location.Service).project.id),
          )
        const projectID = yield* Effect.scoped(open({}))
        const at = (resource: string, project = projectID) => ({ ...evaluated("s", resource), projectID: project })
        yield* TestClock.setTime(2 * DAY)
        yield* journal.append([at("/old"), at("/elsewhere", "other-project")])
        yield* TestClock.setTime(10 * DAY - 1000)
        yield* journal.append([at("/recent-1"), at("/recent-2"), at("/recent-3")])
        yield* TestClock.setTime(10 * DAY)
        const names = Effect.map(journal.query(), (entries) => entries.map((e) => e.resources[0]))

        // The default keeps 30 days: nothing goes.
        yield* Effect.scoped(open({}))
        expect(yield* names).toEqual(["/old", "/elsewhere", "/recent-1", "/recent-2", "/recent-3"])

        // Opening prunes this project only: older than a day, then all but the newest two.
        yield* open({ journal: { retention_days: 1, max_entries: 2 } })
        expect(yield* names).toEqual(["/elsewhere", "/recent-2", "/recent-3"])
        yield* journal.append([at("/later-1"), at("/later-2")])
        yield* TestClock.adjust(DecisionJournal.PRUNE_INTERVAL)
        yield* until(Effect.map(names, (list) => list.length === 3))
        expect(yield* names).toEqual(["/elsewhere", "/later-1", "/later-2"])
      }),
  )

  it.effect("retentionOf: each field from the latest document that sets it", () =>
    Effect.sync(() => {
      const doc = (info: Config.Info): Config.Entry => ({ type: "document", info })
      expect(DecisionJournal.retentionOf([])).toEqual({
        days: DecisionJournal.DEFAULT_RETENTION_DAYS,
        maxEntries: undefined,
      })
      expect(
        DecisionJournal.retentionOf([
          doc({ journal: { retention_days: 7, max_entries: 10 } }),
          doc({ journal: { retention_days: 3 } }),
          { type: "directory", path: "/x" },
          doc({}),
        ]),
      ).toEqual({ days: 3, maxEntries: 10 })
    }),
  )

  it.live("Core.layerLocation applies journal.max_entries when the Location opens", () =>
    Effect.gen(function* () {
      const directory = temp()
      const processContext = yield* Layer.build(Core.layerProcess({ data: temp() }))
      const journal = Context.get(processContext, DecisionJournal.Service)
      const location = (config: Config.Info) =>
        Layer.build(Core.layerLocation({ directory, discover: false, config })).pipe(
          Effect.provide(processContext),
          Effect.map((context) => Context.get(context, Location.Service).project.id),
          Effect.scoped,
        )
      const projectID = yield* location({})
      yield* journal.append(["/1", "/2", "/3", "/4"].map((r) => ({ ...evaluated("s", r), projectID })))
      yield* location({ journal: { max_entries: 2 } })
      expect((yield* journal.query({ projectID })).map((e) => e.resources[0])).toEqual(["/3", "/4"])
    }).pipe(Effect.scoped),
  )
})
