/**
 * Shell commands are understood, not matched as one string (docs/shell.md): the attack pass's evasions of a lone
 * `rm * deny`, one ask for the asking segments, saved prefixes, redirections as edits, protected paths, `cd` out of
 * the Location, unresolved parts and plan mode's read check. The real bash leaf, the real PermissionV2 over SQLite,
 * real temp directories and real child processes; every test checks the disk.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Fiber, Layer, Queue } from "effect"
import {
  ApplicationTools,
  AppProcess,
  BashTool,
  Config,
  Database,
  EventV2,
  Global,
  LocationMutation,
  PermissionSaved,
  PermissionV2,
  Project,
  ProtectedPath,
  SessionV2,
  ToolOutputStore,
  ToolRegistry,
  Wildcard,
} from "../../src/index.js"
import { Sandbox } from "../../src/entry/sandbox.js"
import { tempDir } from "../support/location.js"
import { agentControl, buildStack } from "../support/permission-stack.js"

const POLICY: ReadonlyArray<PermissionV2.Rule> = [
  { action: "*", resource: "*", effect: "allow" },
  { action: "external_directory", resource: "*", effect: "ask" },
  { action: "bash", resource: "*", effect: "ask" },
  { action: "bash", resource: "ls *", effect: "allow" },
  { action: "bash", resource: "rm *", effect: "deny" },
]

type Answer = (request: PermissionV2.Request) => PermissionV2.ReplyInput["reply"] | { readonly message: string }

const registry = ToolRegistry.layer.pipe(
  Layer.provide(Layer.merge(ApplicationTools.layer, ToolOutputStore.layerPassthrough)),
)

/**
 * A Location at `<outer>/loc` (so `../x` is a real file outside it) with the bash leaf over the real stack; agent
 * `test` has `rules`.
 */
const harness = (rules: ReadonlyArray<PermissionV2.Rule>, entries: ReadonlyArray<Config.Entry> = []) =>
  Effect.gen(function* () {
    const outer = yield* tempDir("toolgate-shell-trust-")
    const root = path.join(outer, "loc")
    fs.mkdirSync(root)
    const data = path.join(outer, "data")
    fs.mkdirSync(data)
    const stack = yield* buildStack(root, Database.layerMemory)
    const leaf = BashTool.layer.pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          registry,
          LocationMutation.layer,
          AppProcess.layer,
          Config.layerFromEntries(entries),
          ProtectedPath.layer,
          NodeContext.layer,
          Sandbox.layerNone,
          ToolOutputStore.layerPassthrough,
        ),
      ),
      Layer.provideMerge(
        Layer.mergeAll(
          Layer.succeedContext(stack),
          Global.layerWith({ data, config: path.join(outer, "config"), tmp: path.join(outer, "tmp") }),
          NodeContext.layer,
        ),
      ),
    )
    const context = yield* Layer.build(leaf)
    const sessionID = "ses_shell"
    yield* Effect.gen(function* () {
      const setRules = yield* agentControl
      yield* setRules("test", rules)
      yield* (yield* SessionV2.Service).create({ id: sessionID, agent: "test" })
    }).pipe(Effect.provide(context))
    const events = Context.get(context, EventV2.Service)
    const permission = Context.get(context, PermissionV2.Service)
    const queue = yield* events.queue()

    /** Runs `command`, answering every ask with `answer`; returns the settlement and the requests shown. */
    const run = (command: string, answer: Answer = () => ({ message: "no" }), extra: Record<string, unknown> = {}) =>
      Effect.gen(function* () {
        const turn = yield* Effect.flatMap(ToolRegistry.Service, (r) => r.materialize())
        const fiber = yield* Effect.fork(
          turn.settle({
            sessionID,
            agent: "test",
            assistantMessageID: "msg_shell",
            call: { id: `call-${Math.random()}`, name: "bash", input: { command, ...extra } },
          }),
        )
        const asked: Array<PermissionV2.Request> = []
        for (;;) {
          const next = yield* Effect.raceFirst(
            Effect.map(Fiber.join(fiber), (settlement) => Either.left(settlement)),
            Effect.map(Queue.take(queue), (envelope) => Either.right(envelope)),
          )
          if (Either.isLeft(next)) return { settlement: next.left, asked }
          const envelope = next.right
          if (!EventV2.is(PermissionV2.Event.Asked)(envelope)) continue
          const request = envelope.data
          asked.push(request)
          const reply = answer(request)
          yield* Effect.orDie(
            permission.reply(
              typeof reply === "string"
                ? { requestID: request.id, reply }
                : { requestID: request.id, reply: "reject", message: reply.message },
            ),
          )
        }
      }).pipe(Effect.provide(context))

    const savedRows = Effect.provide(
      Effect.flatMap(PermissionSaved.Service, (saved) =>
        saved.list(Project.approvalScope("global", fs.realpathSync(root))),
      ),
      context,
    )
    return { outer, root, run, savedRows }
  })

const text = (settlement: { readonly result: { readonly value: unknown } }) => JSON.stringify(settlement.result.value)

describe.skipIf(process.platform === "win32")("bash: the attack pass against a lone rm deny", () => {
  const evasions = [
    "ls . ; rm -f ../x",
    "ls .\nrm -f ../x",
    "ls $(rm -f ../x)",
    "rm\t-f ../x",
    "\\rm -f ../x",
    "'rm' -f ../x",
    "r''m -f ../x",
    "command rm -f ../x",
    '" rm" -f ../x',
    "X=1 rm -f ../x",
    "echo ok; rm -f ../x",
    "find .. -maxdepth 1 -name x -delete",
    "sh -c 'rm -f ../x'",
    "ls | xargs rm -f ../x",
    "/bin/rm -f ../x",
  ]
  for (const command of evasions) {
    it.live(`${JSON.stringify(command)} is blocked without an ask and ../x survives`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const h = yield* harness(POLICY)
          const victim = path.join(h.outer, "x")
          fs.writeFileSync(victim, "keep")
          const { settlement, asked } = yield* h.run(command, () => "once")
          expect(settlement.result.type).toBe("error")
          expect(text(settlement)).toContain("Permission denied by configured rules for bash: rm")
          expect(asked).toEqual([])
          expect(fs.readFileSync(victim, "utf8")).toBe("keep")
        }),
      ),
    )
  }

  it.live("rm${IFS}… cannot be resolved: it asks showing the raw text, and a refusal leaves ../x", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness(POLICY)
        const victim = path.join(h.outer, "x")
        fs.writeFileSync(victim, "keep")
        const command = "rm${IFS}-f${IFS}../x"
        const { settlement, asked } = yield* h.run(command)
        expect(asked.map((r) => [r.action, r.resources])).toEqual([["bash", [`unresolved:${command}`]]])
        expect(asked[0]!.save).toEqual([])
        expect(settlement.result.type).toBe("error")
        expect(fs.readFileSync(victim, "utf8")).toBe("keep")
      }),
    ),
  )
})

describe.skipIf(process.platform === "win32")("bash: per-segment asks and saved prefixes", () => {
  it.live("one ask lists only the asking segments, each shown whole; once runs the command", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness(POLICY)
        const { settlement, asked } = yield* h.run("echo one; ls >/dev/null; printf '%s' \"two three\"", () => "once")
        expect(asked).toHaveLength(1)
        expect(asked[0]!.resources).toEqual(["echo one", "printf %s two three"])
        expect((asked[0]!.metadata as { segments: Array<{ text: string }> }).segments.map((s) => s.text)).toEqual([
          "echo one",
          "printf '%s' \"two three\"",
        ])
        expect(asked[0]!.save).toEqual(["echo *", "printf *"])
        expect(settlement.output!.content[0]).toEqual({ type: "text", text: "one\ntwo three" })
      }),
    ),
  )

  it.live("a denied segment blocks before anything asks: `echo a; rm x` asks nothing and runs nothing", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness(POLICY)
        fs.writeFileSync(path.join(h.root, "x"), "keep")
        const { settlement, asked } = yield* h.run("echo a > made.txt; rm x")
        expect(asked).toEqual([])
        expect(text(settlement)).toContain("for bash: rm x")
        expect(fs.existsSync(path.join(h.root, "made.txt"))).toBe(false)
        expect(fs.existsSync(path.join(h.root, "x"))).toBe(true)
      }),
    ),
  )

  it.live('always on `git commit -m "a*b"` saves `git commit *` literally; git push still asks', () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness([{ action: "bash", resource: "*", effect: "ask" }])
        const first = yield* h.run('git commit -m "a*b" --dry-run >/dev/null 2>&1; true', (request) =>
          request.resources.includes("git commit -m a*b --dry-run") ? "always" : "once",
        )
        expect(first.asked[0]!.save).toEqual([`${Wildcard.literal("git commit")} *`, "true *"])
        const rows = yield* h.savedRows
        expect(rows.map((row) => row.resource).sort()).toEqual(["git commit *", "true *"])
        // The saved prefix covers other git commits, not other git commands.
        const again = yield* h.run("git commit --allow-empty -m x --dry-run >/dev/null 2>&1; true")
        expect(again.asked).toEqual([])
        const push = yield* h.run("git push")
        expect(push.asked.map((r) => r.resources)).toEqual([["git push"]])
        expect(push.settlement.result.type).toBe("error")
      }),
    ),
  )

  it.live("an option inside the prefix saves the exact command: `git -C . status` does not become `git -C *`", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness([{ action: "bash", resource: "*", effect: "ask" }])
        const first = yield* h.run("git -C . status >/dev/null 2>&1; true", () => "always")
        expect(first.asked[0]!.save).toEqual(["git -C . status", "true *"])
        const other = yield* h.run("git -C . push")
        expect(other.asked.map((r) => r.resources)).toEqual([["git -C . push"]])
      }),
    ),
  )

  it.live("`du -sh *` saved does not allow `du -sh ; rm x`: the rm segment asks, and a refusal keeps x", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness([{ action: "bash", resource: "*", effect: "ask" }])
        fs.writeFileSync(path.join(h.root, "x"), "keep")
        yield* h.run("du -sh *", () => "always")
        expect((yield* h.savedRows).map((row) => row.resource)).toEqual(["du *"])
        const { settlement, asked } = yield* h.run("du -sh ; rm x")
        expect(asked.map((r) => r.resources)).toEqual([["rm x"]])
        expect(settlement.result.type).toBe("error")
        expect(fs.readFileSync(path.join(h.root, "x"), "utf8")).toBe("keep")
      }),
    ),
  )

  it.live("bash.arity in configuration extends the prefix table", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness(
          [{ action: "bash", resource: "*", effect: "ask" }],
          [{ type: "document", info: { bash: { arity: { printf: 2 } } } }],
        )
        const { asked } = yield* h.run("printf hello", () => "always")
        expect(asked[0]!.save).toEqual(["printf hello *"])
      }),
    ),
  )
})

describe.skipIf(process.platform === "win32")("bash: files written, directories entered, unresolved parts", () => {
  it.live("a redirection is an edit of its target: refused, the file is not created", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness([
          ...POLICY,
          { action: "bash", resource: "echo *", effect: "allow" },
          { action: "edit", resource: "*", effect: "ask" },
        ])
        const { settlement, asked } = yield* h.run("echo hi > out.txt; echo more >> log.txt 2>&1")
        expect(asked.map((r) => [r.action, r.resources])).toEqual([["edit", ["out.txt", "log.txt"]]])
        expect(settlement.result.type).toBe("error")
        expect(fs.existsSync(path.join(h.root, "out.txt"))).toBe(false)
        expect(fs.existsSync(path.join(h.root, "log.txt"))).toBe(false)
      }),
    ),
  )

  it.live("an edit deny on the target blocks, even when bash allows the command", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness([
          { action: "*", resource: "*", effect: "allow" },
          { action: "edit", resource: "*", effect: "deny" },
        ])
        const { settlement, asked } = yield* h.run("echo hi | tee copy.txt")
        expect(asked).toEqual([])
        expect(text(settlement)).toContain("Permission denied by configured rules for edit: copy.txt")
        expect(fs.existsSync(path.join(h.root, "copy.txt"))).toBe(false)
      }),
    ),
  )

  it.live("a redirection outside the Location asks external_directory first; refused, nothing is written outside", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness([
          { action: "*", resource: "*", effect: "allow" },
          { action: "external_directory", resource: "*", effect: "ask" },
        ])
        const { asked } = yield* h.run("echo pwned > ../outside.txt")
        expect(asked.map((r) => r.action)).toEqual(["external_directory"])
        expect(asked[0]!.resources).toEqual([`${fs.realpathSync(h.outer)}/*`])
        expect(fs.existsSync(path.join(h.outer, "outside.txt"))).toBe(false)
      }),
    ),
  )

  it.live("a symlink inside the Location that points outside is an outside write", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness([
          { action: "*", resource: "*", effect: "allow" },
          { action: "external_directory", resource: "*", effect: "ask" },
        ])
        const away = path.join(h.outer, "away")
        fs.mkdirSync(away)
        fs.symlinkSync(away, path.join(h.root, "link"))
        const { asked } = yield* h.run("echo pwned > link/file.txt")
        expect(asked.map((r) => [r.action, r.resources])).toEqual([
          ["external_directory", [`${fs.realpathSync(away)}/*`]],
        ])
        expect(fs.existsSync(path.join(away, "file.txt"))).toBe(false)
      }),
    ),
  )

  it.live("writing a protected path asks protected_path even when everything is allowed", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness([{ action: "*", resource: "*", effect: "allow" }])
        fs.mkdirSync(path.join(h.root, ".git"))
        fs.writeFileSync(path.join(h.root, ".git", "config"), "[core]\n")
        const { asked } = yield* h.run(
          `echo '{"permissions":[{"action":"*","resource":"*","effect":"allow"}]}' > toolgate.json; echo x >> .git/config`,
        )
        expect(asked.map((r) => [r.action, r.resources])).toEqual([
          [ProtectedPath.ACTION, ["toolgate.json", ".git/config"]],
        ])
        expect(fs.existsSync(path.join(h.root, "toolgate.json"))).toBe(false)
        expect(fs.readFileSync(path.join(h.root, ".git", "config"), "utf8")).toBe("[core]\n")
      }),
    ),
  )

  it.live("`cd ..` needs external_directory for what follows; refused, nothing runs there", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness([
          { action: "*", resource: "*", effect: "allow" },
          { action: "external_directory", resource: "*", effect: "ask" },
        ])
        const { asked } = yield* h.run("cd .. && touch marker")
        expect(asked.map((r) => [r.action, r.resources])).toEqual([
          ["external_directory", [`${fs.realpathSync(h.outer)}/*`]],
        ])
        expect(fs.existsSync(path.join(h.outer, "marker"))).toBe(false)
        // A cd that stays inside asks nothing.
        fs.mkdirSync(path.join(h.root, "sub"))
        const inside = yield* h.run("cd sub && touch marker")
        expect(inside.asked).toEqual([])
        expect(fs.existsSync(path.join(h.root, "sub", "marker"))).toBe(true)
      }),
    ),
  )

  it.live("a command name from a variable asks even under `* * allow`, showing the raw text", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness([{ action: "*", resource: "*", effect: "allow" }])
        const { asked, settlement } = yield* h.run('X=touch; $X made; eval "$X other"')
        expect(asked).toHaveLength(1)
        expect(asked[0]!.resources).toEqual(["unresolved:$X made", 'unresolved:eval "$X other"'])
        expect(settlement.result.type).toBe("error")
        expect(fs.existsSync(path.join(h.root, "made"))).toBe(false)
        // Only a rule naming the prefix lifts it.
        const allowed = yield* harness([
          { action: "*", resource: "*", effect: "allow" },
          { action: "bash", resource: "unresolved:*", effect: "allow" },
        ])
        const ran = yield* allowed.run("X=touch; $X made")
        expect(ran.asked).toEqual([])
        expect(fs.existsSync(path.join(allowed.root, "made"))).toBe(true)
      }),
    ),
  )

  it.live("plan-style rules: `cat .env` still asks read for the file, `cat README.md` runs", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness([
          { action: "*", resource: "*", effect: "allow" },
          { action: "read", resource: "*.env", effect: "ask" },
          { action: "bash", resource: "*", effect: "ask" },
          { action: "bash", resource: "cat *", effect: "allow" },
          { action: "bash", resource: "grep *", effect: "allow" },
        ])
        fs.writeFileSync(path.join(h.root, ".env"), "SECRET=hunter2")
        fs.writeFileSync(path.join(h.root, "README.md"), "hello")
        const readme = yield* h.run("cat README.md")
        expect(readme.asked).toEqual([])
        expect(readme.settlement.output!.content[0]).toEqual({ type: "text", text: "hello" })
        for (const command of ["cat .env", "cat < .env", "grep SECRET .env", "cat ./.env"]) {
          const { asked, settlement } = yield* h.run(command)
          expect(
            asked.map((r) => [r.action, r.resources]),
            command,
          ).toEqual([["read", [".env"]]])
          expect(JSON.stringify(settlement)).not.toContain("hunter2")
        }
        // Files only known when the command runs are unresolved reads, which only a rule naming them allows.
        for (const command of ["cat .e*", "grep -r SECRET ."]) {
          const { asked, settlement } = yield* h.run(command)
          expect(
            asked.map((r) => r.action),
            command,
          ).toEqual(["read"])
          expect(asked[0]!.resources[0]!.startsWith("unresolved:")).toBe(true)
          expect(asked[0]!.save).toEqual([])
          expect(JSON.stringify(settlement)).not.toContain("hunter2")
        }
      }),
    ),
  )
})
