import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, FastCheck, Fiber, Layer, Queue } from "effect"
import { AppProcess, ChildEnvironment, Config, EventV2, Global, Project } from "../src/index.js"
import { Sandbox } from "../src/entry/sandbox.js"
import { locationLayer, tempDir } from "./support/location.js"
import { liveWithMarker } from "./support/process-tree.js"

const bwrapWorks = (() => {
  const probe = ChildProcess.spawnSync(
    "bwrap",
    ["--die-with-parent", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"],
    { stdio: "ignore" },
  )
  return probe.status === 0
})()
const hasCurl = ChildProcess.spawnSync("curl", ["--version"], { stdio: "ignore" }).status === 0
if (!hasCurl) console.warn("sandbox: curl is not installed; the network cases check node only")
if (!bwrapWorks)
  console.warn("sandbox: bubblewrap is missing or cannot create namespaces here; the bwrap cases are skipped")

const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString("utf8")

const sandboxLayer = (
  root: string,
  bash: typeof Config.Bash.Type,
  options: Sandbox.Options = {},
): Layer.Layer<
  Sandbox.Service | AppProcess.Service | EventV2.Service,
  Sandbox.UnavailableError | Config.InvalidError
> => {
  const location = locationLayer(root)
  const base = Layer.mergeAll(
    location,
    EventV2.layer.pipe(Layer.provide(location)),
    Global.layerWith({ tmp: path.join(root, ".tmp-toolgate") }),
    Config.layerFromEntries([{ type: "document", info: { bash } }]),
    AppProcess.layer,
  )
  return Sandbox.layerWith(options).pipe(Layer.provideMerge(base))
}

/** Runs `command` in `root` through the sandbox and the real process spawner. */
const run = (command: string, root: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sandbox = yield* Sandbox.Service
      const prepared = yield* sandbox.prepare({ command, cwd: root, shell: "/bin/sh" })
      const result = yield* (yield* AppProcess.Service).run(prepared, { combineOutput: true, timeout: "20 seconds" })
      const output = text(result.output)
      const note = yield* prepared.note(output)
      expect(note).toBe(sandbox.diagnose(output))
      return { exit: result.exitCode, output, note }
    }),
  )

describe("Sandbox.bubblewrapArgs", () => {
  it("mounts the root read-only first, then a private /tmp, the writable binds and the read-only paths", () => {
    const args = Sandbox.bubblewrapArgs(
      { writable: ["/work/p", "/tmp/t"], readOnly: ["/work/p/.git"], network: false, cwd: "/work/p/src" },
      ["/bin/sh", "-c", "ls"],
    )
    expect(args).toEqual([
      "--die-with-parent",
      "--unshare-all",
      "--unshare-user",
      "--disable-userns",
      "--cap-drop",
      "ALL",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--tmpfs",
      "/tmp",
      "--bind",
      "/work/p",
      "/work/p",
      "--bind",
      "/tmp/t",
      "/tmp/t",
      "--ro-bind",
      "/work/p/.git",
      "/work/p/.git",
      "--chdir",
      "/work/p/src",
      "--",
      "/bin/sh",
      "-c",
      "ls",
    ])
  })

  it("orders the tree parents first, then pins, protected paths, hidden files and the read-only remounts", () => {
    const args = Sandbox.bubblewrapArgs(
      {
        writable: ["/h/u/p", "/h/u/p/deep/cache"],
        readOnly: ["/h/u/p/deep"],
        network: false,
        cwd: "/h/u/p",
        readable: ["/opt/bridge"],
        protected: ["/h/u/p/.git", "/h/u/p/.claude/skills"],
        pinned: ["/h/u/p/.claude"],
        hidden: { files: ["/h/u/p/.env"], directories: ["/h/u", "/h/u/.ssh"] },
        emptyFile: "/e/empty",
        user: { uid: 65534, gid: 65534 },
        seccompFd: 4,
      },
      ["true"],
    )
    const after = args.slice(args.indexOf("/tmp") + 1)
    expect(args.slice(0, args.indexOf("--ro-bind"))).toEqual([
      "--die-with-parent",
      "--unshare-all",
      "--unshare-user",
      "--disable-userns",
      "--cap-drop",
      "ALL",
      "--uid",
      "65534",
      "--gid",
      "65534",
      "--seccomp",
      "4",
    ])
    expect(after).toEqual([
      ...["--ro-bind", "/opt/bridge", "/opt/bridge"],
      // The hidden home first (depth 2), so the Location below it is bound back in.
      ...["--tmpfs", "/h/u"],
      ...["--bind", "/h/u/p", "/h/u/p"],
      ...["--tmpfs", "/h/u/.ssh"],
      ...["--ro-bind", "/h/u/p/deep", "/h/u/p/deep"],
      ...["--bind", "/h/u/p/deep/cache", "/h/u/p/deep/cache"],
      ...["--bind", "/h/u/p/.claude", "/h/u/p/.claude"],
      ...["--ro-bind", "/h/u/p/.git", "/h/u/p/.git"],
      ...["--ro-bind", "/h/u/p/.claude/skills", "/h/u/p/.claude/skills"],
      ...["--ro-bind", "/e/empty", "/h/u/p/.env"],
      ...["--remount-ro", "/h/u"],
      ...["--remount-ro", "/h/u/.ssh"],
      ...["--chdir", "/h/u/p", "--", "true"],
    ])
  })

  it("at one path, hidden wins over read-only, which wins over writable", () => {
    const args = Sandbox.bubblewrapArgs(
      {
        writable: ["/p/x"],
        readOnly: ["/p/x"],
        network: false,
        cwd: "/p",
        hidden: { files: [], directories: ["/p/x"] },
      },
      ["true"],
    )
    const tree = args.slice(args.indexOf("/tmp") + 1, args.indexOf("--remount-ro"))
    expect(tree).toEqual(["--bind", "/p/x", "/p/x", "--ro-bind", "/p/x", "/p/x", "--tmpfs", "/p/x"])
  })

  it("shares the network only when enabled", () => {
    const plan = { writable: [], readOnly: [], cwd: "/" }
    expect(Sandbox.bubblewrapArgs({ ...plan, network: true }, ["true"])).toContain("--share-net")
    expect(Sandbox.bubblewrapArgs({ ...plan, network: false }, ["true"])).not.toContain("--share-net")
  })
})

describe("ChildEnvironment", () => {
  const parent = {
    PATH: "/usr/bin",
    HOME: "/home/u",
    OPENAI_API_KEY: "sk-1",
    GITHUB_TOKEN: "ghp",
    db_password: "pw",
    AWS_REGION: "eu",
    MY_PUBLIC_KEY_ID: "kid",
  }

  it("inherit passes everything and applies `set`", () => {
    expect(ChildEnvironment.overrides(ChildEnvironment.settings("inherit", "scrub"), parent)).toEqual({})
    expect(
      ChildEnvironment.overrides(ChildEnvironment.settings({ mode: "inherit", set: { CI: "1" } }, "inherit"), parent),
    ).toEqual({ CI: "1" })
  })

  it("scrub removes secret-looking names in any letter case, keeps allow-listed ones and applies `set`", () => {
    const overrides = ChildEnvironment.overrides(
      ChildEnvironment.settings(
        { mode: "scrub", allow: ["MY_PUBLIC_KEY_ID"], scrub: ["HOME"], set: { GITHUB_TOKEN: "fake" } },
        "inherit",
      ),
      parent,
    )
    expect(overrides).toEqual({
      OPENAI_API_KEY: undefined,
      GITHUB_TOKEN: "fake",
      db_password: undefined,
      AWS_REGION: undefined,
      HOME: undefined,
    })
  })

  it("scrubs every name that contains a secret word, whatever surrounds it", () => {
    const word = FastCheck.constantFrom("key", "Secret", "TOKEN", "password", "Credential", "auth")
    const part = FastCheck.stringMatching(/^[A-Za-z0-9_]{0,8}$/)
    FastCheck.assert(
      FastCheck.property(part, word, part, (before, secret, after) => {
        const name = `${before}${secret}${after}`
        const overrides = ChildEnvironment.overrides(ChildEnvironment.settings("scrub", "inherit"), { [name]: "v" })
        return name in overrides && overrides[name] === undefined
      }),
    )
  })
})

describe("Sandbox.layer", () => {
  it.scoped("defaults to mode none, which runs the shell directly and inherits the environment", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const sandbox = yield* Effect.provide(Sandbox.Service, sandboxLayer(root, {}))
      expect(sandbox.mode).toBe("none")
      const prepared = yield* sandbox.prepare({ command: "ls", cwd: root, shell: "/bin/sh" })
      expect(prepared).toMatchObject({ command: "ls", cwd: root, shell: "/bin/sh", env: {} })
      expect(prepared.args).toBeUndefined()
      expect(yield* prepared.note("Read-only file system")).toBeUndefined()
      expect(sandbox.diagnose("Read-only file system")).toBeUndefined()
    }),
  )

  it.scoped("auto_allow holds only while the bubblewrap sandbox is active", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const none = yield* Effect.provide(
        Sandbox.Service,
        sandboxLayer(root, { sandbox: { mode: "none", auto_allow: true } }),
      )
      expect(none.autoAllow).toBe(false)
      const fallback = yield* Effect.provide(
        Sandbox.Service,
        sandboxLayer(
          root,
          { sandbox: { mode: "bubblewrap", auto_allow: true, fail_if_unavailable: false } },
          { executable: "/nonexistent/bwrap" },
        ),
      )
      expect(fallback.autoAllow).toBe(false)
      if (bwrapWorks) {
        const on = yield* Effect.provide(
          Sandbox.Service,
          sandboxLayer(root, { sandbox: { mode: "bubblewrap", auto_allow: true } }),
        )
        expect(on.autoAllow).toBe(true)
        const off = yield* Effect.provide(Sandbox.Service, sandboxLayer(root, { sandbox: { mode: "bubblewrap" } }))
        expect(off.autoAllow).toBe(false)
      }
    }),
  )

  it.scoped("fails the build when bubblewrap is unavailable and fail_if_unavailable is on (the default)", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const exit = yield* Effect.exit(
        Layer.build(sandboxLayer(root, { sandbox: { mode: "bubblewrap" } }, { executable: "/nonexistent/bwrap" })),
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
        expect(error).toBeInstanceOf(Sandbox.UnavailableError)
        expect((error as Sandbox.UnavailableError).message).toMatch(/^The bubblewrap sandbox is not available: /)
      }
    }),
  )

  it.scoped("falls back to none with one warning event when fail_if_unavailable is off", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const location = locationLayer(root)
      // Built in the test's scope: the bus (and its queue) must outlive the layer build below.
      const bus = Context.get(yield* Layer.build(EventV2.layer.pipe(Layer.provide(location))), EventV2.Service)
      const events = yield* bus.queue()
      const layer = Sandbox.layerWith({ executable: "/nonexistent/bwrap" }).pipe(
        Layer.provide(
          Layer.mergeAll(
            location,
            Layer.succeed(EventV2.Service, bus),
            Global.layerWith({ tmp: path.join(root, ".tmp") }),
            Config.layerFromEntries([
              { type: "document", info: { bash: { sandbox: { mode: "bubblewrap", fail_if_unavailable: false } } } },
            ]),
            AppProcess.layer,
          ),
        ),
      )
      const sandbox = yield* Effect.provide(Sandbox.Service, layer)
      expect(sandbox.mode).toBe("none")
      const event = yield* Queue.take(events)
      expect(event.type).toBe("sandbox.unavailable")
      expect(event.data).toMatchObject({ mode: "bubblewrap" })
      expect(yield* Queue.size(events)).toBe(0)
    }),
  )
})

describe.runIf(bwrapWorks)("Sandbox in bubblewrap mode (real processes)", () => {
  it.scoped(
    "a write outside the Location fails, nothing appears there, and the result says the sandbox blocked it",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir()
        const outside = yield* tempDir("toolgate-outside-")
        const result = yield* run(`echo pwned > ${outside}/f; echo done`, root).pipe(
          Effect.provide(sandboxLayer(root, { sandbox: { mode: "bubblewrap" } })),
        )
        expect(result.output).toContain("done")
        expect(fs.existsSync(path.join(outside, "f"))).toBe(false)
        expect(fs.readdirSync(outside)).toEqual([])
        // The outside directory lives under /tmp, which is a private tmpfs in the sandbox: the write went nowhere.
        const home = yield* run(`echo pwned > ${path.join("/", "usr", "toolgate-escape")}`, root).pipe(
          Effect.provide(sandboxLayer(root, { sandbox: { mode: "bubblewrap" } })),
        )
        expect(home.exit).not.toBe(0)
        expect(fs.existsSync("/usr/toolgate-escape")).toBe(false)
        expect(home.note).toMatch(/^The sandbox blocked a write/)
      }),
  )

  it.scoped("writes inside the Location and the project's toolgate tmp directory work", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const result = yield* run(
        `echo hello > inside.txt && mkdir -p sub && echo x > sub/y && cat inside.txt`,
        root,
      ).pipe(Effect.provide(sandboxLayer(root, { sandbox: { mode: "bubblewrap" } })))
      expect(result).toMatchObject({ exit: 0, output: "hello\n" })
      expect(fs.readFileSync(path.join(root, "inside.txt"), "utf8")).toBe("hello\n")
      expect(fs.readFileSync(path.join(root, "sub", "y"), "utf8")).toBe("x\n")
      const own = path.join(root, ".tmp-toolgate", Project.storageKey("global", root))
      const tmp = yield* run(`echo t > ${own}/scratch && echo ok`, root).pipe(
        Effect.provide(sandboxLayer(root, { sandbox: { mode: "bubblewrap" } })),
      )
      expect(tmp.exit).toBe(0)
      expect(fs.readFileSync(path.join(own, "scratch"), "utf8")).toBe("t\n")
    }),
  )

  it.scoped("configured writable paths become writable; .git and the toolgate configuration stay read-only", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const extra = yield* tempDir("toolgate-extra-")
      fs.mkdirSync(path.join(root, ".git"))
      fs.writeFileSync(path.join(root, ".git", "config"), "[core]\n")
      fs.writeFileSync(path.join(root, "toolgate.json"), "{}")
      const layer = sandboxLayer(root, { sandbox: { mode: "bubblewrap", writable: [extra] } })
      const git = yield* run(`echo '[remote "origin"]' >> .git/config`, root).pipe(Effect.provide(layer))
      expect(git.exit).not.toBe(0)
      expect(git.note).toMatch(/^The sandbox blocked a write/)
      expect(fs.readFileSync(path.join(root, ".git", "config"), "utf8")).toBe("[core]\n")
      const config = yield* run(`echo '{"permissions":[]}' > toolgate.json`, root).pipe(Effect.provide(layer))
      expect(config.exit).not.toBe(0)
      expect(fs.readFileSync(path.join(root, "toolgate.json"), "utf8")).toBe("{}")
      const allowed = yield* run(`echo ok > ${extra}/file`, root).pipe(Effect.provide(layer))
      expect(allowed.exit).toBe(0)
      expect(fs.readFileSync(path.join(extra, "file"), "utf8")).toBe("ok\n")
    }),
  )

  it.scoped("connections fail with the network off and work with it on (curl and node to a loopback server)", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const server = yield* Effect.acquireRelease(
        Effect.async<http.Server>((resume) => {
          const s = http.createServer((_, response) => response.end("from-host"))
          s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
        }),
        (s) => Effect.async<void>((resume) => void s.close(() => resume(Effect.void))),
      )
      const port = (server.address() as { port: number }).port
      const url = `http://127.0.0.1:${port}/`
      const curl = `curl -sS --max-time 5 ${url}`
      const node = `node -e "fetch('${url}').then(r => r.text()).then(t => console.log('node:' + t), e => { console.log(String(e.cause ?? e)); process.exit(3) })"`

      const off = sandboxLayer(root, { sandbox: { mode: "bubblewrap" } })
      if (hasCurl) {
        const curlOff = yield* run(curl, root).pipe(Effect.provide(off))
        expect(curlOff.exit).not.toBe(0)
        expect(curlOff.output).not.toContain("from-host")
        expect(curlOff.note).toMatch(/no network access/)
      }
      const nodeOff = yield* run(node, root).pipe(Effect.provide(off))
      expect(nodeOff.exit).toBe(3)
      expect(nodeOff.output).not.toContain("from-host")
      expect(nodeOff.note).toMatch(/no network access/)

      const on = sandboxLayer(root, { sandbox: { mode: "bubblewrap", network: true } })
      if (hasCurl) expect((yield* run(curl, root).pipe(Effect.provide(on))).output).toBe("from-host")
      expect((yield* run(node, root).pipe(Effect.provide(on))).output).toBe("node:from-host\n")
    }),
  )

  it.scoped("scrubs secret variables by default in the sandbox, keeps allow-listed ones and applies set", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      process.env.TOOLGATE_TEST_API_TOKEN = "tok-secret-value"
      process.env.TOOLGATE_TEST_PUBLIC_KEY_ID = "visible-key-id"
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          delete process.env.TOOLGATE_TEST_API_TOKEN
          delete process.env.TOOLGATE_TEST_PUBLIC_KEY_ID
        }),
      )
      const layer = sandboxLayer(root, {
        sandbox: { mode: "bubblewrap" },
        env: { allow: ["TOOLGATE_TEST_PUBLIC_KEY_ID"], set: { TOOLGATE_TEST_SET: "explicit" } },
      })
      const result = yield* run("env", root).pipe(Effect.provide(layer))
      expect(result.exit).toBe(0)
      expect(result.output).not.toContain("tok-secret-value")
      expect(result.output).not.toContain("TOOLGATE_TEST_API_TOKEN")
      expect(result.output).toContain("TOOLGATE_TEST_PUBLIC_KEY_ID=visible-key-id")
      expect(result.output).toContain("TOOLGATE_TEST_SET=explicit")
      expect(result.output).toContain("PATH=")
      // An explicit inherit keeps everything, inside the sandbox too.
      const inherit = yield* run("env", root).pipe(
        Effect.provide(sandboxLayer(root, { sandbox: { mode: "bubblewrap" }, env: "inherit" })),
      )
      expect(inherit.output).toContain("TOOLGATE_TEST_API_TOKEN=tok-secret-value")
    }),
  )

  it.live("interrupting the call kills the whole sandboxed process tree", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const root = yield* tempDir()
        const marker = `toolgate-sandbox-marker-${process.pid}-${Date.now()}`
        const command = `sh -c 'sleep 1000; echo ${marker}' & sh -c 'sleep 1001; echo ${marker}' & echo started; wait`
        const layer = sandboxLayer(root, { sandbox: { mode: "bubblewrap" } })
        const live = () => liveWithMarker(marker)
        const fiber = yield* Effect.fork(run(command, root).pipe(Effect.provide(layer)))
        for (let i = 0; i < 400 && live().length < 2; i++) yield* Effect.sleep("25 millis")
        expect(live().length).toBeGreaterThanOrEqual(2)
        yield* Fiber.interrupt(fiber)
        expect(live()).toEqual([])
      }),
    ),
  )
})
