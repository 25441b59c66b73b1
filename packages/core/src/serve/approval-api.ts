/**
 * ApprovalApi: the HTTP approval API as an `@effect/platform` `HttpApi` — its endpoints, schemas (the core
 * `Approvals` and `PermissionSaved` schemas, shared, not copied), typed errors with their HTTP statuses and the
 * bearer-token security. `ApprovalServer` implements and serves it; a client can derive a typed client from it
 * (`HttpApiClient.make(ApprovalApi.api)`), and the OpenAPI document is generated from it (`OpenApi.fromApi`).
 *
 * | method | path | what |
 * |---|---|---|
 * | GET | `/api/asks` | the pending prompts, oldest first (`?sessionID=` narrows) |
 * | GET | `/api/asks/:id` | one pending prompt (404 when not pending) |
 * | POST | `/api/asks/:id/answer` | answer it: `{ digest, choice, message?, ttlMillis?, by? }` → 204 |
 * | GET | `/api/saved` | the saved approvals of this Location's project, or of every project (`?projectID=` narrows) |
 * | DELETE | `/api/saved/:id` | revoke one (404 when it is not one of them) → 204 |
 * | GET | `/api/journal` | the decision journal of this Location's project, or of every project (`?projectID=&sessionID=&since=&kind=&limit=`) |
 * | GET | `/api/events` | Server-Sent Events: `Asked`, `Answered`, `Expired` (`?sessionID=` narrows) |
 * | GET | `/api/openapi.json` | this API's OpenAPI document (no token needed) |
 * | GET | `/` | the approval web page (no token needed; it asks for one) |
 *
 * See docs/approval-server.md.
 *
 * @since 0.3.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import * as DatabaseError from "../system/database-error.js"
import * as Approvals from "../approvals/approvals.js"
import * as DecisionJournal from "../journal/decision-journal.js"
import * as PermissionSaved from "../permission/permission-saved.js"
import * as PermissionV2 from "../permission/permission.js"

/**
 * The request carries no bearer token, or a wrong one. HTTP 401.
 *
 * @since 0.3.0
 * @category errors
 */
export class UnauthorizedError extends Schema.TaggedError<UnauthorizedError>()(
  "ApprovalApi.UnauthorizedError",
  {},
  HttpApiSchema.annotations({ status: 401 }),
) {
  override get message(): string {
    return "This request needs the approval server's bearer token (Authorization: Bearer <token>)."
  }
}

/**
 * A revoke names no saved approval of this Location's project. Nothing changed. HTTP 404.
 *
 * @since 0.3.0
 * @category errors
 */
export class SavedNotFoundError extends Schema.TaggedError<SavedNotFoundError>()(
  "ApprovalApi.SavedNotFoundError",
  { id: Schema.String },
  HttpApiSchema.annotations({ status: 404 }),
) {
  override get message(): string {
    return `No saved approval ${this.id} in this project; nothing changed.`
  }
}

/**
 * The bearer-token check every `/api` endpoint but the OpenAPI document goes through (`ApprovalServer` provides it).
 *
 * @since 0.3.0
 * @category security
 */
export class Authorization extends HttpApiMiddleware.Tag<Authorization>()("@toolgate/ApprovalApi/Authorization", {
  failure: UnauthorizedError,
  security: { bearer: HttpApiSecurity.bearer },
}) {}

/**
 * The body of an answer: an `Approvals.Answer` without the request id (it is in the path) and the channel (always
 * `http`), and with the digest required — a remote client must name what it showed.
 *
 * @since 0.3.0
 * @category models
 */
export const AnswerBody = Schema.Struct({
  ...Approvals.Answer.omit("requestID", "channel", "digest").fields,
  digest: Schema.String,
})
/**
 * @since 0.3.0
 * @category models
 */
export type AnswerBody = typeof AnswerBody.Type

/**
 * The optional session filter of the list and the event stream.
 *
 * @since 0.3.0
 * @category models
 */
export const SessionFilter = Schema.Struct({ sessionID: Schema.optional(Schema.String) })

const RequestPath = Schema.Struct({ id: Schema.String })

/**
 * The optional project filter of the saved approvals: a server with no Location lists every project's unless it
 * names one; a server beside a Location lists nothing for another project.
 *
 * @since 0.3.0
 * @category models
 */
export const ProjectFilter = Schema.Struct({ projectID: Schema.optional(Schema.String) })

/**
 * The pending asks and their answer.
 *
 * @since 0.3.0
 * @category groups
 */
export const AsksGroup = HttpApiGroup.make("asks")
  .add(
    HttpApiEndpoint.get("pending", "/asks")
      .setUrlParams(SessionFilter)
      .addSuccess(Schema.Array(Approvals.Prompt))
      .annotate(OpenApi.Summary, "The pending asks, oldest first"),
  )
  .add(
    HttpApiEndpoint.get("get", "/asks/:id")
      .setPath(RequestPath)
      .addSuccess(Approvals.Prompt)
      .addError(PermissionV2.NotFoundError, { status: 404 })
      .annotate(OpenApi.Summary, "One pending ask"),
  )
  .add(
    HttpApiEndpoint.post("answer", "/asks/:id/answer")
      .setPath(RequestPath)
      .setPayload(AnswerBody)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(PermissionV2.NotFoundError, { status: 404 })
      .addError(Approvals.AlreadyAnsweredError, { status: 409 })
      .addError(Approvals.DigestMismatchError, { status: 409 })
      .addError(Approvals.UnknownChoiceError, { status: 400 })
      .addError(PermissionV2.SaveError, { status: 503 })
      .annotate(OpenApi.Summary, "Answer a pending ask; a failure changes nothing"),
  )
  .middleware(Authorization)
  .prefix("/api")

/**
 * The saved approvals (`always` answers) of the served Location's project (with no Location: of every project).
 *
 * @since 0.3.0
 * @category groups
 */
export const SavedGroup = HttpApiGroup.make("saved")
  .add(HttpApiEndpoint.get("list", "/saved").setUrlParams(ProjectFilter).addSuccess(Schema.Array(PermissionSaved.Info)))
  .add(
    HttpApiEndpoint.del("revoke", "/saved/:id")
      .setPath(RequestPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(SavedNotFoundError),
  )
  .middleware(Authorization)
  .prefix("/api")

/**
 * How many journal entries one request returns at most (the newest ones), and by default.
 *
 * @since 0.3.0
 * @category constants
 */
export const JOURNAL_LIMIT = { default: 500, max: 5000 } as const

/**
 * The journal's filters: a project (as `ProjectFilter`), a session, a start time (epoch milliseconds), one kind, how
 * many (the newest, up to `JOURNAL_LIMIT.max`).
 *
 * @since 0.3.0
 * @category models
 */
export const JournalFilter = Schema.Struct({
  projectID: Schema.optional(Schema.String),
  sessionID: Schema.optional(Schema.String),
  since: Schema.optional(Schema.NumberFromString.pipe(Schema.nonNegative())),
  kind: Schema.optional(DecisionJournal.Kind),
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, JOURNAL_LIMIT.max))),
})

/**
 * The decision journal of the served Location's project (with no Location: of every project), oldest first.
 *
 * @since 0.3.0
 * @category groups
 */
export const JournalGroup = HttpApiGroup.make("journal")
  .add(
    HttpApiEndpoint.get("journal", "/journal")
      .setUrlParams(JournalFilter)
      .addSuccess(Schema.Array(DecisionJournal.Entry))
      .addError(DatabaseError.QueryError, { status: 503 })
      .annotate(OpenApi.Summary, "Decisions: evaluations, asks, answers, expiries, releases, cascades, revokes"),
  )
  .middleware(Authorization)
  .prefix("/api")

/**
 * The Server-Sent Events stream: one `event:` line with the `PromptEvent` tag and one `data:` line with the event as
 * JSON (the `PromptEvent` encoding) per event; first an `Asked` for every ask already pending.
 *
 * @since 0.3.0
 * @category groups
 */
export const EventsGroup = HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("events", "/events")
      .setUrlParams(SessionFilter)
      .addSuccess(Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" })))
      .annotate(OpenApi.Summary, "Asked, Answered and Expired events as Server-Sent Events"),
  )
  .middleware(Authorization)
  .prefix("/api")

/**
 * The web page (no token: the page asks for it, or reads it from the URL fragment).
 *
 * @since 0.3.0
 * @category groups
 */
export const PageGroup = HttpApiGroup.make("page").add(
  HttpApiEndpoint.get("page", "/").addSuccess(
    Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/html" })),
  ),
)

/**
 * The whole API.
 *
 * @since 0.3.0
 * @category api
 */
export const api = HttpApi.make("toolgate-approvals")
  .add(AsksGroup)
  .add(SavedGroup)
  .add(JournalGroup)
  .add(EventsGroup)
  .add(PageGroup)
  .annotate(OpenApi.Title, "toolgate approval API")
  .annotate(
    OpenApi.Description,
    "Answer toolgate permission asks from anywhere: the pending asks with everything to show, digest-bound answers, saved approvals and a live event stream.",
  )
