import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck as fc, ManagedRuntime, Option, Scope } from "effect"
import { Database, PermissionV2, SessionV2, Wildcard } from "../src/index.js"
import { agentControl, type Services, stack } from "./support/permission-stack.js"

type Rule = PermissionV2.Rule
const RUNS = { numRuns: 1000 }

// Small alphabets so that generated patterns and inputs collide often.
const text = fc.string({ unit: fc.constantFrom("a", "b", "/", ".", " ", "\\"), maxLength: 8 })
const pattern = fc.string({ unit: fc.constantFrom("a", "b", "/", ".", " ", "*", "?", "\\"), maxLength: 6 })
const action = fc.constantFrom("read", "edit", "bash", "mcp_a", "external_directory")
const actionPattern = fc.oneof(action, fc.constantFrom("*", "mcp_*", "re?d", "e*"))
const effect = fc.constantFrom<Rule["effect"]>("allow", "deny", "ask")
const rule = fc.record({ action: actionPattern, resource: pattern, effect })
const rules = fc.array(rule, { maxLength: 8 })

/** A pattern built from `input` that matches it: a slice replaced by `*`, or a character by `?`, or as is. */
const matchingPattern = (input: string) =>
  fc.tuple(fc.nat(), fc.nat(), fc.constantFrom("star", "question", "exact")).map(([i, j, kind]) => {
    if (kind === "exact" || input.length === 0) return kind === "star" ? "*" : input
    const a = i % (input.length + 1)
    const b = a + (j % (input.length - a + 1))
    if (kind === "star") return input.slice(0, a) + "*" + input.slice(b)
    const at = Math.min(a, input.length - 1)
    return input.slice(0, at) + "?" + input.slice(at + 1)
  })

const matches = (act: string, resource: string, candidate: Rule) =>
  Wildcard.match(act, candidate.action) && Wildcard.match(resource, candidate.resource)

describe("PermissionV2.evaluate properties", () => {
  it("empty rules give the synthetic ask", () => {
    fc.assert(
      fc.property(action, text, (act, resource) => {
        expect(PermissionV2.evaluate(act, resource)).toEqual({ action: act, resource: "*", effect: "ask" })
        expect(PermissionV2.evaluate(act, resource, [], [])).toEqual({ action: act, resource: "*", effect: "ask" })
      }),
      RUNS,
    )
  })

  it("appending a matching rule sets the result to its effect", () => {
    const input = fc.tuple(action, text).chain(([act, resource]) =>
      fc.record({
        act: fc.constant(act),
        resource: fc.constant(resource),
        actionPattern: fc.oneof(fc.constant(act), fc.constant("*"), matchingPattern(act)),
        resourcePattern: matchingPattern(resource),
        effect,
        before: rules,
      }),
    )
    fc.assert(
      fc.property(input, (c) => {
        const last: Rule = { action: c.actionPattern, resource: c.resourcePattern, effect: c.effect }
        expect(matches(c.act, c.resource, last)).toBe(true)
        expect(PermissionV2.evaluate(c.act, c.resource, [...c.before, last]).effect).toBe(c.effect)
        expect(PermissionV2.evaluate(c.act, c.resource, c.before, [last])).toBe(last)
      }),
      RUNS,
    )
  })

  it("appending non-matching rules changes nothing", () => {
    fc.assert(
      fc.property(action, text, rules, rules, (act, resource, before, extra) => {
        const after = extra.filter((candidate) => !matches(act, resource, candidate))
        expect(PermissionV2.evaluate(act, resource, [...before, ...after])).toEqual(
          PermissionV2.evaluate(act, resource, before),
        )
      }),
      RUNS,
    )
  })

  it("evaluate(a, r, ...rs) equals evaluate(a, r, rs.flat())", () => {
    fc.assert(
      fc.property(action, text, fc.array(rules, { maxLength: 5 }), (act, resource, sets) => {
        const spread = PermissionV2.evaluate(act, resource, ...sets)
        const flat = PermissionV2.evaluate(act, resource, sets.flat())
        expect(spread).toEqual(flat)
        if (spread.effect !== "ask" || sets.flat().some((candidate) => matches(act, resource, candidate))) {
          expect(spread).toBe(flat)
        }
      }),
      RUNS,
    )
  })
})

describe("PermissionV2 service properties", () => {
  let runtime: ManagedRuntime.ManagedRuntime<Services, never>
  let directory: string
  let scope: Scope.CloseableScope
  let setRules: (id: string, rules: ReadonlyArray<Rule> | null) => Effect.Effect<void>

  beforeAll(async () => {
    directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-prop-")))
    runtime = ManagedRuntime.make(stack(directory, Database.layerMemory))
    // The agent transform must outlive this hook: it lives in a scope closed in afterAll.
    scope = Effect.runSync(Scope.make())
    setRules = await runtime.runPromise(agentControl.pipe(Scope.extend(scope)))
    await runtime.runPromise(
      Effect.flatMap(SessionV2.Service, (sessions) => sessions.create({ id: "ses_prop", agent: "test" })),
    )
  })

  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await runtime.dispose()
    fs.rmSync(directory, { recursive: true, force: true })
  })

  it("a configured deny is never overridden by saved approvals", async () => {
    const scenario = fc.tuple(action, fc.array(text, { minLength: 1, maxLength: 4 })).chain(([act, resources]) =>
      fc.record({
        act: fc.constant(act),
        resources: fc.constant(resources),
        target: fc.nat({ max: resources.length - 1 }),
        denyPattern: fc.nat().chain((i) => matchingPattern(resources[i % resources.length]!)),
        before: rules,
        after: fc.array(rule, { maxLength: 2 }),
        saved: fc.array(fc.record({ action: actionPattern, resource: pattern }), { maxLength: 6 }),
        savedExact: fc.boolean(),
        savedStar: fc.boolean(),
      }),
    )
    await fc.assert(
      fc.asyncProperty(scenario, async (c) => {
        const configured: Array<Rule> = [
          ...c.before,
          { action: c.act, resource: c.denyPattern, effect: "deny" },
          ...c.after,
        ]
        const denied = c.resources.filter(
          (resource) => PermissionV2.evaluate(c.act, resource, configured).effect === "deny",
        )
        fc.pre(denied.length > 0)
        const saved = [
          ...c.saved,
          ...(c.savedExact ? c.resources.map((resource) => ({ action: c.act, resource })) : []),
          ...(c.savedStar ? [{ action: "*", resource: "*" }] : []),
        ]
        const exit = await runtime.runPromise(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const permission = yield* PermissionV2.Service
            yield* sql`DELETE FROM permission`
            const rows = saved.map((row, i) => ({
              id: `psv_prop_${i}`,
              project_id: "global",
              action: row.action,
              resource: row.resource,
              time_created: 0,
              time_updated: 0,
            }))
            if (rows.length > 0) yield* sql`INSERT INTO permission ${sql.insert(rows)} ON CONFLICT DO NOTHING`
            yield* setRules("test", configured)
            const input = { sessionID: "ses_prop", action: c.act, resources: c.resources }
            const asked = yield* permission.ask(input)
            expect(asked.effect).toBe("deny")
            const asserted = yield* Effect.exit(permission.assert(input))
            expect(yield* permission.list()).toEqual([])
            return asserted
          }),
        )
        const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
        expect(failure).toBeInstanceOf(PermissionV2.BlockedError)
        expect((failure as PermissionV2.BlockedError).resources).toEqual(denied)
      }),
      RUNS,
    )
  }, 120_000)
})
