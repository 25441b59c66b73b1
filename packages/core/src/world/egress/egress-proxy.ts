/**
 * EgressProxy: network access by rule for a sandboxed command (`network: "rules"`). The sandbox keeps its own
 * network namespace; a bridge started inside it (`internal/bridge.ts`) listens on `127.0.0.1:<port>` there,
 * points the command's `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` at it, and carries each connection over one
 * inherited, already-connected socket (file descriptor 3) to this proxy, which lives for the call. The proxy speaks
 * HTTP proxy: `CONNECT host:port` tunnels (TLS stays end to end) and absolute-form `http://` requests.
 *
 * Each new destination is the permission resource `net:<host>:<port>` under the action `webfetch` (the host
 * canonical as `WebAddress` makes it); a host that resolves to a loopback, private, link-local, metadata or other
 * non-public address also needs `private:net:<host>:<port>`. Both prefixes are explicit
 * (`PermissionV2.EXPLICIT_RESOURCE_PREFIXES`): only a rule naming `net:` (or `private:`) allows them, never `* * allow`. A name is resolved once, after `net:` was allowed, and the connection
 * goes to exactly the classified addresses. A refused destination gets a 403 (502 when it does not resolve) with a
 * short reason, and nothing is sent to it. Verdicts last for the call.
 *
 * Integration, in the sandbox's prepare step and inside the call's scope: `make({ permission, caller:
 * PermissionV2.fromToolCall(context) })`; the bubblewrap argv is `Sandbox.bubblewrapArgs({ ...plan, network: false
 * }, egress.argv([shell, "-c", command]))` with `egress.readable` bound read-only after the private `/tmp`; the
 * `AppProcess.Command` carries `channel: egress.attach` (the child's descriptor 3); the run is raced against
 * `egress.declined` (then `PermissionV2.DeclinedError`), and `note(decisions)` goes to the model. The whole
 * function is in docs/egress.md.
 *
 * @since 0.3.0
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Duplex } from "node:stream"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import type * as Scope from "effect/Scope"
import type * as PermissionV2 from "../../permission/permission.js"
import * as CorePackage from "../../system/core-package.js"
import * as Decide from "./internal/decision.js"
import * as Forward from "./internal/forward.js"
import * as WebAddress from "../web-address.js"

/**
 * The permission action of egress: the one webfetch asks with.
 *
 * @since 0.3.0
 * @category constants
 */
export const ACTION: string = Decide.ACTION

/**
 * The prefix of an egress resource, `net:<host>:<port>`.
 *
 * @since 0.3.0
 * @category constants
 */
export const NET_PREFIX: string = Decide.NET_PREFIX

/**
 * The prefix of the second resource a non-public destination needs, `private:net:<host>:<port>`.
 *
 * @since 0.3.0
 * @category constants
 */
export const PRIVATE_PREFIX: string = Decide.PRIVATE_PREFIX

/**
 * How long an allowed connection may take to establish before the client gets a 504.
 *
 * @since 0.3.0
 * @category constants
 */
export const DEFAULT_CONNECT_TIMEOUT: Duration.Duration = Duration.seconds(30)

/**
 * `net:<host>:<port>` for a host as written (canonicalised: `LOCALHOST.` and `localhost` are one host, every IPv4
 * spelling is a dotted quad, IPv6 in brackets); `undefined` for text that is no host or port.
 *
 * @since 0.3.0
 * @category resources
 */
export const resource = (host: string, port: number): string | undefined => {
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host
  const parsed = Decide.parseAuthority(`${bracketed}:${port}`)
  return parsed._tag === "Right" ? Decide.resourceOf(parsed.right) : undefined
}

/**
 * The caller an egress ask is made for: the fields `PermissionV2.fromToolCall` gives (session, agent, and the tool
 * call as source).
 *
 * @since 0.3.0
 * @category models
 */
export type Caller = Decide.Caller

/**
 * Why a destination was refused: a deny rule, a reject with a message (`rejected`), a reject without one
 * (`declined`, or any new destination after it), a name that does not resolve, or a session that no longer exists.
 *
 * @since 0.3.0
 * @category models
 */
export type Refusal = Decide.Refusal

/**
 * One destination decided during the call.
 *
 * @since 0.3.0
 * @category models
 */
export interface Decision {
  /** `net:<host>:<port>`. */
  readonly resource: string
  readonly outcome: "allowed" | Refusal
  /** The destination resolved to a non-public address (and `private:` was allowed or refused too). */
  readonly private: boolean
  /** `allowed`, or the reason the client was given. */
  readonly detail: string
}

/**
 * Options of `make`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options {
  /** The permission service of the call's Location (only `assert` is used). */
  readonly permission: Pick<PermissionV2.Interface, "assert">
  readonly caller: Caller
  /** The resolver; `WebAddress.Resolver` of the context when absent. */
  readonly resolver?: WebAddress.ResolverInterface
  /** Added to the metadata of every ask (say, the command). */
  readonly metadata?: Readonly<Record<string, unknown>>
  readonly connectTimeout?: Duration.DurationInput
  /** How to start the bridge; `launch()` when absent. */
  readonly launch?: Launch
}

/**
 * How the bridge is started inside the sandbox.
 *
 * @since 0.3.0
 * @category models
 */
export interface Launch {
  /** The Node executable and its arguments up to (and including) the bridge script. */
  readonly prefix: ReadonlyArray<string>
  /** Paths the sandbox must be able to read for the bridge to start. */
  readonly readable: ReadonlyArray<string>
}

/**
 * The proxy of one call.
 *
 * @since 0.3.0
 * @category models
 */
export interface Interface {
  /** The sandbox's argv for `command`: the bridge, which runs `command` as its child. */
  readonly argv: (command: ReadonlyArray<string>) => ReadonlyArray<string>
  /**
   * Paths the sandbox must be able to read for the bridge to start (the bridge's directory and the package's
   * `package.json`); bind them read-only before the writable binds where the mount plan would hide them.
   */
  readonly readable: ReadonlyArray<string>
  /** Serves the bridge at the other end of `channel` (the parent's end of the child's descriptor 3). */
  readonly attach: (channel: Duplex) => void
  /** Every destination decided so far, in the order decided. */
  readonly decisions: Effect.Effect<ReadonlyArray<Decision>>
  /**
   * Completes once the user rejected an egress ask without a message. Race the command against it and stop with
   * `PermissionV2.DeclinedError`, as every declined permission does; until then later new destinations are refused
   * without asking.
   */
  readonly declined: Effect.Effect<void>
}

const packageDirectory = (): string => path.dirname(CorePackage.require.resolve("@toolgate/core/package.json"))

/** The bridge's modules, in the order they are written out. */
const BRIDGE_MODULES = ["frame", "mux", "bridge"] as const

/**
 * Whether `directory` and every entry in it belong to this process's user and nobody else can change them, so code
 * found there under a predictable name (the temp directory is shared) is ours.
 */
const ownedByUs = (directory: string): boolean => {
  const uid = process.getuid?.()
  const safe = (entry: string) => {
    const stat = fs.lstatSync(entry)
    return (uid === undefined || stat.uid === uid) && (stat.mode & 0o022) === 0 && !stat.isSymbolicLink()
  }
  try {
    return safe(directory) && fs.readdirSync(directory).every((name) => safe(path.join(directory, name)))
  } catch {
    return false
  }
}

/**
 * From the TypeScript sources: the bridge's modules transpiled (TypeScript's own `transpileModule`, a development
 * dependency) into a directory of the system temp directory named by their content and this user, written once
 * and reused while it is ours alone; otherwise into a fresh private one.
 */
const transpiledBridge = (sources: string): string => {
  // The compiler's version names the output; the compiler itself (seconds to load on a busy machine) only when the
  // output must be written.
  const { version } = CorePackage.require("typescript/package.json") as { readonly version: string }
  const texts = BRIDGE_MODULES.map((name) => fs.readFileSync(path.join(sources, `${name}.ts`), "utf8"))
  const digest = crypto.createHash("sha256").update(version).update(texts.join("\0")).digest("hex").slice(0, 16)
  const directory = path.join(os.tmpdir(), `toolgate-egress-bridge-${process.getuid?.() ?? "u"}-${digest}`)
  if (fs.existsSync(path.join(directory, "bridge.js")) && ownedByUs(directory)) return directory
  const ts = CorePackage.require("typescript") as typeof import("typescript")
  const staging = fs.mkdtempSync(`${directory}-`)
  // Readable by the sandbox's user, which may not be ours (a root runner sandboxes as an unprivileged user).
  fs.chmodSync(staging, 0o755)
  fs.writeFileSync(path.join(staging, "package.json"), '{ "type": "module" }\n')
  BRIDGE_MODULES.forEach((name, index) => {
    const output = ts.transpileModule(texts[index]!, {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
    })
    fs.writeFileSync(path.join(staging, `${name}.js`), output.outputText)
  })
  try {
    fs.renameSync(staging, directory)
  } catch {
    // The name is taken: by another process of ours with the same content, or by someone else — keep our copy.
    return ownedByUs(directory) ? (fs.rmSync(staging, { recursive: true, force: true }), directory) : staging
  }
  return directory
}

let launched: Launch | undefined

/**
 * How to start the bridge of this installation: the compiled `dist/world/egress/internal/bridge.js` with the running
 * Node executable. When toolgate itself runs from its TypeScript sources (tests, `tsx`), the bridge's modules
 * are transpiled once into the system temp directory, so the sandbox still runs plain JavaScript with no loader.
 *
 * @since 0.3.0
 * @category constructors
 */
export const launch = (): Launch => {
  if (launched !== undefined) return launched
  const root = packageDirectory()
  if (import.meta.url.endsWith(".ts")) {
    const directory = transpiledBridge(path.join(root, "src", "world", "egress", "internal"))
    launched = { prefix: [process.execPath, path.join(directory, "bridge.js")], readable: [directory] }
  } else {
    const directory = path.join(root, "dist", "world", "egress", "internal")
    launched = {
      prefix: [process.execPath, path.join(directory, "bridge.js")],
      readable: [path.join(root, "package.json"), directory],
    }
  }
  return launched
}

const toDecision = ({ resource, verdict }: Decide.Decision): Decision =>
  verdict._tag === "allowed"
    ? { resource, outcome: "allowed", private: verdict.private, detail: "allowed" }
    : { resource, outcome: verdict.reason, private: false, detail: verdict.detail }

/**
 * Starts the proxy of one call in the current scope. Closing the scope ends every channel, tunnel and forwarded
 * request and withdraws any ask still pending.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<Interface, never, Scope.Scope> = Effect.fn("EgressProxy.make")(
  function* (options: Options) {
    const resolver = options.resolver ?? (yield* WebAddress.Resolver)
    const memo = yield* Decide.memo({
      permission: options.permission,
      caller: options.caller,
      resolver,
      metadata: options.metadata ?? {},
    })
    const run = yield* FiberSet.makeRuntime<never, void, never>()
    const forwarder = Forward.make({
      memo,
      run: (effect) => void run(effect),
      connectTimeoutMs: Duration.toMillis(options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT),
    })
    // Added after the fiber set, so it runs first: connections go before the fibers that wait on asks.
    yield* Effect.addFinalizer(() => Effect.sync(forwarder.close))
    const bridge = options.launch ?? launch()
    return {
      argv: (command) => [...bridge.prefix, ...command],
      readable: bridge.readable,
      attach: forwarder.attach,
      decisions: Effect.sync(() => memo.decisions().map(toDecision)),
      declined: memo.declined,
    } satisfies Interface
  },
)

/**
 * A note for the model listing the destinations the proxy refused during the call (`undefined` when none was):
 * clients usually report only "403" or "tunnel failed", not why.
 *
 * @since 0.3.0
 * @category diagnostics
 */
export const note = (decisions: ReadonlyArray<Decision>): string | undefined => {
  const refused = decisions.filter((decision) => decision.outcome !== "allowed")
  if (refused.length === 0) return undefined
  const list = refused.map((decision) => `${decision.resource} (${decision.detail})`).join(", ")
  return `The sandbox's network goes through toolgate's egress proxy, which refused: ${list}. Other destinations need a ${ACTION} permission rule on ${NET_PREFIX}<host>:<port> (and ${PRIVATE_PREFIX}${NET_PREFIX}<host>:<port> for a private or loopback address); ask the user instead of retrying or working around it.`
}
