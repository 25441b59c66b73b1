/**
 * Cost of `network: "rules"` (EgressProxy), each figure against a baseline measured in the same run (rounds
 * interleaved, medians):
 *   1. per request, keep-alive GETs of a small body from a loopback server: direct, through the proxy as a plain
 *      HTTP proxy, and through one CONNECT tunnel — the whole path (bridge, channel frames, proxy). Target: ≤ 1 ms
 *      added per request.
 *   2. an 8 MiB download, direct and through a tunnel: the throughput ratio. Target: ≥ 0.25× direct.
 *   3. the bridge's start per call: what the bridge adds to `bwrap … /bin/sh -c true`, against what a bare
 *      `node -e 0` adds in the same sandbox (the floor: the bridge is a Node process that then spawns the command).
 *      Target: ≤ 1.5× a bare Node start.
 * Figures 1 and 2 run the bridge outside a sandbox (the network namespace adds nothing to loopback traffic); figure
 * 3 needs bubblewrap. Destinations are allowed without asking (the verdict is taken once per call anyway).
 *
 * Run: npx tsx --conditions=@toolgate/source bench/egress-proxy.ts
 */
import * as ChildProcess from "node:child_process"
import * as http from "node:http"
import type * as net from "node:net"
import type { Duplex } from "node:stream"
import { AppProcess } from "@toolgate/core"
import { EgressProxy } from "@toolgate/core/egress"
import { Sandbox } from "@toolgate/core/sandbox"
import { Effect, Scope, Exit } from "effect"

const ROUNDS = 15
const BATCH = 200
const START_RUNS = 25

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const BIG = Buffer.alloc(8 * 1024 * 1024, 1)
const server = http.createServer((request, response) => {
  if (request.url === "/big") response.end(BIG)
  else response.end("ok\n")
})
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const port = (server.address() as net.AddressInfo).port
const base = `http://127.0.0.1:${port}`

const scope = Effect.runSync(Scope.make())
const egress = await Effect.runPromise(
  Scope.extend(EgressProxy.make({ permission: { assert: () => Effect.void }, caller: { sessionID: "bench" } }), scope),
)

// The bridge without a sandbox: its child prints the proxy address and waits.
const [node, ...bridgeArgs] = egress.argv([
  process.execPath,
  "-e",
  "console.log(process.env.HTTP_PROXY); setInterval(() => {}, 1 << 30)",
])
const bridge = ChildProcess.spawn(node!, bridgeArgs, { stdio: ["ignore", "pipe", "inherit", "pipe"] })
egress.attach(bridge.stdio[3] as Duplex)
const proxy = new URL(
  await new Promise<string>((resolve) =>
    bridge.stdout!.once("data", (chunk: Buffer) => resolve(chunk.toString().trim())),
  ),
)

/** A keep-alive agent whose single connection is a CONNECT tunnel through the proxy. */
class TunnelAgent extends http.Agent {
  override createConnection(
    _options: http.ClientRequestArgs,
    callback?: (error: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    http
      .request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: `127.0.0.1:${port}` })
      .on("connect", (response, socket) =>
        response.statusCode === 200
          ? callback?.(null, socket)
          : callback?.(new Error(`CONNECT ${response.statusCode}`), socket),
      )
      .on("error", (error) => callback?.(error, undefined as never))
      .end()
    return undefined
  }
}

const direct = new http.Agent({ keepAlive: true, maxSockets: 1 })
const viaProxy = new http.Agent({ keepAlive: true, maxSockets: 1 })
const tunnel = new TunnelAgent({ keepAlive: true, maxSockets: 1 })

const get = (options: http.RequestOptions) =>
  new Promise<number>((resolve, reject) => {
    http
      .get(options, (response) => {
        let size = 0
        response.on("data", (chunk: Buffer) => (size += chunk.length))
        response.on("end", () =>
          response.statusCode === 200 ? resolve(size) : reject(new Error(`${response.statusCode}`)),
        )
      })
      .on("error", reject)
  })

const ways = {
  direct: (path: string) => get({ host: "127.0.0.1", port, path, agent: direct }),
  proxy: (path: string) =>
    get({
      host: proxy.hostname,
      port: proxy.port,
      path: `${base}${path}`,
      agent: viaProxy,
      headers: { host: `127.0.0.1:${port}` },
    }),
  tunnel: (path: string) => get({ host: "127.0.0.1", port, path, agent: tunnel }),
} as const

const batch = async (way: keyof typeof ways) => {
  const start = performance.now()
  for (let i = 0; i < BATCH; i++) await ways[way]("/small")
  return ((performance.now() - start) / BATCH) * 1000
}

// 1. per request
for (const way of ["direct", "proxy", "tunnel"] as const) await batch(way)
const perRequest = { direct: [] as Array<number>, proxy: [] as Array<number>, tunnel: [] as Array<number> }
for (let round = 0; round < ROUNDS; round++) {
  for (const way of ["direct", "proxy", "tunnel"] as const) perRequest[way].push(await batch(way))
}
const d = median(perRequest.direct)
for (const way of ["proxy", "tunnel"] as const) {
  const m = median(perRequest[way])
  console.log(
    `1. per request via ${way.padEnd(6)}: direct ${d.toFixed(0)} µs, ${way} ${m.toFixed(0)} µs: ${(m / d).toFixed(2)}× (+${((m - d) / 1000).toFixed(3)} ms; target ≤ +1 ms) ${m - d <= 1000 ? "ok" : "MISSED"}`,
  )
}

// 2. throughput
const download = async (way: "direct" | "tunnel") => {
  const start = performance.now()
  const size = await ways[way]("/big")
  if (size !== BIG.length) throw new Error(`short download: ${size}`)
  return BIG.length / 1024 / 1024 / ((performance.now() - start) / 1000)
}
await download("direct")
await download("tunnel")
const rates = { direct: [] as Array<number>, tunnel: [] as Array<number> }
for (let round = 0; round < 7; round++) {
  rates.direct.push(await download("direct"))
  rates.tunnel.push(await download("tunnel"))
}
const rd = median(rates.direct)
const rt = median(rates.tunnel)
console.log(
  `2. 8 MiB download: direct ${rd.toFixed(0)} MiB/s, tunnel ${rt.toFixed(0)} MiB/s: ${(rt / rd).toFixed(2)}× (target ≥ 0.25×) ${rt / rd >= 0.25 ? "ok" : "MISSED"}`,
)

bridge.kill()
direct.destroy()
viaProxy.destroy()
tunnel.destroy()

// 3. bridge start per call
const bwrapWorks =
  ChildProcess.spawnSync("bwrap", ["--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "true"], {
    stdio: "ignore",
  }).status === 0
if (!bwrapWorks) console.log("3. skipped: bubblewrap cannot create namespaces here")
else {
  const withReadable = (args: ReadonlyArray<string>) => {
    const at = args.indexOf("--tmpfs")
    return [
      ...args.slice(0, at + 2),
      ...egress.readable.flatMap((entry) => ["--ro-bind", entry, entry]),
      ...args.slice(at + 2),
    ]
  }
  const plan = { writable: [], readOnly: [], network: false, cwd: "/" }
  type Variant = "shell" | "node" | "bridge"
  const once = async (variant: Variant) => {
    const shell = ["/bin/sh", "-c", "true"]
    const argv = variant === "shell" ? shell : variant === "node" ? [process.execPath, "-e", "0"] : egress.argv(shell)
    const args = withReadable(Sandbox.bubblewrapArgs(plan, argv))
    const start = performance.now()
    const result = await Effect.runPromise(
      AppProcess.make.run({ command: "bwrap", args, ...(variant === "bridge" ? { channel: egress.attach } : {}) }),
    )
    if (result.exitCode !== 0) throw new Error(`exit ${result.exitCode}: ${Buffer.from(result.stderr).toString()}`)
    return performance.now() - start
  }
  const variants = ["shell", "node", "bridge"] as const
  for (let i = 0; i < 3; i++) for (const variant of variants) await once(variant)
  const times: Record<Variant, Array<number>> = { shell: [], node: [], bridge: [] }
  for (let i = 0; i < START_RUNS; i++) for (const variant of variants) times[variant].push(await once(variant))
  const shell = median(times.shell)
  const nodeStart = median(times.node) - shell
  const added = median(times.bridge) - shell
  console.log(
    `3. bridge start: bwrap sh ${shell.toFixed(1)} ms, + bare node ${nodeStart.toFixed(1)} ms, + bridge ${added.toFixed(1)} ms per call: ${(added / nodeStart).toFixed(2)}× a bare Node start (target ≤ 1.5×) ${added <= 1.5 * nodeStart ? "ok" : "MISSED"}`,
  )
}

await Effect.runPromise(Scope.close(scope, Exit.void))
server.close()
