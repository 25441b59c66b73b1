/**
 * The handlers of `ApprovalApi`: each group over `Approvals`, `PermissionSaved` and `DecisionJournal` (limited to
 * what `Scope` serves: the served Location's approval scope and project, or every project when there is no
 * Location) and the page, plus the bearer-token middleware.
 *
 * @since 0.3.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Location from "../../place/location.js"
import * as ProjectV2 from "../../place/project.js"
import * as Approvals from "../../approvals/approvals.js"
import * as DecisionJournal from "../../journal/decision-journal.js"
import * as PermissionSaved from "../../permission/permission-saved.js"
import * as ApprovalApi from "../approval-api.js"
import * as Events from "./approval-server-events.js"
import * as Guard from "./approval-server-guard.js"
import * as Page from "./approval-page.js"

/**
 * The channel every answer given through this server is recorded with.
 *
 * @since 0.3.0
 * @category constants
 */
export const CHANNEL = "http"

/**
 * The bearer-token middleware for `token`.
 *
 * @since 0.3.0
 * @category utilities
 */
export const authorization = (token: Redacted.Redacted<string>) =>
  Layer.succeed(
    ApprovalApi.Authorization,
    ApprovalApi.Authorization.of({
      bearer: (given) =>
        Guard.tokenMatches(given, token) ? Effect.void : Effect.fail(new ApprovalApi.UnauthorizedError()),
    }),
  )

/**
 * What the saved approvals and the journal are limited to: the served Location's approval scope (saved approvals)
 * and project (journal), or `undefined` for every project (a server with no Location; a `projectID` parameter then
 * narrows).
 *
 * @since 0.3.0
 * @category models
 */
export interface Served {
  readonly saved: { readonly projectID: string; readonly directory: string } | undefined
  readonly journal: string | undefined
}

/**
 * The `Served` scope of the running server.
 *
 * @since 0.3.0
 * @category tags
 */
export class Scope extends Context.Tag("@toolgate/ApprovalServer/Scope")<Scope, Served>() {}

/**
 * The scope of the Location in context.
 *
 * @since 0.3.0
 * @category layers
 */
export const scopeOfLocation: Layer.Layer<Scope, never, Location.Service> = Layer.effect(
  Scope,
  Effect.map(Location.Service, (location) => {
    const scope = ProjectV2.approvalScope(location.project.id, location.directory)
    return { saved: { projectID: scope.projectID, directory: scope.directory }, journal: location.project.id }
  }),
)

/**
 * Every project of the database (no Location).
 *
 * @since 0.3.0
 * @category layers
 */
export const scopeEveryProject: Layer.Layer<Scope> = Layer.succeed(Scope, { saved: undefined, journal: undefined })

const filterOf = (params: { readonly sessionID?: string | undefined }): Approvals.Filter =>
  params.sessionID === undefined ? {} : { sessionID: params.sessionID }

const asks = HttpApiBuilder.group(ApprovalApi.api, "asks", (handlers) =>
  Effect.map(Approvals.Service, (approvals) =>
    handlers
      .handle("pending", ({ urlParams }) => approvals.pending(filterOf(urlParams)))
      .handle("get", ({ path }) => approvals.get(path.id))
      .handle("answer", ({ path, payload }) =>
        approvals.answer({
          requestID: path.id,
          digest: payload.digest,
          choice: payload.choice,
          channel: CHANNEL,
          ...(payload.ttlMillis === undefined ? {} : { ttlMillis: payload.ttlMillis }),
          ...(payload.message === undefined ? {} : { message: payload.message }),
          ...(payload.by === undefined ? {} : { by: payload.by }),
        }),
      ),
  ),
)

const saved = HttpApiBuilder.group(ApprovalApi.api, "saved", (handlers) =>
  Effect.gen(function* () {
    const store = yield* PermissionSaved.Service
    const decisions = yield* DecisionJournal.Service
    const served = yield* Scope
    const rows = (projectID: string | undefined) => {
      if (served.saved === undefined) return store.list(projectID === undefined ? undefined : { projectID })
      if (projectID !== undefined && projectID !== served.saved.projectID) return Effect.succeed([])
      return store.list({ projectID: served.saved.projectID, directory: served.saved.directory })
    }
    return handlers
      .handle("list", ({ urlParams }) => rows(urlParams.projectID))
      .handle("revoke", ({ path }) =>
        Effect.flatMap(rows(undefined), (all) =>
          all.some((row) => row.id === path.id)
            ? // The `revoked` journal entry commits with the delete.
              Effect.provideService(store.remove(path.id, { channel: "http" }), DecisionJournal.Service, decisions)
            : Effect.fail(new ApprovalApi.SavedNotFoundError({ id: path.id })),
        ),
      )
  }),
)

const journal = HttpApiBuilder.group(ApprovalApi.api, "journal", (handlers) =>
  Effect.gen(function* () {
    const decisions = yield* DecisionJournal.Service
    const served = yield* Scope
    return handlers.handle("journal", ({ urlParams }) =>
      served.journal !== undefined && urlParams.projectID !== undefined && urlParams.projectID !== served.journal
        ? Effect.succeed([])
        : decisions.query({
            projectID: served.journal ?? urlParams.projectID,
            sessionID: urlParams.sessionID,
            since: urlParams.since,
            kinds: urlParams.kind === undefined ? undefined : [urlParams.kind],
            limit: urlParams.limit ?? ApprovalApi.JOURNAL_LIMIT.default,
          }),
    )
  }),
)

const events = HttpApiBuilder.group(ApprovalApi.api, "events", (handlers) =>
  Effect.map(Approvals.Service, (approvals) =>
    handlers.handleRaw("events", ({ urlParams }) =>
      Effect.succeed(Events.response(approvals.prompts(filterOf(urlParams)), Guard.SECURITY_HEADERS)),
    ),
  ),
)

const page = HttpApiBuilder.group(ApprovalApi.api, "page", (handlers) =>
  handlers.handleRaw("page", () =>
    Effect.succeed(
      HttpServerResponse.html(Page.html).pipe(
        HttpServerResponse.setHeader("content-security-policy", Page.contentSecurityPolicy),
      ),
    ),
  ),
)

/**
 * Every group's handlers (they read the served `Scope`).
 *
 * @since 0.3.0
 * @category utilities
 */
export const groups = Layer.mergeAll(asks, saved, journal, events, page)
