/**
 * Runs before every test file (vitest `setupFiles`). `@effect/vitest`'s `layer(...)` assigns the layer's `effect`,
 * `scoped` and `layer` methods onto vitest's one shared `it` object, so once a file has used `layer(...)`, every
 * `it.effect` declared after it — in that file's later blocks and, with `isolate: false`, in the next files the worker
 * runs — would run inside that layer's runtime: one TestClock and one context (a Location, say) for all of them.
 * This puts the methods back after each file, so every file starts from `@effect/vitest`'s own.
 */
import { it } from "@effect/vitest"
import { afterAll } from "vitest"

const own = {
  effect: it.effect,
  scoped: it.scoped,
  live: it.live,
  scopedLive: it.scopedLive,
  layer: it.layer,
  flakyTest: it.flakyTest,
  prop: it.prop,
}

afterAll(() => {
  Object.assign(it, own)
})
