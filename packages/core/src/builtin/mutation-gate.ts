/**
 * The permission sequence shared by the file-mutating leaves (write, edit, apply_patch), run after every target is
 * resolved and before any target is read or written:
 *
 * 1. `external_directory` for each distinct outside directory;
 * 2. `read` for the targets whose `read` would not simply be allowed (a secret file, say): asked or refused first,
 *    so the outcome of a mutation ("Could not find oldString" versus "Edited") never reveals a file the agent may
 *    not read (see docs/trust/secrets.md);
 * 3. `edit` for every target, its ask carrying the rendered diff (`metadata.diff`) when the caller gives a
 *    `preview` (computed only when `edit` would ask, after the read step, so it reads nothing unauthorised);
 * 4. `protected_path` for the targets that decide the rules or the project identity (see
 *    docs/trust/protected-paths.md), asked even when `edit` allows; nothing is saved on `always`.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type * as LocationMutation from "../world/location-mutation.js"
import * as PermissionV2 from "../permission/permission.js"
import * as ProtectedPath from "../place/protected-path.js"
import { externalDirectoryPermission } from "../world/location-mutation.js"

/** The caller fields of `PermissionV2.fromToolCall`. */
type Identity = ReturnType<typeof PermissionV2.fromToolCall>

/**
 * What the gate needs from the Location.
 *
 * @since 0.2.0
 * @category models
 */
export interface Services {
  readonly permission: PermissionV2.Interface
  readonly protection: ProtectedPath.Interface
}

/** The save pattern `read` itself offers, reused for the read-first check. */
const READ_SAVE = ["*"]

/**
 * Runs the four steps for `targets` (in request order; duplicates are asked once).
 *
 * @since 0.2.0
 * @category utilities
 */
export const authorize = (
  services: Services,
  identity: Identity,
  targets: ReadonlyArray<LocationMutation.Target>,
  preview?: Effect.Effect<string | undefined>,
) =>
  Effect.gen(function* () {
    const { permission, protection } = services
    const external = new Map<string, LocationMutation.ExternalDirectoryAuthorization>()
    for (const target of targets) {
      const auth = target.externalDirectory
      if (auth !== undefined && !external.has(auth.resource)) external.set(auth.resource, auth)
    }
    for (const auth of external.values())
      yield* permission.assert({ ...externalDirectoryPermission(auth), ...identity })

    const resources = [...new Set(targets.map((target) => target.resource))]
    const readable = yield* permission.check({
      sessionID: identity.sessionID,
      agent: identity.agent,
      action: "read",
      resources,
    })
    const guarded = resources.filter((_, index) => readable[index] !== "allow")
    if (guarded.length > 0)
      yield* permission.assert({ action: "read", resources: guarded, save: READ_SAVE, ...identity })

    let diff: string | undefined
    if (preview !== undefined) {
      const editable = yield* permission.check({
        sessionID: identity.sessionID,
        agent: identity.agent,
        action: "edit",
        resources,
      })
      if (editable.includes("ask")) diff = yield* preview
    }
    yield* permission.assert({
      action: "edit",
      resources,
      save: ["*"],
      ...(diff === undefined ? {} : { metadata: { diff } }),
      ...identity,
    })

    const matches = targets.flatMap((target) => {
      const match = protection.classify(target.canonical)
      return match === undefined ? [] : [{ resource: target.resource, match }]
    })
    if (matches.length > 0) {
      yield* permission.assert({
        action: ProtectedPath.ACTION,
        resources: [...new Set(matches.map((item) => item.resource))],
        metadata: { protected: matches.map(({ match }) => ({ path: match.path, entry: match.entry })) },
        ...identity,
      })
    }
  })
