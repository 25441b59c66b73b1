/**
 * One generation of the server (one build of the Location) and how a `tools/call` settles in it: through the
 * registry's materialization, with progress notifications and a heartbeat for a call with a progress token, and
 * the notes for the model that answering its asks left (see `asks.ts`).
 *
 * @since 0.3.0
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import type {
  CallToolRequest,
  CallToolResult,
  ServerNotification,
  ServerRequest,
} from "@modelcontextprotocol/sdk/types.js"
import {
  type AgentV2,
  type Approvals,
  type EventV2,
  type PermissionV2,
  type QuestionV2,
  Runner,
  type SessionV2,
  SettleInput,
  Tool,
  ToolRegistry,
} from "@toolgate/core"
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schedule from "effect/Schedule"
import * as Tools from "../tools.js"
import type * as Asks from "./asks.js"

/**
 * The services a generation runs on: one Location as `Core.layerLocation` provides it.
 *
 * @since 0.3.0
 * @category models
 */
export type Requirements =
  | ToolRegistry.Service
  | AgentV2.Service
  | SessionV2.Service
  | PermissionV2.Service
  | Approvals.Service
  | QuestionV2.Service
  | EventV2.Service

/**
 * One build of the Location the server answers from; `run` replaces it when configuration files change.
 *
 * @since 0.3.0
 * @category models
 */
export interface Generation {
  readonly context: Context.Context<Requirements>
  /**
   * Who every call of the generation settles as: its session, agent and one assistant message. MCP does not say
   * which model message a `tools/call` came from, so the calls of one session share one message id and are told
   * apart by their call ids.
   */
  readonly identity: SettleInput.Identity
  readonly rules: ReadonlyArray<ToolRegistry.VisibilityRule>
  /** The action a call (by call id) waits for a person on, while it does. */
  readonly waiting: Map<string, string>
  /** Notes for the model, by call id, added to the call's result (an "always" that could not be saved). */
  readonly notes: Asks.Notes
  inflight: number
  retired: boolean
  /** Closes the generation's own scope (generations built by `run`); `serve`'s is closed by its caller. */
  readonly close?: Effect.Effect<void>
}

/** Hides the `question` tool (its permission action) from a client that cannot answer questions. */
const WITHOUT_QUESTIONS: ToolRegistry.VisibilityRule = { action: "question", resource: "*", effect: "deny" }

/**
 * The generation's catalogue as this client may see it: without `question` when it cannot elicit.
 *
 * @since 0.3.0
 * @category utilities
 */
export const materialize = (generation: Generation, server: Server) =>
  Effect.provide(
    Effect.flatMap(ToolRegistry.Service, (registry) =>
      registry.materialize(
        server.getClientCapabilities()?.elicitation === undefined
          ? [...generation.rules, WITHOUT_QUESTIONS]
          : generation.rules,
      ),
    ),
    generation.context,
  )

const failureText = (cause: Cause.Cause<unknown>): string => {
  if (Tool.isUserStop(cause) || Cause.isInterruptedOnly(cause)) return Runner.INTERRUPTED
  const failure = Cause.squash(cause)
  return `Tool execution failed: ${failure instanceof Error ? failure.message : Tools.textOf(failure)}`
}

/**
 * Ends a retired generation once its last call has settled.
 *
 * @since 0.3.0
 * @category utilities
 */
export const release = (generation: Generation): Effect.Effect<void> =>
  generation.retired && generation.inflight === 0 && generation.close !== undefined ? generation.close : Effect.void

/**
 * Runs an Effect for a request handler, interrupted when the request is cancelled.
 *
 * @since 0.3.0
 * @category models
 */
export type Run = <A>(effect: Effect.Effect<A>, signal?: AbortSignal) => Promise<A>

/**
 * Settles one `tools/call` in `generation`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const call = (
  generation: Generation,
  server: Server,
  params: CallToolRequest["params"],
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  heartbeat: Duration.Duration,
  run: Run,
): Promise<CallToolResult> => {
  // MCP has no provider call id (the JSON-RPC request id is the transport's), so each call gets a fresh one.
  const callID = SettleInput.callID()
  const token = extra._meta?.progressToken
  let sent = 0
  let last = Date.now()
  const notify = (update: Tool.Progress) => {
    if (token === undefined) return
    sent = Math.max(sent + 1, update.progress ?? 0)
    last = Date.now()
    const notification: ServerNotification = {
      method: "notifications/progress",
      params: {
        progressToken: token,
        progress: sent,
        ...(update.total === undefined ? {} : { total: update.total }),
        message: update.message,
      },
    }
    extra.sendNotification(notification).catch(() => undefined)
  }
  const started = Date.now()
  const beat = Effect.sync(() => {
    if (Date.now() - last < Duration.toMillis(heartbeat) * 0.9) return
    const action = generation.waiting.get(callID)
    const seconds = Math.round((Date.now() - started) / 1000)
    notify({ message: action === undefined ? `running (${seconds}s)` : `waiting for permission: ${action}` })
  })
  const settle = Effect.flatMap(materialize(generation, server), (turn) =>
    turn.settle(
      SettleInput.make(
        generation.identity,
        { id: callID, name: params.name, input: params.arguments ?? {} },
        token === undefined ? undefined : notify,
      ),
    ),
  )
  // The heartbeat fiber lives in the call's own scope, so it ends (is interrupted) with the call.
  const withHeartbeat =
    token === undefined
      ? settle
      : Effect.scoped(
          Effect.zipRight(
            Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(Duration.millis(Duration.toMillis(heartbeat) / 4)))),
            settle,
          ),
        )
  return run(
    Effect.suspend(() => {
      generation.inflight++
      return withHeartbeat
    }).pipe(
      Effect.exit,
      Effect.map((exit): CallToolResult => {
        const result: CallToolResult = Exit.isSuccess(exit)
          ? Tools.toCallToolResult(exit.value)
          : { content: [{ type: "text", text: failureText(exit.cause) }], isError: true }
        const notes = generation.notes.get(callID)
        if (notes === undefined) return result
        generation.notes.delete(callID)
        return { ...result, content: [...result.content, ...notes.map((text) => ({ type: "text" as const, text }))] }
      }),
      Effect.ensuring(
        Effect.suspend(() => {
          generation.inflight--
          return release(generation)
        }),
      ),
    ),
    extra.signal,
  )
}
