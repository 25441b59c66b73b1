/**
 * The permission service's in-memory views of the saved approvals and of the sessions it looked up, valid while the
 * database's change stamp stays where it was when they were read: any write through this process's connection (a
 * save, a revoke, a deleted session) or any commit by another process moves it, and the next request re-reads. One
 * stamp read per request replaces a session read and a saved-row read.
 *
 * @since 0.3.0
 * @internal
 */
import * as Fx from "effect/Effect"
import type * as AgentV2 from "../../agent/agent.js"
import type * as PermissionSaved from "../permission-saved.js"
import type * as ProjectV2 from "../../place/project.js"
import type * as SessionV2 from "../../place/session.js"
import { denyAll } from "./evaluate.js"
import type { Ruleset } from "./schema.js"

/** How many found sessions the view keeps before starting over. */
const MAX_SESSION_VIEW = 4096

/**
 * The views of one Location's permission service.
 *
 * @internal
 * @category models
 */
export interface View {
  /**
   * The saved approvals in force now (a row past its `until` is left out) as allow rules: the same array value while
   * they are unchanged (so it stays compiled).
   */
  readonly approvals: () => Ruleset
  /** The saved rows behind `approvals()`, in the same order (rule `i` is row `i`), for the journal's origins. */
  readonly rows: () => ReadonlyArray<PermissionSaved.Info>
  /** The id of the agent whose configured rules `rules` is, when `rulesOf` returned it (for the journal). */
  readonly agentOf: (rules: Ruleset) => string | undefined
  /** The change stamp the views were read under (undefined before the first read). */
  readonly stamp: () => string | undefined
  /** Re-reads what changed since the views were read. */
  readonly refresh: Fx.Effect<void>
  /** The session, from the view when it was read since the last change; only found sessions are kept. */
  readonly sessionOf: (sessionID: string) => Fx.Effect<SessionV2.Info | undefined>
  /** The configured rules of `agent ?? session.agent` (deny-all when no agent resolves). */
  readonly rulesOf: (session: SessionV2.Info, agent: string | undefined) => Fx.Effect<Ruleset>
  /** The configured rules for a request, with the views refreshed; `undefined` when the session does not exist. */
  readonly configuredFor: (sessionID: string, agent: string | undefined) => Fx.Effect<Ruleset | undefined>
  /**
   * The session from the view when the views were read under `stamp` (a change stamp just read) and hold it:
   * then nothing changed since, and a request needs no read. `undefined` otherwise (`configuredAt` reads).
   */
  readonly current: (stamp: string, sessionID: string) => SessionV2.Info | undefined
  /** `configuredFor` with the change stamp already read. */
  readonly configuredAt: (stamp: string, sessionID: string, agent: string | undefined) => Fx.Effect<Ruleset | undefined>
  /** The configured rules of a resolved agent, as `rulesOf` gives them (deny-all for none). */
  readonly rulesFrom: (info: AgentV2.Info | undefined) => Ruleset
}

/**
 * Builds the views over `saved` (rows of `scope`), `sessions` and `agents`.
 *
 * @internal
 * @category constructors
 */
export const make = (
  saved: PermissionSaved.Interface,
  sessions: SessionV2.Interface,
  agents: AgentV2.Interface,
  scope: ProjectV2.ApprovalScope,
  now: () => number,
): View => {
  let stamp: string | undefined
  let approvals: Ruleset = []
  // The rows last read, and the earliest `until` among the ones in force (Infinity: none expires).
  let rows: ReadonlyArray<PermissionSaved.Info> = []
  let nextExpiry = Infinity
  // The rows in force behind `approvals`, and the agent of each configured ruleset `rulesOf` handed out.
  let liveRows: ReadonlyArray<PermissionSaved.Info> = []
  const agentOfRules = new WeakMap<Ruleset, string>()
  let lastAgent: AgentV2.Info | undefined
  const sessionView = new Map<string, SessionV2.Info>()

  /**
   * The rows in force now (an expired `until` left out) as allow rules: the same array value while they are
   * unchanged, so `evaluate` keeps its compiled form.
   */
  const rebuild = () => {
    const time = now()
    const live: Array<PermissionSaved.Info> = []
    nextExpiry = Infinity
    for (const row of rows) {
      if (row.until === undefined) live.push(row)
      else if (time < row.until) {
        live.push(row)
        if (row.until < nextExpiry) nextExpiry = row.until
      }
    }
    liveRows = live
    const cached = approvals
    let same = cached.length === live.length
    for (let i = 0; same && i < live.length; i++) {
      same = cached[i]!.action === live[i]!.action && cached[i]!.resource === live[i]!.resource
    }
    if (!same) approvals = live.map((row) => ({ action: row.action, resource: row.resource, effect: "allow" as const }))
  }

  /** Re-reads the saved rows and forgets the sessions when the change stamp moved since they were read. */
  const refreshAt = (stampNow: string): Fx.Effect<void> => {
    if (stampNow === stamp) return Fx.void
    sessionView.clear()
    return Fx.map(saved.list(scope), (read) => {
      rows = read
      rebuild()
      // The stamp read before the rows: a change in between makes the next request read again.
      stamp = stampNow
    })
  }

  const sessionOf = (sessionID: string): Fx.Effect<SessionV2.Info | undefined> => {
    const hit = sessionView.get(sessionID)
    if (hit !== undefined) return Fx.succeed(hit)
    const readUnder = stamp
    return Fx.map(sessions.get(sessionID), (session) => {
      // Kept only if no refresh moved the stamp while it was read (the row may predate that change).
      if (session !== undefined && stamp === readUnder) {
        if (sessionView.size >= MAX_SESSION_VIEW) sessionView.clear()
        sessionView.set(sessionID, session)
      }
      return session
    })
  }

  const rulesFrom = (info: AgentV2.Info | undefined): Ruleset => {
    if (info === undefined) return denyAll
    if (info !== lastAgent) {
      lastAgent = info
      agentOfRules.set(info.permissions, info.id)
    }
    return info.permissions
  }

  const rulesOf = (session: SessionV2.Info, agent: string | undefined): Fx.Effect<Ruleset> =>
    Fx.map(agents.resolve(agent ?? session.agent), rulesFrom)

  const current = (stampNow: string, sessionID: string): SessionV2.Info | undefined =>
    stampNow === stamp ? sessionView.get(sessionID) : undefined

  const configuredAt = (
    stampNow: string,
    sessionID: string,
    agent: string | undefined,
  ): Fx.Effect<Ruleset | undefined> => {
    // The common case, nothing changed and the session already read: straight to the agent.
    const hit = current(stampNow, sessionID)
    if (hit !== undefined) return rulesOf(hit, agent)
    return Fx.flatMap(refreshAt(stampNow), () =>
      Fx.flatMap(sessionOf(sessionID), (session) =>
        session === undefined ? Fx.succeed(undefined) : rulesOf(session, agent),
      ),
    )
  }

  return {
    approvals: () => {
      if (nextExpiry !== Infinity && now() >= nextExpiry) rebuild()
      return approvals
    },
    rows: () => liveRows,
    agentOf: (rules) => agentOfRules.get(rules),
    stamp: () => stamp,
    refresh: Fx.flatMap(saved.changeStamp, refreshAt),
    sessionOf,
    rulesOf,
    configuredFor: (sessionID, agent) =>
      Fx.flatMap(saved.changeStamp, (stampNow) => configuredAt(stampNow, sessionID, agent)),
    current,
    configuredAt,
    rulesFrom,
  }
}
