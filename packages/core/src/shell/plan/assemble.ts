/**
 * The last step of `ShellPlan.plan`: the permission groups and the asserts, denies first, from what the walk over the
 * segments collected.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as ProtectedPath from "../../place/protected-path.js"
import * as Wildcard from "../../values/wildcard.js"
import * as ShellCommand from "../shell-command.js"
import type { Assert, Environment, Group, Input, Plan } from "./schema.js"

/**
 * A resource no real command can be: `bash` allows it only when bash is allowed wholesale.
 *
 * @since 0.3.0
 * @internal
 */
export const WHOLESALE_PROBE = "\u0000"

/**
 * The distinct values in first-seen order.
 *
 * @since 0.3.0
 * @internal
 */
export const unique = <A>(values: Iterable<A>): Array<A> => [...new Set(values)]

/**
 * What the walk over the segments collected: the external directories (with their save patterns), the files written,
 * read and protected, and why an unresolved resource asks.
 *
 * @since 0.3.0
 * @internal
 */
export interface Collected {
  readonly externals: Map<string, string>
  readonly edits: Set<string>
  readonly reads: Set<string>
  readonly protects: Set<string>
  readonly reasons: Map<string, string>
}

/**
 * The groups and the asserts, denies first.
 *
 * @since 0.3.0
 * @internal
 */
export const assemble = <E>(
  input: Input,
  env: Environment<E>,
  parsed: ShellCommand.Parsed,
  verdicts: ReadonlyArray<ShellCommand.Verdict>,
  collected: Collected,
) =>
  Effect.gen(function* () {
    const asking = verdicts.filter((v) => v.effect === "ask")
    const allowed = verdicts.filter((v) => v.effect === "allow" && v.sandboxed !== true)
    const sandboxed = verdicts.filter((v) => v.sandboxed === true)
    const shown = asking.length > 0 ? asking : allowed
    const bashResources =
      shown.length > 0
        ? unique(shown.map((v) => v.resource))
        : sandboxed.length > 0 || verdicts.length > 0
          ? []
          : [input.command]
    const bashSave =
      shown.length > 0
        ? unique(shown.flatMap((v) => (v.save === undefined ? [] : [v.save])))
        : [Wildcard.literal(input.command)]
    const metadata: Record<string, unknown> = {
      command: input.command,
      ...(input.description === undefined ? {} : { description: input.description }),
      segments: asking.map((v) => ({
        text: v.segment.text,
        resource: v.resource,
        ...(v.reason === undefined ? {} : { reason: v.reason }),
      })),
      ...(env.sandboxed ? { sandboxed: true } : {}),
      ...(sandboxed.length > 0 ? { autoAllowed: unique(sandboxed.map((v) => v.resource)) } : {}),
    }
    const literal = (resources: ReadonlySet<string>) =>
      [...resources].filter((r) => !r.startsWith(ShellCommand.UNRESOLVED_PREFIX)).map(Wildcard.literal)
    const drafts: Array<Omit<Group, "effects"> & { readonly always?: boolean }> = [
      ...[...collected.externals].map(([resource, save]) => ({
        action: "external_directory",
        resources: [resource],
        save: [save],
        metadata: { command: input.command },
      })),
      { action: "bash", resources: bashResources, save: bashSave, metadata, always: true },
      {
        action: "read",
        resources: [...collected.reads],
        save: literal(collected.reads),
        metadata: { command: input.command },
      },
      {
        action: "edit",
        resources: [...collected.edits],
        save: literal(collected.edits),
        metadata: { command: input.command },
      },
      {
        action: ProtectedPath.ACTION,
        resources: [...collected.protects],
        save: [],
        metadata: { command: input.command },
      },
    ]
    const groups: Array<Group & { readonly always?: boolean }> = []
    for (const draft of drafts) {
      if (draft.resources.length === 0) continue
      const reasons = new Map(
        draft.resources.flatMap((r) => {
          const reason = collected.reasons.get(r)
          return reason === undefined ? [] : [[r, reason] as const]
        }),
      )
      const effects =
        draft.action === "bash"
          ? new Map(draft.resources.map((r) => [r, verdicts.find((v) => v.resource === r)?.effect ?? "ask"] as const))
          : yield* env.check(draft.action, draft.resources)
      groups.push({ ...draft, effects, ...(reasons.size > 0 ? { reasons } : {}) })
    }
    const asserts: Array<Assert> = []
    const denied = unique(verdicts.filter((v) => v.effect === "deny").map((v) => v.resource))
    if (denied.length > 0) asserts.push({ action: "bash", resources: denied })
    for (const group of groups) {
      if (group.action === "bash") continue
      const refused = group.resources.filter((r) => group.effects.get(r) === "deny")
      if (refused.length > 0) asserts.push({ action: group.action, resources: refused })
    }
    for (const group of groups) {
      const all = group.resources.every((r) => group.effects.get(r) === "allow")
      if (all && group.always !== true) continue
      asserts.push({
        action: group.action,
        resources: group.resources,
        save: group.save,
        ...(group.metadata === undefined ? {} : { metadata: group.metadata }),
      })
    }
    const every = [...denied.map(() => "deny" as const), ...groups.flatMap((g) => [...g.effects.values()])]
    const effect = every.includes("deny") ? "deny" : every.includes("ask") ? "ask" : "allow"
    return { parsed, verdicts, groups, asserts, effect } satisfies Plan
  })
