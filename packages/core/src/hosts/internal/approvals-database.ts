/**
 * The approval protocol with no Location: `Approvals` over the `pending_ask` table of a Postgres database, which
 * every asking process writes (see docs/approvals.md and docs/approval-server.md). It lists the asks of every
 * process on the database, streams their events and answers them by claiming the row; the process that asked (the
 * row's owner) applies the claim through its own queue, so saving, the journal and the release of the waiting call
 * happen there, exactly once.
 *
 * - `pending` and `get` show only rows that are `pending`, whose owner's `runner_owner` lease has not run out and
 *   whose deadline has not passed.
 * - `answer` checks the choice against the row's prompt, then claims the row in one statement
 *   (`UPDATE … WHERE status = 'pending' AND digest = … RETURNING`); a `reject` also claims every other pending row of
 *   the same session as a cascade, in the same transaction. The owners are woken with `NOTIFY toolgate_answer`.
 * - `prompts` delivers an `Asked` for every listed row, then re-reads the list on every `toolgate_ask` notification
 *   and at least once a second, and delivers `Asked` for rows that appeared and `Answered` / `Expired` for rows that
 *   left it.
 *
 * @since 0.3.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlError from "@effect/sql/SqlError"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Fx from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as DatabaseError from "../../system/database-error.js"
import * as Notifications from "../../system/notifications.js"
import {
  AlreadyAnsweredError,
  type Answer,
  DigestMismatchError,
  type Filter,
  IN_PROCESS,
  type Interface,
  Prompt,
  type PromptEvent,
  Service,
  UnknownChoiceError,
} from "../../permission/internal/protocol.js"
import { NotFoundError, SaveError } from "../../permission/internal/error.js"

/**
 * What a claim writes into `pending_ask.answer` (as JSON): the answer given, or a cascade of the rejection of
 * `cause` (another ask of the same session).
 *
 * @since 0.3.0
 * @category models
 */
export const Claim = Schema.Union(
  Schema.Struct({
    kind: Schema.Literal("answer"),
    choice: Schema.String,
    message: Schema.optional(Schema.String),
    ttlMillis: Schema.optional(Schema.Number),
    by: Schema.optional(Schema.String),
    channel: Schema.String,
  }),
  Schema.Struct({ kind: Schema.Literal("cascade"), cause: Schema.String }),
)
/**
 * @since 0.3.0
 * @category models
 */
export type Claim = typeof Claim.Type

const ClaimJson = Schema.parseJson(Claim)

/**
 * A claim as the JSON text `pending_ask.answer` holds (the one codec of that column: the server writes it, the
 * asking process reads it).
 *
 * @since 0.3.0
 * @category codecs
 * @internal
 */
export const encodeClaim: (claim: Claim) => string = Schema.encodeSync(ClaimJson)

/**
 * The claim in a `pending_ask.answer` text; none when the text is not a claim.
 *
 * @since 0.3.0
 * @category codecs
 * @internal
 */
export const decodeClaim: (text: unknown) => Option.Option<Claim> = Schema.decodeUnknownOption(ClaimJson)

const PromptJson = Schema.parseJson(Prompt)

/**
 * A prompt as the JSON text `pending_ask.prompt` holds (the asking process writes it, the server reads it).
 *
 * @since 0.3.0
 * @category codecs
 * @internal
 */
export const encodePrompt: (prompt: Prompt) => string = Schema.encodeSync(PromptJson)

/**
 * The prompt in a `pending_ask.prompt` text; none when the text is not a prompt.
 *
 * @since 0.3.0
 * @category codecs
 * @internal
 */
export const decodePrompt: (text: unknown) => Option.Option<Prompt> = Schema.decodeUnknownOption(PromptJson)

/**
 * The notification channel an asking process's row changes are announced on (payload: the request id).
 *
 * @since 0.3.0
 * @category constants
 */
export const ASK_CHANNEL = "toolgate_ask"

/**
 * The notification channel a claim wakes the row's owner on (payload: the owner id).
 *
 * @since 0.3.0
 * @category constants
 */
export const ANSWER_CHANNEL = "toolgate_answer"

/**
 * How often `prompts` re-reads the table when no notification arrived (a lost notification, a Postgres restart).
 *
 * @since 0.3.0
 * @category constants
 */
export const POLL = Duration.seconds(1)

/**
 * How often `prompts` re-reads without a notification.
 *
 * @since 0.3.0
 * @category models
 */
export interface DatabaseOptions {
  /** The poll interval (default `POLL`). */
  readonly poll?: Duration.DurationInput | undefined
}

/**
 * Claims every `pending` row of `sessionID` as a cascade of the rejection of `cause`, in one statement that also
 * notifies each row's owner (`toolgate_answer`) and the servers' streams (`toolgate_ask`); inside a transaction the
 * notifications go out on commit. `exceptOwner` leaves out one owner's rows (the rejecting process declines its own
 * in memory). The one cascade claim, for a reject claimed here and for one answered in an asking process.
 *
 * @since 0.3.0
 * @internal
 * @category utilities
 */
export const claimCascades = (
  sql: SqlClient.SqlClient,
  options: { readonly sessionID: string; readonly cause: string; readonly now: number; readonly exceptOwner?: string },
): Fx.Effect<void, SqlError.SqlError> => {
  const cascade = encodeClaim({ kind: "cascade", cause: options.cause })
  const others = options.exceptOwner === undefined ? sql`TRUE` : sql`owner_id <> ${options.exceptOwner}`
  return Fx.asVoid(sql`WITH c AS (
      UPDATE pending_ask SET status = 'claimed', answer = ${cascade}, time_updated = ${options.now}
      WHERE session_id = ${options.sessionID} AND status = 'pending' AND ${others}
      RETURNING id, owner_id)
    SELECT pg_notify(${ANSWER_CHANNEL}, owner_id), pg_notify(${ASK_CHANNEL}, id) FROM c`)
}

interface ListedRow {
  readonly id: string
  readonly session_id: string
  readonly prompt: string
}

interface AnswerRow {
  readonly id: string
  readonly owner_id: string
  readonly session_id: string
  readonly digest: string
  readonly prompt: string
  readonly status: string
  readonly deadline: number | null
  readonly live: number
}

interface LeftRow {
  readonly id: string
  readonly session_id: string
  readonly answer: string | null
}

/**
 * Builds the protocol over the database in context.
 *
 * @since 0.3.0
 * @category constructors
 */
export const makeDatabase = (options: DatabaseOptions = {}) =>
  Fx.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifications = yield* Notifications.Service
    const orDie = DatabaseError.orDie(sql)
    const poll = Duration.decode(options.poll ?? POLL)
    const notify = notifications.notify

    /** The listed rows, oldest first. */
    const listed = (filter: Filter | undefined, now: number) =>
      filter?.sessionID === undefined
        ? sql<ListedRow>`SELECT a.id, a.session_id, a.prompt FROM pending_ask a
            JOIN runner_owner o ON o.id = a.owner_id
            WHERE a.status = 'pending' AND o.lease_expires > ${now} AND (a.deadline IS NULL OR a.deadline > ${now})
            ORDER BY a.time_created, a.id`
        : sql<ListedRow>`SELECT a.id, a.session_id, a.prompt FROM pending_ask a
            JOIN runner_owner o ON o.id = a.owner_id
            WHERE a.status = 'pending' AND a.session_id = ${filter.sessionID} AND o.lease_expires > ${now}
              AND (a.deadline IS NULL OR a.deadline > ${now})
            ORDER BY a.time_created, a.id`

    /** The prompts of `rows`; a row whose prompt does not decode is left out (and logged). */
    const promptsOf = (rows: ReadonlyArray<ListedRow>) =>
      Fx.gen(function* () {
        const out: Array<Prompt> = []
        for (const row of rows) {
          const prompt = decodePrompt(row.prompt)
          if (prompt._tag === "Some") out.push(prompt.value)
          else yield* Fx.logWarning(`Approvals: pending_ask ${row.id} holds a prompt that does not decode; not listed`)
        }
        return out
      })

    const pending = Fx.fn("Approvals.pending")(function* (filter?: Filter) {
      const now = yield* Clock.currentTimeMillis
      return yield* promptsOf(yield* orDie(listed(filter, now)))
    })

    const get = Fx.fn("Approvals.get")(function* (requestID: string) {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* orDie(sql<ListedRow>`SELECT a.id, a.session_id, a.prompt FROM pending_ask a
        JOIN runner_owner o ON o.id = a.owner_id
        WHERE a.id = ${requestID} AND a.status = 'pending' AND o.lease_expires > ${now}
          AND (a.deadline IS NULL OR a.deadline > ${now})`)
      const [prompt] = yield* promptsOf(rows)
      if (prompt === undefined) return yield* new NotFoundError({ requestID })
      return prompt
    })

    const readRow = (requestID: string, now: number) =>
      Fx.map(
        sql<AnswerRow>`SELECT a.id, a.owner_id, a.session_id, a.digest, a.prompt, a.status, a.deadline,
            (SELECT COUNT(*) FROM runner_owner o WHERE o.id = a.owner_id AND o.lease_expires > ${now}) AS live
          FROM pending_ask a WHERE a.id = ${requestID}`,
        (rows) => rows[0],
      )

    /**
     * Why `row` cannot be claimed with `digest` now, or `undefined`: no row, or an owner whose lease ran out (nobody
     * waits for it any more): not found; not pending or past its deadline: already answered; another digest: a
     * mismatch.
     */
    const refusal = (requestID: string, row: AnswerRow | undefined, digest: string | undefined, now: number) => {
      if (row === undefined || (row.status === "pending" && Number(row.live) === 0)) {
        return new NotFoundError({ requestID })
      }
      if (row.status !== "pending" || (row.deadline !== null && row.deadline <= now)) {
        return new AlreadyAnsweredError({ requestID })
      }
      if (digest !== undefined && digest !== row.digest) return new DigestMismatchError({ requestID })
      return undefined
    }

    const saveError = (requestID: string, action: string) => (error: unknown) => {
      const failure = error instanceof DatabaseError.QueryError ? error : DatabaseError.queryError(sql, error)
      return new SaveError({
        requestID,
        action,
        ...(failure.filename === undefined ? {} : { filename: failure.filename }),
        ...(failure.code === undefined ? {} : { code: failure.code }),
        detail: failure.detail,
      })
    }

    /** Claims the row, and on a reject its session's other pending rows; the owners are notified on commit. */
    const claim = (row: AnswerRow, digest: string, claimed: Claim, now: number) =>
      sql.withTransaction(
        Fx.gen(function* () {
          const won = yield* sql<{ owner_id: string }>`UPDATE pending_ask
            SET status = 'claimed', answer = ${encodeClaim(claimed)}, time_updated = ${now}
            WHERE id = ${row.id} AND status = 'pending' AND digest = ${digest}
              AND (deadline IS NULL OR deadline > ${now})
              AND owner_id IN (SELECT id FROM runner_owner WHERE lease_expires > ${now})
            RETURNING owner_id`
          if (won.length === 0) return false
          // The claimed row is no longer pending, so the cascade leaves it alone.
          if (claimed.kind === "answer" && claimed.choice === "reject") {
            yield* claimCascades(sql, { sessionID: row.session_id, cause: row.id, now })
          }
          yield* notify(ANSWER_CHANNEL, row.owner_id)
          yield* notify(ASK_CHANNEL, row.id)
          return true
        }),
      )

    // What an answer is about, for its `SaveError`, once its row is read.
    const actions = new WeakMap<Answer, string>()

    /**
     * A database failure anywhere in an answer — a read, the claim, and the COMMIT or ROLLBACK `withTransaction`
     * turns into a defect — is the documented `SaveError` (HTTP 503), never an unexplained defect (500).
     */
    const databaseFailure = (input: Answer) => (defect: unknown) =>
      defect instanceof SqlError.SqlError || defect instanceof DatabaseError.QueryError
        ? Option.some(Fx.fail(saveError(input.requestID, actions.get(input) ?? "unknown")(defect)))
        : Option.none()

    const answer = Fx.fn("Approvals.answer")(
      function* (input: Answer) {
        const requestID = input.requestID
        if (input.digest === undefined && input.channel !== IN_PROCESS) {
          return yield* new DigestMismatchError({ requestID })
        }
        const now = yield* Clock.currentTimeMillis
        const row = yield* orDie(readRow(requestID, now))
        const refused = refusal(requestID, row, input.digest, now)
        if (refused !== undefined) return yield* refused
        const found = row!
        const prompt = decodePrompt(found.prompt)
        if (prompt._tag === "None") return yield* new NotFoundError({ requestID })
        actions.set(input, prompt.value.request.action)
        const choice = prompt.value.choices.find((candidate) => candidate.id === input.choice)
        if (choice === undefined) return yield* new UnknownChoiceError({ requestID, choice: input.choice })
        const claimed: Claim = {
          kind: "answer",
          choice: choice.id,
          channel: input.channel,
          ...(input.message === undefined ? {} : { message: input.message }),
          ...(input.ttlMillis === undefined ? {} : { ttlMillis: input.ttlMillis }),
          ...(input.by === undefined ? {} : { by: input.by }),
        }
        const won = yield* claim(found, input.digest ?? found.digest, claimed, now).pipe(
          Fx.mapError(saveError(requestID, prompt.value.request.action)),
        )
        if (won) return
        // Someone else changed the row between the read and the claim: say what it is now.
        const again = yield* orDie(readRow(requestID, now))
        return yield* refusal(requestID, again, input.digest, now) ?? new AlreadyAnsweredError({ requestID })
      },
      (effect, input) => Fx.catchSomeDefect(effect, databaseFailure(input)),
    )

    /** The events of the rows that left the list: answered (with the claim's choice) or expired. */
    const leftEvents = (ids: ReadonlyArray<string>, sessions: ReadonlyMap<string, string>) =>
      Fx.gen(function* () {
        if (ids.length === 0) return []
        const rows = yield* sql<LeftRow>`SELECT id, session_id, answer FROM pending_ask WHERE id IN ${sql.in(ids)}`
        const claims = new Map<string, Claim>()
        for (const row of rows) {
          const claimed = row.answer === null ? undefined : decodeClaim(row.answer)
          if (claimed?._tag === "Some") claims.set(row.id, claimed.value)
        }
        const causes = [...claims.values()].flatMap((claimed) =>
          claimed.kind === "cascade" && !claims.has(claimed.cause) ? [claimed.cause] : [],
        )
        if (causes.length > 0) {
          const more = yield* sql<LeftRow>`SELECT id, session_id, answer FROM pending_ask WHERE id IN ${sql.in(causes)}`
          for (const row of more) {
            const claimed = row.answer === null ? undefined : decodeClaim(row.answer)
            if (claimed?._tag === "Some") claims.set(row.id, claimed.value)
          }
        }
        return ids.map((id): PromptEvent => {
          const sessionID = sessions.get(id) ?? ""
          const claimed = claims.get(id)
          if (claimed === undefined) return { _tag: "Expired", requestID: id, sessionID }
          if (claimed.kind === "answer") {
            return {
              _tag: "Answered",
              requestID: id,
              sessionID,
              choice: claimed.choice,
              channel: claimed.channel,
              ...(claimed.by === undefined ? {} : { by: claimed.by }),
            }
          }
          const root = claims.get(claimed.cause)
          const who = root?.kind === "answer" ? root : undefined
          return {
            _tag: "Answered",
            requestID: id,
            sessionID,
            choice: "cascade",
            channel: who?.channel ?? "cascade",
            ...(who?.by === undefined ? {} : { by: who.by }),
          }
        })
      })

    const prompts = (filter?: Filter): Stream.Stream<PromptEvent> =>
      Stream.unwrapScoped(
        Fx.gen(function* () {
          const wake = yield* Fx.acquireRelease(Queue.sliding<void>(1), Queue.shutdown)
          if (notifications.delivers) {
            const follow = (stream: Stream.Stream<string, Notifications.ListenError>) =>
              Stream.runForEach(stream, () => wake.offer(undefined))
            const lost = (error: Notifications.ListenError) =>
              Fx.logWarning("Approvals: not listening for asks; polling until listening again", error)
            // The first LISTEN is in force before the snapshot is read, so no change after it goes unheard. When
            // the connection is lost (Postgres restarted) it is made again, and the list re-read, every `poll`.
            const first = yield* Fx.either(notifications.subscribe(ASK_CHANNEL))
            const again = Fx.scoped(
              Fx.flatMap(notifications.subscribe(ASK_CHANNEL), (stream) =>
                Fx.zipRight(wake.offer(undefined), follow(stream)),
              ),
            ).pipe(Fx.catchAll(lost), Fx.zipRight(Fx.sleep(poll)), Fx.forever)
            yield* (first._tag === "Right" ? follow(first.right) : Fx.fail(first.left)).pipe(
              Fx.catchAll(lost),
              Fx.zipRight(Fx.sleep(poll)),
              Fx.zipRight(again),
              Fx.forkScoped,
            )
          }
          yield* wake.offer(undefined).pipe(Fx.delay(poll), Fx.forever, Fx.forkScoped)
          /** The listed rows as last read: id → session. */
          const shown = new Map<string, string>()
          const first = yield* pending(filter)
          for (const prompt of first) shown.set(prompt.request.id, prompt.request.sessionID)
          const reread = Fx.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const rows = yield* listed(filter, now)
            const current = new Set(rows.map((row) => row.id))
            const left = [...shown.keys()].filter((id) => !current.has(id))
            const events: Array<PromptEvent> = yield* leftEvents(left, shown)
            for (const id of left) shown.delete(id)
            const fresh = rows.filter((row) => !shown.has(row.id))
            for (const prompt of yield* promptsOf(fresh)) {
              shown.set(prompt.request.id, prompt.request.sessionID)
              events.push({ _tag: "Asked", prompt })
            }
            return events
          }).pipe(
            // A failed read (Postgres restarting) delivers nothing; the next notification or poll reads again.
            Fx.catchAll((error) =>
              Fx.as(Fx.logWarning("Approvals: reading the pending asks failed; retrying", error), []),
            ),
          )
          const asked = first.map((prompt): PromptEvent => ({ _tag: "Asked", prompt }))
          return Stream.concat(
            Stream.fromIterable(asked),
            Stream.fromQueue(wake).pipe(
              Stream.mapEffect(() => reread),
              Stream.flattenIterables,
            ),
          )
        }),
      )

    return Service.of({ pending, get, prompts, answer } satisfies Interface)
  })

/**
 * The approval protocol of every process on the database in context, with no Location (for an approval server on
 * another host); its prompt streams listen through `Notifications` (`Notifications.silent` polls only). Meant for
 * Postgres: on SQLite no process writes `pending_ask`, so nothing is ever listed.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerDatabase = (
  options: DatabaseOptions = {},
): Layer.Layer<Service, never, SqlClient.SqlClient | Notifications.Service> =>
  Layer.effect(Service, makeDatabase(options))
