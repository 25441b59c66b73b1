/**
 * The one-pass decision of a request (`effectOf`) against what it replaced, the configured deny check followed by
 * `aggregate` (every resource evaluated against the configured rules, then against both rulesets), over generated
 * actions, resources, configured rules and allow-only approvals, including the explicit `protected_path` action and
 * approvals whose action is a wildcard.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { aggregate, effectOf } from "../src/permission/internal/decide.js"
import { evaluate } from "../src/permission/internal/evaluate.js"
import type { Rule } from "../src/permission/internal/schema.js"

const text = fc.string({ unit: fc.constantFrom("a", "b", "/", ".", " ", "\\"), maxLength: 6 })
const pattern = fc.string({ unit: fc.constantFrom("a", "b", "/", ".", "*", "?"), maxLength: 5 })
const action = fc.constantFrom("read", "edit", "bash", "protected_path", "external_directory")
const actionPattern = fc.oneof(action, fc.constantFrom("*", "pro*", "e*", "?ash"))
const configured = fc.array(
  fc.record({
    action: actionPattern,
    resource: pattern,
    effect: fc.constantFrom<Rule["effect"]>("allow", "deny", "ask"),
  }),
  { maxLength: 6 },
)
const approvals = fc.array(
  fc.record({ action: actionPattern, resource: pattern, effect: fc.constant<Rule["effect"]>("allow") }),
  { maxLength: 4 },
)

/** The decision as it was made before: deny when the configured rules alone deny a resource, else `aggregate`. */
const reference = (
  act: string,
  resources: ReadonlyArray<string>,
  rules: ReadonlyArray<Rule>,
  saved: ReadonlyArray<Rule>,
): "allow" | "ask" | "deny" =>
  resources.some((resource) => evaluate(act, resource, rules).effect === "deny")
    ? "deny"
    : aggregate(act, resources, rules, saved)

describe("effectOf", () => {
  it("decides every request as the configured deny check followed by aggregate", () => {
    fc.assert(
      fc.property(
        action,
        fc.array(text, { minLength: 1, maxLength: 4 }),
        configured,
        approvals,
        (act, resources, rules, saved) => {
          expect(effectOf(act, resources, rules, saved)).toBe(reference(act, resources, rules, saved))
        },
      ),
      { numRuns: 5000 },
    )
  })

  it("never lets an approval lift a configured deny, and lets a naming approval allow protected_path", () => {
    const deny: ReadonlyArray<Rule> = [{ action: "edit", resource: "secret*", effect: "deny" }]
    const everything: ReadonlyArray<Rule> = [{ action: "*", resource: "*", effect: "allow" }]
    expect(effectOf("edit", ["a", "secret.txt"], deny, everything)).toBe("deny")
    expect(effectOf("protected_path", ["toolgate.json"], [], everything)).toBe("ask")
    expect(
      effectOf("protected_path", ["toolgate.json"], [], [{ action: "protected_path", resource: "*", effect: "allow" }]),
    ).toBe("allow")
  })
})
