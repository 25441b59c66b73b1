/**
 * The other side of the ledger (docs/shell.md): a gate that asks for everything is safe and useless. Over a corpus
 * of everyday agent commands (`support/everyday-commands.txt`: builds, tests, git, searches, viewing, small edits),
 * `PermissionExplain` plans each one on a real git project under the built-in `build` agent and the reference
 * rules, and the share that would ask (or be refused) is printed and held under a committed bound.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import {
  AgentV2,
  BashTool,
  Config,
  Database,
  EventV2,
  Global,
  Location,
  LocationMutation,
  PermissionExplain,
  PermissionSaved,
  PermissionV2,
  ProtectedPath,
  SessionV2,
  ShellCommand,
} from "../../src/index.js"
import { tempDir } from "../support/location.js"
import { gitRepository, write } from "../support/trust-policy.js"

/**
 * The share of the corpus that asks under the reference rules may not pass this (a fraction): the share before the
 * gate's tables failed closed (7 of 337, 2.1%) plus one percentage point.
 */
const BOUND = 0.03

const CORPUS = fs
  .readFileSync(path.join(import.meta.dirname, "..", "support", "everyday-commands.txt"), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "" && !line.startsWith("#"))

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
}

const explainer = (project: string, base: string) =>
  Effect.gen(function* () {
    const place = Layer.mergeAll(
      Location.layer({ directory: project }).pipe(Layer.orDie),
      Global.layerWith({
        data: path.join(base, "data"),
        config: path.join(base, "config"),
        tmp: path.join(base, "tmp"),
        home: path.join(base, "home"),
      }),
      Config.layerEmpty,
      NodeContext.layer,
    ).pipe(Layer.provideMerge(Database.layerMemory))
    const stack = PermissionV2.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(EventV2.layer, AgentV2.layer, SessionV2.layer, PermissionSaved.layer)),
      Layer.provideMerge(place),
    )
    const context = yield* Layer.build(
      PermissionExplain.layer.pipe(
        Layer.provide(
          Layer.mergeAll(
            ShellCommand.layer,
            BashTool.layerPlan.pipe(Layer.provide(LocationMutation.layer)),
            ProtectedPath.layer,
          ),
        ),
        Layer.provideMerge(stack),
      ),
    )
    return Context.get(context, PermissionExplain.Service)
  })

describe.skipIf(process.platform === "win32")("everyday commands under the reference rules", () => {
  it.scopedLive(`the share that asks stays under ${BOUND * 100}%`, () =>
    Effect.gen(function* () {
      const base = yield* tempDir("toolgate-everyday-")
      const project = path.join(base, "project")
      gitRepository(project)
      write(project, {
        "package.json": JSON.stringify({ name: "p", version: "1.0.0", scripts: { test: "true" } }),
        "src/index.ts": "export const x = 1\n",
        "src/old.ts": "export {}\n",
        "build.log": "ok\n",
        ".gitignore": "node_modules\n",
      })
      // A project as an agent meets it: a main branch with history, a feature branch, a stash entry, a dirty file.
      const git = (...args: Array<string>) => execFileSync("git", args, { cwd: project, stdio: "pipe", env: GIT_ENV })
      git("branch", "-M", "main")
      git("add", "-A")
      git("commit", "-q", "-m", "second")
      git("checkout", "-q", "-b", "feature")
      write(project, { "src/feature.ts": "export const y = 2\n" })
      git("add", "-A")
      git("commit", "-q", "-m", "feature")
      git("checkout", "-q", "main")
      write(project, { "README.md": "stashed\n" })
      git("stash", "-q")
      write(project, { "src/index.ts": "export const x = 2\n" })
      fs.mkdirSync(path.join(base, "home"))
      const explain = yield* explainer(project, base)
      const asking: Array<string> = []
      for (const command of CORPUS) {
        const trace = yield* explain.explain({ agent: "build", action: "bash", command })
        if (trace.effect !== "allow") {
          const why = (trace.groups ?? [])
            .filter((group) => group.effect !== "allow")
            .map(
              (group) =>
                `${group.action} ${group.resources
                  .filter((r) => r.effect !== "allow")
                  .map((r) => r.resource)
                  .join(", ")}`,
            )
          asking.push(`${command}  →  ${why.join("; ")}`)
        }
      }
      const share = asking.length / CORPUS.length
      console.log(
        `everyday commands: ${asking.length} of ${CORPUS.length} ask under the reference rules (${(share * 100).toFixed(1)}%)\n${asking.join("\n")}`,
      )
      expect(share).toBeLessThanOrEqual(BOUND)
    }),
  )
})
