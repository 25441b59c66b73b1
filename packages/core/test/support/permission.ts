/**
 * A fake PermissionV2 service for leaf-tool tests: it records every `assert` input and can deny chosen actions
 * (failing with `BlockedError({ rules: [], action, resources })`), reject with feedback, or run a hook after an
 * assertion (to change the world during "approval").
 */
import { Context, Effect, Layer, Ref } from "effect"
import { PermissionV2 } from "../../src/index.js"

export interface FakePermission {
  /** Every assert input, in order. */
  readonly asserts: Ref.Ref<ReadonlyArray<PermissionV2.AssertInput>>
  /** Actions that fail with BlockedError. */
  readonly denied: Ref.Ref<ReadonlySet<string>>
  /** Actions rejected with this feedback (CorrectedError). */
  readonly corrected: Ref.Ref<ReadonlyMap<string, string>>
  /** Runs after a successful assert of the given action. */
  readonly after: Ref.Ref<ReadonlyMap<string, Effect.Effect<void>>>
}

export const makeFake = Effect.gen(function* () {
  const fake: FakePermission = {
    asserts: yield* Ref.make<ReadonlyArray<PermissionV2.AssertInput>>([]),
    denied: yield* Ref.make<ReadonlySet<string>>(new Set()),
    corrected: yield* Ref.make<ReadonlyMap<string, string>>(new Map()),
    after: yield* Ref.make<ReadonlyMap<string, Effect.Effect<void>>>(new Map()),
  }
  const assert = (input: PermissionV2.AssertInput) =>
    Effect.gen(function* () {
      yield* Ref.update(fake.asserts, (all) => [...all, input])
      if ((yield* Ref.get(fake.denied)).has(input.action)) {
        return yield* new PermissionV2.BlockedError({ rules: [], action: input.action, resources: input.resources })
      }
      const feedback = (yield* Ref.get(fake.corrected)).get(input.action)
      if (feedback !== undefined) return yield* new PermissionV2.CorrectedError({ feedback })
      const hook = (yield* Ref.get(fake.after)).get(input.action)
      if (hook !== undefined) yield* hook
    })
  const service = PermissionV2.Service.of({
    assert,
    ask: (input) =>
      Effect.as(assert(input).pipe(Effect.orDie), { id: PermissionV2.createID(input.id), effect: "allow" as const }),
    reply: () => Effect.void,
    // Denied actions evaluate to deny; everything else to allow.
    check: (input) =>
      Effect.map(Ref.get(fake.denied), (denied) =>
        input.resources.map((): PermissionV2.Effect => (denied.has(input.action) ? "deny" : "allow")),
      ),
    get: () => Effect.succeed(undefined),
    forSession: () => Effect.succeed([]),
    list: () => Effect.succeed([]),
  })
  return { fake, service }
})

/** The fake's recorder and switches, available in tests that use `layer`. */
export class FakePermissionState extends Context.Tag("test/FakePermissionState")<
  FakePermissionState,
  FakePermission
>() {}

/** Provides the fake as `PermissionV2.Service` plus its `FakePermissionState`. */
export const layer: Layer.Layer<PermissionV2.Service | FakePermissionState> = Layer.effectContext(
  Effect.map(makeFake, ({ fake, service }) =>
    Context.make(PermissionV2.Service, service).pipe(Context.add(FakePermissionState, fake)),
  ),
)

/** The recorded assert inputs. */
export const asserts = Effect.flatMap(FakePermissionState, (fake) => Ref.get(fake.asserts))

/** The recorded actions, in order. */
export const actions = Effect.map(asserts, (all) => all.map((input) => input.action))

/** Makes `action` fail with BlockedError. */
export const deny = (action: string) =>
  Effect.flatMap(FakePermissionState, (fake) => Ref.update(fake.denied, (set) => new Set([...set, action])))

/** Runs `hook` right after `action` is approved. */
export const afterApproval = (action: string, hook: Effect.Effect<void>) =>
  Effect.flatMap(FakePermissionState, (fake) => Ref.update(fake.after, (map) => new Map([...map, [action, hook]])))
