/**
 * Saved approvals are exactly as broad as the user saw (docs/trust/approvals.md): literal resources stay literal,
 * `global` approvals are filed per directory, a repository cannot borrow another project's identity through files
 * in `.git`, and every request says what `always` will save and where. Real SQLite files, real temp directories,
 * real git repositories.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, FastCheck, Fiber, Layer, Queue, Schema } from "effect"
import {
  Database,
  EventV2,
  Location,
  PermissionSaved,
  PermissionV2,
  Project,
  SessionV2,
  Wildcard,
} from "../../src/index.js"
import { tempDir } from "../support/location.js"
import { agentControl, buildStack } from "../support/permission-stack.js"

const env = (() => {
  const copy: NodeJS.ProcessEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }
  for (const name of ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"]) delete copy[name]
  return copy
})()

const git = (cwd: string, ...args: Array<string>): string =>
  execFileSync(
    "git",
    ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", ...args],
    { cwd, env, encoding: "utf8" },
  ).trim()

/** A repository with one commit whose content is `content` (so two repositories get different root commits). */
const repository = (dir: string, content: string, origin?: string) => {
  fs.mkdirSync(dir, { recursive: true })
  git(dir, "init", "-q")
  fs.writeFileSync(path.join(dir, "a.txt"), content)
  git(dir, "add", "a.txt")
  git(dir, "commit", "-q", "-m", content)
  if (origin !== undefined) git(dir, "remote", "add", "origin", origin)
  return dir
}

/** One SQLite file shared by every stack of a test, as separate processes would share `<data>/toolgate.db`. */
const sharedFile = Effect.gen(function* () {
  const data = yield* tempDir()
  return Layer.succeedContext(yield* Layer.build(Database.layerFile(path.join(data, "toolgate.db"))))
})

let sessions = 0

/** A permission stack on `directory` with its own session (agent `test` with `rules`) and an Asked waiter. */
const stackAt = (directory: string, database: Layer.Layer<Database.Client>, rules: ReadonlyArray<PermissionV2.Rule>) =>
  Effect.gen(function* () {
    const context = yield* buildStack(directory, database)
    const sessionID = `ses_t${++sessions}`
    const f = yield* Effect.provide(
      Effect.gen(function* () {
        const permission = yield* PermissionV2.Service
        const events = yield* EventV2.Service
        const setRules = yield* agentControl
        yield* setRules("test", rules)
        yield* (yield* SessionV2.Service).create({ id: sessionID, agent: "test" })
        const asked: Array<PermissionV2.Request> = []
        yield* events.listen((envelope) => void asked.push(envelope.data), PermissionV2.Event.Asked)
        const queue = yield* events.queue(PermissionV2.Event.Asked)
        const waitForRequest = (input: Omit<PermissionV2.AssertInput, "sessionID">) =>
          Effect.gen(function* () {
            const fiber = yield* Effect.fork(permission.assert({ ...input, sessionID }))
            for (;;) {
              const envelope = yield* Queue.take(queue)
              if (envelope.data.id === input.id) break
            }
            return fiber
          })
        const ask = (input: Omit<PermissionV2.AssertInput, "sessionID">) =>
          Effect.orDie(permission.ask({ ...input, sessionID }))
        return { permission, waitForRequest, ask, asked: () => asked }
      }),
      context,
    )
    return { context, f, location: Context.get(context, Location.Service) }
  })

type Stack = Effect.Effect.Success<ReturnType<typeof stackAt>>["f"]

/** Asserts (it must ask) and answers `always`; returns the request that was shown. */
const approveAlways = (f: Stack, input: Omit<PermissionV2.AssertInput, "sessionID">) =>
  Effect.gen(function* () {
    const fiber = yield* f.waitForRequest(input)
    const request = (yield* f.permission.get(input.id!))!
    yield* Effect.orDie(f.permission.reply({ requestID: input.id!, reply: "always" }))
    yield* Effect.orDie(Fiber.join(fiber))
    return request
  })

describe("literal saved approvals", () => {
  it.scoped("`always` on `du -sh *` saves that command only: `du -sh ; rm -f ../x` asks again", () =>
    Effect.gen(function* () {
      const database = yield* sharedFile
      const dir = yield* tempDir()
      const { f } = yield* stackAt(dir, database, [])
      const command = "du -sh *"
      const shown = yield* approveAlways(f, {
        id: "per_du",
        action: "bash",
        resources: [command],
        save: [Wildcard.literal(command)],
      })
      expect(shown.always?.entries).toEqual([{ pattern: Wildcard.literal(command), text: command, literal: true }])
      // the row on disk is the escaped literal
      const rows = yield* Effect.orDie(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ resource: string }>`SELECT resource FROM permission`),
      ).pipe(Effect.provide(database))
      expect(rows.map((row) => row.resource)).toEqual(["du -sh \u0000*"])
      // the same command is allowed without an ask
      expect((yield* f.ask({ id: "per_du2", action: "bash", resources: [command] })).effect).toBe("allow")
      // anything else that the wildcard reading would have covered asks
      for (const [i, other] of ["du -sh ; rm -f ../x", "du -sh", "du -sh /etc", "du -sh x; curl evil"].entries()) {
        expect((yield* f.ask({ id: `per_o${i}`, action: "bash", resources: [other] })).effect).toBe("ask")
      }
    }),
  )

  it.scoped("a saved prefix pattern (`git commit *` with a literal prefix) keeps its wildcard tail", () =>
    Effect.gen(function* () {
      const database = yield* sharedFile
      const { f } = yield* stackAt(yield* tempDir(), database, [])
      const prefix = Wildcard.literal("git commit") + " *"
      const shown = yield* approveAlways(f, {
        id: "per_git",
        action: "bash",
        resources: ["git commit -m x"],
        save: [prefix],
      })
      expect(shown.always?.entries).toEqual([{ pattern: prefix, text: "git commit *", literal: false }])
      const ask = (id: string, resource: string) =>
        Effect.map(f.ask({ id, action: "bash", resources: [resource] }), (r) => r.effect)
      expect(yield* ask("per_g1", "git commit --amend")).toBe("allow")
      expect(yield* ask("per_g2", "git commit")).toBe("allow")
      expect(yield* ask("per_g3", "git push")).toBe("ask")
    }),
  )

  it.scoped("an external directory whose name holds `*` is saved literally, then `*`", () =>
    Effect.gen(function* () {
      const database = yield* sharedFile
      const { f } = yield* stackAt(yield* tempDir(), database, [])
      const save = Wildcard.literal("/srv/a*/") + "*"
      yield* approveAlways(f, {
        id: "per_ext",
        action: "external_directory",
        resources: ["/srv/a*/*"],
        save: [save],
      })
      const ask = (id: string, resource: string) =>
        Effect.map(f.ask({ id, action: "external_directory", resources: [resource] }), (r) => r.effect)
      expect(yield* ask("per_e1", "/srv/a*/*")).toBe("allow")
      expect(yield* ask("per_e2", "/srv/a*/sub/*")).toBe("allow")
      expect(yield* ask("per_e3", "/srv/abc/*")).toBe("ask")
      expect(yield* ask("per_e4", "/srv/a/../etc/*")).toBe("ask")
    }),
  )
})

describe("literal saved approvals: property", () => {
  const unit = FastCheck.constantFrom(..."ab */?;&|$()`'\"\\\n-.~", "\u0000")
  const commandText = FastCheck.array(unit, { minLength: 1, maxLength: 16 }).map((units) => units.join(""))
  it("an allow saved as Wildcard.literal(t) allows t and asks for every other text", () => {
    FastCheck.assert(
      FastCheck.property(commandText, commandText, (saved, other) => {
        const rules: PermissionV2.Ruleset = [{ action: "bash", resource: Wildcard.literal(saved), effect: "allow" }]
        expect(PermissionV2.evaluate("bash", saved, [], rules).effect).toBe("allow")
        const same = other.replaceAll("\\", "/") === saved.replaceAll("\\", "/")
        expect(PermissionV2.evaluate("bash", other, [], rules).effect).toBe(same ? "allow" : "ask")
        for (const extended of [`${saved} ; rm -f ../x`, `${saved}x`, ` ${saved}`]) {
          expect(PermissionV2.evaluate("bash", extended, [], rules).effect).toBe("ask")
        }
      }),
      { numRuns: 2000 },
    )
  })
})

describe("global approvals are per directory", () => {
  it.scoped("`always` on edit `*` in one non-git directory asks again in another, and in its subdirectory", () =>
    Effect.gen(function* () {
      const database = yield* sharedFile
      const one = yield* tempDir()
      const two = yield* tempDir()
      fs.mkdirSync(path.join(one, "sub"))
      const a = yield* stackAt(one, database, [])
      const shown = yield* approveAlways(a.f, {
        id: "per_edit",
        action: "edit",
        resources: ["notes.txt"],
        save: ["*"],
      })
      expect(shown.always?.scope).toEqual({ kind: "directory", projectID: "global", directory: one })
      expect(PermissionV2.describeAlways(shown.always).join("\n")).toContain(`for the directory ${one} only`)
      expect((yield* a.f.ask({ id: "per_a2", action: "edit", resources: ["x.ts"] })).effect).toBe("allow")
      for (const directory of [two, path.join(one, "sub")]) {
        const other = yield* stackAt(directory, database, [])
        expect(other.location.project.id).toBe("global")
        const result = yield* other.f.ask({ id: "per_b", action: "edit", resources: ["x.ts"] })
        expect(result.effect).toBe("ask")
      }
      // on disk: one row, filed under the first directory
      const saved = yield* Effect.provide(
        Effect.flatMap(PermissionSaved.Service, (store) => store.list()),
        PermissionSaved.layer.pipe(Layer.provide(database)),
      )
      expect(saved.map((row) => [row.projectID, row.directory, row.action, row.resource])).toEqual([
        ["global", one, "edit", "*"],
      ])
    }),
  )

  it.scoped("rows saved before the per-directory rule (directory '') no longer apply to any non-git directory", () =>
    Effect.gen(function* () {
      const database = yield* sharedFile
      const dir = yield* tempDir()
      const { f } = yield* stackAt(dir, database, [])
      yield* Effect.provide(
        Effect.flatMap(PermissionSaved.Service, (store) =>
          store.add({ projectID: "global", action: "edit", resources: ["*"] }),
        ),
        PermissionSaved.layer.pipe(Layer.provide(database)),
      )
      expect((yield* f.ask({ id: "per_l", action: "edit", resources: ["x"] })).effect).toBe("ask")
    }),
  )

  it.scoped("Locations of one git repository still share the project's approvals; the prompt names the project", () =>
    Effect.gen(function* () {
      const database = yield* sharedFile
      const root = yield* tempDir()
      const repo = repository(path.join(root, "r"), "one")
      fs.mkdirSync(path.join(repo, "sub"))
      const a = yield* stackAt(repo, database, [])
      const shown = yield* approveAlways(a.f, { id: "per_p", action: "edit", resources: ["a"], save: ["*"] })
      const id = a.location.project.id
      expect(shown.always?.scope).toEqual({ kind: "project", projectID: id, directory: repo })
      expect(PermissionV2.describeAlways(shown.always)[0]).toBe(
        `always: saves edit for project ${id} (${repo}, all its directories):`,
      )
      const b = yield* stackAt(path.join(repo, "sub"), database, [])
      expect((yield* b.f.ask({ id: "per_q", action: "edit", resources: ["x"] })).effect).toBe("allow")
    }),
  )
})

describe("project identity cannot be borrowed through .git", () => {
  /** Repository A with an origin and a saved `always` for edit `*`; returns A's id and the shared database. */
  const projectA = Effect.gen(function* () {
    const database = yield* sharedFile
    const root = yield* tempDir()
    const a = repository(path.join(root, "a"), "project a", "git@github.com:Org/A.git")
    const stack = yield* stackAt(a, database, [])
    yield* approveAlways(stack.f, { id: "per_a", action: "edit", resources: ["x"], save: ["*"] })
    return { database, root, a, id: stack.location.project.id }
  })

  const editEffect = (directory: string, database: Layer.Layer<Database.Client>) =>
    Effect.gen(function* () {
      const stack = yield* stackAt(directory, database, [])
      const result = yield* stack.f.ask({ id: "per_b", action: "edit", resources: ["x"] })
      return { effect: result.effect, id: stack.location.project.id }
    })

  it.scoped("writing A's origin URL into B's .git/config does not give B A's id or approvals", () =>
    Effect.gen(function* () {
      const { database, root, id } = yield* projectA
      const b = repository(path.join(root, "b"), "project b")
      const bRoot = git(b, "rev-list", "--max-parents=0", "HEAD")
      fs.appendFileSync(path.join(b, ".git", "config"), `[remote "origin"]\n\turl = git@github.com:Org/A.git\n`)
      expect((yield* Project.resolve(b)).id).toBe(id) // the claim itself
      const result = yield* editEffect(b, database)
      expect(result.id).toBe(bRoot)
      expect(result.effect).toBe("ask")
      // the refused claim is not cached in B
      expect(fs.readFileSync(path.join(b, ".git", "toolgate"), "utf8")).toBe(bRoot)
    }),
  )

  it.scoped("writing A's id into B's .git/toolgate does not give B A's approvals", () =>
    Effect.gen(function* () {
      const { database, root, id } = yield* projectA
      const b = repository(path.join(root, "b"), "project b")
      fs.writeFileSync(path.join(b, ".git", "toolgate"), id)
      const result = yield* editEffect(b, database)
      expect(result.id).not.toBe(id)
      expect(result.effect).toBe("ask")
    }),
  )

  it.scoped("a fresh .git in a non-git directory claiming A's origin (no commits) is global for its directory", () =>
    Effect.gen(function* () {
      const { database, root, id } = yield* projectA
      const c = path.join(root, "c")
      fs.mkdirSync(c)
      git(c, "init", "-q")
      git(c, "remote", "add", "origin", "git@github.com:Org/A.git")
      const result = yield* editEffect(c, database)
      expect(result.id).not.toBe(id)
      expect(result.id).toBe("global")
      expect(result.effect).toBe("ask")
    }),
  )

  it.scoped("a .git file, a .git symlink or a commondir pointing at A's repository resolves as global", () =>
    Effect.gen(function* () {
      const { database, root, a, id } = yield* projectA
      const gitlink = path.join(root, "gitlink")
      fs.mkdirSync(gitlink)
      fs.writeFileSync(path.join(gitlink, ".git"), `gitdir: ${path.join(a, ".git")}\n`)
      const symlink = path.join(root, "symlink")
      fs.mkdirSync(symlink)
      fs.symlinkSync(path.join(a, ".git"), path.join(symlink, ".git"))
      const common = path.join(root, "common")
      fs.mkdirSync(path.join(common, ".git"), { recursive: true })
      fs.writeFileSync(path.join(common, ".git", "commondir"), path.join(a, ".git"))
      fs.writeFileSync(path.join(common, ".git", "HEAD"), "ref: refs/heads/main\n")
      for (const directory of [gitlink, symlink, common]) {
        const resolved = yield* Project.resolve(directory)
        expect(resolved).toEqual({ id: "global", directory })
        const result = yield* editEffect(directory, database)
        expect(result.id).not.toBe(id)
        expect(result.effect).toBe("ask")
      }
    }),
  )

  it.scoped("core.worktree pointing elsewhere is not the repository's own layout", () =>
    Effect.gen(function* () {
      const root = yield* tempDir()
      const b = repository(path.join(root, "b"), "project b")
      const elsewhere = path.join(root, "elsewhere")
      fs.mkdirSync(elsewhere)
      git(b, "config", "core.worktree", elsewhere)
      expect((yield* Project.resolve(b)).id).toBe("global")
    }),
  )

  it.scoped(
    "legitimate layouts keep their identity: a second clone and a linked worktree of A share A's approvals",
    () =>
      Effect.gen(function* () {
        const { database, root, a, id } = yield* projectA
        const clone = path.join(root, "clone")
        git(root, "clone", "-q", a, clone)
        git(clone, "remote", "set-url", "origin", "git@github.com:Org/A.git")
        const linked = path.join(root, "linked")
        git(a, "worktree", "add", "-q", linked)
        for (const directory of [clone, linked]) {
          const result = yield* editEffect(directory, database)
          expect(result.id).toBe(id)
          expect(result.effect).toBe("allow")
        }
      }),
  )
})

describe("every request shows what always will save", () => {
  it.scoped("the Asked event payload carries the entries and the scope; no save means always saves nothing", () =>
    Effect.gen(function* () {
      const database = yield* sharedFile
      const dir = yield* tempDir()
      const { f } = yield* stackAt(dir, database, [])
      const fiber = yield* f.waitForRequest({
        id: "per_s",
        action: "bash",
        resources: ["ls *"],
        save: [Wildcard.literal("ls *")],
      })
      const asked = f.asked()[0]!
      expect(asked.always).toEqual({
        action: "bash",
        entries: [{ pattern: "ls \u0000*", text: "ls *", literal: true }],
        scope: { kind: "directory", projectID: "global", directory: dir },
      })
      expect(PermissionV2.describeAlways(asked.always)).toEqual([
        `always: saves bash for the directory ${dir} only (no git repository):`,
        `  exactly: "ls *"`,
      ])
      // the payload survives the Request schema
      expect(Schema.decodeUnknownSync(PermissionV2.Request)(asked)).toEqual(asked)
      yield* Effect.orDie(f.permission.reply({ requestID: "per_s", reply: "once" }))
      yield* Effect.orDie(Fiber.join(fiber))
      const none = yield* f.waitForRequest({ id: "per_n", action: "read", resources: ["x"] })
      expect(PermissionV2.describeAlways((yield* f.permission.get("per_n"))!.always)).toEqual([
        "always: saves nothing (same as once)",
      ])
      yield* Effect.orDie(f.permission.reply({ requestID: "per_n", reply: "once" }))
      yield* Effect.orDie(Fiber.join(none))
    }),
  )
})
