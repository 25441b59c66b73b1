import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { Identifier } from "../src/index.js"

/** The definition, in BigInt arithmetic. */
const reference = (millis: number, counter: number): string =>
  ((BigInt(millis) * 0x1000n + BigInt(counter)) & 0xffffffffffffn).toString(16).padStart(12, "0")

describe("Identifier", () => {
  it("timePrefix is (millis * 0x1000 + counter) mod 2^48 for every millisecond up to year 10000 and any counter", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), fc.integer({ min: 0, max: 1_000_000 }), (m, c) => {
        expect(Identifier.timePrefix(m, c)).toBe(reference(m, c))
      }),
      { numRuns: 20_000 },
    )
    for (const [m, c] of [
      [0, 0],
      [2 ** 36 - 1, 0xfff],
      [2 ** 36, 0],
      [Date.now(), 1],
      [2 ** 48, 4096],
    ] as const)
      expect(Identifier.timePrefix(m, c)).toBe(reference(m, c))
  })

  it("ids are 26 characters after the prefix and ascend in creation order", () => {
    const ids = Array.from({ length: 20_000 }, () => Identifier.create("per"))
    for (const id of ids) expect(id).toMatch(/^per_[0-9a-f]{12}[0-9A-Za-z]{14}$/)
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
  })
})
