/**
 * `network: "rules"` end to end with real processes: bubblewrap with its own network namespace, the egress bridge
 * inside it, curl and npm as clients, the real PermissionV2 stack deciding, and loopback servers that record every
 * request, so a refused destination is shown never to have been reached. Run as root and as `nobody`.
 */
import * as ChildProcess from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Queue, Scope } from "effect"
import { AppProcess, EventV2, PermissionV2, WebAddress } from "../src/index.js"
import { EgressProxy } from "../src/entry/egress.js"
import { Sandbox } from "../src/entry/sandbox.js"
import { tempDir } from "./support/location.js"
import {
  AF_UNIX_FILTER,
  freePort,
  holdingServer,
  httpsServer,
  namesToLoopback,
  rawServer,
  registryStub,
  selfSigned,
  unixServer,
  withReadable,
} from "./support/egress.js"
import { loopbackServer, respond } from "./support/loopback-server.js"
import { fixture, withMemoryStack } from "./support/permission-stack.js"

const works = (command: string, args: ReadonlyArray<string>) =>
  ChildProcess.spawnSync(command, args, { stdio: "ignore" }).status === 0
const bwrapWorks = works("bwrap", ["--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"])
const hasCurl = works("curl", ["--version"])
const hasNpm = works("npm", ["--version"])
const hasOpenssl = works("openssl", ["version"])
const isRoot = process.getuid?.() === 0
const nobodyWorks =
  isRoot &&
  bwrapWorks &&
  works("runuser", ["-u", "nobody", "--", "bwrap", "--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "true"])
const ready = bwrapWorks && hasCurl
if (!bwrapWorks) console.warn("egress-proxy: bubblewrap cannot create namespaces here; the sandbox cases are skipped")
if (!hasCurl) console.warn("egress-proxy: curl is not installed; the sandbox cases are skipped")
if (!hasNpm) console.warn("egress-proxy: npm is not installed; the npm install case is skipped")
if (!hasOpenssl) console.warn("egress-proxy: openssl is not installed; the HTTPS case is skipped")
if (!nobodyWorks)
  console.warn("egress-proxy: not root or runuser/bwrap unusable as nobody; the unprivileged cases are skipped")

if (process.arch !== "x64")
  console.warn("egress-proxy: the test's seccomp filter is x86_64 only; the seccomp case is skipped")

const SESSION = "ses_test"
const caller = {
  sessionID: SESSION,
  agent: "test",
  source: { type: "tool" as const, messageID: "msg_egress", callID: "call_egress" },
}
const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString("utf8")
const allow = (resource: string): PermissionV2.Rule => ({ action: "webfetch", resource, effect: "allow" })
const deny = (resource: string): PermissionV2.Rule => ({ action: "webfetch", resource, effect: "deny" })
/** Both resources a loopback destination needs. */
const allowLoopback = (port: number) => [allow(`net:127.0.0.1:${port}`), allow(`private:net:127.0.0.1:${port}`)]

type User = "root" | "nobody"

/**
 * Runs `script` with `/bin/sh` in a bubblewrap sandbox of `root` without network (its own namespace), through the
 * bridge of `egress`, with the real AppProcess carrying the channel on descriptor 3.
 */
const sandboxed = (
  egress: EgressProxy.Interface,
  root: string,
  script: string,
  user: User = "root",
  wrap: (argv: ReadonlyArray<string>) => ReadonlyArray<string> = (argv) => argv,
) =>
  Effect.gen(function* () {
    const args = withReadable(
      Sandbox.bubblewrapArgs(
        { writable: [root], readOnly: [], network: false, cwd: root },
        wrap(egress.argv(["/bin/sh", "-c", script])),
      ),
      egress.readable,
    )
    const command: AppProcess.Command =
      user === "root"
        ? { command: "bwrap", args, cwd: root, channel: egress.attach }
        : { command: "runuser", args: ["-u", "nobody", "--", "bwrap", ...args], cwd: root, channel: egress.attach }
    const result = yield* AppProcess.make.run(command, { combineOutput: true, timeout: "90 seconds" })
    return { exit: result.exitCode, output: text(result.output) }
  })

/** A Location directory the sandbox user can write (owned by `nobody` for the unprivileged runs). */
const location = (user: User) =>
  Effect.tap(tempDir("toolgate-egress-"), (root) =>
    Effect.sync(() => {
      if (user === "nobody") fs.chownSync(root, 65534, 65534)
    }),
  )

/** Answers every ask of the session on the Asked queue with `reply` (and records them). */
const answering = (reply: PermissionV2.Reply, message?: string) =>
  Effect.gen(function* () {
    const permission = yield* PermissionV2.Service
    const events = yield* EventV2.Service
    const queue = yield* events.queue(PermissionV2.Event.Asked)
    const asked: Array<PermissionV2.Request> = []
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          const { data } = yield* Queue.take(queue)
          asked.push(data)
          yield* permission.reply({ requestID: data.id, reply, ...(message === undefined ? {} : { message }) })
        }),
      ),
    )
    return asked
  })

const proxyFor = (permission: PermissionV2.Interface, resolver?: WebAddress.ResolverInterface) =>
  EgressProxy.make({ permission, caller, ...(resolver === undefined ? {} : { resolver }) })

// Each case starts bubblewrap, Node and curl or npm: on a loaded 2-core machine that can take many seconds.
describe.skipIf(!ready)("EgressProxy in a bubblewrap sandbox", { timeout: 90_000 }, () => {
  for (const user of ["root", "nobody"] as const) {
    describe.skipIf(user === "nobody" && !nobodyWorks)(`as ${user}`, () => {
      it.scoped(
        "an allowed host is reached over plain HTTP and through a CONNECT tunnel; the net is otherwise closed",
        () =>
          Effect.gen(function* () {
            const root = yield* location(user)
            const target = yield* loopbackServer(respond("hello from the target\n"))
            yield* withMemoryStack(
              root,
              Effect.gen(function* () {
                const { permission, setRules, asked } = yield* fixture
                yield* setRules(allowLoopback(target.port))
                const egress = yield* proxyFor(permission)
                const run = yield* sandboxed(
                  egress,
                  root,
                  [
                    `curl -sS ${target.base}/plain`,
                    `curl -sS -p ${target.base}/tunnel`,
                    // Without the proxy nothing is reachable: the sandbox's loopback is its own.
                    `curl -sS --noproxy '*' ${target.base}/direct || echo "direct: failed"`,
                    // The channel is not handed on to the command.
                    `[ -e /proc/$$/fd/3 ] && echo "fd 3: open" || echo "fd 3: closed"`,
                  ].join("; "),
                  user,
                )
                const lines = run.output.split("\n")
                expect(lines.slice(0, 2)).toEqual(["hello from the target", "hello from the target"])
                expect(lines).toContain("direct: failed")
                expect(lines).toContain("fd 3: closed")
                expect(target.hits.map((hit) => hit.url)).toEqual(["/plain", "/tunnel"])
                // Hop-by-hop proxy headers are not forwarded; the Host is the target's.
                expect(target.hits[0]!.headers["proxy-connection"]).toBeUndefined()
                expect(target.hits[0]!.headers.host).toBe(`127.0.0.1:${target.port}`)
                expect(asked()).toEqual([])
                expect(yield* egress.decisions).toEqual([
                  { resource: `net:127.0.0.1:${target.port}`, outcome: "allowed", private: true, detail: "allowed" },
                ])
              }),
            )
          }),
      )

      it.scoped("a host nobody allowed is asked; rejected, the client gets 403 and the server never a byte", () =>
        Effect.gen(function* () {
          const root = yield* location(user)
          const allowed = yield* loopbackServer(respond("allowed\n"))
          const other = yield* rawServer
          yield* withMemoryStack(
            root,
            Effect.gen(function* () {
              const { permission, setRules } = yield* fixture
              yield* setRules(allowLoopback(allowed.port))
              const asked = yield* answering("reject")
              const egress = yield* proxyFor(permission)
              const run = yield* sandboxed(
                egress,
                root,
                [
                  `curl -sS ${allowed.base}/`,
                  `curl -sS http://127.0.0.1:${other.port}/secret`,
                  `curl -sS -p http://127.0.0.1:${other.port}/secret || echo "tunnel refused"`,
                ].join("; "),
                user,
              )
              expect(run.output).toContain("allowed\n")
              expect(run.output).toContain(
                `toolgate egress proxy (403): net:127.0.0.1:${other.port} rejected by the user\n`,
              )
              expect(run.output).toContain("tunnel refused")
              expect(other.connections()).toBe(0)
              // Asked once, about the right call; the tunnel attempt reuses the verdict.
              expect(asked.map((request) => request.resources)).toEqual([
                [`net:127.0.0.1:${other.port}`, `private:net:127.0.0.1:${other.port}`],
              ])
              expect(asked[0]!.sessionID).toBe(SESSION)
              expect(asked[0]!.source).toEqual(caller.source)
              expect(asked[0]!.save).toEqual([`net:127.0.0.1:${other.port}`, `private:net:127.0.0.1:${other.port}`])
              // Completed by the reject (a hang here fails the test).
              yield* egress.declined
              expect(EgressProxy.note(yield* egress.decisions)).toContain(
                `net:127.0.0.1:${other.port} (rejected by the user)`,
              )
            }),
          )
        }),
      )
    })
  }

  it.scoped("the command's exit status and death by signal come through the bridge as without it", () =>
    Effect.gen(function* () {
      const root = yield* location("root")
      yield* withMemoryStack(
        root,
        Effect.gen(function* () {
          const { permission } = yield* fixture
          const egress = yield* proxyFor(permission)
          for (const script of ["exit 7", "kill -TERM $$", "exec /nonexistent-command"]) {
            const plain = yield* AppProcess.make.run({
              command: "bwrap",
              args: Sandbox.bubblewrapArgs({ writable: [root], readOnly: [], network: false, cwd: root }, [
                "/bin/sh",
                "-c",
                script,
              ]),
            })
            const bridged = yield* sandboxed(egress, root, script)
            expect([script, bridged.exit]).toEqual([script, plain.exitCode])
          }
        }),
      )
    }),
  )

  it.scoped("a denied host gets 403 with the reason, is never asked and never reached", () =>
    Effect.gen(function* () {
      const root = yield* location("root")
      const other = yield* rawServer
      yield* withMemoryStack(
        root,
        Effect.gen(function* () {
          const { permission, setRules, asked } = yield* fixture
          yield* setRules([allow("*"), deny(`net:127.0.0.1:${other.port}`)])
          const egress = yield* proxyFor(permission)
          const run = yield* sandboxed(
            egress,
            root,
            `curl -sS http://127.0.0.1:${other.port}/; curl -sS -p http://127.0.0.1:${other.port}/ || echo refused`,
          )
          expect(run.output).toContain(
            `toolgate egress proxy (403): net:127.0.0.1:${other.port} denied by the permission rules\n`,
          )
          expect(run.output).toContain("refused")
          expect(other.connections()).toBe(0)
          expect(asked()).toEqual([])
          expect((yield* egress.decisions).map((decision) => decision.outcome)).toEqual(["denied"])
        }),
      )
    }),
  )

  it.scoped(
    "a host name is asked as net:, resolved once, asked as private:, and pinned; an answer lasts the call",
    () =>
      Effect.gen(function* () {
        const root = yield* location("root")
        const target = yield* loopbackServer(respond("named\n"))
        yield* withMemoryStack(
          root,
          Effect.gen(function* () {
            const { permission } = yield* fixture
            const asked = yield* answering("once")
            const egress = yield* proxyFor(permission, namesToLoopback("target.test"))
            const url = `http://TARGET.test.:${target.port}`
            // Three clients at once and a fourth after: one ask for each resource.
            const run = yield* sandboxed(
              egress,
              root,
              `curl -sS ${url}/a & curl -sS -p ${url}/b & curl -sS ${url}/c & wait; curl -sS ${url}/d`,
            )
            expect(run.output.split("named\n").length - 1).toBe(4)
            expect(asked.map((request) => request.resources)).toEqual([
              [`net:target.test:${target.port}`],
              [`private:net:target.test:${target.port}`],
            ])
            expect(asked[1]!.metadata).toEqual(
              expect.objectContaining({ addresses: [{ address: "127.0.0.1", range: "loopback" }] }),
            )
            expect(target.hits.map((hit) => hit.url).sort()).toEqual(["/a", "/b", "/c", "/d"])
            expect(target.hits.find((hit) => hit.url === "/a")!.headers.host).toBe(`target.test:${target.port}`)
          }),
        )
      }),
  )

  it.scoped("bodies of megabytes go both ways intact; one client connection serves several hosts, each decided", () =>
    Effect.gen(function* () {
      const root = yield* location("root")
      const echo = yield* loopbackServer((request, response) => {
        const hash = crypto.createHash("sha256")
        let size = 0
        request.on("data", (chunk: Buffer) => {
          hash.update(chunk)
          size += chunk.length
        })
        request.on("end", () => {
          if (request.url === "/big") {
            response.writeHead(200, { "content-type": "application/octet-stream" })
            response.end(Buffer.alloc(5 * 1024 * 1024, 7))
          } else response.end(`${size} ${hash.digest("hex")}\n`)
        })
      })
      const other = yield* rawServer
      const closed = yield* freePort
      const upload = Buffer.alloc(3 * 1024 * 1024 + 17, 3)
      fs.writeFileSync(path.join(root, "upload.bin"), upload)
      yield* withMemoryStack(
        root,
        Effect.gen(function* () {
          const { permission, setRules } = yield* fixture
          yield* setRules([
            ...allowLoopback(echo.port),
            ...allowLoopback(closed.port),
            deny(`net:127.0.0.1:${other.port}`),
          ])
          const egress = yield* proxyFor(permission)
          const run = yield* sandboxed(
            egress,
            root,
            [
              `curl -sS --data-binary @upload.bin ${echo.base}/upload`,
              `curl -sS -p ${echo.base}/big | sha256sum`,
              // One connection to the proxy, three destinations.
              `curl -sS ${echo.base}/one http://127.0.0.1:${other.port}/two ${echo.base}/three`,
              `curl -sS http://127.0.0.1:${closed.port}/`,
            ].join("; "),
          )
          const sha = (bytes: Buffer) => crypto.createHash("sha256").update(bytes).digest("hex")
          const lines = run.output.split("\n")
          expect(lines[0]).toBe(`${upload.length} ${sha(upload)}`)
          expect(lines[1]).toBe(`${sha(Buffer.alloc(5 * 1024 * 1024, 7))}  -`)
          expect(run.output).toContain(
            `0 ${sha(Buffer.alloc(0))}\ntoolgate egress proxy (403): net:127.0.0.1:${other.port} denied by the permission rules\n0 `,
          )
          expect(run.output).toContain(
            `toolgate egress proxy (502): could not connect to 127.0.0.1:${closed.port}: ECONNREFUSED`,
          )
          expect(echo.hits.map((hit) => hit.url)).toEqual(["/upload", "/big", "/one", "/three"])
          expect(other.connections()).toBe(0)
        }),
      )
    }),
  )

  it.scoped("an always answer is saved like any approval: the next call is not asked", () =>
    Effect.gen(function* () {
      const root = yield* location("root")
      const target = yield* loopbackServer(respond("again\n"))
      yield* withMemoryStack(
        root,
        Effect.gen(function* () {
          const { permission } = yield* fixture
          const asked = yield* answering("always")
          for (let call = 0; call < 2; call++) {
            const run = yield* Effect.scoped(
              Effect.flatMap(proxyFor(permission), (egress) =>
                sandboxed(egress, root, `curl -sS ${target.base}/${call}`),
              ),
            )
            expect(run.output).toBe("again\n")
          }
          expect(asked.length).toBe(1)
          expect(target.hits.length).toBe(2)
        }),
      )
    }),
  )

  it.scoped.skipIf(!hasOpenssl)(
    "HTTPS goes through the tunnel end to end: the client verifies the target's own certificate",
    () =>
      Effect.gen(function* () {
        const root = yield* location("root")
        const { key, cert } = selfSigned(root)
        const target = yield* httpsServer(key, cert)
        yield* withMemoryStack(
          root,
          Effect.gen(function* () {
            const { permission, setRules } = yield* fixture
            yield* setRules([allow(`net:localhost:${target.port}`), allow(`private:net:localhost:${target.port}`)])
            const egress = yield* proxyFor(permission, namesToLoopback("localhost"))
            const run = yield* sandboxed(
              egress,
              root,
              `curl -sS --cacert ${path.join(root, "cert.pem")} https://localhost:${target.port}/tls`,
            )
            expect(run.output).toBe("over tls\n")
            expect(target.urls).toEqual(["/tls"])
          }),
        )
      }),
  )

  it.scoped.skipIf(!hasNpm)(
    "npm install from a loopback registry works with allow rules for its host; another port is asked and, rejected, never reached",
    () =>
      Effect.gen(function* () {
        const root = yield* location("root")
        const registry = yield* registryStub(root)
        const other = yield* rawServer
        yield* withMemoryStack(
          root,
          Effect.gen(function* () {
            const { permission, setRules } = yield* fixture
            yield* setRules(allowLoopback(registry.port))
            const asked = yield* answering("reject")
            const egress = yield* proxyFor(permission)
            const run = yield* sandboxed(
              egress,
              root,
              [
                `npm install --no-audit --no-fund --no-update-notifier --cache /tmp/npm-cache --registry ${registry.base}/ tiny-egress`,
                `node -e 'console.log(require("tiny-egress"))'`,
                `npm view --cache /tmp/npm-cache --registry http://127.0.0.1:${other.port}/ left-pad version || echo "npm view failed"`,
              ].join(" && "),
            )
            expect(run.output).toContain("added 1 package")
            expect(run.output).toContain("tiny egress package\n")
            expect(run.output).toContain("npm view failed")
            expect(fs.readFileSync(path.join(root, "node_modules", "tiny-egress", "index.js"), "utf8")).toContain(
              "tiny egress package",
            )
            expect(registry.hits.map((hit) => hit.url)).toEqual([
              "/tiny-egress",
              "/tiny-egress/-/tiny-egress-1.0.0.tgz",
            ])
            expect(asked.map((request) => request.resources[0])).toEqual([`net:127.0.0.1:${other.port}`])
            expect(other.connections()).toBe(0)
          }),
        )
      }),
  )

  it.scoped("the bridge creates no AF_UNIX socket, so a sandbox may forbid them", () =>
    Effect.gen(function* () {
      const root = yield* location("root")
      const target = yield* loopbackServer(respond("traced\n"))
      const trace = path.join(root, "trace")
      // A client that creates inet sockets only (curl also opens AF_UNIX ones of its own).
      fs.writeFileSync(
        path.join(root, "client.cjs"),
        `const http = require("node:http")
const proxy = new URL(process.env.HTTPS_PROXY)
const request = http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: "127.0.0.1:${target.port}" })
request.on("connect", (_, socket) => {
  let text = ""
  socket.on("data", (chunk) => (text += chunk))
  socket.on("end", () => process.stdout.write(text.split("\\r\\n\\r\\n")[1]))
  socket.write("GET /traced HTTP/1.0\\r\\nHost: target\\r\\nConnection: close\\r\\n\\r\\n")
})
request.end()
`,
      )
      yield* withMemoryStack(
        root,
        Effect.gen(function* () {
          const { permission, setRules } = yield* fixture
          yield* setRules(allowLoopback(target.port))
          const egress = yield* proxyFor(permission)
          const run = yield* sandboxed(egress, root, `node ${path.join(root, "client.cjs")}`, "root", (argv) => [
            "strace",
            "-f",
            "-qq",
            "-e",
            "trace=socket,socketpair",
            "-o",
            trace,
            ...argv,
          ])
          expect(run.output).toBe("traced\n")
          expect(target.hits.map((hit) => hit.url)).toEqual(["/traced"])
          const calls = fs.readFileSync(trace, "utf8").split("\n").filter(Boolean)
          // The bridge's listener and the client's connection to it.
          expect(calls.filter((line) => line.includes("socket(AF_INET")).length).toBeGreaterThanOrEqual(2)
          expect(calls.filter((line) => /AF_UNIX|AF_LOCAL|socketpair/.test(line))).toEqual([])
        }),
      )
    }),
  )

  it.scoped.skipIf(process.arch !== "x64")(
    "with a seccomp filter that forbids creating AF_UNIX sockets, egress still works and unix sockets do not",
    () =>
      Effect.gen(function* () {
        const root = yield* location("root")
        const target = yield* loopbackServer(respond("filtered\n"))
        // A host service on a unix socket inside the writable Location: what the filter must keep out of reach.
        const socketPath = path.join(root, "service.sock")
        const service = yield* unixServer(socketPath)
        const filter = path.join(root, "af-unix.bpf")
        fs.writeFileSync(filter, AF_UNIX_FILTER)
        yield* withMemoryStack(
          root,
          Effect.gen(function* () {
            const { permission, setRules } = yield* fixture
            yield* setRules(allowLoopback(target.port))
            const egress = yield* proxyFor(permission)
            const args = withReadable(
              Sandbox.bubblewrapArgs(
                { writable: [root], readOnly: [], network: false, cwd: root },
                egress.argv([
                  "/bin/sh",
                  "-c",
                  [
                    `curl -sS -p ${target.base}/tunnel`,
                    `curl -sS ${target.base}/plain`,
                    `node -e 'require("net").connect(process.argv[1]).on("error", (e) => console.log("unix:", e.code))' ${socketPath}`,
                  ].join("; "),
                ]),
              ),
              egress.readable,
            )
            // The filter reaches bwrap as descriptor 9, next to the channel on 3.
            const result = yield* AppProcess.make.run(
              {
                command: "/bin/sh",
                args: ["-c", 'exec "$@" 9<"$0"', filter, "bwrap", "--seccomp", "9", ...args],
                cwd: root,
                channel: egress.attach,
              },
              { combineOutput: true, timeout: "90 seconds" },
            )
            expect(text(result.output)).toBe("filtered\nfiltered\nunix: EPERM\n")
            expect(target.hits.map((hit) => hit.url)).toEqual(["/tunnel", "/plain"])
            expect(service.connections()).toBe(0)
          }),
        )
      }),
  )

  it.scoped(
    "closing the proxy's scope ends an open tunnel and withdraws a pending ask",
    () =>
      Effect.gen(function* () {
        const root = yield* location("root")
        const held = yield* holdingServer
        const other = yield* rawServer
        yield* withMemoryStack(
          root,
          Effect.gen(function* () {
            const { permission, setRules, events } = yield* fixture
            yield* setRules(allowLoopback(held.port))
            const queue = yield* events.queue(PermissionV2.Event.Asked)
            const scope = yield* Scope.make()
            const egress = yield* Scope.extend(proxyFor(permission), scope)
            const run = yield* Effect.fork(
              sandboxed(
                egress,
                root,
                `curl -sS -p --max-time 60 http://127.0.0.1:${held.port}/ & curl -sS --max-time 60 http://127.0.0.1:${other.port}/ & wait`,
              ),
            )
            // The tunnel is open end to end: the client's request came through it to the target.
            yield* Deferred.await(held.connected)
            const ask = yield* Queue.take(queue)
            expect(ask.data.resources[0]).toBe(`net:127.0.0.1:${other.port}`)
            expect((yield* permission.list()).length).toBe(1)
            yield* Scope.close(scope, Exit.void)
            // The target sees its connection closed, the ask is gone, and the command ends.
            yield* Deferred.await(held.closed)
            expect(yield* permission.list()).toEqual([])
            const result = yield* Fiber.join(run)
            expect(result.output).toMatch(/curl: \((52|56)\)/)
            expect(held.received()).toMatch(/^GET \/ HTTP\/1\.1\r\n/)
            expect(other.connections()).toBe(0)
          }),
        )
      }),
  )
})
