/**
 * `bash.sandbox.allow_unix_sockets` with real bubblewrap and real socket servers: the named socket is reachable (even
 * where its directory is private in the sandbox), every other socket the runner has bound stays unreachable, and a
 * configuration that would expose the host's abstract sockets is refused. Also the placeholder registry that keeps
 * missing protected paths from being created.
 */
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { AppProcess, Config, EventV2, Global } from "../src/index.js"
import { Sandbox } from "../src/entry/sandbox.js"
import * as Protect from "../src/world/sandbox/internal/protect.js"
import * as Sockets from "../src/world/sandbox/internal/sockets.js"
import { locationLayer, tempDir } from "./support/location.js"

const bwrapWorks =
  ChildProcess.spawnSync(
    "bwrap",
    ["--unshare-all", "--unshare-user", "--disable-userns", "--ro-bind", "/", "/", "true"],
    {
      stdio: "ignore",
    },
  ).status === 0
if (!bwrapWorks)
  console.warn("sandbox-sockets: bubblewrap 0.8+ cannot create namespaces here; the bwrap cases are skipped")

const sandboxLayer = (root: string, bash: typeof Config.Bash.Type) => {
  const location = locationLayer(root)
  return Sandbox.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        location,
        EventV2.layer.pipe(Layer.provide(location)),
        Global.layerWith({ tmp: path.join(root, ".tmp-toolgate") }),
        Config.layerFromEntries([{ type: "document", path: "/etc/toolgate.json", info: { bash } }]),
        AppProcess.layer,
      ),
    ),
  )
}

const server = (socketPath: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: net.Server; readonly connections: () => number }>((resume) => {
      let connections = 0
      const instance = net.createServer((socket) => {
        connections += 1
        socket.end(`pong from ${path.basename(socketPath)}\n`)
      })
      instance.listen(socketPath, () => resume(Effect.succeed({ server: instance, connections: () => connections })))
    }),
    ({ server: instance }) => Effect.async<void>((resume) => void instance.close(() => resume(Effect.void))),
  )

const client = (target: string) =>
  `node -e "require('net').connect('${target}').on('data', d => process.stdout.write(String(d))).on('error', e => console.log(e.code))"`

describe.runIf(bwrapWorks)("allow_unix_sockets", () => {
  it.scoped("reaches the named socket, even under the private /tmp, and no other socket the runner has bound", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-sockets-")
      const elsewhere = yield* tempDir("toolgate-sockets-private-")
      const allowed = path.join(elsewhere, "agent.sock")
      const visible = path.join(root, "db.sock")
      const allowedServer = yield* server(allowed)
      const visibleServer = yield* server(visible)
      const run = (command: string) =>
        Effect.scoped(
          Effect.gen(function* () {
            const sandbox = yield* Sandbox.Service
            const prepared = yield* sandbox.prepare({ command, cwd: root, shell: "/bin/sh" })
            const result = yield* AppProcess.make.run(prepared, { combineOutput: true, timeout: "30 seconds" })
            return Buffer.from(result.output ?? new Uint8Array()).toString("utf8")
          }),
        ).pipe(Effect.provide(sandboxLayer(root, { sandbox: { mode: "bubblewrap", allow_unix_sockets: [allowed] } })))
      expect(yield* run(client(allowed))).toBe("pong from agent.sock\n")
      expect(allowedServer.connections()).toBe(1)
      // Covered with the read-only empty file: not a socket, and not writable.
      expect(yield* run(client(visible))).toMatch(/^(EACCES|ECONNREFUSED)\n$/)
      expect(visibleServer.connections()).toBe(0)
      // The covered socket is still a socket on the host.
      expect(fs.lstatSync(visible).isSocket()).toBe(true)
    }),
  )

  it.scoped("refuses allowed sockets with network: true, naming the file and the field", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-sockets-")
      const exit = yield* Effect.exit(
        Layer.build(
          sandboxLayer(root, { sandbox: { mode: "bubblewrap", network: true, allow_unix_sockets: ["/run/x.sock"] } }),
        ),
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
        expect(exit.cause.error).toBeInstanceOf(Config.InvalidError)
        expect(exit.cause.error.message).toMatch(
          /^Invalid config in \/etc\/toolgate\.json at bash\.sandbox\.allow_unix_sockets: /,
        )
      }
    }),
  )
})

describe("Sockets", () => {
  it("reads pathname sockets from /proc/net/unix text, spaces included, abstract and unnamed ones left out", () => {
    const text = [
      "Num       RefCount Protocol Flags    Type St Inode Path",
      "0000000000000000: 00000002 00000000 00010000 0001 01 11111 /run/a b.sock",
      "0000000000000000: 00000002 00000000 00010000 0001 01 22222 @abstract",
      "0000000000000000: 00000003 00000000 00000000 0001 03 33333",
      "0000000000000000: 00000002 00000000 00010000 0005 01 44444 /tmp/x.sock",
    ].join("\n")
    expect(Sockets.parseNetUnix(text)).toEqual(["/run/a b.sock", "/tmp/x.sock"])
  })

  it("reads mount points from mountinfo text, unescaping octal escapes", () => {
    const text = "36 35 98:0 /mnt1 /var/run/docker\\040x.sock rw - ext3 /dev/root rw\n"
    expect(Sockets.parseMountPoints(text)).toEqual(["/var/run/docker x.sock"])
  })
})

describe("Protect.registry", () => {
  it.scoped("creates missing placeholders once for concurrent calls and removes them after the last", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-protect-")
      const registry = Protect.registry()
      const targets = Protect.targets([root], [], [root])
      expect(targets.map((target) => path.relative(root, target.path)).sort()).toEqual(
        [".agents/skills", ".claude/skills", ".git", ".toolgate", "toolgate.json", "toolgate.jsonc"].sort(),
      )
      const first = registry.acquire(targets)
      const second = registry.acquire(targets)
      expect(first.protection.pinned.map((entry) => path.relative(root, entry)).sort()).toEqual([".agents", ".claude"])
      expect(fs.statSync(path.join(root, "toolgate.json")).isDirectory()).toBe(true)
      first.release()
      expect(fs.existsSync(path.join(root, "toolgate.json"))).toBe(true)
      second.release()
      expect(fs.readdirSync(root)).toEqual([])
    }),
  )

  it.scoped("leaves an existing path alone, and a placeholder someone filled stays with its content", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-protect-")
      fs.writeFileSync(path.join(root, "toolgate.json"), "{}")
      const registry = Protect.registry()
      const held = registry.acquire(Protect.targets([root], [], [root]))
      fs.writeFileSync(path.join(root, ".toolgate", "agents.md"), "mine")
      held.release()
      expect(fs.readFileSync(path.join(root, "toolgate.json"), "utf8")).toBe("{}")
      expect(fs.readFileSync(path.join(root, ".toolgate", "agents.md"), "utf8")).toBe("mine")
      expect(fs.readdirSync(root).sort()).toEqual([".toolgate", "toolgate.json"])
    }),
  )

  it.scoped("sweeps what a killed process left: empty toolgate.json, toolgate.jsonc and .git directories only", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("toolgate-protect-")
      for (const name of ["toolgate.json", "toolgate.jsonc", ".git", ".toolgate"]) fs.mkdirSync(path.join(root, name))
      fs.mkdirSync(path.join(root, "kept"))
      fs.writeFileSync(path.join(root, "kept", "toolgate.json"), "{}")
      Protect.sweep([root, path.join(root, "kept")])
      expect(fs.readdirSync(root).sort()).toEqual([".toolgate", "kept"])
      expect(fs.readFileSync(path.join(root, "kept", "toolgate.json"), "utf8")).toBe("{}")
      fs.mkdirSync(path.join(root, ".git"))
      fs.writeFileSync(path.join(root, ".git", "HEAD"), "ref: refs/heads/main\n")
      Protect.sweep([root])
      expect(fs.existsSync(path.join(root, ".git", "HEAD"))).toBe(true)
    }),
  )

  it("protects only what lies inside a writable bind, including the wholesale roots there", () => {
    const targets = Protect.targets(["/p", "/p/sub"], ["/p/sub/.git-store", "/elsewhere/config"], ["/p/sub"])
    expect(targets.map((target) => target.path)).toEqual([
      ...Protect.CHAIN_ENTRIES.map((entry) => path.join("/p/sub", entry)),
      "/p/sub/.git-store",
    ])
    expect(targets.every((target) => target.base === "/p/sub")).toBe(true)
  })
})
