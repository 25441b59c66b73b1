/**
 * The handlers of `ApprovalApi`: each group over `Approvals`, `PermissionSaved` (limited to the served Location's
 * approval scope) and the page, plus the bearer-token middleware.
 *
 * @since 0.3.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Location from "../../place/location.js"
import * as ProjectV2 from "../../place/project.js"
import * as Approvals from "../../policy/approvals.js"
import * as DecisionJournal from "../../policy/decision-journal.js"
import * as PermissionSaved from "../../policy/permission-saved.js"
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
    const location = yield* Location.Service
    const scope = ProjectV2.approvalScope(location.project.id, location.directory)
    const rows = store.list({ projectID: scope.projectID, directory: scope.directory })
    return handlers
      .handle("list", () => rows)
      .handle("revoke", ({ path }) =>
        Effect.flatMap(rows, (all) =>
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
    const location = yield* Location.Service
    return handlers.handle("journal", ({ urlParams }) =>
      decisions.query({
        projectID: location.project.id,
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
 * Every group's handlers.
 *
 * @since 0.3.0
 * @category utilities
 */
export const groups = Layer.mergeAll(asks, saved, journal, events, page)
