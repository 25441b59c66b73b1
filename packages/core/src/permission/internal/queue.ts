/**
 * The pending queue of one Location's permission service: the entries waiting for an answer, the one answer path
 * (`PermissionV2.reply` and `Approvals.answer` both end here), expiry after `permission.ask_timeout`, the release of
 * asks that saved or session approvals now cover, and the same-session cascade of a rejection. The `Queue` tag is how
 * `Approvals.layer` reads the same queue; it is provided by `PermissionV2.layer` beside `PermissionV2.Service`.
 *
 * Every part reads and changes the same private state (the `pending` map, each entry's `answering` flag and timer,
 * the `recent` ids) under one rule — an entry is settled exactly once, and only after what its answer saves is in
 * force — so answer, expiry, release and cascade share this module and that state is never exported. What does not
 * touch it lives beside it: session approvals (`session.ts`), the watcher (`watch.ts`) and journal entries
 * (`journal.ts`); the Postgres mirror is `hosts/`, behind the `SharedAsks` port.
 *
 * @since 0.3.0
 * @internal
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Fx from "effect/Effect"
import type * as DecisionJournal from "../../journal/decision-journal.js"
import type * as EventV2 from "../../place/event.js"
import type * as PermissionSaved from "../permission-saved.js"
import type * as ProjectV2 from "../../place/project.js"
import * as Approvals from "./protocol.js"
import { prompt as promptOf } from "./prompt.js"
import { CallSource } from "./call.js"
import { CorrectedError, DeclinedError, NotFoundError, SaveError } from "./error.js"
import { saveError } from "./journal.js"
import { effectOf } from "./decide.js"
import * as Drafts from "./journal.js"
import * as Watch from "./watch.js"
import { Event, type ID, type Reply, type Request, type Ruleset } from "./schema.js"
import type { SessionApprovals } from "./session.js"
import type { View } from "./view.js"

// The port of pending asks shared across hosts: the queue reads `SharedAsks` optionally and calls its `SharedMirror`; the
// implementation over Postgres is `hosts/` (`SharedAsks.layer` of the `@toolgate/core/hosts` entry).

/**
 * How often a process with shared asks pending reads its claimed rows when no notification came (a notification
 * lost while its connection was down, a Postgres restart).
 *
 * @since 0.3.0
 * @category constants
 */
export const SHARED_POLL_INTERVAL_MS = 1000

/**
 * A queue entry, as far as sharing it goes (the queue's `Pending`).
 *
 * @since 0.4.0
 * @internal
 * @category models
 */
export interface SharedEntry {
  readonly request: Request
  readonly askedAt: number
}

/**
 * Who answered, as the queue passes it to the shared service.
 *
 * @since 0.4.0
 * @internal
 * @category models
 */
export interface SharedWho {
  readonly by: string | undefined
  readonly channel: string
}

/**
 * What a Location's queue gives the shared service, to apply claims to its entries.
 *
 * @internal
 * @category models
 */
export interface SharedHolder {
  readonly entry: (id: string) => SharedEntry | undefined
  /** The queue's one answer path. */
  readonly answer: (answer: Approvals.Answer) => Fx.Effect<void, Approvals.AnswerError>
  /** Declines the entry `id` as a same-session cascade of the rejection of `cause`. */
  readonly cascade: (id: string, cause: string, who: SharedWho) => Fx.Effect<void>
}

/**
 * The hooks a Location's queue calls on Postgres.
 *
 * @internal
 * @category models
 */
export interface SharedMirror {
  /** Inserts the entry's row (never fails: a failed insert is retried by the poll). */
  readonly created: (entry: SharedEntry, prompt: Approvals.Prompt) => Fx.Effect<void>
  /** The entries were answered with `choice` (recorded on their rows when they settle). */
  readonly answered: (entries: ReadonlyArray<SharedEntry>, choice: string, who: SharedWho) => void
  /** The entry left the queue: its row is settled. */
  readonly left: (entry: SharedEntry) => void
  /**
   * The entry is being rejected here: the pending rows of its session owned by other processes are claimed as
   * cascades (before the local release, so an ask raised after the rejection is not caught). Never fails.
   */
  readonly rejected: (entry: SharedEntry) => Fx.Effect<void>
}

/**
 * The process-wide service.
 *
 * @internal
 * @category models
 */
export interface SharedInterface {
  /** The owner of this process's rows (`undefined` on SQLite). */
  readonly ownerID: string | undefined
  /** The hooks of one Location's queue, or `undefined` (SQLite: nothing is mirrored). */
  readonly mirror: (scope: ProjectV2.ApprovalScope, holder: SharedHolder) => SharedMirror | undefined
}

/**
 * The tag of the process-wide shared-asks service (`PermissionV2.SharedAsks`; provided by `Core.layerProcess`).
 *
 * @since 0.3.0
 * @category tags
 */
export class SharedAsks extends Context.Tag("@toolgate/v2/PermissionSharedAsks")<SharedAsks, SharedInterface>() {}

/**
 * How long a settled row, or a row whose owner is gone, stays in `pending_ask` (one day).
 *
 * @since 0.3.0
 * @category constants
 */
export const SHARED_RETENTION_MS = 86_400_000

/**
 * How often a process that shares asks touches its pending rows and prunes the table (one hour).
 *
 * @since 0.3.0
 * @category constants
 */
export const SHARED_PRUNE_INTERVAL_MS = 3_600_000

/**
 * A pending request; the agent it was evaluated for stays private (clients never see it). Only an `assert` waits, so
 * only its entry carries a Deferred. `prompt` is computed the first time a client reads it (never on the ask path).
 *
 * @internal
 * @category models
 */
export interface Pending {
  readonly request: Request
  readonly agent: string | undefined
  readonly deferred: Deferred.Deferred<void, CorrectedError | Approvals.TimedOutError> | undefined
  readonly askedAt: number
  /** The expiry timer (only with `permission.ask_timeout`). */
  timer: Fiber.RuntimeFiber<void, never> | undefined
  /** An answer is saving its approval: a second answer is refused, expiry waits for its outcome. */
  answering: boolean
  prompt: Approvals.Prompt | undefined
}

/**
 * What `Approvals.layer` reads: the pending entries and the one answer path.
 *
 * @internal
 * @category models
 */
export interface Interface {
  /** The pending entries, oldest first. */
  readonly entries: () => ReadonlyArray<Pending>
  readonly entry: (id: string) => Pending | undefined
  /** The entry's prompt (computed once). */
  readonly prompt: (entry: Pending) => Approvals.Prompt
  /**
   * Answers a pending entry; the digest is checked when given; a failure changes nothing. `reply` is the three-way
   * reply the `Replied` event carries (default: the one the choice's lifetime stands for).
   */
  readonly answer: (answer: Approvals.Answer, reply?: Reply) => Fx.Effect<void, Approvals.AnswerError>
}

/**
 * The pending queue's tag (provided by `PermissionV2.layer`).
 *
 * @internal
 * @category tags
 */
export class Queue extends Context.Tag("@toolgate/v2/PermissionQueue")<Queue, Interface>() {}

/** How many settled request ids are remembered, so a late answer gets `AlreadyAnswered` rather than `NotFound`. */
const RECENT = 4096

const declined = () => new DeclinedError()

const settle = (entry: Pending, exit: () => Exit.Exit<void, CorrectedError | Approvals.TimedOutError>): void => {
  if (entry.deferred !== undefined) Deferred.unsafeDone(entry.deferred, exit())
}
const releasedExit = () => Exit.void
const succeedEntry = (entry: Pending) => settle(entry, releasedExit)
const declineEntry = (entry: Pending) => settle(entry, () => Exit.die(declined()))

/** Who answered, carried to the events and to what is saved. */
interface Who {
  readonly by: string | undefined
  readonly channel: string
  /** The request whose answer caused a release or cascade (journaled as its cause). */
  readonly cause?: string | undefined
}

/**
 * What the queue needs from its service.
 *
 * @internal
 * @category models
 */
export interface Deps {
  readonly events: EventV2.Interface
  readonly saved: PermissionSaved.Interface
  readonly view: View
  readonly sessions: SessionApprovals
  readonly scope: ProjectV2.ApprovalScope
  /** The decision journal, when the process has one: asks, answers, expiries, releases and cascades go there. */
  readonly journal: DecisionJournal.Interface | undefined
  readonly timeout: number | undefined
  readonly now: () => number
  readonly layerScope: Scope.Scope
  readonly layerRuntime: Runtime.Runtime<never>
  readonly closed: () => boolean
  /** On Postgres: mirrors the queue into `pending_ask` and applies claims (see hosts/internal/shared-asks.ts). */
  readonly share?: ((holder: SharedHolder) => SharedMirror | undefined) | undefined
}

/**
 * Builds the queue.
 *
 * @internal
 * @category constructors
 */
export const make = (deps: Deps) => {
  const { events, saved, view, sessions, scope, timeout, now, journal } = deps
  const { about, answeredEntry } = Drafts.make(scope)

  /**
   * Appends `drafts` durably before the state change they record. When the database cannot take them (a full disk,
   * an unwritable WAL) the answer still proceeds — `once` and `reject` must keep working on a broken database — and
   * the drafts stay in the journal's buffer, written with its next successful write; a warning names the request.
   * (An `always` is different: its entry commits with its save, and a failure is a `SaveError`.)
   */
  const journaled = (entry: Pending, drafts: () => ReadonlyArray<DecisionJournal.Draft>) => {
    if (journal === undefined) return Fx.void
    const built = drafts()
    return journal.append(built).pipe(
      Fx.catchAll((error) =>
        Fx.zipRight(
          Fx.forEach(built, (draft) => journal.record(draft), { discard: true }),
          Fx.logWarning(
            `DecisionJournal: could not write the decision on permission request ${entry.request.id} now; it stays buffered`,
            saveError(entry, error),
          ),
        ),
      ),
    )
  }
  const pending = new Map<ID, Pending>()
  const recent = new Set<string>()
  // Set once the queue is built; `undefined` on SQLite, so no ask does extra work there.
  let mirror: SharedMirror | undefined
  const fork = Runtime.runFork(deps.layerRuntime)

  const drop = (entry: Pending) => {
    if (pending.get(entry.request.id) !== entry) return
    pending.delete(entry.request.id)
    if (mirror !== undefined) mirror.left(entry)
    recent.add(entry.request.id)
    if (recent.size > RECENT) recent.delete(recent.values().next().value!)
    if (entry.timer !== undefined) entry.timer.unsafeInterruptAsFork(FiberId.none)
  }

  const prompt = (entry: Pending): Approvals.Prompt =>
    (entry.prompt ??= promptOf(
      entry.request,
      CallSource.toolOf(entry.request.source),
      entry.askedAt,
      timeout === undefined ? undefined : entry.askedAt + timeout,
    ))

  /** Expires `entry` if it is still pending and no answer is saving: Expired, then the waiter fails timed out. */
  const expire = (entry: Pending): Fx.Effect<void> =>
    Fx.suspend(() => {
      if (pending.get(entry.request.id) !== entry || entry.answering) return Fx.void
      const { id, sessionID, action } = entry.request
      const record =
        journal === undefined
          ? Fx.void
          : journal
              .append([{ kind: "expired", ...about(entry), detail: { timeoutMillis: timeout ?? 0 } }])
              .pipe(Fx.catchAll((error) => Fx.logWarning("PermissionV2: could not journal an expiry", error)))
      return Fx.zipRight(record, Fx.orDie(events.publish(Event.Expired, { sessionID, requestID: id }))).pipe(
        Fx.ensuring(
          Fx.sync(() => {
            entry.timer = undefined
            drop(entry)
            settle(entry, () =>
              Exit.fail(new Approvals.TimedOutError({ requestID: id, action, timeoutMillis: timeout ?? 0 })),
            )
          }),
        ),
      )
    })

  /**
   * Inserts a pending entry (with a Deferred when the caller waits), or dies when the Location closed or the id is
   * pending already. The caller runs it in an uninterruptible region and then runs `announce(entry, …)` in the same
   * region, so an entry is never left inserted without its Asked event.
   */
  const admit = (request: Request, agent: string | undefined, waits: boolean): Pending | Fx.Effect<never> => {
    if (deps.closed()) return Fx.die(declined())
    if (pending.has(request.id)) return Fx.die(new globalThis.Error(`Duplicate pending permission ID: ${request.id}`))
    const entry: Pending = {
      request,
      agent,
      deferred: waits ? Deferred.unsafeMake<void, CorrectedError | Approvals.TimedOutError>(FiberId.none) : undefined,
      askedAt: now(),
      timer: undefined,
      answering: false,
      prompt: undefined,
    }
    pending.set(request.id, entry)
    watcher.ensure()
    return entry
  }

  /**
   * Publishes Asked for an admitted entry, then starts its expiry timer and journals it, and succeeds with `value`;
   * a failed publish removes the entry again (as a defect).
   */
  const announce = <A>(entry: Pending, value: A): Fx.Effect<A> => {
    const request = entry.request
    // On Postgres the row is written once Asked is published (`created` never fails).
    const asked = events.publish(Event.Asked, request)
    const published = mirror === undefined ? asked : Fx.zipLeft(asked, mirror.created(entry, prompt(entry)))
    // `exit` and one flatMap instead of a match with two new handlers: this is on every queued ask's path.
    return Fx.flatMap(Fx.exit(published), (exit) => {
      if (Exit.isFailure(exit)) {
        drop(entry)
        return Fx.orDie(Fx.failCause(exit.cause))
      }
      if (timeout !== undefined && pending.get(request.id) === entry) {
        entry.timer = fork(Fx.forkIn(Fx.zipRight(Fx.sleep(timeout), expire(entry)), deps.layerScope)) as never
      }
      if (journal === undefined) return Fx.succeed(value)
      // Built when the journal writes it, off the ask's path (the prompt is computed then, once).
      return Fx.as(
        journal.record(() => {
          const shown = prompt(entry)
          return {
            kind: "asked",
            ...about(entry),
            detail: {
              digest: shown.digest,
              ...(request.save === undefined ? {} : { save: request.save }),
              choices: shown.choices.map((choice) => choice.id),
              ...(shown.tool === undefined ? {} : { tool: { name: shown.tool.name, callID: shown.tool.callID } }),
              ...(shown.deadline === undefined ? {} : { deadline: shown.deadline }),
            },
          }
        }),
        value,
      )
    })
  }

  /**
   * Queues `request` and succeeds with `value` once Asked is published; runs `admit` and `announce` from the caller's
   * synchronous part, so it must be called inside an uninterruptible region (`ask` runs it in one).
   */
  const enqueue = <A>(request: Request, agent: string | undefined, value: A): Fx.Effect<A> => {
    const admitted = admit(request, agent, false)
    return Fx.isEffect(admitted) ? admitted : announce(admitted, value)
  }

  /** Queues `request` with a Deferred for the caller to wait on, and succeeds with its entry. */
  const create = (request: Request, agent: string | undefined): Fx.Effect<Pending> =>
    Fx.uninterruptible(
      Fx.suspend(() => {
        const admitted = admit(request, agent, true)
        return Fx.isEffect(admitted) ? admitted : announce(admitted, admitted)
      }),
    )

  const answered = (entries: ReadonlyArray<Pending>, choice: string, who: Who) => {
    if (entries.length === 0) return Fx.void
    if (mirror !== undefined) mirror.answered(entries, choice, who)
    return Fx.orDie(
      events.publishAll(
        Event.Answered,
        entries.map((entry) => ({
          sessionID: entry.request.sessionID,
          requestID: entry.request.id,
          choice,
          ...(who.by === undefined ? {} : { by: who.by }),
          channel: who.channel,
        })),
      ),
    )
  }

  /**
   * Settles `entries` with one Replied event each, in their order, published as one batch: each entry is removed
   * right after its event reached every listener (so listeners see it pending during its own event, as with one
   * publish per entry) and settled once the batch is over. A listener failure stops the batch there: the entries
   * before it are removed and settled, that one and the later ones stay pending, and the failure is a defect.
   */
  const releaseAll = (entries: ReadonlyArray<Pending>, reply: Reply, finish: (entry: Pending) => void) =>
    Fx.suspend(() => {
      let delivered = 0
      const data = entries.map((entry) => ({ sessionID: entry.request.sessionID, requestID: entry.request.id, reply }))
      return events
        .publishAll(Event.Replied, data, (index) => {
          drop(entries[index]!)
          delivered = index + 1
        })
        .pipe(
          Fx.ensuring(
            Fx.sync(() => {
              for (let i = 0; i < delivered; i++) finish(entries[i]!)
            }),
          ),
          Fx.orDie,
        )
    })

  /**
   * Releases every other pending entry that now evaluates to allow (any session of this Location), in queue order.
   * The saved rows are read once and each session and (agent, session) pair resolved once, for this pass only.
   */
  const autoResolve = (who: Who) =>
    Fx.gen(function* () {
      yield* view.refresh
      const entries = Array.from(pending.values())
      const keys = entries.map((entry) => `${entry.agent ?? ""}\u0000${entry.request.sessionID}`)
      // `undefined`: the session no longer exists, so its entries stay pending.
      const configuredBy = new Map<string, Ruleset | undefined>()
      for (let i = 0; i < entries.length; i++) {
        if (configuredBy.has(keys[i]!)) continue
        const entry = entries[i]!
        const session = yield* view.sessionOf(entry.request.sessionID)
        configuredBy.set(keys[i]!, session === undefined ? undefined : yield* view.rulesOf(session, entry.agent))
      }
      const base = view.approvals()
      const released: Array<Pending> = []
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i]!
        if (pending.get(entry.request.id) !== entry || entry.answering) continue
        const configured = configuredBy.get(keys[i]!)
        if (configured === undefined) continue
        const { action, resources, sessionID } = entry.request
        if (effectOf(action, resources, configured, sessions.approvals(sessionID, base)) !== "allow") continue
        released.push(entry)
      }
      if (journal !== undefined && released.length > 0) {
        yield* journal
          .append(
            released.map((entry) => ({
              kind: "auto-resolved" as const,
              ...about(entry),
              detail: { ...(who.cause === undefined ? {} : { cause: who.cause }), decisions: [] },
            })),
          )
          .pipe(Fx.catchAll((error) => Fx.logWarning("PermissionV2: could not journal a release", error)))
      }
      yield* answered(released, "auto", who)
      yield* releaseAll(released, "always", succeedEntry)
    })

  // One release pass at a time: a reply's pass and the watcher's must not both publish the same entry.
  const releasing = Fx.unsafeMakeSemaphore(1)
  const release = (who: Who) => releasing.withPermits(1)(autoResolve(who))

  // While asks are pending, approvals saved elsewhere release the asks they cover (see watch.ts).
  const watcher = Watch.make({
    changeStamp: saved.changeStamp,
    stamp: view.stamp,
    release: release({ by: undefined, channel: "watcher" }),
    idle: () => deps.closed() || pending.size === 0,
    start: (watch) => void fork(Fx.forkIn(watch, deps.layerScope)),
  })

  /** The journal entry of `other`, declined as a same-session cascade of the rejected request `cause`. */
  const cascadedEntry = (other: Pending, cause: string): DecisionJournal.Draft => ({
    kind: "cascaded",
    ...about(other),
    detail: { cause, choice: "cascade" },
  })

  /** Declines `entries` as a cascade: an Answered (`cascade`) and a Replied (`reject`) each, then the waiters. */
  const declineCascaded = (entries: ReadonlyArray<Pending>, who: Who) =>
    Fx.zipRight(answered(entries, "cascade", who), releaseAll(entries, "reject", declineEntry))

  const reject = (entry: Pending, choice: Approvals.Choice, message: string | undefined, who: Who) =>
    Fx.gen(function* () {
      // Other processes' asks of the session first (an ask raised after this rejection must not be caught).
      if (mirror !== undefined) yield* mirror.rejected(entry)
      const sessionID = entry.request.sessionID
      const others = Array.from(pending.values()).filter(
        (other) => other !== entry && other.request.sessionID === sessionID && !other.answering,
      )
      // A reject proceeds even when it cannot be journaled: refusing is the safe side.
      yield* journaled(entry, () => [
        answeredEntry(entry, choice, who, undefined, message),
        ...others.map((other) => cascadedEntry(other, entry.request.id)),
      ]).pipe(Fx.catchAll((error) => Fx.logWarning("PermissionV2: could not journal a reject", error)))
      yield* answered([entry], choice.id, who)
      yield* releaseAll([entry], "reject", (settled) => {
        if (message) settle(settled, () => Exit.fail(new CorrectedError({ feedback: message })))
        else declineEntry(settled)
      })
      yield* declineCascaded(others, who)
    })

  /** Saves what an `always` choice shows, with who answered and until when; a failure changes nothing. */
  const persist = (
    entry: Pending,
    choice: Approvals.Choice,
    until: number | undefined,
    who: Who,
    ttl: number | undefined,
  ) =>
    journal === undefined
      ? save(entry, choice, until, who)
      : journal
          .transaction(
            Fx.zipRight(
              save(entry, choice, until, who),
              Fx.mapError(
                journal.appendInTransaction([answeredEntry(entry, choice, who, until, undefined, ttl)]),
                (error) => saveError(entry, error),
              ),
            ),
          )
          .pipe(Fx.mapError((error) => (error instanceof SaveError ? error : saveError(entry, error))))

  const save = (entry: Pending, choice: Approvals.Choice, until: number | undefined, who: Who) =>
    saved
      .add({
        ...scope,
        action: choice.action,
        resources: choice.saves.map((save) => save.pattern),
        ...(who.by === undefined ? {} : { by: who.by }),
        channel: who.channel,
        ...(until === undefined ? {} : { until }),
      })
      .pipe(Fx.mapError((error) => saveError(entry, error)))

  /** `once`, `session` or an `always`: what the choice saves is in force before the entry is released. */
  const approve = (entry: Pending, choice: Approvals.Choice, ttl: number | undefined, who: Who, reply: Reply) =>
    Fx.gen(function* () {
      const until = ttl === undefined ? undefined : now() + ttl
      const patterns = choice.saves.map((save) => save.pattern)
      if (choice.lifetime === "always" && patterns.length > 0) {
        entry.answering = true
        const outcome = yield* Fx.exit(persist(entry, choice, until, who, ttl))
        entry.answering = false
        if (Exit.isFailure(outcome)) {
          // Still pending; if its deadline passed while the save was failing, it expires now.
          if (timeout !== undefined && now() >= entry.askedAt + timeout) yield* expire(entry)
          return yield* outcome
        }
      }
      if (choice.lifetime !== "always") {
        entry.answering = true
        const logged = yield* Fx.exit(
          journaled(entry, () => [answeredEntry(entry, choice, who, until, undefined, ttl)]),
        )
        entry.answering = false
        if (Exit.isFailure(logged)) return yield* logged
      }
      if (choice.lifetime === "session" && patterns.length > 0)
        sessions.add(entry.request.sessionID, choice.action, patterns, until)
      if (pending.get(entry.request.id) === entry) {
        yield* answered([entry], choice.id, who)
        yield* releaseAll([entry], reply, succeedEntry)
      }
      if (patterns.length > 0 && choice.lifetime !== "once") yield* release({ ...who, cause: entry.request.id })
    })

  const answer = (input: Approvals.Answer, reply?: Reply): Fx.Effect<void, Approvals.AnswerError> =>
    Fx.uninterruptible(
      Fx.suspend((): Fx.Effect<void, Approvals.AnswerError> => {
        const entry = pending.get(input.requestID)
        if (entry === undefined || entry.answering) {
          return recent.has(input.requestID) || entry !== undefined
            ? Fx.fail(new Approvals.AlreadyAnsweredError({ requestID: input.requestID }))
            : Fx.fail(new NotFoundError({ requestID: input.requestID }))
        }
        const shown = prompt(entry)
        if (input.digest !== undefined && input.digest !== shown.digest) {
          return Fx.fail(new Approvals.DigestMismatchError({ requestID: input.requestID }))
        }
        const choice = shown.choices.find((candidate) => candidate.id === input.choice)
        if (choice === undefined) {
          return Fx.fail(new Approvals.UnknownChoiceError({ requestID: input.requestID, choice: input.choice }))
        }
        const who: Who = { by: input.by, channel: input.channel }
        if (choice.lifetime === "reject") return reject(entry, choice, input.message, who)
        return approve(entry, choice, input.ttlMillis, who, reply ?? (choice.lifetime === "always" ? "always" : "once"))
      }),
    )

  /** Declines every pending entry without events (the Location closed). */
  const close = () => {
    const entries = Array.from(pending.values())
    pending.clear()
    for (const entry of entries) {
      if (mirror !== undefined) mirror.left(entry)
      declineEntry(entry)
    }
  }

  /** Declines `entry` as a same-session cascade of `cause`, rejected in another process (a shared ask's claim). */
  const cascade = (id: string, cause: string, who: Who) =>
    Fx.suspend(() => {
      const entry = pending.get(id as ID)
      if (entry === undefined || entry.answering) return Fx.void
      return Fx.zipRight(
        journaled(entry, () => [cascadedEntry(entry, cause)]),
        declineCascaded([entry], who),
      )
    })

  const queue: Interface = {
    entries: () => Array.from(pending.values()),
    entry: (id) => pending.get(id as ID),
    prompt,
    answer,
  }
  mirror = deps.share?.({ entry: (id) => pending.get(id as ID), answer: (input) => answer(input), cascade })
  return { queue, create, enqueue, drop, close, pending }
}
