/**
 * Fixtures of the egress proxy tests: loopback servers that record what reached them (TCP, unix socket, HTTPS, an
 * npm registry stub), a free port, a resolver for test names, the read-only binds the sandbox adds for the bridge,
 * and a seccomp program that forbids creating AF_UNIX sockets.
 */
import * as ChildProcess from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as https from "node:https"
import * as net from "node:net"
import * as path from "node:path"
import { Deferred, Effect, Exit } from "effect"
import { WebAddress } from "../../src/index.js"
import { type Handler, loopbackServer } from "./loopback-server.js"

/** `args` with `readable` bound read-only right after the private /tmp (before the writable binds), as integrated. */
export const withReadable = (args: ReadonlyArray<string>, readable: ReadonlyArray<string>): ReadonlyArray<string> => {
  const at = args.findIndex((arg, index) => arg === "--tmpfs" && args[index + 1] === "/tmp")
  if (at === -1) throw new Error("no private /tmp in the bubblewrap arguments")
  return [...args.slice(0, at + 2), ...readable.flatMap((entry) => ["--ro-bind", entry, entry]), ...args.slice(at + 2)]
}

/** Resolves each of `names` to 127.0.0.1 and nothing else. */
export const namesToLoopback = (...names: ReadonlyArray<string>): WebAddress.ResolverInterface => ({
  resolve: (hostname) =>
    names.includes(hostname)
      ? Effect.succeed([{ address: "127.0.0.1", family: 4 as const }])
      : Effect.fail(new WebAddress.ResolveError({ hostname, detail: "ENOTFOUND" })),
})

/** A TCP server that records connections and never answers: proof that nothing reached it. */
export const rawServer = Effect.acquireRelease(
  Effect.async<{ readonly port: number; readonly connections: () => number; readonly server: net.Server }>((resume) => {
    let count = 0
    const server = net.createServer((socket) => {
      count++
      socket.destroy()
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({ port: (server.address() as net.AddressInfo).port, connections: () => count, server })),
    )
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void))),
)

/**
 * A TCP server that keeps its connections open and reads everything sent to it: `connected` completes when the
 * first bytes arrive (a tunnel open end to end, the client's request through it), `received` is what arrived, and
 * `closed` completes when a connection ends. It must read: Node reports a peer's end only once the bytes before it
 * were consumed, so a server that never reads never sees its connection close.
 */
export const holdingServer = Effect.gen(function* () {
  const connected = yield* Deferred.make<void>()
  const closed = yield* Deferred.make<void>()
  const sockets = new Set<net.Socket>()
  const chunks: Array<Buffer> = []
  const server = yield* Effect.acquireRelease(
    Effect.async<net.Server>((resume) => {
      const instance = net.createServer((socket) => {
        sockets.add(socket)
        socket.on("error", () => undefined)
        socket.on("data", (chunk: Buffer) => {
          chunks.push(chunk)
          Deferred.unsafeDone(connected, Exit.void)
        })
        socket.once("close", () => Deferred.unsafeDone(closed, Exit.void))
      })
      instance.listen(0, "127.0.0.1", () => resume(Effect.succeed(instance)))
    }),
    (instance) =>
      Effect.async<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        instance.close(() => resume(Effect.void))
      }),
  )
  return {
    port: (server.address() as net.AddressInfo).port,
    connected,
    closed,
    received: () => Buffer.concat(chunks).toString("latin1"),
  }
})

/** A self-signed certificate for `localhost` written into `directory`. */
export const selfSigned = (directory: string) => {
  const key = path.join(directory, "key.pem")
  const cert = path.join(directory, "cert.pem")
  const made = ChildProcess.spawnSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost",
    ],
    { stdio: "pipe" },
  )
  if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`)
  return { key: fs.readFileSync(key), cert: fs.readFileSync(cert) }
}

/** An HTTPS server on 127.0.0.1 that answers `over tls` and records the paths. */
export const httpsServer = (key: Buffer, cert: Buffer) =>
  Effect.acquireRelease(
    Effect.async<{ readonly port: number; readonly urls: Array<string>; readonly server: https.Server }>((resume) => {
      const urls: Array<string> = []
      const server = https.createServer({ key, cert }, (request, response) => {
        urls.push(request.url ?? "")
        response.end("over tls\n")
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ port: (server.address() as net.AddressInfo).port, urls, server })),
      )
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      }),
  )

/**
 * A registry stub on loopback serving one package, `tiny-egress@1.0.0`: its packument and a tarball built here
 * (with its sha512 integrity), so npm verifies what it installs.
 */
export const registryStub = (directory: string) =>
  Effect.gen(function* () {
    const source = path.join(directory, ".registry", "package")
    fs.mkdirSync(source, { recursive: true })
    fs.writeFileSync(
      path.join(source, "package.json"),
      JSON.stringify({ name: "tiny-egress", version: "1.0.0", main: "index.js" }),
    )
    fs.writeFileSync(path.join(source, "index.js"), `module.exports = "tiny egress package"\n`)
    const tarball = path.join(directory, ".registry", "tiny-egress-1.0.0.tgz")
    const packed = ChildProcess.spawnSync("tar", ["-czf", tarball, "-C", path.dirname(source), "package"])
    if (packed.status !== 0) throw new Error(`tar failed: ${packed.stderr}`)
    const bytes = fs.readFileSync(tarball)
    fs.rmSync(path.join(directory, ".registry"), { recursive: true })
    let base = ""
    const handler: Handler = (request, response) => {
      if (request.url === "/tiny-egress") {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(
          JSON.stringify({
            name: "tiny-egress",
            "dist-tags": { latest: "1.0.0" },
            versions: {
              "1.0.0": {
                name: "tiny-egress",
                version: "1.0.0",
                main: "index.js",
                dist: {
                  tarball: `${base}/tiny-egress/-/tiny-egress-1.0.0.tgz`,
                  integrity: `sha512-${crypto.createHash("sha512").update(bytes).digest("base64")}`,
                  shasum: crypto.createHash("sha1").update(bytes).digest("hex"),
                },
              },
            },
          }),
        )
      } else if (request.url === "/tiny-egress/-/tiny-egress-1.0.0.tgz") {
        response.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length })
        response.end(bytes)
      } else {
        response.writeHead(404)
        response.end()
      }
    }
    const server = yield* loopbackServer(handler)
    base = server.base
    return server
  })

/** A loopback port nothing listens on (bound once, then released). */
export const freePort = Effect.async<{ readonly port: number }>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed({ port })))
  })
})

/** A unix-socket server that counts connections. */
export const unixServer = (socketPath: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly connections: () => number; readonly server: net.Server }>((resume) => {
      let count = 0
      const server = net.createServer((socket) => {
        count++
        socket.destroy()
      })
      server.listen(socketPath, () => resume(Effect.succeed({ connections: () => count, server })))
    }),
    ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void))),
  )

/**
 * A classic BPF seccomp program (x86_64) that fails `socket(AF_UNIX, …)` with EPERM and allows everything else —
 * the rule a hardened sandbox adds; here only to show that the bridge needs no unix socket of its own.
 */
export const AF_UNIX_FILTER = (() => {
  const LD_ABS = 0x20
  const JEQ = 0x15
  const RET = 0x06
  const program: ReadonlyArray<readonly [number, number, number, number]> = [
    [LD_ABS, 0, 0, 4], // arch
    [JEQ, 0, 5, 0xc000003e], // AUDIT_ARCH_X86_64, else allow
    [LD_ABS, 0, 0, 0], // syscall number
    [JEQ, 0, 3, 41], // socket, else allow
    [LD_ABS, 0, 0, 16], // low word of the first argument (the family)
    [JEQ, 0, 1, 1], // AF_UNIX
    [RET, 0, 0, 0x00050000 | 1], // SECCOMP_RET_ERRNO | EPERM
    [RET, 0, 0, 0x7fff0000], // SECCOMP_RET_ALLOW
  ]
  const bytes = Buffer.alloc(program.length * 8)
  program.forEach(([code, jt, jf, k], index) => {
    bytes.writeUInt16LE(code, index * 8)
    bytes.writeUInt8(jt, index * 8 + 2)
    bytes.writeUInt8(jf, index * 8 + 3)
    bytes.writeUInt32LE(k, index * 8 + 4)
  })
  return bytes
})()
