/**
 * However an `ExecuteInput` is built (a literal, a spread of an identity object, a class instance with getters, a
 * null-prototype object, an object with a non-enumerable own property), the tool sees the same context, progress
 * reaches the sink, and the store files the output under the same session and call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { ApplicationTools, Tool, ToolRegistry } from "../src/index.js"
import { mockStore, storeCalls } from "./support/registry.js"

const seen: Array<Tool.Context> = []
const reporter = Tool.make({
  description: "Reports its context",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.String,
  execute: ({ text }, context) =>
    Effect.sync(() => {
      seen.push(context)
      context.progress?.({ message: text })
      return text
    }),
})

const identity = { sessionID: "ses_input", agent: "build", assistantMessageID: "msg_input" }

class Getters {
  get sessionID() {
    return identity.sessionID
  }
  get agent() {
    return identity.agent
  }
  get assistantMessageID() {
    return identity.assistantMessageID
  }
  constructor(
    readonly call: { readonly id: string; readonly name: string; readonly input: unknown },
    readonly progress?: (update: Tool.Progress) => void,
  ) {}
}

const shapes = (
  id: string,
  progress: ((update: Tool.Progress) => void) | undefined,
): ReadonlyArray<readonly [string, ToolRegistry.ExecuteInput]> => {
  const call = { id, name: "reporter", input: { text: id } }
  const withProgress = progress === undefined ? {} : { progress }
  const nullPrototype = Object.assign(Object.create(null), identity, { call }, withProgress)
  const hidden = { ...identity, call }
  if (progress !== undefined) Object.defineProperty(hidden, "progress", { value: progress, enumerable: false })
  const hiddenCall = { ...identity, ...withProgress }
  Object.defineProperty(hiddenCall, "call", { value: call, enumerable: false })
  return [
    [
      "literal",
      {
        sessionID: identity.sessionID,
        agent: identity.agent,
        assistantMessageID: identity.assistantMessageID,
        call,
        ...withProgress,
      },
    ],
    ["spread", { ...identity, call, ...withProgress }],
    ["getters", new Getters(call, progress)],
    ["null prototype", nullPrototype],
    ["non-enumerable progress", hidden],
    ["non-enumerable call", hiddenCall as ToolRegistry.ExecuteInput],
  ]
}

const layer = ToolRegistry.layer.pipe(Layer.provideMerge(Layer.merge(ApplicationTools.layer, mockStore)))

describe("settle reads any ExecuteInput shape", () => {
  it.scoped("the same context, progress and bound identity for every shape, with and without progress", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry.Service
      yield* registry.register({ reporter })
      const turn = yield* registry.materialize()
      for (const withSink of [false, true]) {
        const reports: Array<string> = []
        const sink = withSink ? (update: Tool.Progress) => void reports.push(update.message) : undefined
        const inputs = shapes(withSink ? "call_sink" : "call_plain", sink)
        seen.length = 0
        for (const [, input] of inputs) {
          const settlement = yield* turn.settle(input)
          expect(settlement.result).toEqual({ type: "text", value: withSink ? "call_sink" : "call_plain" })
        }
        const toolCallID = withSink ? "call_sink" : "call_plain"
        // The call as sent and the definition this materialization advertised (what a prompt shows and digests).
        const expected = {
          ...identity,
          toolCallID,
          ...(sink === undefined ? {} : { progress: sink }),
          call: expect.objectContaining({ id: toolCallID, name: "reporter", input: { text: toolCallID } }),
          definition: turn.definitions.find((definition) => definition.name === "reporter"),
        }
        expect(seen.map((context) => ({ ...context }))).toEqual(inputs.map(() => expected))
        for (const context of seen) expect(Object.keys(context)).toEqual(Object.keys(expected))
        expect(reports).toEqual(withSink ? inputs.map(() => "call_sink") : [])
      }
      const bound = yield* storeCalls
      expect(bound.map(({ sessionID, toolCallID }) => `${sessionID}/${toolCallID}`)).toEqual([
        ...Array(6).fill("ses_input/call_plain"),
        ...Array(6).fill("ses_input/call_sink"),
      ])
    }).pipe(Effect.provide(layer)),
  )
})
