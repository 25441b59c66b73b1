/**
 * The decision for a whole request from its two rulesets, the configured rules and the approvals (saved and session,
 * allow rules only): `effectOf` for an ask, `aggregate` for what approvals add to rules that do not deny. Internal to
 * the permission service and its queue; `PermissionV2.evaluate` is the public evaluator of one resource.
 *
 * @since 0.3.0
 * @internal
 */
import { evaluate, EXPLICIT_ACTIONS } from "./evaluate.js"
import type { Ruleset } from "./schema.js"

/**
 * Aggregates per resource against the configured rules followed by the approvals, for requests the configured
 * rules alone do not deny: allow when every resource evaluates to allow, else ask.
 *
 * @internal
 * @category utilities
 */
export const aggregate = (
  action: string,
  resources: ReadonlyArray<string>,
  configured: Ruleset,
  approvals: Ruleset,
): "allow" | "ask" => {
  for (const resource of resources) {
    if (evaluate(action, resource, configured, approvals).effect !== "allow") return "ask"
  }
  return "allow"
}

/**
 * The effect of a request, as the configured deny check followed by `aggregate` decides it, with each resource
 * evaluated once against each ruleset: deny when the configured rules alone deny a resource; else allow when every
 * resource is allowed by an approval or, with no approval allowing it, by the configured rules; else ask.
 * `approvals` hold only allow rules (saved and session approvals): one that matches allows, except that for an
 * `EXPLICIT_ACTIONS` action an approval naming another action counts as ask, so a resource of such an action that
 * no approval allows is evaluated against both rulesets, as `aggregate` does.
 *
 * @internal
 * @category utilities
 */
export const effectOf = (
  action: string,
  resources: ReadonlyArray<string>,
  configured: Ruleset,
  approvals: Ruleset,
): "allow" | "ask" | "deny" => {
  let effect: "allow" | "ask" = "allow"
  for (const resource of resources) {
    const alone = evaluate(action, resource, configured).effect
    if (alone === "deny") return "deny"
    if (effect === "ask" || approvals.length === 0) {
      if (alone === "ask") effect = "ask"
      continue
    }
    if (evaluate(action, resource, approvals).effect === "allow") continue
    if (alone === "ask") effect = "ask"
    else if (EXPLICIT_ACTIONS.has(action)) effect = aggregate(action, [resource], configured, approvals)
  }
  return effect
}
