/**
 * The one way a caller of `Materialization.settle` builds its input: the identity the calls belong to (session,
 * agent, assistant message) plus one call. The Runner and every adapter build it here, so a call keeps the
 * provider's id wherever the caller has one, and only a call without one gets a fresh `call_…` id.
 *
 * The assistant message id names the model message the call came from; permission requests and questions carry
 * it (with the call id) as their source. It belongs to the identity, not to the call: the Runner makes one per
 * turn, an adapter uses the one it was given (or made) for all the calls it settles.
 *
 * Untraced plain functions: they run once per tool call.
 *
 * @since 0.3.0
 */
import * as Identifier from "../values/identifier.js"
import type * as Tool from "./tool.js"
import type * as ToolRegistry from "./tool-registry.js"

/**
 * Who settles: the session, agent and assistant message the calls belong to.
 *
 * @since 0.3.0
 * @category models
 */
export interface Identity {
  readonly sessionID: string
  readonly agent: string
  readonly assistantMessageID: string
}

/**
 * One call as the caller received it; `id` is the provider's call id, absent when the caller is not told it.
 *
 * @since 0.3.0
 * @category models
 */
export interface Call {
  readonly id?: string | undefined
  readonly name: string
  readonly input: unknown
}

/**
 * An identity for `sessionID` and `agent`, with a fresh `msg_…` assistant message id unless one is given.
 *
 * @since 0.3.0
 * @category constructors
 */
export const identity = (input: {
  readonly sessionID: string
  readonly agent: string
  readonly assistantMessageID?: string | undefined
}): Identity => ({
  sessionID: input.sessionID,
  agent: input.agent,
  assistantMessageID: input.assistantMessageID ?? Identifier.create("msg"),
})

/**
 * A fresh call id, for a call whose provider id the caller does not have.
 *
 * @since 0.3.0
 * @category constructors
 */
export const callID = (): string => Identifier.create("call")

/**
 * The settle input of `call` under `identity`: the provider's call id when the call has one, a fresh one
 * otherwise; `progress` receives the call's progress reports.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  identity: Identity,
  call: Call,
  progress?: (update: Tool.Progress) => void,
): ToolRegistry.ExecuteInput => {
  const { sessionID, agent, assistantMessageID } = identity
  const settled = { id: call.id ?? callID(), name: call.name, input: call.input }
  return progress === undefined
    ? { sessionID, agent, assistantMessageID, call: settled }
    : { sessionID, agent, assistantMessageID, call: settled, progress }
}
