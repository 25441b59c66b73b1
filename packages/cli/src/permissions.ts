/**
 * `toolgate permissions list|revoke`: the saved approvals (`always` replies) in the data directory's database.
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Database, DecisionJournal, Global, PermissionSaved, Printable, Wildcard } from "@toolgate/core"
import { dataDirectory } from "./paths.js"
import { CliError } from "./errors.js"
import * as Table from "./table.js"

const saved = (data: Option.Option<string>) =>
  Effect.map(
    dataDirectory(data, () => Global.fromEnvironment().data),
    (directory) =>
      Layer.mergeAll(PermissionSaved.layer, DecisionJournal.layer).pipe(
        Layer.provide(Database.layer),
        Layer.provide(Global.layerWith({ data: directory })),
      ),
  )

/** Who revokes, for the journal: the user running the command, when the system names one. */
const revokedBy = (): string | undefined => {
  try {
    return os.userInfo().username
  } catch {
    return undefined
  }
}

/** An epoch-milliseconds time as the table shows it (UTC, to the second). */
const time = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

/** Until when a row applies: `never` (until revoked), its end, or its end marked as passed. */
const until = (row: PermissionSaved.Info, now: number): string =>
  row.until === undefined ? "never" : `${time(row.until)}${row.until <= now ? " (expired)" : ""}`

/**
 * Prints the saved approvals (optionally of one project) as a table: where each applies, what it allows, when it
 * was saved, by whom and through which channel it was answered (`-` for rows saved before these were recorded),
 * and until when it applies.
 *
 * @since 0.1.0
 * @category utilities
 */
export const list = (options: { readonly project: Option.Option<string>; readonly data: Option.Option<string> }) =>
  Effect.gen(function* () {
    const layer = yield* saved(options.data)
    const rows = yield* Effect.flatMap(PermissionSaved.Service, (store) =>
      store.list(Option.match(options.project, { onNone: () => undefined, onSome: (projectID) => ({ projectID }) })),
    ).pipe(Effect.provide(layer))
    if (rows.length === 0) {
      return yield* Console.log(
        Option.match(options.project, {
          onNone: () => "No saved approvals.",
          onSome: (id) => `No saved approvals for project ${id}.`,
        }),
      )
    }
    const sorted = [...rows].sort((a, b) => a.projectID.localeCompare(b.projectID) || a.id.localeCompare(b.id))
    // `directory` is where a `global` approval applies; project rows apply in every directory of the project.
    // Resources are shown as Wildcard.display renders them (a literal `*` saved from a command shows as typed), and
    // through Printable.show, so a control character or escape sequence in a saved command is visible, not obeyed.
    // `by` and `channel` are what the answering client said: shown through Printable.show as well.
    const now = Date.now()
    yield* Console.log(
      Table.render(
        ["id", "project", "directory", "action", "resource", "saved", "by", "channel", "until"],
        sorted.map((row) => [
          row.id,
          row.projectID,
          row.directory === "" ? "(all)" : row.directory,
          row.action,
          Table.clip(Printable.show(Wildcard.display(row.resource)), 100),
          time(row.timeCreated),
          row.by === undefined ? "-" : Table.clip(Printable.show(row.by), 40),
          row.channel === undefined ? "-" : Table.clip(Printable.show(row.channel), 20),
          until(row, now),
        ]),
      ),
    )
  })

/**
 * Removes one saved approval and journals the revoke (channel `cli`, by the user running it) in the same
 * transaction; fails with a clear message when no approval has that id.
 *
 * @since 0.1.0
 * @category utilities
 */
export const revoke = (options: { readonly id: string; readonly data: Option.Option<string> }) =>
  Effect.gen(function* () {
    const layer = yield* saved(options.data)
    yield* Effect.gen(function* () {
      const store = yield* PermissionSaved.Service
      const row = (yield* store.list()).find((candidate) => candidate.id === options.id)
      if (row === undefined) {
        return yield* new CliError({
          message: `No saved approval with id ${options.id} (see \`toolgate permissions list\`)`,
        })
      }
      // The `revoked` journal entry commits with the delete.
      yield* store.remove(row.id, { channel: "cli", by: revokedBy() })
      const where = row.directory === "" ? `project ${row.projectID}` : `project ${row.projectID}, ${row.directory}`
      yield* Console.log(
        `Revoked ${row.id}: ${row.action} ${Table.clip(Printable.show(Wildcard.display(row.resource)), 100)} (${where})`,
      )
    }).pipe(Effect.provide(layer))
  })
