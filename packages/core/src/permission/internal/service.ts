/**
 * The permission service of one Location: it evaluates each request against the agent's configured rules and the
 * project's saved approvals, queues what asks, and settles the queue on a reply or when approvals saved elsewhere
 * cover it. `PermissionV2` names everything exported here.
 *
 * `ask` and `assert` run on every tool call, so they carry no tracing span; the other methods are traced.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Fx from "effect/Effect"
import * as AgentV2 from "../../agent/agent.js"
import * as Config from "../../place/config.js"
import * as DecisionJournal from "../../journal/decision-journal.js"
import * as EventV2 from "../../place/event.js"
import * as Global from "../../system/global.js"
import * as Location from "../../place/location.js"
import * as Hooks from "../hooks.js"
import * as PermissionSaved from "../permission-saved.js"
import * as ProjectV2 from "../../place/project.js"
import * as ProtectedPath from "../../place/protected-path.js"
import * as SessionV2 from "../../place/session.js"
import { PROJECT_PROGRAM_ACTION } from "../../values/internal/resource-prefix.js"
import * as Wildcard from "../../values/wildcard.js"
import { cutSaves, replyChoice } from "./prompt.js"
import * as Approvals from "./protocol.js"
import { BlockedError, type CorrectedError, NotFoundError, type SaveError } from "./error.js"
import { effectOf } from "./decide.js"
import { denyAll, evaluate, relevant } from "./evaluate.js"
import { evaluatedEntry, type Evaluation, type Provenance } from "./journal.js"
import { saveEntry } from "./leaf.js"
import * as PermissionOrigin from "./origin.js"
import * as Queue from "./queue.js"
import * as Session from "./session.js"
import { SharedAsks } from "./queue.js"
import * as View from "./view.js"
import {
  type AskResult,
  type AssertInput,
  type CheckInput,
  createID,
  type Effect,
  type ReplyInput,
  type Request,
  type Ruleset,
  type SaveScope,
} from "./schema.js"

export {
  /**
   * How often a Location with pending asks re-reads the saved approvals' change stamp.
   *
   * @since 0.3.0
   * @category constants
   */
  PENDING_RECHECK_INTERVAL_MS,
} from "./watch.js"

export {
  /**
   * The process-wide service that shares pending asks across hosts: the port the queue reads when it is in context.
   * Its implementation on a database is `SharedAsks.layer` of `@toolgate/core/hosts` (`Core.layerProcess`
   * provides it).
   *
   * @since 0.3.0
   * @category tags
   */
  SharedAsks,
  /**
   * How often a process with shared asks pending reads the answers claimed elsewhere when no notification came.
   *
   * @since 0.3.0
   * @category constants
   */
  SHARED_POLL_INTERVAL_MS,
  /**
   * How often a process that shares asks touches its pending rows and prunes `pending_ask`.
   *
   * @since 0.3.0
   * @category constants
   */
  SHARED_PRUNE_INTERVAL_MS,
  /**
   * How long `pending_ask` keeps a settled row, or a row whose owner is gone.
   *
   * @since 0.3.0
   * @category constants
   */
  SHARED_RETENTION_MS,
} from "./queue.js"

/**
 * The typed failures of `assert`: a configured deny (or a hook's), a rejection with feedback, an ask nobody answered
 * before `permission.ask_timeout` (`Approvals.TimedOutError`), and a `permission.evaluate` hook that failed or timed
 * out (`Hooks.HookError`: the request fails closed).
 *
 * @since 0.1.0
 * @category errors
 */
export type Error = BlockedError | CorrectedError | Approvals.TimedOutError | Hooks.HookError

/**
 * The permission service, one per Location.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /** Evaluates and, on ask, queues a prompt without waiting. */
  readonly ask: (input: AssertInput) => Fx.Effect<AskResult, SessionV2.NotFoundError | Hooks.HookError>
  /** Blocks until allowed; a reject without message arrives as a `DeclinedError` defect. */
  readonly assert: (input: AssertInput) => Fx.Effect<void, Error | SessionV2.NotFoundError>
  /**
   * Answers a pending request. An `always` whose approval cannot be saved fails with `SaveError` and changes
   * nothing: the request stays pending, so the answerer can still answer it `once` or `reject`. With `digest`, an
   * answer to a prompt other than the pending one fails with `Approvals.DigestMismatchError` and changes nothing.
   * `always` saves what `always:pattern` shows (see `Approvals.choices`). The same path as `Approvals.answer`, on the
   * channel `in-process`; an already-answered request is `NotFoundError` here.
   */
  readonly reply: (input: ReplyInput) => Fx.Effect<void, NotFoundError | SaveError | Approvals.DigestMismatchError>
  /**
   * Evaluates each resource as `assert` would (configured deny first, then configured rules plus saved allows),
   * without asking: one effect per resource, in order. An empty list gives an empty answer.
   *
   * @since 0.2.0
   */
  readonly check: (input: CheckInput) => Fx.Effect<ReadonlyArray<Effect>, SessionV2.NotFoundError | Hooks.HookError>
  readonly get: (id: string) => Fx.Effect<Request | undefined>
  readonly forSession: (sessionID: string) => Fx.Effect<ReadonlyArray<Request>>
  readonly list: () => Fx.Effect<ReadonlyArray<Request>>
}

/**
 * The PermissionV2 service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Permission")<Service, Interface>() {}

/**
 * A decision, with the rules it was made over (kept by reference for the journal's `evaluated` entry). `hooked` is
 * the decision of the `permission.evaluate` hook that tightened it last, when one did.
 */
type Decision = (
  | {
      readonly effect: "deny"
      readonly rules: Ruleset
      readonly denied: ReadonlyArray<string>
      readonly hooked?: Hooks.Decision
    }
  | { readonly effect: "allow" | "ask"; readonly hooked?: Hooks.Decision }
) & { readonly configured: Ruleset; readonly approvals: Ruleset; readonly rows: ReadonlyArray<PermissionSaved.Info> }

/**
 * Builds the permission service of the current Location.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Fx.gen(function* () {
  const events = yield* EventV2.Service
  const location = yield* Location.Service
  const agents = yield* AgentV2.Service
  const sessionService = yield* SessionV2.Service
  const saved = yield* PermissionSaved.Service
  const timeout = yield* askTimeout
  const journal = Option.getOrUndefined(yield* Fx.serviceOption(DecisionJournal.Service))
  const shared = Option.getOrUndefined(yield* Fx.serviceOption(SharedAsks))
  const hooks = Option.getOrUndefined(yield* Fx.serviceOption(Hooks.Service))
  const provenanceOf = yield* provenance
  const clock = yield* Fx.clock
  const now = () => clock.unsafeCurrentTimeMillis()
  const scope = ProjectV2.approvalScope(location.project.id, location.directory)
  const saveScope: SaveScope = {
    kind: scope.directory === "" ? "project" : "directory",
    projectID: scope.projectID,
    directory: scope.directory === "" ? location.project.directory : scope.directory,
  }
  let closed = false
  const layerScope = yield* Fx.scope
  const layerRuntime = yield* Fx.runtime<never>()

  const view = View.make(saved, sessionService, agents, scope, now)
  const { configuredFor } = view
  const sessions = Session.make(now)
  const { queue, create, enqueue, drop, close } = Queue.make({
    events,
    saved,
    view,
    sessions,
    scope,
    journal,
    timeout,
    now,
    layerScope,
    layerRuntime,
    closed: () => closed,
    share: shared === undefined ? undefined : (holder) => shared.mirror(scope, holder),
  })

  // One evaluation of each resource per ruleset (see `effectOf`); the journal's entry and a deny's error read
  // the rest of the decision.
  const decide = (input: AssertInput, configured: Ruleset): Decision => {
    const approvals = sessions.approvals(input.sessionID, view.approvals())
    const rows = view.rows()
    const effect = effectOf(input.action, input.resources, configured, approvals)
    if (effect !== "deny") return { effect, configured, approvals, rows }
    const denied = input.resources.filter((resource) => evaluate(input.action, resource, configured).effect === "deny")
    return { effect, rules: relevant(input.action, configured), denied, configured, approvals, rows }
  }

  /**
   * Buffers the `evaluated` entry of a decision: a push of references on the caller's path; the entry (each
   * resource decided again with its rule's origin) is built when the journal writes it.
   */
  const journalEvaluation = (input: AssertInput, decision: Decision, requestID: string | undefined) => {
    if (journal === undefined) return Fx.void
    const evaluation: Evaluation = {
      sessionID: input.sessionID,
      requestID,
      action: input.action,
      resources: input.resources,
      effect: decision.effect,
      configured: decision.configured,
      approvals: decision.approvals,
      rows: decision.rows,
    }
    return journal.record(() =>
      evaluatedEntry(scope.projectID, evaluation, provenanceOf(decision.configured, view.agentOf(decision.configured))),
    )
  }

  /** The `hook` journal entries of `decisions`, for the request `requestID`. */
  const journalHooks = (
    input: { readonly sessionID: string; readonly action: string; readonly resources: ReadonlyArray<string> },
    requestID: string | undefined,
    decisions: ReadonlyArray<Hooks.Decision>,
  ) => {
    if (journal === undefined || decisions.length === 0) return Fx.void
    return Fx.forEach(
      decisions,
      (decision) =>
        journal.record((): DecisionJournal.Draft => ({
          kind: "hook",
          projectID: scope.projectID,
          sessionID: input.sessionID,
          ...(requestID === undefined ? {} : { requestID }),
          action: input.action,
          resources: input.resources,
          detail: {
            origin: decision.origin,
            plugin: decision.plugin,
            hook: decision.hook,
            decision: decision.decision,
            ...(decision.from === undefined ? {} : { from: decision.from }),
            ...(decision.reason === undefined ? {} : { reason: decision.reason }),
          },
        })),
      { discard: true },
    )
  }

  /**
   * The decision after the `permission.evaluate` hooks: a configured deny is final and no hook sees it; otherwise
   * each hook may only tighten (docs/plugins.md). A hook that fails fails the request closed (journaled as
   * `failed`). Without such hooks this is the decision itself, with no Effect of its own.
   */
  const tighten = (
    input: AssertInput,
    decision: Decision,
    requestID: string | undefined,
  ): Fx.Effect<Decision, Hooks.HookError> | undefined => {
    if (hooks === undefined || decision.effect === "deny" || !hooks.has("permission.evaluate")) return undefined
    const request = { sessionID: input.sessionID, agent: input.agent, action: input.action, resources: input.resources }
    return hooks.evaluate(request, decision.effect).pipe(
      Fx.tapError((error) =>
        journalHooks(input, requestID, [
          {
            plugin: error.plugin,
            hook: "permission.evaluate",
            origin: Hooks.originOf(error.plugin, error.hook),
            decision: "failed",
            reason: error.detail,
          },
        ]),
      ),
      Fx.flatMap((evaluated) => {
        if (evaluated.effect === decision.effect) return Fx.succeed(decision)
        const hooked = evaluated.decisions.at(-1)!
        const tightened: Decision =
          evaluated.effect === "deny"
            ? { ...decision, effect: "deny", rules: [], denied: input.resources, hooked }
            : { ...decision, effect: evaluated.effect, hooked }
        return Fx.as(journalHooks(input, requestID, evaluated.decisions), tightened)
      }),
    )
  }

  const blocked = (input: AssertInput, decision: Decision & { readonly effect: "deny" }) =>
    new BlockedError({
      rules: decision.rules,
      action: input.action,
      resources: decision.denied,
      ...(decision.hooked === undefined
        ? {}
        : {
            hook: {
              origin: decision.hooked.origin,
              ...(decision.hooked.reason === undefined ? {} : { reason: decision.hooked.reason }),
            },
          }),
    })

  const noResources = (input: AssertInput) =>
    Fx.die(new globalThis.Error(`Permission request for ${input.action} must name at least one resource`))
  const notFound = (input: AssertInput) => Fx.fail(new SessionV2.NotFoundError({ sessionID: input.sessionID }))

  const evaluateInput = (input: AssertInput): Fx.Effect<Decision, SessionV2.NotFoundError> => {
    if (input.resources.length === 0) return noResources(input)
    return Fx.flatMap(configuredFor(input.sessionID, input.agent), (configured) =>
      configured === undefined ? notFound(input) : Fx.succeed(decide(input, configured)),
    )
  }

  // A protected_path ask saves nothing, whichever tool raised it: `always` acts as `once` (docs/trust/protected-paths.md).
  // A project_program ask saves exactly its programs, whatever the caller offered: never a wildcard
  // (docs/mcp-tools.md).
  // Any other ask saves at most what the rule that raised it covers (`cutSaves`, docs/approvals.md).
  const savesOf = (input: AssertInput, configured: Ruleset) =>
    input.action === ProtectedPath.ACTION
      ? []
      : input.action === PROJECT_PROGRAM_ACTION
        ? input.resources.map(Wildcard.literal)
        : cutSaves(input.action, input.resources, input.save, configured)
  // Assigned in the order of the spread it replaces (same keys, same order), without the spread's temporary objects:
  // this is on every queued ask's path.
  const toRequest = (input: AssertInput, configured: Ruleset): Request => {
    const save = savesOf(input, configured)
    const request: { -readonly [K in keyof Request]: Request[K] } = {
      id: createID(input.id),
      sessionID: input.sessionID,
      action: input.action,
      resources: input.resources,
    }
    if (save !== undefined) request.save = save
    request.always = { action: input.action, entries: save === undefined ? [] : save.map(saveEntry), scope: saveScope }
    if (input.metadata !== undefined) request.metadata = input.metadata
    if (input.source !== undefined) request.source = input.source
    return request
  }

  /**
   * The rest of an ask once its configured rules are known, all synchronous up to the Asked publish: it runs inside
   * an uninterruptible region (an entry is inserted and announced in one), from that region's synchronous part.
   */
  const askWith = (input: AssertInput, configured: Ruleset): Fx.Effect<AskResult, Hooks.HookError> => {
    const decision = decide(input, configured)
    const hooked = tighten(input, decision, input.id)
    if (hooked !== undefined) return Fx.flatMap(hooked, (tightened) => askDecided(input, tightened))
    return askDecided(input, decision)
  }

  const askDecided = (input: AssertInput, decision: Decision): Fx.Effect<AskResult> => {
    if (decision.effect !== "ask") {
      const result: AskResult = { id: createID(input.id), effect: decision.effect }
      return journal === undefined ? Fx.succeed(result) : Fx.as(journalEvaluation(input, decision, result.id), result)
    }
    const request = toRequest(input, decision.configured)
    const result: AskResult = { id: request.id, effect: decision.effect }
    if (journal === undefined) return enqueue(request, input.agent, result)
    return Fx.zipRight(
      journalEvaluation(input, decision, request.id),
      Fx.suspend(() => enqueue(request, input.agent, result)),
    )
  }

  // `ask` and `assert` are plain functions returning an Effect, without a span: they run on every tool call. When
  // nothing changed since the views were read (the change stamp is where it was and the session is in the view),
  // an ask is the stamp, the agent and one synchronous step (`askWith`); otherwise the views are read first.
  const ask = (input: AssertInput): Fx.Effect<AskResult, SessionV2.NotFoundError | Hooks.HookError> => {
    if (input.resources.length === 0) return noResources(input)
    return Fx.flatMap(saved.changeStamp, (stamp): Fx.Effect<AskResult, SessionV2.NotFoundError | Hooks.HookError> => {
      const session = view.current(stamp, input.sessionID)
      if (session !== undefined) {
        return Fx.uninterruptible(
          Fx.flatMap(agents.resolve(input.agent ?? session.agent), (agent) => askWith(input, view.rulesFrom(agent))),
        )
      }
      return Fx.flatMap(
        view.configuredAt(stamp, input.sessionID, input.agent),
        (configured): Fx.Effect<AskResult, SessionV2.NotFoundError | Hooks.HookError> =>
          configured === undefined ? notFound(input) : Fx.uninterruptible(Fx.suspend(() => askWith(input, configured))),
      )
    })
  }

  const assert = (input: AssertInput): Fx.Effect<void, Error | SessionV2.NotFoundError> =>
    Fx.uninterruptibleMask((restore) =>
      Fx.flatMap(evaluateInput(input), (evaluated): Fx.Effect<void, Error> => {
        const hooked = tighten(input, evaluated, input.id)
        if (hooked === undefined) return settleDecision(input, evaluated, restore)
        return Fx.flatMap(restore(hooked), (decision) => settleDecision(input, decision, restore))
      }),
    )

  /** Acts on `decision` (the rules' decision, tightened by the hooks). */
  const settleDecision = (
    input: AssertInput,
    decision: Decision,
    restore: <A, E, R>(effect: Fx.Effect<A, E, R>) => Fx.Effect<A, E, R>,
  ): Fx.Effect<void, Error> => {
    if (decision.effect === "deny") {
      return Fx.zipRight(journalEvaluation(input, decision, input.id), Fx.fail(blocked(input, decision)))
    }
    if (decision.effect === "allow") return journalEvaluation(input, decision, input.id)
    const request = toRequest(input, decision.configured)
    return Fx.zipRight(
      journalEvaluation(input, decision, request.id),
      Fx.flatMap(create(request, input.agent), (entry) =>
        restore(Deferred.await(entry.deferred!)).pipe(Fx.ensuring(Fx.sync(() => drop(entry)))),
      ),
    )
  }

  const reply = Fx.fn("PermissionV2.reply")(function* (input: ReplyInput) {
    const entry = queue.entry(input.requestID)
    if (entry === undefined || entry.answering) return yield* new NotFoundError({ requestID: input.requestID })
    yield* queue
      .answer(
        {
          requestID: input.requestID,
          ...(input.digest === undefined ? {} : { digest: input.digest }),
          // An `always` that saves nothing is not offered: it acts like `once` (and is still announced as `always`).
          choice: (replyChoice(queue.prompt(entry), input.reply) ?? replyChoice(queue.prompt(entry), "once")!).id,
          ...(input.message === undefined ? {} : { message: input.message }),
          channel: Approvals.IN_PROCESS,
        },
        input.reply,
      )
      .pipe(
        Fx.catchTags({
          "Approvals.AlreadyAnsweredError": (error) => new NotFoundError({ requestID: error.requestID }),
          // `replyChoice` names only offered choices.
          "Approvals.UnknownChoiceError": (error) => Fx.die(error),
        }),
      )
  })

  const check = Fx.fn("PermissionV2.check")(function* (input: CheckInput) {
    if (input.resources.length === 0) return [] as ReadonlyArray<Effect>
    const configured = yield* configuredFor(input.sessionID, input.agent)
    if (configured === undefined) return yield* new SessionV2.NotFoundError({ sessionID: input.sessionID })
    const approvals = sessions.approvals(input.sessionID, view.approvals())
    // Each resource as `assert` would decide a request for it alone: one decision path for both.
    const effects = input.resources.map((resource): Effect => effectOf(input.action, [resource], configured, approvals))
    if (hooks === undefined || !hooks.has("permission.evaluate")) return effects
    // The hooks see each resource as a request of its own, as `assert` would show it to them; nothing is journaled.
    return yield* Fx.forEach(input.resources, (resource, i) => {
      const effect = effects[i]!
      if (effect === "deny") return Fx.succeed(effect)
      const request = { sessionID: input.sessionID, agent: input.agent, action: input.action, resources: [resource] }
      return Fx.map(hooks.evaluate(request, effect), (evaluated): Effect => evaluated.effect)
    })
  })

  const get = Fx.fn("PermissionV2.get")(function* (id: string) {
    return queue.entry(id)?.request
  })
  const list = Fx.fn("PermissionV2.list")(function* () {
    return queue.entries().map((entry) => entry.request)
  })
  const forSession = Fx.fn("PermissionV2.forSession")(function* (sessionID: string) {
    return queue
      .entries()
      .filter((entry) => entry.request.sessionID === sessionID)
      .map((entry) => entry.request)
  })

  yield* Fx.addFinalizer(() =>
    Fx.sync(() => {
      closed = true
      close()
      sessions.clear()
    }),
  )

  return { service: Service.of({ ask, assert, reply, check, get, forSession, list }), queue }
})

/**
 * Where the configured rules of an agent came from, for the journal: computed once per ruleset value (an agent's
 * rules are one value until the agents reload), from the Location's configuration documents, when the journal
 * builds an entry (off the caller's path). Without a Config service the origins are unknown.
 */
const provenance: Fx.Effect<(rules: Ruleset, agent: string | undefined) => Provenance> = Fx.gen(function* () {
  const config = yield* Fx.serviceOption(Config.Service)
  const global = yield* Fx.serviceOption(Global.Service)
  const entries = Option.isSome(config) ? yield* config.value.entries() : undefined
  const home = Option.isSome(global) ? global.value.home : undefined
  const cache = new WeakMap<Ruleset, Provenance>()
  // Read once, the first time an entry needs them (the agents were loaded from the same files when the Location
  // opened; a ruleset that no longer fits them gets `unknown` origins).
  let documents: ReadonlyArray<Config.Document> | undefined
  return (rules, agent) => {
    const hit = cache.get(rules)
    if (hit !== undefined && hit.agent === agent) return hit
    const origins =
      rules === denyAll
        ? denyAll.map((): PermissionOrigin.Origin => ({ type: "builtin" }))
        : agent === undefined || entries === undefined || home === undefined
          ? undefined
          : PermissionOrigin.origins(agent, rules, (documents ??= PermissionOrigin.documentsOf(entries)), home)
    const computed: Provenance = { agent, origins }
    cache.set(rules, computed)
    return computed
  }
})

/** `permission.ask_timeout` from the last configuration document that sets it (none without a Config service). */
const askTimeout: Fx.Effect<number | undefined> = Fx.flatMap(Fx.serviceOption(Config.Service), (config) =>
  Option.isNone(config)
    ? Fx.succeed(undefined)
    : Fx.map(config.value.entries(), (entries) => Config.latest(entries, "permission")?.ask_timeout),
)

/**
 * The Location-scoped layer: the service and its pending queue (which `Approvals.layer` reads); closing the Location
 * declines every pending request (no events).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  Service | Queue.Queue,
  never,
  EventV2.Service | Location.Service | AgentV2.Service | SessionV2.Service | PermissionSaved.Service
> = Layer.scopedContext(
  Fx.map(make, ({ service, queue }) => Context.make(Service, service).pipe(Context.add(Queue.Queue, queue))),
)
