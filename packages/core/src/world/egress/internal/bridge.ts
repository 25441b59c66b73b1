/**
 * The egress bridge: the program that runs first inside a `network: "rules"` sandbox. It listens on
 * `127.0.0.1:<free port>` in the sandbox's own network namespace, carries every accepted connection to toolgate's
 * egress proxy over file descriptor 3 (one end of a socket pair the sandbox inherited, so no socket is created or
 * connected to outside the sandbox), and runs the command (its arguments) as its child with `HTTP_PROXY`,
 * `HTTPS_PROXY`, `ALL_PROXY` (and their lower-case forms) pointing at that port and `NO_PROXY` removed. It exits
 * with the command's status and forwards the usual termination signals to it.
 *
 * Usage: `node bridge.js COMMAND [ARGUMENT…]`. Dependency-free, so a plain Node starts it. See docs/egress.md.
 *
 * @since 0.3.0
 */
import * as childProcess from "node:child_process"
import * as net from "node:net"
import * as os from "node:os"
import { link, Mux } from "./mux.js"

/** The descriptor of the inherited channel. */
const CHANNEL_FD = 3
/** Variables that point clients at the bridge. */
const PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]
/** Variables that would let clients bypass it (removed). */
const BYPASS_VARIABLES = ["NO_PROXY", "no_proxy"]
const FORWARDED_SIGNALS: ReadonlyArray<NodeJS.Signals> = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"]

const fail = (message: string, code: number): never => {
  process.stderr.write(`toolgate egress bridge: ${message}\n`)
  process.exit(code)
}

const command = process.argv.slice(2)
if (command.length === 0) fail("no command given", 2)

let channel: net.Socket
try {
  channel = new net.Socket({ fd: CHANNEL_FD, readable: true, writable: true })
} catch (error) {
  fail(`no channel on file descriptor ${CHANNEL_FD} (${(error as Error).message})`, 2)
}
const mux = new Mux(channel!, { side: "bridge" })

const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => link(socket, mux.open()))
server.on("error", (error) => fail(`cannot listen: ${error.message}`, 2))

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as net.AddressInfo
  const proxy = `http://127.0.0.1:${port}`
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of PROXY_VARIABLES) env[name] = proxy
  for (const name of BYPASS_VARIABLES) delete env[name]

  const child = childProcess.spawn(command[0]!, command.slice(1), { stdio: "inherit", env })
  const forward = (signal: NodeJS.Signals) => () => {
    child.kill(signal)
  }
  const handlers = FORWARDED_SIGNALS.map((signal) => [signal, forward(signal)] as const)
  for (const [signal, handler] of handlers) process.on(signal, handler)

  child.once("error", (error: NodeJS.ErrnoException) =>
    fail(`cannot run ${command[0]}: ${error.message}`, error.code === "ENOENT" ? 127 : 126),
  )
  child.once("exit", (code, signal) => {
    server.close()
    mux.close()
    for (const [name, handler] of handlers) process.off(name, handler)
    if (signal !== null) {
      // The same death as the command's, so the caller sees the signal (128 + n) as without the bridge.
      process.kill(process.pid, signal)
      // A signal Node ignores (SIGPIPE) does not end the bridge: exit with the shell's code for it instead.
      setImmediate(() => process.exit(128 + (os.constants.signals[signal] ?? 0)))
      return
    }
    process.exit(code ?? 1)
  })
})
