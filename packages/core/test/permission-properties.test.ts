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

/** The reference's regex construction, used as the oracle (backslashes read as `/`, anchored, dot-all). */
const referenceMatch = (input: string, source: string): boolean => {
  let body = source
    .replace(/\\/g, "/")
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".")
  if (body.endsWith(" .*")) body = body.slice(0, -3) + "( .*)?"
  return new RegExp(`^${body}$`, process.platform === "win32" ? "si" : "s").test(input.replace(/\\/g, "/"))
}

/** The reference evaluation with this library's additions (ignore_case, explicit actions and prefixes). */
const oracle = (act: string, resource: string, ...sets: ReadonlyArray<ReadonlyArray<Rule>>): Rule => {
  const explicit = PermissionV2.EXPLICIT_RESOURCE_PREFIXES.find((prefix) => resource.startsWith(prefix))
  const all = sets.flat()
  for (let i = all.length - 1; i >= 0; i--) {
    const candidate = all[i]!
    if (!referenceMatch(act, candidate.action)) continue
    const hit =
      candidate.ignore_case === true
        ? referenceMatch(resource.toLowerCase(), candidate.resource.toLowerCase())
        : referenceMatch(resource, candidate.resource)
    if (!hit) continue
    if (explicit !== undefined && candidate.effect === "allow" && !candidate.resource.startsWith(explicit)) continue
    if (candidate.effect === "allow" && candidate.action !== act && PermissionV2.EXPLICIT_ACTIONS.has(act)) {
      return { action: act, resource: candidate.resource, effect: "ask" }
    }
    return candidate
  }
  return { action: act, resource: "*", effect: "ask" }
}

describe("PermissionV2.evaluate against the reference oracle", () => {
  const unit = fc.constantFrom("a", "b", "A", "/", "\\", ".", " ", "x", "z")
  const longText = fc.oneof(
    fc.string({ unit, maxLength: 40 }),
    fc.constantFrom("private:a/b", "unresolved:x z", "private:"),
  )
  const resourcePattern = fc.oneof(
    fc.string({ unit: fc.constantFrom("a", "b", "A", "/", "\\", ".", " ", "*", "?", "x", "z"), maxLength: 10 }),
    fc.constantFrom("*x?z*", "*a?b*", "?*", "*??*", "*a*?*b", "private:*", "unresolved:*", "* *", "a *"),
  )
  const anyAction = fc.constantFrom("read", "edit", "bash", "mcp_a", "external_directory", "protected_path")
  const oracleRule = fc.record(
    {
      action: fc.oneof(anyAction, fc.constantFrom("*", "mcp_*", "re?d", "e*", "?*")),
      resource: resourcePattern,
      effect,
      ignore_case: fc.boolean(),
    },
    { requiredKeys: ["action", "resource", "effect"] },
  )
  const sets = fc.array(fc.array(oracleRule, { maxLength: 12 }), { minLength: 1, maxLength: 3 })

  it("gives the oracle's rule for random rulesets and resources (backslashes, `?`, explicit prefixes)", () => {
    fc.assert(
      fc.property(
        sets,
        fc.array(fc.tuple(anyAction, longText), { minLength: 1, maxLength: 6 }),
        (rulesets, queries) => {
          // The same ruleset values are evaluated repeatedly, so compiled rulesets are reused across queries.
          for (let round = 0; round < 2; round++) {
            for (const [act, resource] of queries) {
              const ours = PermissionV2.evaluate(act, resource, ...rulesets)
              expect(ours).toEqual(oracle(act, resource, ...rulesets))
            }
          }
        },
      ),
      { numRuns: 200 },
    )
  })

  it("a ruleset changed in place is evaluated as it is now", () => {
    const rules: Array<Rule> = [{ action: "read", resource: "a*", effect: "deny" }]
    expect(PermissionV2.evaluate("read", "ab", rules).effect).toBe("deny")
    rules.push({ action: "read", resource: "ab", effect: "allow" })
    expect(PermissionV2.evaluate("read", "ab", rules).effect).toBe("allow")
    rules[1] = { action: "edit", resource: "ab", effect: "allow" }
    expect(PermissionV2.evaluate("read", "ab", rules).effect).toBe("deny")
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
