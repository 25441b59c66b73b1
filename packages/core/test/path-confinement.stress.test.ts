/**
 * Path confinement over 10,000 generated paths (the default suite runs 1,000 of the same generator): see
 * support/path-confinement.ts.
 */
import { describe, it } from "@effect/vitest"
import { generatedRun } from "./support/path-confinement.js"

describe("path confinement (stress)", () => {
  it.scopedLive(
    "10,000 generated paths write nothing outside the Location and fail only with typed errors",
    () => generatedRun(10_000),
    300_000,
  )
})
