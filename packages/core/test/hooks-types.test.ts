/**
 * The types of `permission.evaluate` admit only a tightening: a hook answers with a verdict its request made (`keep`,
 * `ask`, `deny`), so it cannot answer allow, cannot forge a verdict, and cannot answer an asked request with the
 * verdict of an allowed one. Each `@ts-expect-error` below is checked by the typecheck (an unused one fails it).
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Effect } from "effect"
import { Hooks } from "../src/index.js"

declare const allowed: Hooks.EvaluateRequest<"allow">

// A hook may keep, ask or deny, whatever the current decision.
export const tightens: Hooks.EvaluateHook = (request) =>
  Effect.succeed(
    request.action === "bash"
      ? request.deny("no shell")
      : request.effect === "allow"
        ? request.ask("look")
        : request.keep,
  )

// @ts-expect-error a hook cannot answer "allow"
export const answersAllow: Hooks.EvaluateHook = () => Effect.succeed("allow")

// @ts-expect-error nor an object that merely looks like an allow verdict
export const forgesAllow: Hooks.EvaluateHook = () => Effect.succeed({ effect: "allow" as const })

// @ts-expect-error nor the verdict of an allowed request, for a request whose decision may be ask
export const borrowsAllow: Hooks.EvaluateHook = () => Effect.succeed(allowed.keep)

export const loosen = (asked: Hooks.EvaluateRequest<"ask">): Hooks.Verdict<"ask"> => {
  expectTypeOf(asked.keep).toEqualTypeOf<Hooks.Verdict<"ask">>()
  // @ts-expect-error ask -> allow: a verdict made for an allowed request does not answer an asked one
  const verdict: Hooks.Verdict<"ask"> = allowed.keep
  return verdict
}

describe("Hooks types", () => {
  it("a permission.evaluate request offers keep, ask and deny, and nothing that allows", () => {
    expectTypeOf<Hooks.EvaluateRequest<"ask">>().toHaveProperty("keep")
    expectTypeOf<Hooks.EvaluateRequest<"ask">>().toHaveProperty("ask")
    expectTypeOf<Hooks.EvaluateRequest<"ask">>().toHaveProperty("deny")
    expectTypeOf<Hooks.EvaluateRequest<"ask">>().not.toHaveProperty("allow")
    expectTypeOf<Hooks.Verdict<"allow">>().not.toMatchTypeOf<Hooks.Verdict<"ask">>()
    expectTypeOf<Hooks.Verdict<"ask">>().not.toMatchTypeOf<Hooks.Verdict<"allow">>()
    expect(typeof tightens).toBe("function")
  })
})
