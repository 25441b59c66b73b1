/**
 * The gate side of the oracle: the real bash tool, settled through the real registry over the real PermissionV2
 * stack (SQLite in memory) on a Location at the fixture project, with
 *
 * - agent `oracle`, whose only rule is `* * ask`, so everything the gate judges becomes an ask;
 * - an answerer that records every ask (by session: one session per call) and replies `once`, so nothing is saved;
 * - a proxy of the permission service that records every `BlockedError` (a configured deny) by session;
 * - `AppProcess` replaced by a recording no-op, so the tool never runs the command: what it would have spawned (the
 *   shell, its arguments, the environment overrides) is what the sandbox runs instead.
 *
 * From one call the adapter reads the gate's view: refused, unresolved (a `bash` resource starting with
 * `unresolved:`), the programs (the command name of each `bash` resource), the write resources (`edit`,
 * `protected_path`, `external_directory`) resolved to absolute paths the way the gate saw the disk, and the write
 * asks about files it cannot name (an `unresolved:` resource of a write action).
 *
 * `knows(command, program)` answers whether the gate sees a program that is not the command name of any asked
 * resource (a wrapper, an unwrapped form): the same command under agent `probe` with `* * allow` plus `bash PROGRAM`
 * and `bash PROGRAM *` denied. Nothing but that deny can make such a call ask or refuse bash, so a bash ask or a
 * refusal means the gate recognised the program; that is exactly the promise a user's deny rule relies on.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { Cause, Context, Effect, Exit, FiberRef, Layer, Queue, type Scope } from "effect"
import {
  ApplicationTools,
  AppProcess,
  BashTool,
  Config,
  Database,
  EventV2,
  Global,
  LocationMutation,
  PermissionV2,
  ProtectedPath,
  SessionV2,
  ToolOutputStore,
  ToolRegistry,
} from "../../../src/index.js"
import { Sandbox } from "../../../src/entry/sandbox.js"
import { agentControl, buildStack } from "../permission-stack.js"
import type { Workspace } from "./fixture.js"

/** A write resource of the gate, with the absolute path it stands for. */
export interface WriteResource {
  readonly action: string
  readonly resource: string
  /** For `external_directory`: the directory; otherwise the file. */
  readonly absolute: string
}

/** What the gate makes of one command. */
export interface View {
  /** `ran`: the tool went on to spawn the shell; `refused`: a configured deny; `failed`: anything else. */
  readonly outcome: "ran" | "refused" | "failed"
  /** The model-visible result, for failures. */
  readonly text: string
  readonly unresolved: ReadonlyArray<string>
  readonly programs: ReadonlyArray<string>
  readonly writes: ReadonlyArray<WriteResource>
  /**
   * Write asks about files known only when the shell runs (`edit unresolved:<text>`): they always ask and may stand
   * for any file, so they cover every change of the command (its programs must still be listed).
   */
  readonly unknownWrites: ReadonlyArray<string>
  /** Every ask, as `action resources…`, for failure reports. */
  readonly asks: ReadonlyArray<string>
  /** What the tool would have spawned (`outcome` `ran` only). */
  readonly spawned?: AppProcess.Command
}

/** A gate as the oracle sees it: the real one, or a deliberately wrong one in the meta-test. */
export interface Gate {
  readonly view: (command: string) => Effect.Effect<View>
  readonly knows: (command: string, program: string) => Effect.Effect<boolean>
}

/** A call that neither asks nor settles within this long is the gate's failure (it would hang the caller). */
const SETTLE_TIMEOUT = "60 seconds"

const WRITE_ACTIONS = new Set(["edit", ProtectedPath.ACTION, "external_directory"])
const UNRESOLVED = "unresolved:"

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/

/** The base name of the command word of a bash resource (past the assignments a resource may keep). */
export const programOf = (resource: string): string | undefined => {
  const word = resource
    .trim()
    .split(/\s+/)
    .find((w) => !ASSIGNMENT.test(w))
  if (word === undefined || word === "") return undefined
  return path.posix.basename(word)
}

/** The real path of `absolute`'s deepest existing ancestor, joined with the rest (the gate's view of the disk). */
const physical = (absolute: string): string => {
  let current = absolute
  const tail: Array<string> = []
  for (;;) {
    try {
      return path.join(fs.realpathSync(current), ...tail.reverse())
    } catch {
      const parent = path.dirname(current)
      if (parent === current) return absolute
      tail.push(path.basename(current))
      current = parent
    }
  }
}

/** The absolute path a write resource stands for. */
export const absoluteOf = (project: string, action: string, resource: string): string => {
  // `/*` (the root's external_directory) is the root, not an empty path resolved against the project.
  const plain = action === "external_directory" ? resource.replace(/\/\*$/, "") || "/" : resource
  return physical(path.resolve(project, plain))
}

const registry = ToolRegistry.layer.pipe(
  Layer.provide(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
)

/** Which evaluation a spawn belongs to (the tool runs inside the settling fiber or one forked from it). */
const CurrentCall = FiberRef.unsafeMake<string | undefined>(undefined)

/** The real bash tool on the workspace's project. */
export const real = (space: Workspace): Effect.Effect<Gate, never, Scope.Scope> =>
  Effect.gen(function* () {
    const gateDir = path.join(space.base, "gate")
    for (const name of ["data", "config", "tmp"]) fs.mkdirSync(path.join(gateDir, name), { recursive: true })
    const stack = yield* Effect.orDie(buildStack(space.project, Database.layerMemory))

    const asks = new Map<string, Array<PermissionV2.Request>>()
    const blocked = new Map<string, Array<string>>()
    const spawned = new Map<string, AppProcess.Command>()

    const realPermission = Context.get(stack, PermissionV2.Service)
    const permission = PermissionV2.Service.of({
      ...realPermission,
      assert: (input) =>
        realPermission.assert(input).pipe(
          Effect.tapError((error) =>
            Effect.sync(() => {
              if (error._tag !== "PermissionV2.BlockedError") return
              const list = blocked.get(input.sessionID) ?? []
              list.push(`${error.action} ${error.resources.join(", ")}`)
              blocked.set(input.sessionID, list)
            }),
          ),
        ),
    })
    const recordingProcess = AppProcess.Service.of({
      run: (command) =>
        Effect.flatMap(FiberRef.get(CurrentCall), (call) =>
          Effect.sync(() => {
            if (call !== undefined) spawned.set(call, command)
            const empty = new Uint8Array()
            return {
              command: AppProcess.describe(command),
              exitCode: 0,
              output: empty,
              stdout: empty,
              stderr: empty,
              outputTruncated: false,
              stdoutTruncated: false,
              stderrTruncated: false,
            }
          }),
        ),
    })

    const leaf = BashTool.layer.pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          registry,
          LocationMutation.layer,
          Layer.succeed(AppProcess.Service, recordingProcess),
          Config.layerFromEntries([]),
          ProtectedPath.layer,
          NodeContext.layer,
          Sandbox.layerNone,
          ToolOutputStore.layerPassthrough,
        ),
      ),
      Layer.provideMerge(
        Layer.mergeAll(
          Layer.succeedContext(Context.add(stack, PermissionV2.Service, permission)),
          Global.layerWith({
            data: path.join(gateDir, "data"),
            config: path.join(gateDir, "config"),
            tmp: path.join(gateDir, "tmp"),
          }),
          NodeContext.layer,
        ),
      ),
    )
    const context = yield* Effect.orDie(Layer.build(leaf))
    const setRules = yield* agentControl.pipe(Effect.provide(context))
    yield* setRules("oracle", [{ action: "*", resource: "*", effect: "ask" }])
    yield* setRules("probe", [{ action: "*", resource: "*", effect: "allow" }])

    const events = Context.get(context, EventV2.Service)
    const queue = yield* events.queue(PermissionV2.Event.Asked)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(queue), (envelope) => {
          const request = envelope.data
          const list = asks.get(request.sessionID) ?? []
          list.push(request)
          asks.set(request.sessionID, list)
          return Effect.ignore(realPermission.reply({ requestID: request.id, reply: "once" }))
        }),
      ),
    )

    const sessions = Context.get(context, SessionV2.Service)
    const tools = Context.get(context, ToolRegistry.Service)
    let counter = 0

    /** Settles `command` under `agent`; what was asked, refused and spawned. */
    const call = (command: string, agent: string) =>
      Effect.gen(function* () {
        counter += 1
        const sessionID = `ses_oracle_${counter}`
        yield* Effect.orDie(sessions.create({ id: sessionID, agent }))
        const turn = yield* tools.materialize()
        const exit = yield* Effect.exit(
          Effect.locally(
            turn.settle({
              sessionID,
              agent,
              assistantMessageID: "msg_oracle",
              call: { id: `call_oracle_${counter}`, name: "bash", input: { command } },
            }),
            CurrentCall,
            sessionID,
          ).pipe(Effect.timeoutFail({ duration: SETTLE_TIMEOUT, onTimeout: () => "the call did not settle in time" })),
        )
        const result = {
          asked: asks.get(sessionID) ?? [],
          refusals: blocked.get(sessionID) ?? [],
          spawned: spawned.get(sessionID),
          text: Exit.isSuccess(exit) ? JSON.stringify(exit.value.result) : Cause.pretty(exit.cause).slice(0, 800),
        }
        asks.delete(sessionID)
        blocked.delete(sessionID)
        spawned.delete(sessionID)
        return result
      })

    const probeLock = yield* Effect.makeSemaphore(1)

    return {
      view: (command) =>
        Effect.map(call(command, "oracle"), (result): View => {
          const bash = result.asked.filter((r) => r.action === BashTool.name).flatMap((r) => r.resources)
          const unresolved = bash.filter((r) => r.startsWith(UNRESOLVED))
          const programs = new Set<string>()
          for (const resource of bash) {
            if (resource.startsWith(UNRESOLVED)) continue
            const program = programOf(resource)
            if (program !== undefined) programs.add(program)
          }
          const asked = result.asked.filter((r) => WRITE_ACTIONS.has(r.action))
          const writes = asked.flatMap((r) =>
            r.resources
              .filter((resource) => !resource.startsWith(UNRESOLVED))
              .map((resource) => ({
                action: r.action,
                resource,
                absolute: absoluteOf(space.project, r.action, resource),
              })),
          )
          const unknownWrites = asked.flatMap((r) =>
            r.resources
              .filter((resource) => resource.startsWith(UNRESOLVED))
              .map((resource) => `${r.action} ${resource}`),
          )
          return {
            outcome: result.refusals.length > 0 ? "refused" : result.spawned !== undefined ? "ran" : "failed",
            text: result.refusals.length > 0 ? result.refusals.join("; ") : result.text,
            unresolved,
            programs: [...programs],
            writes,
            unknownWrites,
            asks: result.asked.map((r) => `${r.action} ${JSON.stringify(r.resources)}`),
            ...(result.spawned === undefined ? {} : { spawned: result.spawned }),
          }
        }),
      knows: (command, program) =>
        probeLock.withPermits(1)(
          Effect.gen(function* () {
            yield* setRules("probe", [
              { action: "*", resource: "*", effect: "allow" },
              { action: BashTool.name, resource: program, effect: "deny" },
              { action: BashTool.name, resource: `${program} *`, effect: "deny" },
            ])
            const result = yield* call(command, "probe")
            return result.refusals.length > 0 || result.asked.some((r) => r.action === BashTool.name)
          }),
        ),
    } satisfies Gate
  })
