/**
 * Scenes for tests of the real bubblewrap sandbox as root and as `nobody`: whether bubblewrap (and `runuser` to
 * nobody) work here, a scene's directories owned by the user the sandbox runs as, and commands run through the real
 * Sandbox layer in a child process of that user (`sandbox-child.ts`, bundled once per run by `bundle-setup.ts`).
 */
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"
import { inject } from "vitest"
import { AppProcess, type Config } from "../../src/index.js"
import { tempDir } from "./location.js"

const works = (command: string, args: ReadonlyArray<string>) =>
  ChildProcess.spawnSync(command, args, { stdio: "ignore" }).status === 0
const BWRAP_PROBE = ["--unshare-all", "--unshare-user", "--disable-userns", "--ro-bind", "/", "/", "true"]

/** True when bubblewrap can create its namespaces here. */
export const bwrapWorks = works("bwrap", BWRAP_PROBE)
/** True when this process is root. */
export const isRoot = process.getuid?.() === 0
/** True when a root runner can run bubblewrap as `nobody` through `runuser`. */
export const nobodyWorks = isRoot && bwrapWorks && works("runuser", ["-u", "nobody", "--", "bwrap", ...BWRAP_PROBE])

/** The uid and gid of `nobody`. */
export const NOBODY = 65534
/** Each case starts the sandbox child one to three times; on a loaded two-core machine that takes a while. */
export const TIMEOUT = 240_000

/** Who runs the sandbox. */
export type User = "root" | "nobody"

/** One command's outcome inside the sandbox. */
export interface Result {
  readonly exit: number
  readonly output: string
  readonly note: string | undefined
}

/** The directories of one scene. */
export interface Scene {
  readonly root: string
  readonly home: string
  readonly tmp: string
  readonly config: string
  /** Hands every directory of the scene to the sandbox's user (call after the scene is set up). */
  readonly own: () => void
}

/** Changes the owner of `entry` and everything below it to nobody. */
export const chownTree = (entry: string): void => {
  fs.lchownSync(entry, NOBODY, NOBODY)
  if (fs.lstatSync(entry).isDirectory()) for (const name of fs.readdirSync(entry)) chownTree(path.join(entry, name))
}

/** The directories of one scene, owned by the user the sandbox runs as once `own` is called. */
export const scene = (user: User, prefix = "toolgate-escape-") =>
  Effect.gen(function* () {
    const root = yield* tempDir(prefix)
    // Not below /tmp, which is private in the sandbox: the home directory must be visible there to be hidden.
    const home = yield* Effect.acquireRelease(
      Effect.sync(() => fs.realpathSync(fs.mkdtempSync(`/var/tmp/${prefix}home-`))),
      (directory) => Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true })),
    )
    const tmp = yield* tempDir(`${prefix}tmp-`)
    const config = yield* tempDir(`${prefix}config-`)
    const own = () => {
      if (user !== "nobody") return
      for (const directory of [root, home, tmp, config]) chownTree(directory)
    }
    return { root, home, tmp, config, own } satisfies Scene
  })

/** support/sandbox-child.ts, bundled from the sources once per run (support/bundle-setup.ts). */
const CHILD = () => path.join(inject("toolgateChildBundle"), "sandbox-child.js")

/**
 * Runs `commands` in the sandbox of `where.root` as `user`, through the child process; with whether the Location's
 * sandbox kept `autoAllow`.
 */
export const sandboxedRun = (
  user: User,
  where: Pick<Scene, "root" | "home" | "tmp" | "config">,
  bash: typeof Config.Bash.Type,
  commands: ReadonlyArray<string>,
) =>
  Effect.gen(function* () {
    const input = JSON.stringify({
      root: where.root,
      home: where.home,
      tmp: where.tmp,
      config: where.config,
      bash,
      commands,
    })
    const node = [process.execPath, CHILD(), input]
    const command: AppProcess.Command =
      user === "root"
        ? { command: node[0]!, args: node.slice(1) }
        : { command: "runuser", args: ["-u", "nobody", "--", ...node] }
    const run = yield* AppProcess.make.run(
      { ...command, cwd: path.join(import.meta.dirname, "..", ".."), env: { HOME: where.home } },
      { timeout: "120 seconds" },
    )
    const text = Buffer.from(run.stdout).toString("utf8").trim().split("\n").at(-1) ?? ""
    const parsed = JSON.parse(text || "{}") as {
      results?: ReadonlyArray<Result>
      autoAllow?: boolean
      error?: string
    }
    if (parsed.results === undefined)
      throw new Error(`sandbox child failed: ${parsed.error ?? Buffer.from(run.stderr).toString("utf8")}`)
    return { results: parsed.results, autoAllow: parsed.autoAllow === true }
  })

/** `sandboxedRun`'s results only. */
export const sandboxed = (
  user: User,
  where: Pick<Scene, "root" | "home" | "tmp" | "config">,
  bash: typeof Config.Bash.Type,
  commands: ReadonlyArray<string>,
) => Effect.map(sandboxedRun(user, where, bash, commands), (run) => run.results)
