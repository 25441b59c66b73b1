/**
 * One call's preparation in a bubblewrap sandbox: the plan built from the Location's settings and what is on disk
 * now (existing writable paths, `.env` files, missing protected paths, sockets), the egress proxy for
 * `network: "rules"`, and the model-facing notes about what the sandbox blocked.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as PermissionV2 from "../../../permission/permission.js"
import type * as Containment from "../../internal/containment.js"
import * as AppProcess from "../../app-process.js"
import * as ChildEnvironment from "../../child-environment.js"
import * as EgressProxy from "../../egress/egress-proxy.js"
import { bubblewrapArgs, type Plan } from "./mounts.js"
import * as Protect from "./protect.js"
import type * as Seccomp from "./seccomp.js"
import * as Secrets from "./secrets.js"
import * as Sockets from "./sockets.js"

/**
 * One bash command to prepare (`Sandbox.Request`).
 *
 * @since 0.3.0
 * @category models
 */
export type Request = Containment.Request

/**
 * What `Sandbox.Prepared` adds to the command.
 *
 * @since 0.3.0
 * @category models
 */
export interface Extras {
  readonly declined: Effect.Effect<never>
  readonly note: (output: string) => Effect.Effect<string | undefined>
}

/**
 * The settings of one Location's sandbox, resolved to absolute paths.
 *
 * @since 0.3.0
 * @category models
 */
export interface Settings {
  readonly executable: string
  readonly environment: ChildEnvironment.Settings
  readonly network: boolean | "rules"
  readonly policy: Seccomp.Policy
  readonly program: Uint8Array
  readonly user: Plan["user"]
  /** The Location directory. */
  readonly base: string
  /** The project's own tmp directory. */
  readonly tmp: string
  readonly home: string
  /** The directories configuration is discovered in, from the project root down to the Location. */
  readonly chain: ReadonlyArray<string>
  /** The wholesale-protected directories. */
  readonly roots: ReadonlyArray<string>
  readonly writable: ReadonlyArray<string>
  readonly readOnly: ReadonlyArray<string>
  readonly denyRead: ReadonlyArray<string>
  readonly allowUnixSockets: ReadonlyArray<string>
  readonly registry: Protect.Registry
  /** The Location's directory listings from earlier searches for secret files. */
  readonly searchCache: Secrets.SearchCache
  /** The git directories the `.git` files among `entries` point at (`Protect.gitDirectories`). */
  readonly gitDirectories: (entries: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
}

const WRITE_BLOCKED = /Read-only file system|EROFS/
const NETWORK_BLOCKED =
  /Network is unreachable|ENETUNREACH|Failed to connect|Couldn't connect|Could not resolve host|Temporary failure in name resolution|EAI_AGAIN|ENOTFOUND|Connection refused|ECONNREFUSED|getaddrinfo/
const SOCKET_BLOCKED =
  /(?:socket|connect)[^\n]*(?:Operation not permitted|EPERM)|(?:Operation not permitted|EPERM)[^\n]*(?:socket|connect)/i

/**
 * The model-facing note for `output` under a sandbox with the given network setting.
 *
 * @since 0.3.0
 * @category utilities
 */
export const diagnose = (output: string, network: boolean | "rules"): string | undefined => {
  const notes: Array<string> = []
  if (WRITE_BLOCKED.test(output)) {
    notes.push(
      "The sandbox blocked a write: only the project directory, the project's toolgate tmp directory and configured writable paths can be changed, and .git, the toolgate configuration, skill folders and hidden secrets are read-only. Work inside the project, or ask the user to add the directory to bash.sandbox.writable.",
    )
  }
  if (network === false && NETWORK_BLOCKED.test(output)) {
    notes.push(
      "The sandbox has no network access, so connections fail. Ask the user to enable bash.sandbox.network if the command needs the network.",
    )
  }
  if (network === "rules" && NETWORK_BLOCKED.test(output)) {
    notes.push(
      "The sandbox reaches the network only through toolgate's egress proxy (HTTP_PROXY and HTTPS_PROXY are set): clients that ignore those variables or open other connections fail.",
    )
  }
  if (SOCKET_BLOCKED.test(output)) {
    notes.push(
      "The sandbox blocks Unix sockets (ssh-agent, Docker, D-Bus, database sockets). Ask the user to add the socket to bash.sandbox.allow_unix_sockets if the command needs it.",
    )
  }
  return notes.length === 0 ? undefined : notes.join("\n")
}

const NOTHING: Extras = { declined: Effect.never, note: () => Effect.succeed(undefined) }

const exists = (entry: string): boolean => fs.lstatSync(entry, { throwIfNoEntry: false }) !== undefined

const real = (entry: string): string => {
  try {
    return fs.realpathSync(entry)
  } catch {
    return entry
  }
}

const unique = (entries: Iterable<string>): ReadonlyArray<string> => [...new Set(entries)]
const existing = (entries: ReadonlyArray<string>): ReadonlyArray<string> => unique(entries.filter(exists).map(real))
const message = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/**
 * The `bwrap` command of one call; fails with the reason the call cannot be contained as configured.
 *
 * @since 0.3.0
 * @category utilities
 */
export const sandboxed = (
  request: Request,
  settings: Settings,
): Effect.Effect<AppProcess.Command & Extras, string, Scope.Scope> =>
  Effect.gen(function* () {
    const env = ChildEnvironment.overrides(settings.environment)
    yield* Effect.try({
      try: () => fs.mkdirSync(settings.tmp, { recursive: true, mode: 0o700 }),
      catch: (cause) => `the project's tmp directory ${settings.tmp} cannot be created: ${message(cause)}`,
    })
    const writable = existing([settings.base, settings.tmp, ...settings.writable, ...(request.writable ?? [])])
    const readOnly = existing(settings.readOnly)

    const emptyFile = yield* Effect.try({
      try: Secrets.emptyFile,
      catch: (cause) => `the sandbox's empty file cannot be created: ${message(cause)}`,
    })
    if (writable.some((directory) => Protect.within(directory, emptyFile))) {
      return yield* Effect.fail(
        `the sandbox's empty file ${emptyFile} lies inside a writable path; set TMPDIR outside bash.sandbox.writable`,
      )
    }

    const searched = Secrets.search(settings.base, Secrets.SEARCH_LIMIT, settings.searchCache)
    if (searched === undefined) {
      return yield* Effect.fail(
        `the Location has more than ${Secrets.SEARCH_LIMIT} entries outside ${Secrets.SEARCH_SKIPS.join(" and ")}, too many to search for secret files (.env…) on every call; open a smaller directory as the Location`,
      )
    }
    const allowed = settings.allowUnixSockets.length === 0 ? [] : Sockets.allowedSockets(settings.allowUnixSockets)
    const others = settings.allowUnixSockets.length === 0 ? [] : Sockets.findSockets()
    const classified = Secrets.classify([
      ...Secrets.credentialStores(settings.home),
      ...Secrets.systemSecrets(),
      ...settings.denyRead,
      ...searched.secrets,
      ...others,
    ])
    // Inside a hidden directory everything is hidden already (and a bind there would show a name).
    const isHidden = (entry: string) => classified.directories.some((directory) => Protect.within(directory, entry))
    const hidden = {
      files: classified.files.filter((entry) => !allowed.includes(entry) && !isHidden(entry)),
      directories: classified.directories,
    }
    // The git directories linked worktrees and submodules found at any depth point at.
    const gitDirectories = yield* settings.gitDirectories(
      searched.protected.filter((entry) => path.basename(entry).toLowerCase() === ".git"),
    )
    const targets = Protect.targets(
      unique([...settings.chain, settings.base].map(real)),
      unique([...settings.roots, ...searched.protected, ...gitDirectories].map(real)),
      writable,
    ).filter((target) => !isHidden(target.path))
    const held = yield* Effect.try({
      try: () => settings.registry.acquire(targets),
      catch: (cause) => `a protected path cannot be held read-only: ${message(cause)}`,
    })
    yield* Effect.addFinalizer(() => Effect.sync(held.release))

    let egress: EgressProxy.Interface | undefined
    if (settings.network === "rules") {
      const identity = request.egress
      if (identity === undefined) {
        return yield* Effect.fail(`network "rules" needs the call's permission identity, and none was given`)
      }
      egress = yield* EgressProxy.make({
        permission: identity.permission,
        caller: identity.caller,
        metadata: { command: request.command },
      })
    }

    const plan: Plan = {
      writable,
      readOnly,
      network: settings.network === true,
      cwd: request.cwd,
      readable: egress?.readable ?? [],
      protected: held.protection.readOnly,
      pinned: held.protection.pinned,
      hidden,
      emptyFile,
      sockets: allowed,
      seccompFd: AppProcess.FIRST_INPUT_FD,
      ...(settings.user === undefined ? {} : { user: settings.user }),
    }
    const argv = [request.shell, "-c", request.command]
    const network = settings.network
    const proxy = egress
    return {
      command: settings.executable,
      args: bubblewrapArgs(plan, proxy === undefined ? argv : proxy.argv(argv)),
      cwd: request.cwd,
      env,
      inputs: [settings.program],
      ...(proxy === undefined
        ? NOTHING
        : {
            channel: proxy.attach,
            declined: Effect.zipRight(proxy.declined, Effect.die(new PermissionV2.DeclinedError())),
            note: (output: string) =>
              Effect.map(proxy.decisions, (decisions) => {
                const notes = [diagnose(output, network), EgressProxy.note(decisions)].filter(
                  (note): note is string => note !== undefined,
                )
                return notes.length === 0 ? undefined : notes.join("\n")
              }),
          }),
      ...(proxy === undefined ? { note: (output: string) => Effect.succeed(diagnose(output, network)) } : {}),
    }
  })
