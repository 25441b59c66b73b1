/**
 * HookGate: the Location's tool hooks in settlement. It implements the registry's `ToolHooks` port with `Hooks` and
 * the permission gate, so the registry stays free of both: `tool.before` hooks run after the stale check (a deny
 * refuses the call with the hook's message, an ask is asked through `PermissionV2` and so in every channel, a rewrite
 * is settled as a new input), `tool.after` hooks see the output before it is bounded. Every decision is journaled
 * with its origin `hook:<plugin>/<hook>`; a hook that fails or times out fails the call closed, naming it. See
 * docs/plugins.md.
 *
 * @since 0.4.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as DecisionJournal from "../journal/decision-journal.js"
import * as Location from "../place/location.js"
import * as Hooks from "../permission/hooks.js"
import * as PermissionV2 from "../permission/permission.js"
import type * as Tool from "../tool/tool.js"
import * as ToolHooks from "../tool/tool-hooks.js"
import * as LLM from "../values/llm.js"

/**
 * The action of the ask a `tool.before` hook makes. A configured deny naming it refuses the call; only a rule
 * naming it exactly can allow it (a wildcard allow does not), and `always` saves nothing.
 *
 * @since 0.4.0
 * @category constants
 */
export const ACTION = PermissionV2.HOOK_ACTION

/**
 * The port over the Location's hooks and permission gate.
 *
 * @since 0.4.0
 * @category constructors
 */
export const make: Effect.Effect<ToolHooks.Interface, never, Hooks.Service | PermissionV2.Service | Location.Service> =
  Effect.gen(function* () {
    const hooks = yield* Hooks.Service
    const permission = yield* PermissionV2.Service
    const location = yield* Location.Service
    const journal = Option.getOrUndefined(yield* Effect.serviceOption(DecisionJournal.Service))
    const projectID = location.project.id

    const record = (call: LLM.ToolCall, context: Tool.Context, decisions: ReadonlyArray<Hooks.Decision>) =>
      journal === undefined || decisions.length === 0
        ? Effect.void
        : Effect.forEach(
            decisions,
            (decision) =>
              journal.record((): DecisionJournal.Draft => ({
                kind: "hook",
                projectID,
                sessionID: context.sessionID,
                action: call.name,
                resources: [],
                detail: {
                  origin: decision.origin,
                  plugin: decision.plugin,
                  hook: decision.hook,
                  decision: decision.decision,
                  ...(decision.reason === undefined ? {} : { reason: decision.reason }),
                  tool: { name: call.name, callID: call.id },
                },
              })),
            { discard: true },
          )

    const failed = (call: LLM.ToolCall, context: Tool.Context) => (error: Hooks.HookError) =>
      Effect.zipRight(
        record(call, context, [
          {
            plugin: error.plugin,
            hook: error.hook as Hooks.Name,
            origin: Hooks.originOf(error.plugin, error.hook),
            decision: "failed",
            reason: error.detail,
          },
        ]),
        Effect.fail(PermissionV2.toToolFailure(error)),
      )

    const hookCall = (call: LLM.ToolCall, context: Tool.Context): Hooks.ToolCall => ({
      sessionID: context.sessionID,
      agent: context.agent,
      tool: call.name,
      callID: call.id,
      input: call.input,
    })

    // The ask of one `tool.before` hook: the call as it will run is the prompt's source (its digest covers the
    // rewritten input), the hook and its reason are the request's metadata.
    const askFor = (call: LLM.ToolCall, context: Tool.Context, decision: Hooks.Decision) =>
      permission
        .assert({
          ...PermissionV2.fromToolCall({ ...context, call }),
          action: ACTION,
          resources: [`${decision.plugin}/${call.name}`],
          save: [],
          metadata: { hook: decision.origin, reason: decision.reason ?? "", tool: call.name },
        })
        .pipe(
          Effect.catchTags({
            "PermissionV2.BlockedError": (error) => Effect.fail(PermissionV2.toToolFailure(error)),
            "PermissionV2.CorrectedError": (error) => Effect.fail(PermissionV2.toToolFailure(error)),
            "Approvals.TimedOutError": (error) => Effect.fail(PermissionV2.toToolFailure(error)),
            "Hooks.HookError": (error) => Effect.fail(PermissionV2.toToolFailure(error)),
            "Session.NotFoundError": (error) =>
              Effect.fail(new LLM.ToolFailure({ message: `No session ${error.sessionID}` })),
          }),
        )

    const before = (call: LLM.ToolCall, context: Tool.Context): Effect.Effect<ToolHooks.Prepared, LLM.ToolFailure> =>
      Effect.matchEffect(hooks.before(hookCall(call, context)), {
        onFailure: failed(call, context),
        onSuccess: (prepared) => {
          if (prepared._tag === "Refused") {
            const origin = prepared.decisions.at(-1)!.origin
            return Effect.zipRight(
              record(call, context, prepared.decisions),
              Effect.fail(new LLM.ToolFailure({ message: `Denied by ${origin}: ${prepared.message}` })),
            )
          }
          const settled: LLM.ToolCall = prepared.rewritten ? { ...call, input: prepared.input } : call
          return Effect.zipRight(
            record(call, context, prepared.decisions),
            Effect.as(
              Effect.forEach(prepared.asks, (decision) => askFor(settled, context, decision), { discard: true }),
              { call: settled, context: prepared.context },
            ),
          )
        },
      })

    const after = (
      prepared: ToolHooks.Prepared,
      context: Tool.Context,
      output: LLM.ToolOutput,
    ): Effect.Effect<LLM.ToolOutput, LLM.ToolFailure> => {
      const call = prepared.call
      const withContext = (more: ReadonlyArray<string>): LLM.ToolOutput => {
        const notes = [...prepared.context, ...more]
        if (notes.length === 0) return output
        // Empty content would have shown the structured value as JSON: keep showing it beside the notes.
        const base: ReadonlyArray<LLM.ToolContent> =
          output.content.length > 0 ? output.content : [{ type: "text", text: JSON.stringify(output.structured) }]
        return {
          structured: output.structured,
          content: [...base, ...notes.map((text) => ({ type: "text" as const, text }))],
        }
      }
      if (!hooks.has("tool.after")) return Effect.succeed(withContext([]))
      return Effect.matchEffect(hooks.after({ ...hookCall(call, context), output }), {
        onFailure: failed(call, context),
        onSuccess: (result) => Effect.as(record(call, context, result.decisions), withContext(result.context)),
      })
    }

    return ToolHooks.Service.of({
      active: () => hooks.has("tool.before") || hooks.has("tool.after"),
      before,
      after,
    })
  })

/**
 * The port as a layer; the Location's `ToolRegistry.layer` reads it when it is built, so provide it to that layer.
 *
 * @since 0.4.0
 * @category layers
 */
export const layer: Layer.Layer<ToolHooks.Service, never, Hooks.Service | PermissionV2.Service | Location.Service> =
  Layer.effect(ToolHooks.Service, make)
