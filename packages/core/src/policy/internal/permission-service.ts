/**
 * The permission service of one Location: it evaluates each request against the agent's configured rules and the
 * project's saved approvals, queues what asks, and settles the queue on a reply or when approvals saved elsewhere
 * cover it. `PermissionV2` re-exports everything here.
 *
 * `ask` and `assert` run on every tool call, so they carry no tracing span; the other methods are traced.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Fx from "effect/Effect"
import * as AgentV2 from "../agent.js"
import * as EventV2 from "../../place/event.js"
import * as Location from "../../place/location.js"
import * as PermissionSaved from "../permission-saved.js"
import * as ProjectV2 from "../../place/project.js"
import * as ProtectedPath from "../../place/protected-path.js"
import * as SessionV2 from "../../place/session.js"
import {
  BlockedError,
  CorrectedError,
  DeclinedError,
  type Error,
  NotFoundError,
  SaveError,
} from "./permission-error.js"
import { evaluate, relevant } from "./permission-evaluate.js"
import { saveEntry } from "./permission-leaf.js"
import * as View from "./permission-view.js"
import {
  type AskResult,
  type AssertInput,
  type CheckInput,
  createID,
  type Effect,
  Event,
  type ID,
  type Reply,
  type ReplyInput,
  type Request,
  type Ruleset,
  type SaveScope,
} from "./permission-schema.js"

/**
 * How often a Location with pending asks checks whether the saved approvals changed (another process or Location
 * saved one), so that an ask a new approval covers is released without waiting for a reply in this Location. Only
 * while asks are pending; a check is one read of the database's change stamp.
 *
 * @since 0.3.0
 * @category constants
 */
export const PENDING_RECHECK_INTERVAL_MS = 100

/**
 * The permission service, one per Location.
 *
 * @since 0.1.0
 */
export interface Interface {
  /** Evaluates and, on ask, queues a prompt without waiting. */
  readonly ask: (input: AssertInput) => Fx.Effect<AskResult, SessionV2.NotFoundError>
  /** Blocks until allowed; a reject without message arrives as a `DeclinedError` defect. */
  readonly assert: (input: AssertInput) => Fx.Effect<void, BlockedError | CorrectedError | SessionV2.NotFoundError>
  /**
   * Answers a pending request. An `always` whose approval cannot be saved fails with `SaveError` and changes
   * nothing: the request stays pending, so the answerer can still answer it `once` or `reject`.
   */
  readonly reply: (input: ReplyInput) => Fx.Effect<void, NotFoundError | SaveError>
  /**
   * Evaluates each resource as `assert` would (configured deny first, then configured rules plus saved allows),
   * without asking: one effect per resource, in order. An empty list gives an empty answer.
   *
   * @since 0.2.0
   */
  readonly check: (input: CheckInput) => Fx.Effect<ReadonlyArray<Effect>, SessionV2.NotFoundError>
  readonly get: (id: string) => Fx.Effect<Request | undefined>
  readonly forSession: (sessionID: string) => Fx.Effect<ReadonlyArray<Request>>
  readonly list: () => Fx.Effect<ReadonlyArray<Request>>
}

/**
 * The PermissionV2 service tag.
 *
 * @since 0.1.0
 */
export class Service extends Context.Tag("@toolgate/v2/Permission")<Service, Interface>() {}

/**
 * A pending request; the agent it was evaluated for stays private (clients never see it). Only an `assert` waits, so
 * only its entry carries a Deferred: an `ask` entry has none, which halves the memory a queued ask holds.
 */
interface Pending {
  readonly request: Request
  readonly agent: string | undefined
  readonly deferred: Deferred.Deferred<void, CorrectedError> | undefined
}

/** Settles the waiter of `entry`, if it has one. */
const settle = (entry: Pending, exit: () => Exit.Exit<void, CorrectedError>): void => {
  if (entry.deferred !== undefined) Deferred.unsafeDone(entry.deferred, exit())
}
const releasedExit = () => Exit.void

type Decision =
  | { readonly effect: "deny"; readonly rules: Ruleset; readonly denied: ReadonlyArray<string> }
  | { readonly effect: "allow" | "ask" }

const declined = () => new DeclinedError()

/**
 * Aggregates per resource against the configured rules followed by the saved allows, for requests the
 * configured rules alone do not deny: allow when every resource evaluates to allow, else ask.
 */
const aggregate = (
  action: string,
  resources: ReadonlyArray<string>,
  configured: Ruleset,
  saved: Ruleset,
): "allow" | "ask" => {
  for (const resource of resources) {
    if (evaluate(action, resource, configured, saved).effect !== "allow") return "ask"
  }
  return "allow"
}

/**
 * Builds the permission service of the current Location.
 *
 * @since 0.1.0
 */
export const make = Fx.gen(function* () {
  const events = yield* EventV2.Service
  const location = yield* Location.Service
  const agents = yield* AgentV2.Service
  const sessions = yield* SessionV2.Service
  const saved = yield* PermissionSaved.Service
  const scope = ProjectV2.approvalScope(location.project.id, location.directory)
  const saveScope: SaveScope = {
    kind: scope.directory === "" ? "project" : "directory",
    projectID: scope.projectID,
    directory: scope.directory === "" ? location.project.directory : scope.directory,
  }
  const pending = new Map<ID, Pending>()
  let closed = false
  const layerScope = yield* Fx.scope
  const layerRuntime = yield* Fx.runtime<never>()

  const view = View.make(saved, sessions, agents, scope)
  const { configuredFor, refresh, rulesOf, sessionOf } = view

  const decide = (input: AssertInput, configured: Ruleset): Decision => {
    let denied: Array<string> | undefined
    for (const resource of input.resources) {
      if (evaluate(input.action, resource, configured).effect === "deny") (denied ??= []).push(resource)
    }
    if (denied !== undefined) return { effect: "deny", rules: relevant(input.action, configured), denied }
    return { effect: aggregate(input.action, input.resources, configured, view.approvals()) }
  }

  const evaluateInput = (input: AssertInput): Fx.Effect<Decision, SessionV2.NotFoundError> => {
    if (input.resources.length === 0) {
      return Fx.die(new globalThis.Error(`Permission request for ${input.action} must name at least one resource`))
    }
    return Fx.flatMap(configuredFor(input.sessionID, input.agent), (configured) =>
      configured === undefined
        ? Fx.fail(new SessionV2.NotFoundError({ sessionID: input.sessionID }))
        : Fx.succeed(decide(input, configured)),
    )
  }

  // A protected_path ask saves nothing, whichever tool raised it: `always` acts as `once` (docs/trust/protected-paths.md).
  const savesOf = (input: AssertInput) => (input.action === ProtectedPath.ACTION ? [] : input.save)
  const toRequest = (input: AssertInput): Request => ({
    id: createID(input.id),
    sessionID: input.sessionID,
    action: input.action,
    resources: input.resources,
    ...(savesOf(input) === undefined ? {} : { save: savesOf(input)! }),
    always: { action: input.action, entries: (savesOf(input) ?? []).map(saveEntry), scope: saveScope },
    ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
    ...(input.source === undefined ? {} : { source: input.source }),
  })

  const drop = (entry: Pending) => {
    if (pending.get(entry.request.id) === entry) pending.delete(entry.request.id)
  }

  /**
   * Inserts a pending entry (with a Deferred when the caller waits) and publishes Asked; a failed publish removes the
   * entry again (as a defect).
   */
  const create = (request: Request, agent: string | undefined, waits: boolean): Fx.Effect<Pending> =>
    Fx.uninterruptible(
      Fx.suspend(() => {
        if (closed) return Fx.die(declined())
        if (pending.has(request.id)) {
          return Fx.die(new globalThis.Error(`Duplicate pending permission ID: ${request.id}`))
        }
        const deferred = waits ? Deferred.unsafeMake<void, CorrectedError>(FiberId.none) : undefined
        const entry: Pending = { request, agent, deferred }
        pending.set(request.id, entry)
        if (!watching) startWatching()
        // One match instead of onError + orDie + as: this is on every queued ask's path.
        return Fx.matchCauseEffect(events.publish(Event.Asked, request), {
          onFailure: (cause) => {
            drop(entry)
            return Fx.orDie(Fx.failCause(cause))
          },
          onSuccess: () => Fx.succeed(entry),
        })
      }),
    )

  const publishReplied = (entry: Pending, reply: Reply) =>
    Fx.orDie(events.publish(Event.Replied, { sessionID: entry.request.sessionID, requestID: entry.request.id, reply }))

  const succeedEntry = (entry: Pending) => settle(entry, releasedExit)
  const declineEntry = (entry: Pending) => settle(entry, () => Exit.die(declined()))

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

  // `ask` and `assert` are plain functions returning an Effect, without a span: they run on every tool call.
  const ask = (input: AssertInput): Fx.Effect<AskResult, SessionV2.NotFoundError> =>
    Fx.suspend(() =>
      Fx.flatMap(evaluateInput(input), (decision): Fx.Effect<AskResult> => {
        if (decision.effect !== "ask") return Fx.succeed({ id: createID(input.id), effect: decision.effect })
        const request = toRequest(input)
        return Fx.as(create(request, input.agent, false), { id: request.id, effect: decision.effect })
      }),
    )

  const assert = (input: AssertInput): Fx.Effect<void, Error | SessionV2.NotFoundError> =>
    Fx.uninterruptibleMask((restore) =>
      Fx.flatMap(evaluateInput(input), (decision): Fx.Effect<void, Error> => {
        if (decision.effect === "deny") {
          return Fx.fail(new BlockedError({ rules: decision.rules, action: input.action, resources: decision.denied }))
        }
        if (decision.effect === "allow") return Fx.void
        return Fx.flatMap(create(toRequest(input), input.agent, true), (entry) =>
          restore(Deferred.await(entry.deferred!)).pipe(Fx.ensuring(Fx.sync(() => drop(entry)))),
        )
      }),
    )

  /**
   * Releases every other pending entry that now evaluates to allow (any session of this Location), in queue order.
   * The saved rows are read once and each session and (agent, session) pair resolved once, for this reply only.
   */
  const autoResolve = Fx.gen(function* () {
    yield* refresh
    const approvals = view.approvals()
    const entries = Array.from(pending.values())
    const keys = entries.map((entry) => `${entry.agent ?? ""}\u0000${entry.request.sessionID}`)
    // `undefined`: the session no longer exists, so its entries stay pending.
    const configuredBy = new Map<string, Ruleset | undefined>()
    for (let i = 0; i < entries.length; i++) {
      if (configuredBy.has(keys[i]!)) continue
      const entry = entries[i]!
      const session = yield* sessionOf(entry.request.sessionID)
      configuredBy.set(keys[i]!, session === undefined ? undefined : yield* rulesOf(session, entry.agent))
    }
    yield* Fx.suspend(() => {
      const released: Array<Pending> = []
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i]!
        if (pending.get(entry.request.id) !== entry) continue
        const configured = configuredBy.get(keys[i]!)
        if (configured === undefined) continue
        const { action, resources } = entry.request
        if (resources.some((resource) => evaluate(action, resource, configured).effect === "deny")) continue
        if (aggregate(action, resources, configured, approvals) !== "allow") continue
        released.push(entry)
      }
      return releaseAll(released, "always", succeedEntry)
    })
  })

  // One release pass at a time: a reply's pass and the watcher's must not both publish the same entry.
  const releasing = Fx.unsafeMakeSemaphore(1)
  const release = releasing.withPermits(1)(autoResolve)

  // While asks are pending, a change of the saved approvals made elsewhere (another process, another Location on
  // the same database) releases the ones it covers: the change stamp is read every PENDING_RECHECK_INTERVAL_MS, and
  // when it moved since the last pass the pending asks are evaluated again against the fresh saved rules.
  let watching = false
  let seen: string | undefined
  let warned = false
  const recheck = Fx.flatMap(saved.changeStamp, (now) => {
    if (now === seen) return Fx.void
    return Fx.as(release, undefined).pipe(
      Fx.tap(() =>
        Fx.sync(() => {
          seen = now
          warned = false
        }),
      ),
    )
  }).pipe(
    Fx.catchAllDefect((defect) =>
      warned
        ? Fx.void
        : Fx.zipRight(
            Fx.sync(() => (warned = true)),
            Fx.logWarning("PermissionV2: could not re-check pending asks against the saved approvals", defect),
          ),
    ),
  )
  const watch: Fx.Effect<void> = Fx.gen(function* () {
    for (;;) {
      yield* Fx.sleep(PENDING_RECHECK_INTERVAL_MS)
      if (closed || pending.size === 0) {
        watching = false
        return
      }
      yield* recheck
    }
  })
  /** Starts the watcher in the Location's runtime and scope (closing the Location stops it). */
  const startWatching = () => {
    watching = true
    seen = view.stamp()
    Runtime.runFork(layerRuntime)(Fx.forkIn(watch, layerScope))
  }

  const reply = Fx.fn("PermissionV2.reply")(function* (input: ReplyInput) {
    yield* Fx.uninterruptible(
      Fx.gen(function* () {
        const entry = pending.get(input.requestID)
        if (entry === undefined) return yield* new NotFoundError({ requestID: input.requestID })
        if (input.reply !== "reject") return yield* approve(entry, input.reply)
        yield* publishReplied(entry, input.reply)
        drop(entry)
        const message = input.message
        if (message) settle(entry, () => Exit.fail(new CorrectedError({ feedback: message })))
        else declineEntry(entry)
        const sessionID = entry.request.sessionID
        yield* Fx.suspend(() =>
          releaseAll(
            Array.from(pending.values()).filter((other) => other.request.sessionID === sessionID),
            "reject",
            declineEntry,
          ),
        )
      }),
    )
  })

  /**
   * `once`, or `always`: the approval is saved first, so a failed save changes nothing (no event, still pending).
   * A request answered by someone else while its approval was being saved stays answered; the save still releases
   * what it covers.
   */
  const approve = (entry: Pending, reply: "once" | "always"): Fx.Effect<void, SaveError> =>
    Fx.gen(function* () {
      const save = entry.request.save
      const persist = reply === "always" && save !== undefined && save.length > 0
      if (persist) {
        yield* saved.add({ ...scope, action: entry.request.action, resources: save }).pipe(
          Fx.mapError(
            (error) =>
              new SaveError({
                requestID: entry.request.id,
                action: entry.request.action,
                ...(error.filename === undefined ? {} : { filename: error.filename }),
                ...(error.code === undefined ? {} : { code: error.code }),
                detail: error.detail,
              }),
          ),
        )
      }
      if (pending.get(entry.request.id) === entry) {
        yield* publishReplied(entry, reply)
        drop(entry)
        succeedEntry(entry)
      }
      if (persist) yield* release
    })

  const check = Fx.fn("PermissionV2.check")(function* (input: CheckInput) {
    if (input.resources.length === 0) return [] as ReadonlyArray<Effect>
    const configured = yield* configuredFor(input.sessionID, input.agent)
    if (configured === undefined) return yield* new SessionV2.NotFoundError({ sessionID: input.sessionID })
    const approvals = view.approvals()
    return input.resources.map((resource): Effect => {
      const alone = evaluate(input.action, resource, configured).effect
      // Saved rows only ever allow, so a configured allow or deny is already the answer.
      return alone === "ask" ? aggregate(input.action, [resource], configured, approvals) : alone
    })
  })

  const get = Fx.fn("PermissionV2.get")(function* (id: string) {
    return pending.get(id as ID)?.request
  })
  const list = Fx.fn("PermissionV2.list")(function* () {
    return Array.from(pending.values(), (entry) => entry.request)
  })
  const forSession = Fx.fn("PermissionV2.forSession")(function* (sessionID: string) {
    return Array.from(pending.values())
      .filter((entry) => entry.request.sessionID === sessionID)
      .map((entry) => entry.request)
  })

  yield* Fx.addFinalizer(() =>
    Fx.gen(function* () {
      closed = true
      const entries = Array.from(pending.values())
      pending.clear()
      for (const entry of entries) declineEntry(entry)
    }),
  )

  return Service.of({ ask, assert, reply, check, get, forSession, list })
})

/**
 * The Location-scoped layer; closing the Location declines every pending request (no events).
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<
  Service,
  never,
  EventV2.Service | Location.Service | AgentV2.Service | SessionV2.Service | PermissionSaved.Service
> = Layer.scoped(Service, make)
