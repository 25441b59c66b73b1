/**
 * A small in-memory `Approvals.Interface` for the approval server's tests while the real layer is not wired: `ask`
 * suspends the caller until an answer (or fails it), `service` is the protocol a client sees.
 */
import { Deferred, Effect, PubSub, Stream } from "effect"
import { Approvals, PermissionV2 } from "../../src/index.js"

export interface Fake {
  readonly service: Approvals.Interface
  /** Publishes `prompt` as pending and waits for its answer. */
  readonly ask: (prompt: Approvals.Prompt) => Effect.Effect<Approvals.Answer>
  readonly answers: ReadonlyArray<Approvals.Answer>
}

export const make = Effect.gen(function* () {
  const pending = new Map<string, { prompt: Approvals.Prompt; done: Deferred.Deferred<Approvals.Answer> }>()
  const answered = new Set<string>()
  const answers: Array<Approvals.Answer> = []
  const hub = yield* PubSub.unbounded<Approvals.PromptEvent>()
  const matches = (filter: Approvals.Filter | undefined, sessionID: string) =>
    filter?.sessionID === undefined || filter.sessionID === sessionID

  const service: Approvals.Interface = {
    pending: (filter) =>
      Effect.sync(() => [...pending.values()].map((e) => e.prompt).filter((p) => matches(filter, p.request.sessionID))),
    get: (requestID) => {
      const entry = pending.get(requestID)
      return entry === undefined
        ? Effect.fail(new PermissionV2.NotFoundError({ requestID }))
        : Effect.succeed(entry.prompt)
    },
    prompts: (filter) =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const live = yield* PubSub.subscribe(hub)
          const snapshot = [...pending.values()].map((e) => e.prompt)
          const seen = new Set(snapshot.map((p) => p.request.id))
          return Stream.concat(
            Stream.fromIterable(snapshot.map((prompt): Approvals.PromptEvent => ({ _tag: "Asked", prompt }))),
            Stream.fromQueue(live).pipe(
              Stream.filter((event) => !(event._tag === "Asked" && seen.has(event.prompt.request.id))),
            ),
          ).pipe(
            Stream.filter((event) =>
              matches(filter, event._tag === "Asked" ? event.prompt.request.sessionID : event.sessionID),
            ),
          )
        }),
      ),
    answer: (answer) =>
      Effect.gen(function* () {
        if (answered.has(answer.requestID))
          return yield* new Approvals.AlreadyAnsweredError({ requestID: answer.requestID })
        const entry = pending.get(answer.requestID)
        if (entry === undefined) return yield* new PermissionV2.NotFoundError({ requestID: answer.requestID })
        if (answer.digest !== undefined && answer.digest !== entry.prompt.digest)
          return yield* new Approvals.DigestMismatchError({ requestID: answer.requestID })
        if (!entry.prompt.choices.some((choice) => choice.id === answer.choice))
          return yield* new Approvals.UnknownChoiceError({ requestID: answer.requestID, choice: answer.choice })
        pending.delete(answer.requestID)
        answered.add(answer.requestID)
        answers.push(answer)
        yield* PubSub.publish(hub, {
          _tag: "Answered",
          requestID: answer.requestID,
          sessionID: entry.prompt.request.sessionID,
          choice: answer.choice,
          channel: answer.channel,
          ...(answer.by === undefined ? {} : { by: answer.by }),
        })
        yield* Deferred.succeed(entry.done, answer)
      }),
  }

  const ask = (prompt: Approvals.Prompt) =>
    Effect.gen(function* () {
      const done = yield* Deferred.make<Approvals.Answer>()
      pending.set(prompt.request.id, { prompt, done })
      yield* PubSub.publish(hub, { _tag: "Asked", prompt })
      return yield* Deferred.await(done)
    })

  return { service, ask, answers } satisfies Fake
})

/** A prompt for an edit of `file` with a diff, digest `digest`. */
export const editPrompt = (
  id: string,
  digest: string,
  diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
): Approvals.Prompt => ({
  request: { id, sessionID: "ses_test", action: "edit", resources: ["x"], save: ["*"] },
  digest,
  diff,
  choices: [
    { id: "once", lifetime: "once", label: "Allow once", action: "edit", saves: [] },
    { id: "reject", lifetime: "reject", label: "Reject", action: "edit", saves: [] },
  ],
  askedAt: 0,
})
