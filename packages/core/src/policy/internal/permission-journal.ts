/**
 * The decision-journal entries the pending queue writes (asks, answers, expiries, releases, cascades) and the
 * `SaveError` of an approval whose save or journal entry could not be written.
 *
 * @since 0.3.0
 * @internal
 */
import type * as DecisionJournal from "../decision-journal.js"
import type * as ProjectV2 from "../../place/project.js"
import type { Choice } from "./approvals-schema.js"
import { SaveError } from "./permission-error.js"
import type { Request } from "./permission-schema.js"

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
