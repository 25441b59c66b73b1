/**
 * A whole Location as an embedder builds it (`Core.layer`: discovery on, real PermissionV2 with the built-in agents,
 * a SQLite file under a temp data directory), with every permission ask recorded and answered by `answer` (default:
 * reject with the message "no", so the model sees a correction and nothing is approved). Warnings logged while the
 * Location is built or used are collected too.
 *
 * The user's configuration directory is `XDG_CONFIG_HOME`; call `isolateUserConfig` at the top of a test file so a
 * developer's own `~/.config/toolgate` never takes part.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer, Logger, Queue } from "effect"
import { Core } from "../../src/entry/testing.js"
import { AgentV2, Config, EventV2, Location, PermissionV2, SessionV2, ToolRegistry } from "../../src/index.js"

/** Points `XDG_CONFIG_HOME` at a fresh empty directory for this test file; returns the toolgate config dir. */
export const isolateUserConfig = (): string => {
  const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-xdg-")))
  process.env.XDG_CONFIG_HOME = home
  return path.join(home, "toolgate")
}

/** Writes `files` (relative path → content) below `root`, creating folders. */
export const write = (root: string, files: Record<string, string>) => {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
  }
}

/** `git init` with an origin remote and one commit, in `directory`. */
export const gitRepository = (directory: string, origin = "https://example.com/team/project.git") => {
  const git = (...args: Array<string>) =>
    execFileSync("git", args, {
      cwd: directory,
      stdio: "pipe",
      env: {
        ...process.env,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_AUTHOR_NAME: "t",
        GIT_AUTHOR_EMAIL: "t@example.com",
        GIT_COMMITTER_NAME: "t",
        GIT_COMMITTER_EMAIL: "t@example.com",
      },
    })
  fs.mkdirSync(directory, { recursive: true })
  git("init", "-q")
  git("remote", "add", "origin", origin)
  fs.writeFileSync(path.join(directory, "README.md"), "readme\n")
  git("add", "README.md")
  git("commit", "-q", "-m", "first")
}

/** What a Location's asks and warnings were. */
export interface Observed {
  readonly asks: Array<PermissionV2.Request>
  readonly warnings: Array<string>
  answer: (request: PermissionV2.Request) => { readonly reply: PermissionV2.Reply; readonly message?: string }
}

/** A fresh observation log that rejects every ask with "no". */
export const observed = (): Observed => ({
  asks: [],
  warnings: [],
  answer: () => ({ reply: "reject", message: "no" }),
})

const responder = (log: Observed) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const events = yield* EventV2.Service
      const permission = yield* PermissionV2.Service
      const queue = yield* events.queue(PermissionV2.Event.Asked)
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.flatMap(Queue.take(queue), (envelope) => {
            const request = envelope.data
            log.asks.push(request)
            return Effect.ignore(permission.reply({ requestID: request.id, ...log.answer(request) }))
          }),
        ),
      )
    }),
  )

/** A logger that keeps warning messages in `log.warnings`. */
export const warningLogger = (log: Observed) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") {
        log.warnings.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
      }
    }),
  )

/** The whole Location on `directory` (discovery on), data in `data` (SQLite file), asks answered from `log`. */
export const location = (options: { readonly directory: string; readonly data: string; readonly log: Observed }) =>
  responder(options.log).pipe(
    Layer.provideMerge(Core.layer({ directory: options.directory, data: options.data })),
    Layer.provide(warningLogger(options.log)),
  )

/** Settles one tool call in a new session of `agent` (default `build`). */
export const settle = (name: string, input: unknown, agent = "build") =>
  Effect.gen(function* () {
    const session = yield* (yield* SessionV2.Service).create({ agent })
    const turn = yield* (yield* ToolRegistry.Service).materialize([])
    return yield* turn.settle({
      sessionID: session.id,
      agent,
      assistantMessageID: "msg_trust",
      call: { id: `call_${name}`, name, input },
    })
  })

/** What a fresh build of the Location sees: the agents, the configuration entries and the project id. */
export const rebuild = (options: { readonly directory: string; readonly data: string }) =>
  Effect.gen(function* () {
    const agents = yield* (yield* AgentV2.Service).all()
    const entries = yield* (yield* Config.Service).entries()
    const project = (yield* Location.Service).project
    return { agents, entries, project }
  }).pipe(Effect.provide(location({ ...options, log: observed() })), Effect.scoped)

/** The model text of a settlement's result. */
export const text = (settled: { readonly result: unknown }): string => JSON.stringify(settled.result)
