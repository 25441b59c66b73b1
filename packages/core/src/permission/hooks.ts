/**
 * Hooks: code a plugin runs inside the gate, which can only make a call stricter. `tool.before` sees a call before
 * its tool runs and may deny it (with a message the model sees), ask the user (with a reason), add context for the
 * model, or rewrite the input (the rewritten input is decoded and evaluated again, so the tool's own asks show it);
 * `tool.after` may add context to a result; `permission.evaluate` sees each permission request the configured rules
 * did not deny and may turn an allow into an ask or a deny, and an ask into a deny — never the reverse. The types
 * admit nothing else: a `permission.evaluate` hook answers with a verdict made by the request it was given
 * (`keep`, `ask`, `deny`), and there is no way to make an allow.
 *
 * A hook that fails, throws or does not answer within its timeout fails the call closed with a `HookError` naming
 * it. Hooks are registered per Location, in order; each sees what the hooks before it decided. See docs/plugins.md.
 *
 * @since 0.4.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as LLM from "../values/llm.js"

/**
 * The hook names.
 *
 * @since 0.4.0
 * @category models
 */
export type Name = "tool.before" | "tool.after" | "permission.evaluate"

/**
 * A hook failed, threw, answered with something it may not answer, or did not answer within its timeout: the call
 * it saw fails closed. `origin` is `hook:<plugin>/<hook>`.
 *
 * @since 0.4.0
 * @category errors
 */
export class HookError extends Schema.TaggedError<HookError>()("Hooks.HookError", {
  plugin: Schema.String,
  hook: Schema.String,
  detail: Schema.String,
}) {
  override get message(): string {
    return `Hook ${originOf(this.plugin, this.hook)} failed: ${this.detail}`
  }
}

/**
 * The origin a hook's decisions are journaled and explained with: `hook:<plugin>/<hook>`.
 *
 * @since 0.4.0
 * @category utilities
 */
export const originOf = (plugin: string, hook: string): string => `hook:${plugin}/${hook}`

// ---------------------------------------------------------------------------------------------------------------
// permission.evaluate

/**
 * The decision a `permission.evaluate` hook sees: the configured rules and approvals did not deny the request.
 *
 * @since 0.4.0
 * @category models
 */
export type Open = "allow" | "ask"

declare const VerdictTypeId: unique symbol

/**
 * A `permission.evaluate` hook's answer for a request whose current decision is `E`. Only the request's own
 * `keep`, `ask` and `deny` make one, so a verdict is always `E` itself or stricter; `E` is invariant, so a verdict
 * made for an allowed request cannot answer an asked one.
 *
 * @since 0.4.0
 * @category models
 */
export interface Verdict<E extends Open> {
  readonly [VerdictTypeId]: (current: E) => E
  readonly effect: "allow" | "ask" | "deny"
  readonly reason?: string
}

/**
 * What a `permission.evaluate` hook sees: the request, its current decision `effect`, and the only verdicts it may
 * answer with.
 *
 * @since 0.4.0
 * @category models
 */
export interface EvaluateRequest<E extends Open> {
  readonly sessionID: string
  readonly agent: string | undefined
  readonly action: string
  readonly resources: ReadonlyArray<string>
  readonly effect: E
  /** Leaves the decision as it is. */
  readonly keep: Verdict<E>
  /** The request asks the user (an asked request stays asked). */
  readonly ask: (reason: string) => Verdict<E>
  /** The request is denied; `reason` is what the model sees. */
  readonly deny: (reason: string) => Verdict<E>
}

/**
 * A `permission.evaluate` hook. It is generic in the current decision, so it can only answer with that request's
 * verdicts: `allow` is not one of them.
 *
 * @since 0.4.0
 * @category models
 */
export type EvaluateHook = <E extends Open>(request: EvaluateRequest<E>) => Effect.Effect<Verdict<E>, unknown>

// ---------------------------------------------------------------------------------------------------------------
// tool.before / tool.after

/**
 * The call a tool hook sees: who makes it, the tool's registered name, the call id and its input as the model sent
 * it (or as an earlier hook rewrote it).
 *
 * @since 0.4.0
 * @category models
 */
export interface ToolCall {
  readonly sessionID: string
  readonly agent: string
  readonly tool: string
  readonly callID: string
  readonly input: unknown
}

/**
 * A `tool.before` hook's answer: go on, deny with a message the model sees, ask the user with a reason, add
 * context for the model, or rewrite the input.
 *
 * @since 0.4.0
 * @category models
 */
export type Before =
  | { readonly _tag: "Proceed" }
  | { readonly _tag: "Deny"; readonly message: string }
  | { readonly _tag: "Ask"; readonly reason: string }
  | { readonly _tag: "Context"; readonly text: string }
  | { readonly _tag: "Rewrite"; readonly input: unknown }

/**
 * A `tool.after` hook's answer: go on, or add context for the model to the result.
 *
 * @since 0.4.0
 * @category models
 */
export type After = { readonly _tag: "Proceed" } | { readonly _tag: "Context"; readonly text: string }

/**
 * Go on unchanged (`tool.before` and `tool.after`).
 *
 * @since 0.4.0
 * @category constructors
 */
export const proceed: { readonly _tag: "Proceed" } = { _tag: "Proceed" }

/**
 * Refuse the call; the model sees `message`.
 *
 * @since 0.4.0
 * @category constructors
 */
export const deny = (message: string): Before => ({ _tag: "Deny", message })

/**
 * Ask the user before the call runs, showing `reason`.
 *
 * @since 0.4.0
 * @category constructors
 */
export const ask = (reason: string): Before => ({ _tag: "Ask", reason })

/**
 * Add `text` for the model beside the call's result.
 *
 * @since 0.4.0
 * @category constructors
 */
export const context = (text: string): { readonly _tag: "Context"; readonly text: string } => ({
  _tag: "Context",
  text,
})

/**
 * Settle the call with `input` instead: it is decoded and evaluated again as a new input.
 *
 * @since 0.4.0
 * @category constructors
 */
export const rewrite = (input: unknown): Before => ({ _tag: "Rewrite", input })

/**
 * The hooks one plugin registers.
 *
 * @since 0.4.0
 * @category models
 */
export interface Definitions {
  readonly "tool.before"?: (call: ToolCall) => Effect.Effect<Before, unknown>
  readonly "tool.after"?: (call: ToolCall & { readonly output: LLM.ToolOutput }) => Effect.Effect<After, unknown>
  readonly "permission.evaluate"?: EvaluateHook
}

/**
 * How long a hook may take before the call it sees fails closed (milliseconds), unless its registration says.
 *
 * @since 0.4.0
 * @category constants
 */
export const DEFAULT_TIMEOUT_MS = 10_000

/**
 * The longest context text one hook may add (characters); a longer one fails the call closed. What reaches the
 * model is bounded again with the rest of the output.
 *
 * @since 0.4.0
 * @category constants
 */
export const MAX_CONTEXT_CHARS = 64 * 1024

// ---------------------------------------------------------------------------------------------------------------
// Outcomes

/**
 * One hook's decision, as the journal records it and `permissions explain` shows it.
 *
 * @since 0.4.0
 * @category models
 */
export interface Decision {
  readonly plugin: string
  readonly hook: Name
  /** `hook:<plugin>/<hook>`. */
  readonly origin: string
  /** `deny`, `ask`, `context`, `rewrite`, or for `permission.evaluate` the effect it left. */
  readonly decision: string
  readonly from?: "allow" | "ask"
  readonly reason?: string
}

/**
 * The outcome of the `permission.evaluate` hooks: the effect they leave and the decisions that changed it.
 *
 * @since 0.4.0
 * @category models
 */
export interface Evaluated {
  readonly effect: "allow" | "ask" | "deny"
  readonly decisions: ReadonlyArray<Decision>
}

/**
 * The outcome of the `tool.before` hooks: the input to settle, the asks to make (in order), the context to add, or
 * a refusal; with every decision made.
 *
 * @since 0.4.0
 * @category models
 */
export type Prepared =
  | {
      readonly _tag: "Run"
      readonly input: unknown
      readonly rewritten: boolean
      readonly asks: ReadonlyArray<Decision>
      readonly context: ReadonlyArray<string>
      readonly decisions: ReadonlyArray<Decision>
    }
  | { readonly _tag: "Refused"; readonly message: string; readonly decisions: ReadonlyArray<Decision> }

/**
 * A permission request as the `permission.evaluate` hooks see it.
 *
 * @since 0.4.0
 * @category models
 */
export interface Request {
  readonly sessionID: string
  readonly agent: string | undefined
  readonly action: string
  readonly resources: ReadonlyArray<string>
}

/**
 * A registration's options.
 *
 * @since 0.4.0
 * @category models
 */
export interface Options {
  /** How long each of these hooks may take (default `DEFAULT_TIMEOUT_MS`). */
  readonly timeout?: Duration.DurationInput
}

/**
 * The hooks of one Location.
 *
 * @since 0.4.0
 * @category models
 */
export interface Interface {
  /** Registers a plugin's hooks until the caller's scope closes; they run after those registered before. */
  readonly register: (plugin: string, hooks: Definitions, options?: Options) => Effect.Effect<void, never, Scope.Scope>
  /** True when some hook of `name` is registered: callers skip the hooks' path when none is. */
  readonly has: (name: Name) => boolean
  /** Runs the `permission.evaluate` hooks on a request the configured rules did not deny. */
  readonly evaluate: (request: Request, effect: Open) => Effect.Effect<Evaluated, HookError>
  /** Runs the `tool.before` hooks. */
  readonly before: (call: ToolCall) => Effect.Effect<Prepared, HookError>
  /** Runs the `tool.after` hooks: the context they add, and their decisions. */
  readonly after: (
    call: ToolCall & { readonly output: LLM.ToolOutput },
  ) => Effect.Effect<
    { readonly context: ReadonlyArray<string>; readonly decisions: ReadonlyArray<Decision> },
    HookError
  >
}

/**
 * The Hooks service (Location-scoped).
 *
 * @since 0.4.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Hooks")<Service, Interface>() {}

interface Entry {
  readonly plugin: string
  readonly hooks: Definitions
  readonly timeout: Duration.Duration
}

const describe = (value: unknown): string => {
  if (value instanceof Error) return value.message
  if (typeof value === "object" && value !== null && "message" in value && typeof value.message === "string")
    return value.message
  if (typeof value === "string") return value
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/**
 * Runs one hook: its failures, throws and timeout become a `HookError` naming it. Interruption passes through.
 */
const run = <A>(entry: Entry, hook: Name, body: () => Effect.Effect<A, unknown>): Effect.Effect<A, HookError> => {
  const fail = (detail: string) => new HookError({ plugin: entry.plugin, hook, detail })
  return Effect.suspend(() => {
    const effect = body()
    if (!Effect.isEffect(effect)) return Effect.fail(fail(`returned ${describe(effect)}, not an Effect`))
    return effect
  }).pipe(
    Effect.mapError((error) => fail(describe(error))),
    Effect.catchAllDefect((defect) => Effect.fail(fail(`threw: ${describe(defect)}`))),
    Effect.timeoutFail({
      duration: entry.timeout,
      onTimeout: () => fail(`no answer within ${Duration.format(entry.timeout)}`),
    }),
  )
}

const STRICTNESS = { allow: 0, ask: 1, deny: 2 } as const

/**
 * The request a `permission.evaluate` hook sees, and the verdicts it may answer with (kept in `issued`, so a value
 * that is not one of them fails the call closed even when the hook was not type-checked).
 */
const evaluateRequest = <E extends Open>(request: Request, effect: E, issued: WeakSet<object>): EvaluateRequest<E> => {
  const make = (to: "allow" | "ask" | "deny", reason?: string): Verdict<E> => {
    const verdict = (reason === undefined ? { effect: to } : { effect: to, reason }) as unknown as Verdict<E>
    issued.add(verdict)
    return verdict
  }
  return {
    ...request,
    effect,
    keep: make(effect),
    ask: (reason) => make(effect === "allow" ? "ask" : effect, reason),
    deny: (reason) => make("deny", reason),
  }
}

/**
 * Builds the hooks of one Location, with none registered.
 *
 * @since 0.4.0
 * @category constructors
 */
export const make: Effect.Effect<Interface> = Effect.sync(() => {
  let entries: ReadonlyArray<Entry> = []
  const counts = new Map<Name, number>()
  const count = (entry: Entry, by: number) => {
    for (const name of Object.keys(entry.hooks) as Array<Name>)
      if (entry.hooks[name] !== undefined) counts.set(name, (counts.get(name) ?? 0) + by)
  }

  const register = (plugin: string, hooks: Definitions, options?: Options) =>
    Effect.uninterruptible(
      Effect.suspend(() => {
        const entry: Entry = {
          plugin,
          hooks: { ...hooks },
          timeout: Duration.decode(options?.timeout ?? DEFAULT_TIMEOUT_MS),
        }
        entries = [...entries, entry]
        count(entry, 1)
        return Effect.addFinalizer(() =>
          Effect.sync(() => {
            if (!entries.includes(entry)) return
            entries = entries.filter((other) => other !== entry)
            count(entry, -1)
          }),
        )
      }),
    )

  const has = (name: Name) => (counts.get(name) ?? 0) > 0

  const decision = (entry: Entry, hook: Name, value: Omit<Decision, "plugin" | "hook" | "origin">): Decision => ({
    plugin: entry.plugin,
    hook,
    origin: originOf(entry.plugin, hook),
    ...value,
  })

  const evaluate = (request: Request, start: Open): Effect.Effect<Evaluated, HookError> =>
    Effect.gen(function* () {
      let effect: "allow" | "ask" | "deny" = start
      const decisions: Array<Decision> = []
      for (const entry of entries) {
        const hook = entry.hooks["permission.evaluate"]
        if (hook === undefined || effect === "deny") continue
        const from: Open = effect
        const issued = new WeakSet<object>()
        const verdict: unknown = yield* run(entry, "permission.evaluate", () =>
          hook(evaluateRequest(request, from, issued)),
        )
        if (typeof verdict !== "object" || verdict === null || !issued.has(verdict))
          return yield* new HookError({
            plugin: entry.plugin,
            hook: "permission.evaluate",
            detail: `answered ${describe(verdict)}, which is not a verdict of its request (keep, ask or deny)`,
          })
        const { effect: to, reason } = verdict as Verdict<Open>
        if (STRICTNESS[to] < STRICTNESS[from])
          return yield* new HookError({
            plugin: entry.plugin,
            hook: "permission.evaluate",
            detail: `tried to loosen ${from} to ${to}`,
          })
        if (to === from) continue
        effect = to
        decisions.push(
          decision(entry, "permission.evaluate", { decision: to, from, ...(reason === undefined ? {} : { reason }) }),
        )
      }
      return { effect, decisions }
    })

  const checkedContext = (entry: Entry, hook: Name, text: unknown) =>
    typeof text !== "string"
      ? Effect.fail(new HookError({ plugin: entry.plugin, hook, detail: "added context that is not a string" }))
      : text.length > MAX_CONTEXT_CHARS
        ? Effect.fail(
            new HookError({
              plugin: entry.plugin,
              hook,
              detail: `added ${text.length} characters of context (at most ${MAX_CONTEXT_CHARS})`,
            }),
          )
        : Effect.succeed(text)

  const before = (call: ToolCall): Effect.Effect<Prepared, HookError> =>
    Effect.gen(function* () {
      let input = call.input
      let rewritten = false
      const asks: Array<Decision> = []
      const context: Array<string> = []
      const decisions: Array<Decision> = []
      for (const entry of entries) {
        const hook = entry.hooks["tool.before"]
        if (hook === undefined) continue
        const current = input
        const answer: Before = yield* run(entry, "tool.before", () => hook({ ...call, input: current }))
        switch (answer?._tag) {
          case "Proceed":
            break
          case "Deny": {
            const message = typeof answer.message === "string" ? answer.message : describe(answer.message)
            decisions.push(decision(entry, "tool.before", { decision: "deny", reason: message }))
            return { _tag: "Refused", message, decisions } satisfies Prepared
          }
          case "Ask": {
            const made = decision(entry, "tool.before", { decision: "ask", reason: String(answer.reason) })
            asks.push(made)
            decisions.push(made)
            break
          }
          case "Context": {
            const text = yield* checkedContext(entry, "tool.before", answer.text)
            context.push(text)
            decisions.push(decision(entry, "tool.before", { decision: "context" }))
            break
          }
          case "Rewrite":
            input = answer.input
            rewritten = true
            decisions.push(decision(entry, "tool.before", { decision: "rewrite" }))
            break
          default:
            return yield* new HookError({
              plugin: entry.plugin,
              hook: "tool.before",
              detail: `answered ${describe(answer)}, not proceed, deny, ask, context or rewrite`,
            })
        }
      }
      return { _tag: "Run", input, rewritten, asks, context, decisions } satisfies Prepared
    })

  const after = (call: ToolCall & { readonly output: LLM.ToolOutput }) =>
    Effect.gen(function* () {
      const context: Array<string> = []
      const decisions: Array<Decision> = []
      for (const entry of entries) {
        const hook = entry.hooks["tool.after"]
        if (hook === undefined) continue
        const answer: After = yield* run(entry, "tool.after", () => hook(call))
        if (answer?._tag === "Proceed") continue
        if (answer?._tag !== "Context")
          return yield* new HookError({
            plugin: entry.plugin,
            hook: "tool.after",
            detail: `answered ${describe(answer)}, not proceed or context`,
          })
        context.push(yield* checkedContext(entry, "tool.after", answer.text))
        decisions.push(decision(entry, "tool.after", { decision: "context" }))
      }
      return { context, decisions }
    })

  return Service.of({ register, has, evaluate, before, after })
})

/**
 * The Location-scoped layer, with no hooks registered.
 *
 * @since 0.4.0
 * @category layers
 */
export const layer: Layer.Layer<Service> = Layer.effect(Service, make)
