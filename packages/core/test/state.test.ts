import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Scope } from "effect"
import { State } from "../src/index.js"

const make = Effect.gen(function* () {
  let rebuilds = 0
  const state = yield* State.create<Array<string>, Array<string>>({
    initial: () => (rebuilds++, []),
    draft: (value) => value,
  })
  return { state, rebuilds: () => rebuilds }
})

describe("State", () => {
  it.effect("replays active transforms in registration order and reveals earlier ones on dispose", () =>
    Effect.gen(function* () {
      const { state } = yield* make
      const one = yield* Scope.make()
      const two = yield* Scope.make()
      yield* Scope.extend(
        state.transform((draft) => void draft.push("a")),
        one,
      )
      yield* Scope.extend(
        state.transform((draft) => void draft.push("b")),
        two,
      )
      expect(state.get()).toEqual(["a", "b"])
      yield* Scope.close(one, Exit.void)
      expect(state.get()).toEqual(["b"])
      yield* Scope.close(two, Exit.void)
      expect(state.get()).toEqual([])
    }),
  )

  it.effect("dispose is idempotent and reload re-reads captured values", () =>
    Effect.gen(function* () {
      const { state } = yield* make
      let label = "first"
      const scope = yield* Scope.make()
      const registration = yield* Scope.extend(
        state.transform((draft) => void draft.push(label)),
        scope,
      )
      label = "second"
      yield* state.reload
      expect(state.get()).toEqual(["second"])
      yield* registration.dispose
      yield* registration.dispose
      expect(state.get()).toEqual([])
      yield* Scope.close(scope, Exit.void)
    }),
  )

  it.effect("batch defers rebuilds until the outermost batch ends", () =>
    Effect.gen(function* () {
      const { state, rebuilds } = yield* make
      const before = rebuilds()
      yield* Effect.scoped(
        State.batch(
          Effect.gen(function* () {
            yield* state.transform((draft) => void draft.push("a"))
            yield* State.batch(state.transform((draft) => void draft.push("b")))
            expect(state.get()).toEqual([])
          }),
        ).pipe(
          Effect.tap(() => {
            expect(state.get()).toEqual(["a", "b"])
            expect(rebuilds() - before).toBe(1)
          }),
        ),
      )
      expect(state.get()).toEqual([])
    }),
  )

  it.effect("a failing effectful transform becomes a defect and only a complete fold becomes visible", () =>
    Effect.gen(function* () {
      const { state } = yield* make
      const scope = yield* Scope.make()
      yield* Scope.extend(
        state.transform((draft) => void draft.push("kept")),
        scope,
      )
      const exit = yield* Effect.exit(
        Effect.scoped(
          state.transform((draft) =>
            Effect.zipRight(
              Effect.sync(() => draft.push("partial")),
              Effect.fail("boom"),
            ),
          ),
        ),
      )
      expect(Exit.isFailure(exit) && Cause.dieOption(exit.cause)).toEqual(Option.some("boom"))
      expect(state.get()).toEqual(["kept"])
    }),
  )

  it.effect("finalize runs after every transform and before the value becomes visible", () =>
    Effect.gen(function* () {
      const seen: Array<ReadonlyArray<string>> = []
      const state = yield* State.create<Array<string>, Array<string>>({
        initial: () => [],
        draft: (value) => value,
        finalize: (draft) => {
          seen.push([...draft])
          draft.sort()
        },
      })
      yield* state.transform((draft) => void draft.push("b"))
      yield* state.transform((draft) => void draft.push("a"))
      expect(seen).toEqual([["b"], ["b", "a"]])
      expect(state.get()).toEqual(["a", "b"])
    }).pipe(Effect.scoped),
  )
})
