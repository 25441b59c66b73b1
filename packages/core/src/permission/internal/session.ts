/**
 * The `session` approvals of one Location's permission service: allow rules answered "for this session", kept in
 * memory for that session only, each until its optional TTL runs out. They end with the session: when the Location
 * closes (the service's memory goes) or the session no longer exists (its asks fail before any rule is read). They
 * are evaluated after the configured rules, like the saved approvals, so they never lift a configured deny.
 *
 * @since 0.3.0
 * @internal
 */
import type { Rule, Ruleset } from "./schema.js"

interface Granted {
  readonly rule: Rule
  readonly until: number | undefined
}

interface Combined {
  readonly base: Ruleset
  readonly version: number
  readonly rules: Ruleset
  /** The earliest `until` among the rules in `rules` (Infinity: none expires). */
  readonly nextExpiry: number
}

/**
 * The session approvals store.
 *
 * @internal
 * @category models
 */
export interface SessionApprovals {
  /** Grants `action` on each pattern to `sessionID` until `until` (epoch ms; undefined: while the session lasts). */
  readonly add: (sessionID: string, action: string, patterns: ReadonlyArray<string>, until: number | undefined) => void
  /**
   * The saved approvals `base` followed by the session's live grants: `base` itself (the same array) for a session
   * with none, so the common case keeps its compiled form; otherwise one array per (base, grants) until one expires.
   */
  readonly approvals: (sessionID: string, base: Ruleset) => Ruleset
  /** True iff `sessionID` holds a grant (live or not yet swept). */
  readonly has: (sessionID: string) => boolean
  /** Forgets every grant (the Location closed). */
  readonly clear: () => void
}

/**
 * Builds an empty store reading the time from `now` (the service's Clock, so a TestClock drives TTLs).
 *
 * @internal
 * @category constructors
 */
export const make = (now: () => number): SessionApprovals => {
  const grants = new Map<string, { version: number; list: Array<Granted> }>()
  const combined = new Map<string, Combined>()

  const add = (sessionID: string, action: string, patterns: ReadonlyArray<string>, until: number | undefined) => {
    let own = grants.get(sessionID)
    if (own === undefined) grants.set(sessionID, (own = { version: 0, list: [] }))
    for (const resource of patterns) own.list.push({ rule: { action, resource, effect: "allow" }, until })
    own.version++
  }

  const approvals = (sessionID: string, base: Ruleset): Ruleset => {
    const own = grants.get(sessionID)
    if (own === undefined) return base
    const time = now()
    const cached = combined.get(sessionID)
    if (cached !== undefined && cached.base === base && cached.version === own.version && time < cached.nextExpiry)
      return cached.rules
    const live = own.list.filter((granted) => granted.until === undefined || time < granted.until)
    if (live.length !== own.list.length) {
      own.list = live
      own.version++
    }
    if (live.length === 0) {
      grants.delete(sessionID)
      combined.delete(sessionID)
      return base
    }
    let nextExpiry = Infinity
    for (const granted of live)
      if (granted.until !== undefined && granted.until < nextExpiry) nextExpiry = granted.until
    const rules = [...base, ...live.map((granted) => granted.rule)]
    combined.set(sessionID, { base, version: own.version, rules, nextExpiry })
    return rules
  }

  return {
    add,
    approvals,
    has: (sessionID) => grants.has(sessionID),
    clear: () => {
      grants.clear()
      combined.clear()
    },
  }
}
