/**
 * `toolgate decisions [--session S] [--since T] [--kind K] [--limit N] [--json]`: the decision journal of the data
 * directory's database — every evaluation (per resource, with the rule that decided and where it came from), ask,
 * answer, expiry, release by a saved approval, cascade and revoke — oldest first. The command is defined here; the
 * library is loaded only when it runs. See docs/decisions.md.
 *
 * @since 0.3.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { DecisionJournal } from "@toolgate/core"
import { CliError, UsageError } from "./errors.js"
import { dataDirectory } from "./paths.js"
import * as Table from "./table.js"

const UNITS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * The epoch milliseconds `--since` names: a relative age (`30s`, `15m`, `2h`, `7d`: that long before `now`), an ISO
 * 8601 date or date-time (`2026-12-02`, `2026-12-02T04:00:00Z`), or epoch milliseconds; `undefined` when it is none
 * of these.
 *
 * @since 0.3.0
 * @category parsing
 */
export const parseSince = (text: string, now: number): number | undefined => {
  const trimmed = text.trim()
  const relative = /^(\d+)\s*([smhd])$/.exec(trimmed)
  if (relative !== null) return now - Number(relative[1]) * UNITS[relative[2]!]!
  if (/^\d{10,}$/.test(trimmed)) return Number(trimmed)
  if (!/^\d{4}-\d{2}-\d{2}/.test(trimmed)) return undefined
  const parsed = Date.parse(trimmed)
  return Number.isNaN(parsed) ? undefined : parsed
}

/** An epoch-milliseconds time as the table shows it (UTC, to the millisecond). */
const time = (ms: number): string => new Date(ms).toISOString()

const origin = (value: DecisionJournal.Origin): string => {
  switch (value.type) {
    case "builtin":
      return "built-in"
    case "config":
      return `${value.path ?? "config"}#${value.index}`
    case "agent":
      return `agent ${value.agent} ${value.path ?? ""}#${value.index}`.replace("  ", " ")
    case "saved":
      return `saved ${value.id}`
    case "session":
      return "session approval"
    case "unknown":
      return "unknown"
    case "default":
      return "no rule (default ask)"
  }
}

const decisions = (list: ReadonlyArray<DecisionJournal.ResourceDecision>): string =>
  list
    .map(
      (d) => `${d.resource}: ${d.effect} by ${d.rule === undefined ? "" : `${d.rule.resource} `}(${origin(d.origin)})`,
    )
    .join("; ")

/**
 * What an entry decided, in one line (untrusted text is escaped by the caller).
 *
 * @since 0.3.0
 * @category rendering
 */
export const summary = (entry: DecisionJournal.Entry): string => {
  switch (entry.kind) {
    case "evaluated":
      return `${entry.detail.effect}${entry.detail.agent === undefined ? "" : ` for ${entry.detail.agent}`} — ${decisions(entry.detail.decisions)}`
    case "asked":
      return [
        entry.detail.choices === undefined ? undefined : `choices ${entry.detail.choices.join(", ")}`,
        entry.detail.save === undefined || entry.detail.save.length === 0
          ? undefined
          : `always saves ${entry.detail.save.join(", ")}`,
        entry.detail.deadline === undefined ? undefined : `deadline ${time(entry.detail.deadline)}`,
      ]
        .filter((part) => part !== undefined)
        .join("; ")
    case "answered": {
      const d = entry.detail
      return [
        `${d.choice} via ${d.channel}${d.by === undefined ? "" : ` by ${d.by}`}`,
        d.saved.length === 0
          ? undefined
          : `saved ${d.saved.join(", ")}${d.where === undefined || d.where.directory === "" ? "" : ` in ${d.where.directory}`}`,
        d.until === undefined ? undefined : `until ${time(d.until)}`,
        d.message === undefined ? undefined : `message ${JSON.stringify(d.message)}`,
      ]
        .filter((part) => part !== undefined)
        .join("; ")
    }
    case "expired":
      return `nobody answered within ${entry.detail.timeoutMillis} ms`
    case "auto-resolved":
      return `${entry.detail.cause === undefined ? "a saved approval" : `the answer to ${entry.detail.cause}`} — ${decisions(entry.detail.decisions)}`
    case "cascaded":
      return `${entry.detail.choice} of ${entry.detail.cause}`
    case "revoked":
      return `${entry.detail.savedID}${entry.detail.channel === undefined ? "" : ` via ${entry.detail.channel}`}${entry.detail.by === undefined ? "" : ` by ${entry.detail.by}`}`
    case "hook": {
      const d = entry.detail
      return [
        `${d.from === undefined ? d.decision : `${d.from} → ${d.decision}`} by ${d.origin}`,
        d.tool === undefined ? undefined : `call ${d.tool.name} ${d.tool.callID}`,
        d.reason === undefined ? undefined : `reason ${JSON.stringify(d.reason)}`,
      ]
        .filter((part) => part !== undefined)
        .join("; ")
    }
  }
}

const KINDS = ["evaluated", "asked", "answered", "expired", "auto-resolved", "cascaded", "revoked", "hook"] as const

/**
 * Prints the journal entries the options select: a table, or with `json` a JSON array of the entries as stored.
 *
 * @since 0.3.0
 * @category commands
 */
export const print = (options: {
  readonly session: Option.Option<string>
  readonly since: Option.Option<string>
  readonly kind: ReadonlyArray<string>
  readonly limit: Option.Option<number>
  readonly json: boolean
  readonly data: Option.Option<string>
}) =>
  Effect.gen(function* () {
    const since = Option.getOrUndefined(options.since)
    const sinceMs = since === undefined ? undefined : parseSince(since, Date.now())
    if (since !== undefined && sinceMs === undefined) {
      return yield* new UsageError({
        message: `--since ${since} is not a time: give an age (30s, 15m, 2h, 7d), an ISO date or date-time, or epoch milliseconds`,
      })
    }
    const unknown = options.kind.filter((kind) => !(KINDS as ReadonlyArray<string>).includes(kind))
    if (unknown.length > 0) {
      return yield* new UsageError({ message: `--kind ${unknown[0]} is not one of ${KINDS.join(", ")}` })
    }
    const limit = Option.getOrUndefined(options.limit)
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
      return yield* new UsageError({ message: `--limit ${limit} must be a whole number of at least 1` })
    }
    const { Database, DecisionJournal, Global, Printable } = yield* Effect.promise(() => import("@toolgate/core"))
    const directory = yield* dataDirectory(options.data, () => Global.fromEnvironment().data)
    const layer = DecisionJournal.layer.pipe(
      Layer.provide(Database.layer),
      Layer.provide(Global.layerWith({ data: directory })),
    )
    const entries = yield* Effect.flatMap(DecisionJournal.Service, (journal) =>
      journal.query({
        sessionID: Option.getOrUndefined(options.session),
        since: sinceMs,
        kinds: options.kind.length === 0 ? undefined : (options.kind as ReadonlyArray<DecisionJournal.Kind>),
        limit,
      }),
    ).pipe(
      Effect.provide(layer),
      Effect.mapError((error) => new CliError({ message: error.message })),
    )
    if (options.json) return yield* Console.log(JSON.stringify(entries, null, 2))
    if (entries.length === 0) return yield* Console.log("No decisions recorded.")
    // Resources, patterns, names and messages come from the model, configuration files and answering clients:
    // shown through Printable.show so a control character or escape sequence is visible, not obeyed.
    yield* Console.log(
      Table.render(
        ["time", "kind", "session", "request", "action", "resources", "decision"],
        entries.map((entry) => [
          time(entry.time),
          entry.kind,
          entry.sessionID ?? "-",
          entry.requestID ?? "-",
          Printable.show(entry.action),
          Table.clip(Printable.show(entry.resources.join(" ")), 80),
          Table.clip(Printable.show(summary(entry)), 160),
        ]),
      ),
    )
  })

/**
 * The `decisions` command, for the CLI's command table.
 *
 * @since 0.3.0
 * @category commands
 */
export const command = Command.make(
  "decisions",
  {
    session: Options.text("session").pipe(Options.withDescription("Only this session's decisions"), Options.optional),
    since: Options.text("since").pipe(
      Options.withDescription("Only decisions at or after this time: an age (2h, 7d), an ISO date-time or epoch ms"),
      Options.optional,
    ),
    kind: Options.text("kind").pipe(
      Options.withDescription(`Only entries of this kind (repeatable): ${KINDS.join(", ")}`),
      Options.repeated,
    ),
    limit: Options.integer("limit").pipe(Options.withDescription("Only the newest N entries"), Options.optional),
    json: Options.boolean("json").pipe(Options.withDescription("Print the entries as a JSON array")),
    data: Options.text("data").pipe(
      Options.withDescription("Data directory of the database (default: $XDG_DATA_HOME/toolgate)"),
      Options.optional,
    ),
  },
  print,
).pipe(
  Command.withDescription(
    "Print the decision journal: every evaluation with the rule that decided, ask, answer, expiry and revoke",
  ),
)
