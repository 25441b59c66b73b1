/**
 * `network: "rules"` through the Sandbox service, as the bash tool uses it: the real PermissionV2 stack decides each
 * destination, curl inside the bubblewrap sandbox is the client, loopback servers record what reached them.
 */
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Queue } from "effect"
import { AppProcess, Config, EventV2, Global, PermissionV2 } from "../src/index.js"
import { Sandbox } from "../src/entry/sandbox.js"
import { registryStub } from "./support/egress.js"
import { tempDir } from "./support/location.js"
import { loopbackServer, respond } from "./support/loopback-server.js"
import { fixture, withMemoryStack } from "./support/permission-stack.js"

const works = (command: string, args: ReadonlyArray<string>) =>
  ChildProcess.spawnSync(command, args, { stdio: "ignore" }).status === 0
const ready =
  works("bwrap", ["--unshare-all", "--unshare-user", "--disable-userns", "--ro-bind", "/", "/", "true"]) &&
  works("curl", ["--version"])
const hasNpm = works("npm", ["--version"])
if (!hasNpm) console.warn("sandbox-egress: npm is not installed; the npm install case is skipped")
if (!ready) console.warn("sandbox-egress: bubblewrap 0.8+ or curl is missing; the cases are skipped")

const caller = {
  sessionID: "ses_test",
  agent: "test",
  source: { type: "tool" as const, messageID: "msg_sandbox", callID: "call_sandbox" },
}
const allow = (resource: string): PermissionV2.Rule => ({ action: "webfetch", resource, effect: "allow" })

/** The Location's sandbox with `network: "rules"`, on the stack's Location and bus. */
const rulesSandbox = (root: string) =>
  Sandbox.layer.pipe(
    Layer.provide(
      Layer.mergeAll(
        Global.layerWith({ tmp: path.join(root, ".tmp-toolgate") }),
        Config.layerFromEntries([
          { type: "document", info: { bash: { sandbox: { mode: "bubblewrap", network: "rules" } } } },
        ]),
        AppProcess.layer,
      ),
    ),
  )

/** Replies `reply` to every ask and records the resources asked. */
const answering = (reply: PermissionV2.Reply) =>
  Effect.gen(function* () {
    const permission = yield* PermissionV2.Service
    const queue = yield* (yield* EventV2.Service).queue(PermissionV2.Event.Asked)
    const asked: Array<ReadonlyArray<string>> = []
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          const { data } = yield* Queue.take(queue)
          asked.push(data.resources)
          yield* permission.reply({ requestID: data.id, reply })
        }),
      ),
    )
    return asked
  })

/** Runs `script` the way the bash tool does: prepare, run raced against a declined ask, then the note. */
const call = (sandbox: Sandbox.Interface, permission: PermissionV2.Interface, root: string, script: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const prepared = yield* sandbox.prepare({
        command: script,
        cwd: root,
        shell: "/bin/sh",
        egress: { permission, caller },
      })
      const result = yield* AppProcess.make
        .run(prepared, { combineOutput: true, timeout: "60 seconds" })
        .pipe(Effect.raceFirst(prepared.declined))
      const output = Buffer.from(result.output ?? new Uint8Array()).toString("utf8")
      return { exit: result.exitCode, output, note: yield* prepared.note(output) }
    }),
  )

describe.runIf(ready)('Sandbox with network: "rules"', () => {
  it.scoped(
    "an allowed host is reached; another is asked, rejected, never reached, and the call stops as declined",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir("toolgate-sandbox-egress-")
        const target = yield* loopbackServer(respond("hello through the proxy\n"))
        const other = yield* loopbackServer(respond("must not be reached\n"))
        yield* withMemoryStack(
          root,
          Effect.gen(function* () {
            const { permission, setRules } = yield* fixture
            yield* setRules([allow(`net:127.0.0.1:${target.port}`), allow(`private:net:127.0.0.1:${target.port}`)])
            const sandbox = yield* Effect.provide(Sandbox.Service, rulesSandbox(root))
            expect(sandbox.network).toBe("rules")
            const allowed = yield* call(sandbox, permission, root, `curl -sS --max-time 20 ${target.base}/`)
            expect(allowed).toMatchObject({ exit: 0, output: "hello through the proxy\n" })
            expect(target.hits.length).toBe(1)
            expect(allowed.note).toBeUndefined()

            // Without the proxy there is no network at all, even for the allowed host.
            const direct = yield* call(sandbox, permission, root, `curl -sS --noproxy '*' --max-time 5 ${target.base}/`)
            expect(direct.exit).not.toBe(0)
            expect(target.hits.length).toBe(1)
            expect(direct.note).toMatch(/only through toolgate's egress proxy/)

            const asked = yield* answering("reject")
            const exit = yield* Effect.exit(
              call(sandbox, permission, root, `curl -sS --max-time 20 ${other.base}/; sleep 30; echo finished`),
            )
            expect(Exit.isFailure(exit)).toBe(true)
            if (Exit.isFailure(exit)) {
              expect(Cause.dieOption(exit.cause)._tag).toBe("Some")
              expect(PermissionV2.isDeclined(exit.cause)).toBe(true)
            }
            expect(asked).toEqual([[`net:127.0.0.1:${other.port}`, `private:net:127.0.0.1:${other.port}`]])
            expect(other.hits.length).toBe(0)
          }),
        )
      }),
    120_000,
  )

  it.scoped.runIf(hasNpm)(
    "npm install from a loopback registry works through the Sandbox with an allow rule for its host",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir("toolgate-sandbox-npm-")
        const registry = yield* registryStub(root)
        yield* withMemoryStack(
          root,
          Effect.gen(function* () {
            const { permission, setRules } = yield* fixture
            yield* setRules([allow(`net:127.0.0.1:${registry.port}`), allow(`private:net:127.0.0.1:${registry.port}`)])
            const sandbox = yield* Effect.provide(Sandbox.Service, rulesSandbox(root))
            const run = yield* call(
              sandbox,
              permission,
              root,
              `npm install --no-audit --no-fund --no-update-notifier --cache /tmp/npm-cache --registry ${registry.base}/ tiny-egress && node -e 'console.log(require("tiny-egress"))'`,
            )
            expect(run.output).toContain("added 1 package")
            expect(run.output).toContain("tiny egress package\n")
            expect(fs.readFileSync(path.join(root, "node_modules", "tiny-egress", "index.js"), "utf8")).toContain(
              "tiny egress package",
            )
          }),
        )
      }),
    120_000,
  )

  it.scoped("without the call's permission identity a rules sandbox does not run the command", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-sandbox-egress-")
      yield* withMemoryStack(
        root,
        Effect.gen(function* () {
          const sandbox = yield* Effect.provide(Sandbox.Service, rulesSandbox(root))
          const exit = yield* Effect.exit(
            Effect.scoped(sandbox.prepare({ command: "touch ran", cwd: root, shell: "/bin/sh" })),
          )
          expect(Exit.isFailure(exit)).toBe(true)
          if (Exit.isFailure(exit)) {
            const error = Cause.failureOption(exit.cause)
            expect(error._tag === "Some" && error.value._tag).toBe("Sandbox.PrepareError")
          }
        }),
      )
    }),
  )
})
