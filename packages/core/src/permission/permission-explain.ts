/**
 * PermissionExplain: why a request is allowed, asked or denied. For an agent, an action and resources (or a bash
 * command, planned by the same `ShellPlan` the bash tool uses), the full trace: every rule whose action matches, in
 * evaluation order, with where it came from (a built-in default, a configuration file and index, an agent entry or
 * agent file, a saved approval), which rule decided each resource or segment, and the final decision. For a bash
 * command it also lists every ask the leaf will make — `external_directory`, `bash`, `read`, `edit`,
 * `protected_path` — in the leaf's order. It evaluates exactly as PermissionV2 does (configured deny first, then the
 * configured rules followed by the saved approvals; last match wins; no match asks), and when the Location has
 * `permission.evaluate` hooks it runs them on the decision as the gate would and shows each one that tightened it,
 * by its origin `hook:<plugin>/<hook>`. See docs/shell.md and docs/plugins.md.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Builtins from "../agent/builtins.js"
import * as AgentV2 from "../agent/agent.js"
import * as BashArity from "../shell/bash-arity.js"
import * as Config from "../place/config.js"
import * as Global from "../system/global.js"
import * as Hooks from "./hooks.js"
import * as Location from "../place/location.js"
import * as PermissionOrigin from "./internal/origin.js"
import * as PermissionSaved from "./permission-saved.js"
import * as PermissionV2 from "./permission.js"
import * as Project from "../place/project.js"
import * as ShellCommand from "../shell/shell-command.js"
import * as ShellPlan from "../shell/shell-plan.js"
import * as Wildcard from "../values/wildcard.js"

/**
 * Where a rule came from.
 *
 * @since 0.2.0
 * @category models
 */
export type Origin = PermissionOrigin.Origin

/**
 * One rule as the trace shows it.
 *
 * @since 0.2.0
 * @category models
 */
export interface Entry {
  readonly rule: PermissionV2.Rule
  readonly origin: Origin
  /** Its position in evaluation order (configured rules first, then saved approvals). */
  readonly position: number
  /** Whether its resource pattern matches the resource. */
  readonly matches: boolean
}

/**
 * The decision for one resource.
 *
 * @since 0.2.0
 * @category models
 */
export interface ResourceTrace {
  readonly resource: string
  /** For a bash segment: the segment as written. */
  readonly segment?: string
  readonly considered: ReadonlyArray<Entry>
  /** The rule that decided; `undefined` when none matched (the default ask) or a wildcard allow was passed over. */
  readonly winner: Entry | undefined
  readonly effect: PermissionV2.Effect
  readonly note?: string
}

/**
 * One ask of a bash command's plan: an action, its resources traced, what `always` saves, and its decision.
 *
 * @since 0.3.0
 * @category models
 */
export interface GroupTrace {
  readonly action: string
  readonly resources: ReadonlyArray<ResourceTrace>
  readonly save: ReadonlyArray<string>
  readonly effect: PermissionV2.Effect
}

/**
 * A full trace. For a bash command, `resources` are its segments and `groups` every ask the bash tool will make,
 * in its order.
 *
 * @since 0.2.0
 * @category models
 */
export interface Trace {
  readonly agent: string
  readonly action: string
  readonly resources: ReadonlyArray<ResourceTrace>
  readonly effect: PermissionV2.Effect
  readonly groups?: ReadonlyArray<GroupTrace>
  /**
   * The `permission.evaluate` hooks that tightened the rules' decision, in order (`effect` is theirs).
   *
   * @since 0.4.0
   */
  readonly hooks?: ReadonlyArray<Hooks.Decision>
}

/**
 * A rule list with the origin of each rule.
 *
 * @since 0.2.0
 * @category models
 */
export interface Sourced {
  readonly rules: PermissionV2.Ruleset
  readonly origins: ReadonlyArray<Origin>
}

/**
 * The origins of an agent's configured rules. The configuration's rules are the tail of the list (top-level rules
 * of every document, then each document's entry for the agent); what comes before them is built in. When the tail
 * does not match (a plugin changed the rules), the rules are marked `unknown`.
 *
 * @since 0.2.0
 * @category utilities
 */
export const origins: (
  agent: string,
  permissions: PermissionV2.Ruleset,
  documents: ReadonlyArray<Config.Document>,
  home: string,
) => ReadonlyArray<Origin> = PermissionOrigin.origins

/**
 * Traces one resource against configured and saved rules, as PermissionV2 evaluates it.
 *
 * @since 0.2.0
 * @category utilities
 */
export const traceResource = (
  action: string,
  resource: string,
  configured: Sourced,
  saved: ReadonlyArray<PermissionSaved.Info>,
): ResourceTrace => {
  const savedRules: PermissionV2.Ruleset = saved.map((row) => ({
    action: row.action,
    resource: row.resource,
    effect: "allow" as const,
  }))
  const all: Array<Omit<Entry, "matches">> = [
    ...configured.rules.map((rule, i) => ({
      rule,
      origin: configured.origins[i] ?? { type: "unknown" as const },
      position: i,
    })),
    ...savedRules.map((rule, i) => ({
      rule,
      origin: { type: "saved" as const, id: saved[i]!.id, timeCreated: saved[i]!.timeCreated },
      position: configured.rules.length + i,
    })),
  ]
  const considered = all
    .filter((entry) => Wildcard.match(action, entry.rule.action))
    .map((entry): Entry => ({ ...entry, matches: Wildcard.match(resource, entry.rule.resource) }))
  const byRule = (rule: PermissionV2.Rule) => considered.find((entry) => entry.rule === rule)
  const denied = PermissionV2.evaluate(action, resource, configured.rules)
  if (denied.effect === "deny") {
    return { resource, considered, winner: byRule(denied), effect: "deny", note: "a configured deny is checked first" }
  }
  const decided = PermissionV2.evaluate(action, resource, configured.rules, savedRules)
  const winner = byRule(decided)
  return {
    resource,
    considered,
    winner,
    effect: decided.effect,
    ...(winner === undefined && considered.some((entry) => entry.matches)
      ? { note: "a wildcard allow does not cover this action or resource prefix; only a rule naming it can" }
      : winner === undefined
        ? { note: "no rule matches: ask" }
        : {}),
  }
}

const worst = (effects: ReadonlyArray<PermissionV2.Effect>): PermissionV2.Effect =>
  effects.includes("deny") ? "deny" : effects.includes("ask") || effects.length === 0 ? "ask" : "allow"

/**
 * The input of `explain`: an action with resources, or a bash command (`action: "bash"` and `command`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Input {
  readonly agent?: string
  readonly action: string
  readonly resources?: ReadonlyArray<string>
  readonly command?: string
  /** For a bash command: the directory it starts in (default the Location's). */
  readonly workdir?: string
}

/**
 * The agent named (or the default agent) does not exist.
 *
 * @since 0.2.0
 * @category errors
 */
export class AgentNotFoundError extends Schema.TaggedError<AgentNotFoundError>()(
  "PermissionExplain.AgentNotFoundError",
  {
    agent: Schema.String,
  },
) {
  override get message(): string {
    return `No agent ${this.agent}`
  }
}

/**
 * The explain service.
 *
 * @since 0.2.0
 * @category models
 */
export interface Interface {
  readonly explain: (input: Input) => Effect.Effect<Trace, AgentNotFoundError | Hooks.HookError>
}

/**
 * The PermissionExplain service (Location-scoped).
 *
 * @since 0.2.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/PermissionExplain")<Service, Interface>() {}

/**
 * The Location-scoped layer.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<
  Service,
  never,
  | AgentV2.Service
  | Config.Service
  | Global.Service
  | Location.Service
  | PermissionSaved.Service
  | ShellCommand.Service
  | ShellPlan.Service
> = Layer.effect(
  Service,
  Effect.gen(function* () {
    const agents = yield* AgentV2.Service
    const config = yield* Config.Service
    const global = yield* Global.Service
    const location = yield* Location.Service
    const saved = yield* PermissionSaved.Service
    const shell = yield* ShellCommand.Service
    const setting = yield* ShellPlan.Service
    const hooks = Option.getOrUndefined(yield* Effect.serviceOption(Hooks.Service))

    // The hooks see the request as the gate would show it to them; a hook that fails fails the explanation.
    const hooked = (trace: Trace, resources: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        if (hooks === undefined || trace.effect === "deny" || !hooks.has("permission.evaluate")) return trace
        const request = { sessionID: "explain", agent: trace.agent, action: trace.action, resources }
        const evaluated = yield* hooks.evaluate(request, trace.effect)
        if (evaluated.decisions.length === 0) return trace
        return { ...trace, effect: evaluated.effect, hooks: evaluated.decisions } satisfies Trace
      })

    const explain = Effect.fn("PermissionExplain.explain")(function* (input: Input) {
      const info = yield* agents.resolve(input.agent)
      if (info === undefined) return yield* new AgentNotFoundError({ agent: input.agent ?? "(default)" })
      const documents = yield* Builtins.loadDocuments(yield* config.entries())
      const configured: Sourced = {
        rules: info.permissions,
        origins: origins(info.id, info.permissions, documents, global.home),
      }
      const rows = yield* saved.list(Project.approvalScope(location.project.id, location.directory))
      const trace = (resource: string) => traceResource(input.action, resource, configured, rows)
      if (input.command !== undefined) {
        const grammar = ShellCommand.grammarOf(setting.shell)
        const parsed =
          grammar === undefined
            ? ShellCommand.unresolvedCommand(
                input.command,
                `commands run with ${setting.shell}, a shell the gate does not read`,
              )
            : yield* shell.parse(input.command, grammar)
        const table = BashArity.extend(
          BashArity.DEFAULT,
          ...Config.documents(yield* config.entries()).map((document) => document.info.bash?.arity),
        )
        const traceFor = (action: string, resource: string) => traceResource(action, resource, configured, rows)
        const plan = yield* ShellPlan.plan(
          { command: input.command, workdir: input.workdir ?? setting.root, parsed },
          {
            places: setting.places,
            table,
            sandboxed: setting.sandboxed,
            autoAllow: setting.autoAllow,
            check: (action, resources) =>
              Effect.succeed(
                new Map(resources.map((resource) => [resource, traceFor(action, resource).effect] as const)),
              ),
          },
        )
        const resources = plan.verdicts.map((verdict) => ({
          ...traceFor("bash", verdict.resource),
          segment: verdict.segment.text,
          effect: verdict.effect,
          ...(verdict.reason === undefined
            ? verdict.sandboxed === true
              ? { note: "allowed because the sandbox is active and bash.sandbox.auto_allow is on" }
              : {}
            : { note: verdict.reason }),
        }))
        const groups = plan.groups.map((group): GroupTrace => ({
          action: group.action,
          save: group.save,
          effect: worst([...group.effects.values()]),
          resources: group.resources.map((resource) => {
            const traced = traceFor(group.action, resource)
            const effect = group.effects.get(resource) ?? traced.effect
            const reason = group.reasons?.get(resource)
            return { ...traced, effect, ...(reason === undefined ? {} : { note: reason }) }
          }),
        }))
        const traced = { agent: info.id, action: input.action, resources, effect: plan.effect, groups } satisfies Trace
        return yield* hooked(
          traced,
          resources.map((resource) => resource.resource),
        )
      }
      const resources = (input.resources ?? []).map(trace)
      return yield* hooked(
        { agent: info.id, action: input.action, resources, effect: worst(resources.map((r) => r.effect)) },
        input.resources ?? [],
      )
    })
    return Service.of({ explain })
  }),
)

/**
 * A trace as readable text: one table per resource (position, origin, rule, match), the winner marked.
 *
 * @since 0.2.0
 * @category utilities
 */
export const render = (trace: Trace): string => {
  const originText = (origin: Origin): string => {
    switch (origin.type) {
      case "builtin":
        return "built-in default"
      case "config":
        return `${origin.path ?? "(config)"} permissions[${origin.index}]`
      case "agent":
        return `${origin.path ?? "(config)"} ${origin.file ? "agent file" : `agents.${origin.agent}`} permissions[${origin.index}]`
      case "saved":
        return `saved approval ${origin.id} (saved ${new Date(origin.timeCreated).toISOString()})`
      case "unknown":
        return "agent rules (origin unknown)"
    }
  }
  const lines = [`agent ${trace.agent}, action ${trace.action}: ${trace.effect}`]
  for (const resource of trace.resources) {
    lines.push(
      "",
      `${resource.segment === undefined ? "resource" : "segment"} ${resource.segment ?? resource.resource}`,
    )
    if (resource.segment !== undefined) lines.push(`  resource ${resource.resource}`)
    for (const entry of resource.considered) {
      const mark = entry === resource.winner ? "=>" : entry.matches ? " +" : "  "
      lines.push(
        `  ${mark} #${entry.position} ${entry.rule.effect.padEnd(5)} ${entry.rule.action} ${Wildcard.display(entry.rule.resource)}  (${originText(entry.origin)})`,
      )
    }
    lines.push(`  decision: ${resource.effect}${resource.note === undefined ? "" : ` (${resource.note})`}`)
  }
  if (trace.hooks !== undefined && trace.hooks.length > 0) {
    lines.push("", "hooks:")
    for (const hook of trace.hooks) {
      lines.push(
        `  ${hook.origin}: ${hook.from ?? ""}${hook.from === undefined ? "" : " -> "}${hook.decision}${hook.reason === undefined ? "" : ` (${hook.reason})`}`,
      )
    }
  }
  if (trace.groups !== undefined) {
    lines.push("", "asks, in the order the bash tool makes them:")
    for (const group of trace.groups) {
      const saves = group.save.length === 0 ? "saves nothing" : `saves ${group.save.map(Wildcard.display).join(", ")}`
      lines.push(`  ${group.action}: ${group.effect} (${saves})`)
      for (const resource of group.resources) {
        lines.push(
          `    ${resource.effect.padEnd(5)} ${resource.resource}${resource.note === undefined ? "" : `  (${resource.note})`}`,
        )
      }
    }
  }
  return lines.join("\n")
}
