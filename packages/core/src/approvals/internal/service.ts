/**
 * The approval protocol of one Location, over the permission service's pending queue: `pending` and `get` read the
 * queue, `prompts` streams `Asked` for what is pending and then the live `Asked` / `Answered` / `Expired` events,
 * and `answer` goes through the queue's one answer path. Every channel but `in-process` must name the prompt's
 * digest.
 *
 * @since 0.3.0
 */
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as Fx from "effect/Effect"
import * as EventV2 from "../../place/event.js"
import {
  type Answer,
  DigestMismatchError,
  type Filter,
  IN_PROCESS,
  type Interface,
  type PromptEvent,
  Service,
} from "../../permission/internal/protocol.js"
import { NotFoundError } from "../../permission/internal/error.js"
import * as PermissionQueue from "../../permission/internal/queue.js"
import { Event } from "../../permission/internal/schema.js"

const matches = (filter: Filter | undefined, sessionID: string): boolean =>
  filter?.sessionID === undefined || filter.sessionID === sessionID

/**
 * Builds the approval protocol over the current Location's permission queue.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = Fx.gen(function* () {
  const queue = yield* PermissionQueue.Queue
  const events = yield* EventV2.Service

  const pending = Fx.fn("Approvals.pending")(function* (filter?: Filter) {
    return queue
      .entries()
      .filter((entry) => matches(filter, entry.request.sessionID))
      .map(queue.prompt)
  })

  const get = Fx.fn("Approvals.get")(function* (requestID: string) {
    const entry = queue.entry(requestID)
    if (entry === undefined) return yield* new NotFoundError({ requestID })
    return queue.prompt(entry)
  })

  // A listener runs synchronously inside each publish, while an asked entry is still pending, so its prompt is
  // taken from the queue then; the snapshot is taken right after the listener is registered, and an ask seen by
  // both is delivered once.
  const prompts = (filter?: Filter): Stream.Stream<PromptEvent> =>
    Stream.unwrapScoped(
      Fx.gen(function* () {
        const live = yield* Fx.acquireRelease(Queue.unbounded<PromptEvent>(), Queue.shutdown)
        const snapshot = new Set<string>()
        yield* events.listen(
          (event) => {
            if (!matches(filter, event.data.sessionID)) return
            if (event.type === "permission.v2.asked") {
              if (snapshot.has(event.data.id)) return
              const entry = queue.entry(event.data.id)
              if (entry !== undefined) live.unsafeOffer({ _tag: "Asked", prompt: queue.prompt(entry) })
            } else if (event.type === "permission.v2.answered") live.unsafeOffer({ _tag: "Answered", ...event.data })
            else live.unsafeOffer({ _tag: "Expired", ...event.data })
          },
          Event.Asked,
          Event.Answered,
          Event.Expired,
        )
        const first = queue.entries().filter((entry) => matches(filter, entry.request.sessionID))
        for (const entry of first) snapshot.add(entry.request.id)
        const asked = first.map((entry): PromptEvent => ({ _tag: "Asked", prompt: queue.prompt(entry) }))
        return Stream.concat(Stream.fromIterable(asked), Stream.fromQueue(live))
      }),
    )

  const answer = Fx.fn("Approvals.answer")(function* (input: Answer) {
    if (input.digest === undefined && input.channel !== IN_PROCESS) {
      return yield* new DigestMismatchError({ requestID: input.requestID })
    }
    return yield* queue.answer(input)
  })

  return Service.of({ pending, get, prompts, answer } satisfies Interface)
})

/**
 * The Location's approval protocol; needs `PermissionV2.layer` (which provides the queue) and the event bus.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, PermissionQueue.Queue | EventV2.Service> = Layer.effect(Service, make)
