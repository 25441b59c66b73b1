import { execSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, FastCheck, Layer, Ref } from "effect"
import {
  AppProcess,
  ApplicationTools,
  BashTool,
  Config,
  LocationMutation,
  ToolOutputStore,
  ToolRegistry,
  Wildcard,
} from "../src/index.js"
import { Sandbox } from "../src/entry/sandbox.js"
import { locationLayer, tempDir } from "./support/location.js"
import * as Permission from "./support/permission.js"

/** One recorded run. */
interface Run {
  readonly command: string
  readonly cwd: string | undefined
  readonly shell: string | boolean | undefined
  readonly options: AppProcess.RunOptions | undefined
}

type Respond = (
  command: AppProcess.Command,
) => Effect.Effect<AppProcess.RunResult, AppProcess.AppProcessError | AppProcess.TimeoutError>

class FakeProcess extends Context.Tag("test/FakeProcess")<
  FakeProcess,
  { readonly runs: Ref.Ref<ReadonlyArray<Run>>; readonly respond: Ref.Ref<Respond> }
>() {}

const result = (output: string, extra: Partial<AppProcess.RunResult> = {}): AppProcess.RunResult => ({
  command: "",
  exitCode: 0,
  output: Buffer.from(output),
  stdout: new Uint8Array(),
  stderr: new Uint8Array(),
  outputTruncated: false,
  stdoutTruncated: false,
  stderrTruncated: false,
  ...extra,
})

/** Records `{ command, cwd, shell, options }` and answers exit 0 with `hello\n` unless told otherwise. */
const fakeProcess = Layer.effectContext(
  Effect.gen(function* () {
    const runs = yield* Ref.make<ReadonlyArray<Run>>([])
    const respond = yield* Ref.make<Respond>((command) =>
      Effect.succeed(result("hello\n", { command: command.command })),
    )
    const service = AppProcess.Service.of({
      run: (command, options) =>
        Effect.gen(function* () {
          yield* Ref.update(runs, (all) => [
            ...all,
            { command: command.command, cwd: command.cwd, shell: command.shell, options },
          ])
          return yield* (yield* Ref.get(respond))(command)
        }),
    })
    return Context.make(AppProcess.Service, service).pipe(Context.add(FakeProcess, { runs, respond }))
  }),
)

const environment = <P>(
  root: string,
  options: {
    readonly process: Layer.Layer<P>
    readonly config?: Layer.Layer<Config.Service>
    readonly store?: Layer.Layer<ToolOutputStore.Service>
    readonly sandbox?: Layer.Layer<Sandbox.Service>
  },
) => {
  const place = Layer.merge(locationLayer(root), NodeContext.layer)
  const mutation = LocationMutation.layer.pipe(Layer.provide(place))
  const store = options.store ?? ToolOutputStore.layerPassthrough
  const registry = ToolRegistry.layer.pipe(Layer.provideMerge(Layer.merge(ApplicationTools.layer, store)))
  return BashTool.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        registry,
        Permission.layer,
        mutation,
        NodeContext.layer,
        options.config ?? Config.layerEmpty,
        options.process,
        options.sandbox ?? Sandbox.layerNone,
      ),
    ),
  )
}

const identity = { sessionID: "ses_tool_test", agent: "build", assistantMessageID: "msg_tool_test" } as const

const settle = (input: unknown) =>
  Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize()).pipe(
    Effect.flatMap((turn) => turn.settle({ ...identity, call: { id: "call-bash", name: "bash", input } })),
  )

const runs = Effect.flatMap(FakeProcess, (fake) => Ref.get(fake.runs))
const respond = (f: Respond) => Effect.flatMap(FakeProcess, (fake) => Ref.set(fake.respond, f))
const text = (value: string) => ({ type: "text", text: value })

/** A Location root and a separate outside directory, both real temp dirs. */
const dirs = Effect.all({ root: tempDir("toolgate-bash-"), outside: tempDir("toolgate-bash-outside-") })

/** Runs `body` against the fake process. */
const withFake = <A, E, R>(body: (d: { root: string; outside: string }) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(dirs, (d) => body(d).pipe(Effect.provide(environment(d.root, { process: fakeProcess }))))

describe("bash tool", () => {
  it.scoped("registers and returns structured successful output from the active Location", () =>
    withFake(({ root }) =>
      Effect.gen(function* () {
        const turn = yield* Effect.flatMap(ToolRegistry.Service, (registry) => registry.materialize())
        expect(turn.definitions.map((d) => d.name)).toEqual(["bash"])
        const definition = turn.definitions[0]!
        expect(definition.description).toBe(BashTool.description)
        const inputKeys = Object.keys((definition.inputSchema as { properties: object }).properties)
        expect(inputKeys).toEqual(["command", "description", "workdir", "timeout"])
        expect(inputKeys).not.toContain("background")
        const outputKeys = Object.keys((definition.outputSchema as { properties: object }).properties)
        expect(outputKeys).toEqual(["exit", "truncated", "timeout", "outputPath"])
        const hidden = yield* Effect.flatMap(ToolRegistry.Service, (registry) =>
          registry.materialize([{ action: "bash", resource: "*", effect: "deny" }]),
        )
        expect(hidden.definitions).toEqual([])

        const settlement = yield* settle({ command: "pwd" })
        const content = [text("hello\n"), text("Command exited with code 0.")]
        expect(settlement.result).toEqual({ type: "content", value: content })
        expect(settlement.output).toEqual({ structured: { exit: 0, truncated: false }, content })
        expect(settlement.outputPaths).toBeUndefined()

        const [run, ...rest] = yield* runs
        expect(rest).toEqual([])
        expect(run!.cwd).toBe(fs.realpathSync(root))
        expect(run!.command).toBe("pwd")
        // bash when it is installed: the grammar the gate reads.
        expect(run!.shell).toBe(BashTool.selectShell([]))
        expect(path.basename(run!.shell as string)).toBe(fs.existsSync("/bin/bash") ? "bash" : "sh")
        expect(run!.options).toMatchObject({ combineOutput: true, maxOutputBytes: BashTool.MAX_CAPTURE_BYTES })
        expect(Duration.toMillis(run!.options!.timeout!)).toBe(120_000)
        expect(yield* Permission.asserts).toEqual([
          {
            sessionID: identity.sessionID,
            agent: "build",
            source: { type: "tool", messageID: identity.assistantMessageID, callID: "call-bash" },
            action: "bash",
            resources: ["pwd"],
            // One saved prefix per segment (the arity of `pwd` is 1), no longer the whole command string.
            save: ["pwd *"],
            metadata: { command: "pwd", segments: [] },
          },
        ])
      }),
    ),
  )

  it.scoped("asserts every simple command as its own resource, with one saved prefix each", () =>
    withFake(() =>
      Effect.gen(function* () {
        yield* settle({ command: "ls -la; X=1 git commit -m 'a*b' && echo $(pwd) > out.txt" })
        const asserts = yield* Permission.asserts
        expect(asserts.map((a) => a.action)).toEqual(["bash"])
        // `X=1` is not on the harmless list, so it is part of what is approved (and saved exactly).
        expect(asserts[0]!.resources).toEqual(["ls -la", "X=1 git commit -m a*b", "pwd", "echo $(pwd)"])
        expect(asserts[0]!.save).toEqual(["ls *", Wildcard.literal("X=1 git commit -m a*b"), "pwd *", "echo *"])
        expect((yield* runs).map((r) => r.command)).toEqual([
          "ls -la; X=1 git commit -m 'a*b' && echo $(pwd) > out.txt",
        ])
      }),
    ),
  )

  it.scoped("a denied segment is named in the error and nothing runs", () =>
    withFake(() =>
      Effect.gen(function* () {
        yield* Permission.deny("bash")
        const settlement = yield* settle({ command: "\\rm -rf build; ls" })
        expect(settlement.result).toEqual({
          type: "error",
          value: "Permission denied by configured rules for bash: rm -rf build, ls",
        })
        expect(yield* runs).toEqual([])
      }),
    ),
  )

  it.scoped("resolves a relative workdir from the active Location", () =>
    withFake(({ root }) =>
      Effect.gen(function* () {
        fs.mkdirSync(path.join(root, "src"))
        yield* settle({ command: "pwd", workdir: "src" })
        expect((yield* runs).map((r) => r.cwd)).toEqual([fs.realpathSync(path.join(root, "src"))])
        expect(yield* Permission.actions).toEqual(["bash"])
      }),
    ),
  )

  it.scoped("rejects a workdir that stops being a directory during approval", () =>
    withFake(({ root }) =>
      Effect.gen(function* () {
        const src = path.join(root, "src")
        fs.mkdirSync(src)
        yield* Permission.afterApproval(
          "bash",
          Effect.sync(() => {
            fs.rmSync(src, { recursive: true })
            fs.writeFileSync(src, "now a file")
          }),
        )
        const settlement = yield* settle({ command: "pwd", workdir: "src" })
        expect(settlement.result).toEqual({
          type: "error",
          value: `Unable to execute command: pwd: Working directory is not a directory: ${fs.realpathSync(src)}`,
        })
        expect(yield* runs).toEqual([])
        expect(yield* Permission.actions).toEqual(["bash"])
      }),
    ),
  )

  it.scoped("approves an explicit external workdir before bash execution", () =>
    withFake(({ outside }) =>
      Effect.gen(function* () {
        const settlement = yield* settle({ command: "ls", workdir: outside })
        expect(settlement.result.type).toBe("content")
        const asserts = yield* Permission.asserts
        expect(asserts.map((a) => a.action)).toEqual(["external_directory", "bash"])
        expect(asserts[0]!.resources).toEqual([`${fs.realpathSync(outside)}/*`])
        expect(asserts[0]!.save).toEqual([`${fs.realpathSync(outside)}/*`])
        expect((yield* runs).map((r) => r.cwd)).toEqual([fs.realpathSync(outside)])
      }),
    ),
  )

  it.scoped("does not execute after external-directory denial", () =>
    withFake(({ outside }) =>
      Effect.gen(function* () {
        yield* Permission.deny("external_directory")
        const settlement = yield* settle({ command: "ls", workdir: outside })
        expect(settlement.result).toEqual({
          type: "error",
          value: `Permission denied by configured rules for external_directory: ${fs.realpathSync(outside)}/*`,
        })
        expect(yield* Permission.actions).toEqual(["external_directory"])
        expect(yield* runs).toEqual([])
      }),
    ),
  )

  it.scoped("does not execute after bash denial", () =>
    withFake(() =>
      Effect.gen(function* () {
        yield* Permission.deny("bash")
        const settlement = yield* settle({ command: "rm -rf build" })
        expect(settlement.result).toEqual({
          type: "error",
          value: "Permission denied by configured rules for bash: rm -rf build",
        })
        expect(yield* Permission.actions).toEqual(["bash"])
        expect(yield* runs).toEqual([])
      }),
    ),
  )

  it.scoped("shows the user's correction verbatim", () =>
    withFake(() =>
      Effect.gen(function* () {
        const state = yield* Permission.FakePermissionState
        yield* Ref.set(state.corrected, new Map([["bash", "use make clean instead"]]))
        const settlement = yield* settle({ command: "rm -rf build" })
        expect(settlement.result).toEqual({
          type: "error",
          value:
            "The user rejected permission to use this specific tool call with the following feedback: use make clean instead",
        })
        expect(yield* runs).toEqual([])
      }),
    ),
  )

  it.scoped("reports external command arguments as advisory warnings without enforcing approval", () =>
    withFake(({ root, outside }) =>
      Effect.gen(function* () {
        fs.writeFileSync(path.join(outside, "secret.txt"), "s3cret")
        yield* Permission.deny("external_directory")
        const command = `cat ${outside}/secret.txt; cat "${outside}/missing/x.txt" ${root}/inside.txt`
        const settlement = yield* settle({ command })
        expect(yield* Permission.actions).toEqual(["bash"])
        expect(yield* runs).toHaveLength(1)
        expect(settlement.output?.structured).toEqual({ exit: 0, truncated: false })
        const content = settlement.output!.content
        const real = fs.realpathSync(outside)
        expect(content[1]).toEqual(
          text(
            [
              "Warnings:",
              `- Command argument references external directory ${real}/*. Bash runs with host-user filesystem, process, and network authority; this scan is advisory only.`,
              `- Command argument references external directory ${real}/missing/*. Bash runs with host-user filesystem, process, and network authority; this scan is advisory only.`,
              "",
              "Command exited with code 0.",
            ].join("\n"),
          ),
        )
      }),
    ),
  )

  it.scoped("keeps non-zero exits useful", () =>
    withFake(() =>
      Effect.gen(function* () {
        yield* respond(() => Effect.succeed(result("HEAD full output TAIL", { exitCode: 7 })))
        const settlement = yield* settle({ command: "false" })
        const content = settlement.output!.content
        expect((content[1] as { text: string }).text).toContain("Command exited with code 7")
        expect(settlement.output?.structured).toEqual({ exit: 7, truncated: false })
        expect(content[0]).toEqual(text("HEAD full output TAIL"))
      }),
    ),
  )

  it.scoped("surfaces bounded process-capture truncation", () =>
    withFake(() =>
      Effect.gen(function* () {
        yield* respond(() => Effect.succeed(result("partial", { outputTruncated: true })))
        const settlement = yield* settle({ command: "yes" })
        expect(settlement.output?.structured).toEqual({ exit: 0, truncated: true })
        expect(settlement.output!.content[0]).toEqual(
          text("partial\n\n[output capture truncated at the in-memory safety limit]"),
        )
        expect(settlement.output?.structured).not.toHaveProperty("resource")
        expect(settlement.outputPaths).toBeUndefined()
      }),
    ),
  )

  it.scoped("returns a useful timeout settlement", () =>
    withFake(() =>
      Effect.gen(function* () {
        yield* respond((command) =>
          Effect.fail(new AppProcess.TimeoutError({ command: command.command, timeoutMs: 5000 })),
        )
        const settlement = yield* settle({ command: "sleep 100", timeout: 5000 })
        expect(settlement.output?.structured).toEqual({ timeout: true, truncated: false })
        expect(settlement.output!.content).toEqual([
          text(
            "Command exceeded timeout of 5000 ms. Retry with a larger timeout if the command is expected to take longer.",
          ),
          text("Command timed out before completion."),
        ])
        expect(Duration.toMillis((yield* runs)[0]!.options!.timeout!)).toBe(5000)
      }),
    ),
  )

  it("keeps the not-a-directory message and the constants exact", () => {
    expect(new BashTool.NotDirectoryError({ path: "/tmp/x" }).message).toBe(
      "Working directory is not a directory: /tmp/x",
    )
    expect([BashTool.DEFAULT_TIMEOUT_MS, BashTool.MAX_TIMEOUT_MS, BashTool.MAX_CAPTURE_BYTES]).toEqual([
      120000, 600000, 1048576,
    ])
  })

  it.scoped("other process failures, empty output, shell choice and input limits", () =>
    withFake(({ root }) =>
      Effect.gen(function* () {
        yield* respond((command) =>
          Effect.fail(new AppProcess.AppProcessError({ command: command.command, cause: new Error("spawn ENOENT") })),
        )
        expect((yield* settle({ command: "nope" })).result).toEqual({
          type: "error",
          value: "Unable to execute command: nope: spawn ENOENT",
        })
        // A message naming a timeout is not a timeout: only the typed TimeoutError is.
        yield* respond((command) =>
          Effect.fail(new AppProcess.AppProcessError({ command: command.command, cause: new Error("Timed out") })),
        )
        expect((yield* settle({ command: "nope" })).result).toEqual({
          type: "error",
          value: "Unable to execute command: nope: Timed out",
        })

        yield* respond(() => Effect.succeed(result("")))
        expect((yield* settle({ command: "true" })).output!.content[0]).toEqual(text("(no output)"))

        expect(String((yield* settle({ command: "x", timeout: 600_001 })).result.value)).toMatch(
          /^Invalid tool input: /,
        )
        expect(String((yield* settle({ command: "x", timeout: 0 })).result.value)).toMatch(/^Invalid tool input: /)

        const before = (yield* runs).length
        const escape = yield* settle({ command: "ls", workdir: "../" + path.basename(root) + "-nope" })
        expect(escape.result).toEqual({
          type: "error",
          value:
            "Unable to execute command: ls: a relative path may not leave the current location (an absolute path outside it asks for external_directory)",
        })
        expect((yield* runs).length).toBe(before)
      }),
    ),
  )

  it.scoped("uses the shell of the highest-priority config document that sets it", () =>
    Effect.gen(function* () {
      const { root } = yield* dirs
      const config = Config.layerFromEntries([
        { type: "document", info: { shell: "/bin/first" } },
        { type: "directory", path: root },
        { type: "document", info: { shell: "/bin/bash" } },
        { type: "document", info: {} },
      ])
      yield* Effect.gen(function* () {
        yield* settle({ command: "echo" })
        expect((yield* runs).map((r) => r.shell)).toEqual(["/bin/bash"])
      }).pipe(Effect.provide(environment(root, { process: fakeProcess, config })))
    }),
  )

  it("the advisory token scan unquotes and strips trailing separators from every absolute argument", () => {
    const segment = FastCheck.stringMatching(/^[A-Za-z0-9._-]{1,8}$/)
    const absolute = FastCheck.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join("/")}`)
    const decorated = FastCheck.tuple(
      absolute,
      FastCheck.constantFrom("", '"', "'"),
      FastCheck.constantFrom("", ";", ",", "|", "&&", ";|"),
    )
    FastCheck.assert(
      FastCheck.property(FastCheck.array(decorated, { maxLength: 5 }), segment, (args, word) => {
        // Quotes are removed before the trailing separators, so a quoted token keeps no separator after it.
        const command = [
          word,
          ...args.map(([target, quote, tail]) => `${quote}${target}${quote}${quote === "" ? tail : ""}`),
        ].join(" ")
        expect(BashTool.absoluteArguments(command)).toEqual(args.map(([target]) => target))
      }),
    )
    // Reference order: `'/etc'|` is not unquoted (the quote is not at the end), so it is not an absolute argument.
    expect(BashTool.absoluteArguments("cat '/etc/passwd'| wc")).toEqual([])
  })
})

describe.skipIf(process.platform === "win32")("bash tool through the real AppProcess", () => {
  const real = <A, E, R>(body: (root: string) => Effect.Effect<A, E, R>) =>
    Effect.flatMap(dirs, ({ root }) =>
      body(root).pipe(Effect.provide(environment(root, { process: AppProcess.layer }))),
    )

  it.live("executes a real shell command through AppProcess", () =>
    Effect.scoped(
      real(() =>
        Effect.gen(function* () {
          const settlement = yield* settle({ command: "printf core-bash" })
          expect(settlement.output!.content).toEqual([text("core-bash"), text("Command exited with code 0.")])
          expect(settlement.output!.structured).toEqual({ exit: 0, truncated: false })
          expect(settlement.output!.structured).not.toHaveProperty("output")
        }),
      ),
    ),
  )

  it.live("interleaves stderr, runs in the workdir and reports the real exit code", () =>
    Effect.scoped(
      real((root) =>
        Effect.gen(function* () {
          fs.mkdirSync(path.join(root, "sub"))
          const settlement = yield* settle({ command: "pwd; echo oops >&2; exit 3", workdir: "sub" })
          expect(settlement.output!.content).toEqual([
            text(`${fs.realpathSync(path.join(root, "sub"))}\noops\n`),
            text("Command exited with code 3."),
          ])
          expect(settlement.output!.structured).toEqual({ exit: 3, truncated: false })
        }),
      ),
    ),
  )

  it.live("git status through the tool leaves .git/index as it was, even when the index is stale", () =>
    Effect.scoped(
      real((root) =>
        Effect.gen(function* () {
          const git = (args: string) =>
            execSync(`git -c user.email=t@t -c user.name=t ${args}`, { cwd: root, stdio: "pipe" })
          git("init -q")
          fs.writeFileSync(path.join(root, "a.txt"), "a\n")
          git("add a.txt")
          git("commit -qm one")
          // Same content, new times: git would refresh the index's stat data (a write) without optional locks off.
          const later = new Date(Date.now() + 5000)
          fs.utimesSync(path.join(root, "a.txt"), later, later)
          const before = fs.readFileSync(path.join(root, ".git", "index"))
          const settlement = yield* settle({ command: "git status --short" })
          expect(settlement.output!.structured).toEqual({ exit: 0, truncated: false })
          expect(fs.readFileSync(path.join(root, ".git", "index")).equals(before)).toBe(true)
        }),
      ),
    ),
  )

  it.live("a real timeout is a successful settlement", () =>
    Effect.scoped(
      real(() =>
        Effect.gen(function* () {
          const settlement = yield* settle({ command: "sleep 30", timeout: 200 })
          expect(settlement.output!.structured).toEqual({ timeout: true, truncated: false })
          expect(settlement.output!.content[1]).toEqual(text("Command timed out before completion."))
        }),
      ),
    ),
  )

  it.live("captures exactly 1 MiB of a 50 MB output and says so", () =>
    Effect.scoped(
      real(() =>
        Effect.gen(function* () {
          const settlement = yield* settle({ command: "head -c 52428800 /dev/zero | tr '\\0' a" })
          expect(settlement.output!.structured).toEqual({ exit: 0, truncated: true })
          const first = settlement.output!.content[0] as { text: string }
          expect(first.text.length).toBe(BashTool.MAX_CAPTURE_BYTES + "\n\n".length + BashTool.CAPTURE_NOTICE.length)
          expect(first.text).toBe(`${"a".repeat(BashTool.MAX_CAPTURE_BYTES)}\n\n${BashTool.CAPTURE_NOTICE}`)
        }),
      ),
    ),
  )
})
