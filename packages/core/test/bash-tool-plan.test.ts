/**
 * The bash leaf's ask contract (docs/shell.md): the ask carries the command verbatim, each asking segment's source
 * text and the model's `description` (beside the command, never instead of it; also in progress reports); under an
 * active sandbox with `bash.sandbox.auto_allow`, a segment that would only ask `bash` runs, while denies, unresolved
 * segments, `external_directory` and `protected_path` still stop or ask, and the ask says the call ran sandboxed.
 * The real leaf over the real PermissionV2 stack and real child processes; the sandbox double only reports its state.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Exit, Fiber, Layer, Queue } from "effect"
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
  type Tool,
  ToolOutputStore,
  ToolRegistry,
} from "../src/index.js"
import { Sandbox } from "../src/entry/sandbox.js"
import { tempDir } from "./support/location.js"
import { agentControl, buildStack } from "./support/permission-stack.js"

const registry = ToolRegistry.layer.pipe(
  Layer.provide(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
)

/** A sandbox that reports itself active with autoAllow on, and runs the command plainly (its state is what counts). */
const autoAllowing: Layer.Layer<Sandbox.Service> = Layer.succeed(
  Sandbox.Service,
  Sandbox.Service.of({
    mode: "bubblewrap",
    network: false,
    autoAllow: true,
    prepare: (request) =>
      Effect.succeed({
        command: request.command,
        cwd: request.cwd,
        shell: request.shell,
        declined: Effect.never,
        note: () => Effect.succeed(undefined),
      }),
    diagnose: () => undefined,
  }),
)

const harness = (rules: ReadonlyArray<PermissionV2.Rule>, sandbox: Layer.Layer<Sandbox.Service> = Sandbox.layerNone) =>
  Effect.gen(function* () {
    const outer = yield* tempDir("toolgate-bash-plan-")
    const root = path.join(outer, "loc")
    fs.mkdirSync(root)
    const stack = yield* buildStack(root, Database.layerMemory)
    const leaf = BashTool.layer.pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          registry,
          LocationMutation.layer,
          AppProcess.layer,
          Config.layerEmpty,
          ProtectedPath.layer,
          NodeContext.layer,
          sandbox,
          ToolOutputStore.layerPassthrough,
        ),
      ),
      Layer.provideMerge(
        Layer.mergeAll(
          Layer.succeedContext(stack),
          Global.layerWith({
            data: path.join(outer, "data"),
            config: path.join(outer, "config"),
            tmp: path.join(outer, "tmp"),
          }),
          NodeContext.layer,
        ),
      ),
    )
    const context = yield* Layer.build(leaf)
    const sessionID = "ses_plan"
    yield* Effect.gen(function* () {
      const setRules = yield* agentControl
      yield* setRules("test", rules)
      yield* (yield* SessionV2.Service).create({ id: sessionID, agent: "test" })
    }).pipe(Effect.provide(context))
    const events = Context.get(context, EventV2.Service)
    const permission = Context.get(context, PermissionV2.Service)
    const queue = yield* events.queue()

    const run = (
      input: Record<string, unknown>,
      answer: (request: PermissionV2.Request) => PermissionV2.Reply = () => "reject",
    ) =>
      Effect.gen(function* () {
        const progress: Array<Tool.Progress> = []
        const turn = yield* Effect.flatMap(ToolRegistry.Service, (r) => r.materialize())
        const fiber = yield* Effect.fork(
          turn.settle({
            sessionID,
            agent: "test",
            assistantMessageID: "msg_plan",
            call: { id: `call-${Math.random()}`, name: "bash", input },
            progress: (update) => progress.push(update),
          }),
        )
        const asked: Array<PermissionV2.Request> = []
        for (;;) {
          const next = yield* Effect.raceFirst(
            Effect.map(Fiber.await(fiber), (exit) => Either.left(exit)),
            Effect.map(Queue.take(queue), (envelope) => Either.right(envelope)),
          )
          if (Either.isLeft(next)) {
            const exit = next.left
            // A plain reject travels as a `DeclinedError` defect that stops the runner; anything else is a failure.
            if (Exit.isFailure(exit) && !PermissionV2.isDeclined(exit.cause)) return yield* Effect.failCause(exit.cause)
            return {
              settlement: Exit.isSuccess(exit) ? exit.value : undefined,
              declined: Exit.isFailure(exit),
              asked,
              progress,
            }
          }
          if (!EventV2.is(PermissionV2.Event.Asked)(next.right)) continue
          const request = next.right.data
          asked.push(request)
          yield* Effect.orDie(permission.reply({ requestID: request.id, reply: answer(request) }))
        }
      }).pipe(Effect.provide(context))
    return { outer, root, run }
  })

const ASK_ALL: ReadonlyArray<PermissionV2.Rule> = [
  { action: "*", resource: "*", effect: "allow" },
  { action: "bash", resource: "*", effect: "ask" },
  { action: "bash", resource: "rm *", effect: "deny" },
]

describe.skipIf(process.platform === "win32")("bash ask contract", () => {
  it.scopedLive("the ask shows the command verbatim, each asking segment's text and the description beside it", () =>
    Effect.gen(function* () {
      const h = yield* harness(ASK_ALL)
      const command = "printf '%s\\n' \"a  b\" && echo   two"
      const { asked, settlement, progress } = yield* h.run(
        { command, description: "Prints two lines" },
        () => "once",
      )
      expect(settlement?.result.type).toBe("content")
      expect(asked).toHaveLength(1)
      expect(asked[0]!.metadata).toEqual({
        command,
        description: "Prints two lines",
        segments: [
          { text: "printf '%s\\n' \"a  b\"", resource: "printf %s\\n a  b" },
          { text: "echo   two", resource: "echo two" },
        ],
      })
      expect(progress.every((update) => update.message.startsWith("Prints two lines: "))).toBe(true)
    }),
  )

  it.scopedLive("an unresolved segment's reason is in the metadata, and it is never offered for saving", () =>
    Effect.gen(function* () {
      const h = yield* harness(ASK_ALL)
      const { asked, declined } = yield* h.run({ command: "$CMD x" })
      expect(declined).toBe(true)
      expect(asked[0]!.resources).toEqual(["unresolved:$CMD x"])
      expect(asked[0]!.save).toEqual([])
      expect((asked[0]!.metadata as { segments: Array<{ reason: string }> }).segments[0]!.reason).toMatch(
        /only known when the shell runs/,
      )
    }),
  )

  it.scopedLive("autoAllow under an active sandbox: what would only ask bash runs; the ask-worthy rest still asks", () =>
    Effect.gen(function* () {
      const h = yield* harness(
        [...ASK_ALL, { action: "external_directory", resource: "*", effect: "ask" }],
        autoAllowing,
      )
      const ran = yield* h.run({ command: "echo sandboxed > made.txt" })
      expect(ran.asked).toEqual([])
      expect(ran.settlement?.result.type).toBe("content")
      expect(fs.readFileSync(path.join(h.root, "made.txt"), "utf8")).toBe("sandboxed\n")

      const denied = yield* h.run({ command: "echo a; rm -f made.txt" })
      expect(denied.asked).toEqual([])
      expect(denied.declined).toBe(false)
      expect(JSON.stringify(denied.settlement?.result)).toContain("Permission denied by configured rules for bash: rm")
      expect(fs.existsSync(path.join(h.root, "made.txt"))).toBe(true)

      const unresolved = yield* h.run({ command: "echo a; $CMD" })
      expect(unresolved.asked.map((r) => [r.action, r.resources])).toEqual([["bash", ["unresolved:$CMD"]]])
      expect(unresolved.asked[0]!.metadata).toMatchObject({ sandboxed: true, autoAllowed: ["echo a"] })
      expect(unresolved.declined).toBe(true)

      const outside = yield* h.run({ command: "echo x > ../out.txt" })
      expect(outside.asked.map((r) => r.action)).toEqual(["external_directory"])
      expect(fs.existsSync(path.join(h.outer, "out.txt"))).toBe(false)

      const protectedPath = yield* h.run({ command: "echo '{}' > toolgate.json" })
      expect(protectedPath.asked.map((r) => r.action)).toEqual(["protected_path"])
      expect(fs.existsSync(path.join(h.root, "toolgate.json"))).toBe(false)
    }),
  )

  it.scopedLive("without an active sandbox autoAllow changes nothing", () =>
    Effect.gen(function* () {
      const h = yield* harness(ASK_ALL)
      const { asked, declined } = yield* h.run({ command: "echo hi" })
      expect(declined).toBe(true)
      expect(asked.map((r) => r.resources)).toEqual([["echo hi"]])
      expect(asked[0]!.metadata).not.toHaveProperty("sandboxed")
    }),
  )
})
