/**
 * A complete real Location for the check-at-use trust tests: `Core.layerLocation` on a temp directory with only the
 * given configuration, an in-memory database, and a responder that records every permission ask and rejects it
 * with a message (so the call ends as a tool error and nothing asked for is done).
 */
import { Context, Effect, Layer, Queue } from "effect"
import { type Config, Core, EventV2, PermissionV2, SessionV2, ToolRegistry } from "../../src/index.js"
import { tempDir } from "./location.js"

/** Every ask the responder saw, in order. */
export interface AskLog {
  readonly requests: Array<PermissionV2.Request>
}

/** The responder's log. */
export class Asks extends Context.Tag("test/CheckAtUseAsks")<Asks, AskLog>() {}

const rejecting = Layer.scoped(
  Asks,
  Effect.gen(function* () {
    const events = yield* EventV2.Service
    const permission = yield* PermissionV2.Service
    const log: AskLog = { requests: [] }
    const queue = yield* events.queue(PermissionV2.Event.Asked)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(queue), (envelope) => {
          const request = envelope.data
          log.requests.push(request)
          return Effect.ignore(permission.reply({ requestID: request.id, reply: "reject", message: "no" }))
        }),
      ),
    )
    return log
  }),
)

/** A real Location on `directory` whose configuration is only `config`; every ask is rejected with "no". */
export const realLocation = (directory: string, config: Config.Info) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const data = yield* tempDir("toolgate-data-")
      return rejecting.pipe(
        Layer.provideMerge(Core.layerLocation({ directory, discover: false, config })),
        Layer.provideMerge(Core.layerProcess({ data, memoryDatabase: true })),
      )
    }),
  )

/** A `build` session and one materialization; `settle(name, input)` runs one call through it. */
export const caller = Effect.gen(function* () {
  const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
  const turn = yield* (yield* ToolRegistry.Service).materialize([])
  let calls = 0
  return (name: string, input: unknown) =>
    turn.settle({
      sessionID: session.id,
      agent: "build",
      assistantMessageID: "msg_check_at_use",
      call: { id: `call_${name}_${calls++}`, name, input },
    })
})

/** The rejection a rejected ask leaves as the tool result. */
export const REJECTED = "The user rejected permission to use this specific tool call with the following feedback: no"
