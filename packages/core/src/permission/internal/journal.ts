/**
 * The decision-journal entries the permission service writes (evaluations, with the deciding rule's origin) and the
 * pending queue writes (asks, answers, expiries, releases, cascades), and the `SaveError` of an approval whose save
 * or journal entry could not be written.
 *
 * @since 0.3.0
 * @internal
 */
import type * as DecisionJournal from "../../journal/decision-journal.js"
import type * as PermissionSaved from "../permission-saved.js"
import type * as ProjectV2 from "../../place/project.js"
import type { Choice } from "./protocol.js"
import { SaveError } from "./error.js"
import { evaluate } from "./evaluate.js"
import type * as PermissionOrigin from "./origin.js"
import type { Effect, Request, Ruleset } from "./schema.js"

/**
 * The `SaveError` of `entry` for a database failure.
 *
 * @internal
 * @category utilities
 */
export const saveError = (
  entry: { readonly request: Request },
  error: { readonly filename?: string | undefined; readonly code?: string | undefined; readonly detail: string },
) =>
  new SaveError({
    requestID: entry.request.id,
    action: entry.request.action,
    ...(error.filename === undefined ? {} : { filename: error.filename }),
    ...(error.code === undefined ? {} : { code: error.code }),
    detail: error.detail,
  })

/**
 * The draft builders of one Location's queue.
 *
 * @internal
 * @category constructors
 */
export const make = (scope: ProjectV2.ApprovalScope) => {
  const where = { projectID: scope.projectID, directory: scope.directory }

  /** The fields every journal entry of `entry` carries. */
  const about = (entry: { readonly request: Request }) => ({
    projectID: scope.projectID,
    sessionID: entry.request.sessionID,
    requestID: entry.request.id,
    action: entry.request.action,
    resources: entry.request.resources,
  })

  /** The journal entry of an answer: the choice, who, through which channel, what it saved, where, until when. */
  const answeredEntry = (
    entry: { readonly request: Request },
    choice: Choice,
    who: { readonly by: string | undefined; readonly channel: string },
    until: number | undefined,
    message: string | undefined,
    ttl?: number | undefined,
  ): DecisionJournal.Draft => ({
    kind: "answered",
    ...about(entry),
    detail: {
      choice: choice.id,
      lifetime: choice.lifetime,
      ...(choice.scope === undefined ? {} : { scope: choice.scope }),
      channel: who.channel,
      ...(who.by === undefined ? {} : { by: who.by }),
      saved: choice.lifetime === "always" ? choice.saves.map((save) => save.pattern) : [],
      ...(choice.lifetime === "always" ? { where } : {}),
      ...(ttl === undefined ? {} : { ttlMillis: ttl }),
      ...(until === undefined ? {} : { until }),
      ...(message === undefined ? {} : { message }),
    },
  })

  return { about, answeredEntry }
}

/**
 * What one evaluation used, captured on the caller's path (references only) so the `evaluated` entry can be built
 * when the journal writes it: the request, the decided effect, the configured rules and the approvals after them
 * (the saved rows, then the session's grants).
 *
 * @internal
 * @category models
 */
export interface Evaluation {
  readonly sessionID: string
  readonly requestID: string | undefined
  readonly action: string
  readonly resources: ReadonlyArray<string>
  readonly effect: Effect
  readonly configured: Ruleset
  /** The saved approvals as rules, then the session's grants (`rows.length` of them are saved rows). */
  readonly approvals: Ruleset
  readonly rows: ReadonlyArray<PermissionSaved.Info>
}

/**
 * Where the configured rules came from: the agent they belong to and one origin per rule (`undefined` when unknown).
 *
 * @internal
 * @category models
 */
export interface Provenance {
  readonly agent: string | undefined
  readonly origins: ReadonlyArray<PermissionOrigin.Origin> | undefined
}

/** `PermissionOrigin.Origin` as the journal stores it (no `path: undefined`). */
const stored = (origin: PermissionOrigin.Origin): DecisionJournal.Origin => {
  if ((origin.type === "config" || origin.type === "agent") && origin.path === undefined) {
    const { path: _, ...rest } = origin
    return rest
  }
  return origin
}

/**
 * The `evaluated` entry of `evaluation`, decided again exactly as the service decided it (a configured deny first,
 * then the configured rules followed by the approvals; last match wins; no match asks), with the deciding rule and
 * its origin per resource. Pure: it reads only what the evaluation captured.
 *
 * @internal
 * @category constructors
 */
export const evaluatedEntry = (
  projectID: string,
  evaluation: Evaluation,
  provenance: Provenance,
): DecisionJournal.Draft => {
  const { action, configured, approvals, rows } = evaluation
  const configuredOrigin = (index: number): DecisionJournal.Origin => {
    const origin = provenance.origins?.[index]
    return origin === undefined ? { type: "unknown" } : stored(origin)
  }
  const decisions = evaluation.resources.map((resource): DecisionJournal.ResourceDecision => {
    const alone = evaluate(action, resource, configured)
    const rule = alone.effect === "deny" ? alone : evaluate(action, resource, configured, approvals)
    const effect = alone.effect === "deny" ? "deny" : rule.effect === "allow" ? "allow" : "ask"
    const inConfigured = configured.indexOf(rule)
    if (inConfigured >= 0) return { resource, effect, rule, origin: configuredOrigin(inConfigured) }
    const inApprovals = approvals.indexOf(rule)
    if (inApprovals >= 0) {
      const row = inApprovals < rows.length ? rows[inApprovals] : undefined
      return {
        resource,
        effect,
        rule,
        origin: row === undefined ? { type: "session" } : { type: "saved", id: row.id, timeCreated: row.timeCreated },
      }
    }
    // No rule decided: none matched, or a wildcard allow was passed over for an explicit action or resource prefix.
    return { resource, effect, origin: { type: "default" } }
  })
  return {
    kind: "evaluated",
    projectID,
    sessionID: evaluation.sessionID,
    ...(evaluation.requestID === undefined ? {} : { requestID: evaluation.requestID }),
    action,
    resources: evaluation.resources,
    detail: {
      ...(provenance.agent === undefined ? {} : { agent: provenance.agent }),
      effect: evaluation.effect,
      decisions,
    },
  }
}
