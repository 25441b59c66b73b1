/**
 * glob and grep against the attacks of an outside pass (see docs/trust/search.md): secrets returned by grep, search
 * roots outside the Location (absolute, relative, through symlinks, missing), and input the operating system cannot
 * take. Every case runs on a real Location (real PermissionV2 with the built-in agents, SQLite, temp directories,
 * real symlinks) on both engines; every ask is rejected unless the case says otherwise, and the returned bytes are
 * checked for the secrets.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck, Layer, Runtime } from "effect"
import {
  type Config,
  PermissionSaved,
  PermissionV2,
  Runner,
  ScriptedModel,
  Search,
  SessionV2,
  ToolRegistry,
} from "../../src/index.js"
import { tempDir } from "../support/location.js"
import { Asks, engines as searchEngines, realLocation, settleReal, write } from "../support/search-tool.js"

const engines = searchEngines("trust/search")

/** Bytes that must never come back without an approved ask. */
const INSIDE_SECRET = "INSIDE_SECRET_3f9a"
const LOCAL_SECRET = "LOCAL_SECRET_77b1"
const PRIVATE_SECRET = "PRIVATE_SECRET_c0de"
const OUTSIDE_SECRET = "OUTSIDE_SECRET_51e7"
const OUTSIDE_ENV = "OUTSIDE_ENV_a11a"
const SECRETS = [INSIDE_SECRET, LOCAL_SECRET, PRIVATE_SECRET, OUTSIDE_SECRET, OUTSIDE_ENV]
/** A file name that exists only outside the Location. */
const OUTSIDE_NAME = "outside-only-name.txt"

const config: Config.Info = { permissions: [{ action: "read", resource: "private/*", effect: "deny" }] }

/** The Location tree: public files, the secret family, a denied folder and symlinks that lead outside. */
const plant = (dir: string, outside: string) => {
  write(outside, {
    [OUTSIDE_NAME]: `needle ${OUTSIDE_SECRET}\n`,
    ".env": `needle ${OUTSIDE_ENV}\n`,
    "deeper/more.txt": `needle ${OUTSIDE_SECRET}\n`,
  })
  write(dir, {
    "src/app.ts": "const needle = 1\n",
    "README.md": "needle in the readme\n",
    ".env": `TOKEN=${INSIDE_SECRET} needle\n`,
    ".env.local": `TOKEN=${LOCAL_SECRET} needle\n`,
    ".env.example": "TOKEN=placeholder needle\n",
    "private/key.txt": `${PRIVATE_SECRET} needle\n`,
    "sub/keep.txt": "needle kept\n",
  })
  fs.symlinkSync(outside, path.join(dir, "link-out"))
  fs.symlinkSync(path.join(outside, OUTSIDE_NAME), path.join(dir, "notes.txt"))
  fs.symlinkSync(outside, path.join(dir, "chain2"))
  fs.symlinkSync(path.join(dir, "chain2"), path.join(dir, "chain1"))
  fs.symlinkSync(path.join(outside, "deeper"), path.join(dir, "sub", "deep-link"))
}

/** Runs `body` in a fresh real Location holding the planted tree. */
const inTrust = <A, E, R>(
  search: Layer.Layer<Search.Service>,
  body: (paths: { readonly dir: string; readonly outside: string }) => Effect.Effect<A, E, R>,
) =>
  Effect.gen(function* () {
    const dir = yield* tempDir()
    const outside = yield* tempDir()
    plant(dir, outside)
    return yield* body({ dir, outside }).pipe(Effect.provide(realLocation({ directory: dir, search, config })))
  })

const text = (settled: ToolRegistry.Settlement) => JSON.stringify(settled)
const leaked = (settled: ToolRegistry.Settlement) => SECRETS.filter((secret) => text(settled).includes(secret))
const asks = Effect.map(Asks, (log) => log.requests)
const rejected = {
  type: "error",
  value: "The user rejected permission to use this specific tool call with the following feedback: no",
}
const structuredPaths = (settled: ToolRegistry.Settlement) =>
  (settled.output?.structured as ReadonlyArray<{ readonly entry?: { readonly path: string }; readonly path?: string }>)
    .map((row) => row.entry?.path ?? row.path!)
    .filter((value, i, all) => all.indexOf(value) === i)

describe.each(engines)("grep content obeys the read rules ($engine engine)", ({ search, skip }) => {
  it.scoped.skipIf(skip)('grep {"pattern":"."} asks once for the secret family; rejected, no secret byte', () =>
    inTrust(search, () =>
      Effect.gen(function* () {
        const settled = yield* settleReal("grep", { pattern: "." })
        expect(settled.result).toEqual(rejected)
        expect(settled.output).toBeUndefined()
        expect(leaked(settled)).toEqual([])
        const requests = yield* asks
        expect(requests.map((request) => [request.action, request.resources, request.save])).toEqual([
          // The grep tool offers `*`; the ask saves only what the secret rules that asked cover.
          ["read", [".env", ".env.local"], ["*.env", "*.env.*"]],
        ])
        expect(requests[0]?.metadata).toEqual({ tool: "grep", pattern: "." })
      }),
    ),
  )

  it.scoped.skipIf(skip)("the secret family in other spellings and folders asks too (.ENV, .envrc, sub/.env)", () =>
    inTrust(search, ({ dir }) =>
      Effect.gen(function* () {
        write(dir, {
          "sub/.ENV": `${INSIDE_SECRET} needle\n`,
          ".envrc": `${INSIDE_SECRET} needle\n`,
          "deep/x/.env": `${INSIDE_SECRET} needle\n`,
        })
        const settled = yield* settleReal("grep", { pattern: "needle", path: "sub" })
        expect(settled.result).toEqual(rejected)
        expect(leaked(settled)).toEqual([])
        const all = yield* settleReal("grep", { pattern: "needle", include: "*env*" })
        expect(all.result).toEqual(rejected)
        expect(leaked(all)).toEqual([])
        const requests = yield* asks
        expect(requests.map((request) => request.resources)).toEqual([
          ["sub/.ENV"],
          [".env", ".env.local", ".envrc", "deep/x/.env"],
        ])
      }),
    ),
  )

  it.scoped.skipIf(skip)("one approved ask returns the asking files with the rest; the denied file stays out", () =>
    inTrust(search, () =>
      Effect.gen(function* () {
        const log = yield* Asks
        log.answer = () => ({ reply: "once" })
        const settled = yield* settleReal("grep", { pattern: "needle" })
        expect(log.requests).toHaveLength(1)
        expect(log.requests[0]?.resources).toEqual([".env", ".env.local"])
        expect(structuredPaths(settled)).toEqual([
          ".env",
          ".env.example",
          ".env.local",
          "README.md",
          "src/app.ts",
          "sub/keep.txt",
        ])
        expect(text(settled)).toContain(INSIDE_SECRET)
        expect(text(settled)).not.toContain(PRIVATE_SECRET)
        expect(text(settled)).not.toContain(OUTSIDE_SECRET)
        expect(settled.result).toMatchObject({
          type: "text",
          value: expect.stringMatching(
            /\n\n\(Matches in 1 file withheld because the read permission rules deny reading it\.\)$/,
          ),
        })
      }),
    ),
  )

  it.scoped.skipIf(skip)("a reject without a message is a declined defect: the run stops, nothing is returned", () =>
    inTrust(search, () =>
      Effect.gen(function* () {
        const log = yield* Asks
        log.answer = () => ({ reply: "reject" })
        const exit = yield* Effect.exit(settleReal("grep", { pattern: "TOKEN" }))
        expect(Exit.isFailure(exit) && PermissionV2.isDeclined(exit.cause)).toBe(true)
        expect(JSON.stringify(exit)).not.toContain(INSIDE_SECRET)
      }),
    ),
  )

  it.scoped.skipIf(skip)("a denied file is dropped without an ask, and the result says how many and why", () =>
    inTrust(search, () =>
      Effect.gen(function* () {
        const settled = yield* settleReal("grep", { pattern: "PRIVATE" })
        expect(settled.result).toEqual({
          type: "text",
          value: "No files found\n\n(Matches in 1 file withheld because the read permission rules deny reading it.)",
        })
        expect(settled.output?.structured).toEqual([])
        expect(leaked(settled)).toEqual([])
        const single = yield* settleReal("grep", { pattern: "needle", path: "private/key.txt" })
        expect(single.output?.structured).toEqual([])
        expect(leaked(single)).toEqual([])
        expect(yield* asks).toEqual([])
      }),
    ),
  )

  it.scoped.skipIf(skip)("templates (.env.example) and ordinary files need no ask", () =>
    inTrust(search, () =>
      Effect.gen(function* () {
        const settled = yield* settleReal("grep", { pattern: "placeholder|readme" })
        expect(structuredPaths(settled)).toEqual([".env.example", "README.md"])
        expect(yield* asks).toEqual([])
      }),
    ),
  )

  it.scoped.skipIf(skip)("grep path naming a secret file directly (or through an inside symlink) asks", () =>
    inTrust(search, ({ dir }) =>
      Effect.gen(function* () {
        fs.symlinkSync(path.join(dir, ".env"), path.join(dir, "innocent.txt"))
        for (const target of [".env", "./.env", "sub/../.env", path.join(dir, ".env"), "innocent.txt"]) {
          const settled = yield* settleReal("grep", { pattern: "TOKEN", path: target })
          expect(settled.result).toEqual(rejected)
          expect(leaked(settled)).toEqual([])
        }
        expect((yield* asks).map((request) => request.resources)).toEqual([
          [".env"],
          [".env"],
          [".env"],
          [".env"],
          [".env"],
        ])
      }),
    ),
  )

  it.scoped.skipIf(skip)("an always answer saves what read saves and the next grep does not ask", () =>
    inTrust(search, () =>
      Effect.gen(function* () {
        const log = yield* Asks
        log.answer = () => ({ reply: "always" })
        yield* settleReal("grep", { pattern: "TOKEN" })
        const saved = yield* (yield* PermissionSaved.Service).list({ projectID: "global" })
        expect(saved.map((row) => [row.action, row.resource])).not.toContainEqual(["read", "*"])
        expect(saved.map((row) => [row.action, row.resource])).toContainEqual(["read", "*.env"])
        log.answer = () => ({ reply: "reject", message: "no" })
        const again = yield* settleReal("grep", { pattern: "TOKEN" })
        expect(text(again)).toContain(INSIDE_SECRET)
        expect(log.requests).toHaveLength(1)
      }),
    ),
  )
})

describe.each(engines)("search roots are confined like read ($engine engine)", ({ search, skip }) => {
  it.scoped.skipIf(skip)("an absolute outside path asks external_directory; rejected, nothing of it returned", () =>
    inTrust(search, ({ outside }) =>
      Effect.gen(function* () {
        for (const tool of ["grep", "glob"] as const) {
          const input = tool === "grep" ? { pattern: "needle", path: outside } : { pattern: "*", path: outside }
          const settled = yield* settleReal(tool, input)
          expect(settled.result).toEqual(rejected)
          expect(leaked(settled)).toEqual([])
          expect(text(settled)).not.toContain(OUTSIDE_NAME)
        }
        expect((yield* asks).map((request) => [request.action, request.resources])).toEqual([
          ["external_directory", [`${outside}/*`]],
          ["external_directory", [`${outside}/*`]],
        ])
      }),
    ),
  )

  it.scoped.skipIf(skip)("an approved outside root still holds grep content to the read rules (outside .env)", () =>
    inTrust(search, ({ outside }) =>
      Effect.gen(function* () {
        const log = yield* Asks
        log.answer = (request) =>
          request.action === "external_directory" ? { reply: "once" } : { reply: "reject", message: "no" }
        const settled = yield* settleReal("grep", { pattern: "needle", path: outside })
        expect(settled.result).toEqual(rejected)
        expect(leaked(settled)).toEqual([])
        expect(log.requests.map((request) => [request.action, request.resources])).toEqual([
          ["external_directory", [`${outside}/*`]],
          ["read", [`${outside}/.env`]],
        ])
        const listed = yield* settleReal("glob", { pattern: "*.txt", path: outside })
        expect(structuredPaths(listed).map((entry) => path.basename(entry))).toEqual(["more.txt", OUTSIDE_NAME])
      }),
    ),
  )

  it.scoped.skipIf(skip)("relative escapes, ../missing included, are refused before any search or ask", () =>
    inTrust(search, ({ dir, outside }) =>
      Effect.gen(function* () {
        const rel = path.relative(dir, outside)
        for (const target of ["..", "../", "../missing", `${rel}`, `${rel}/deeper`, "sub/../../x", "./sub/../.."]) {
          for (const tool of ["grep", "glob"] as const) {
            const settled = yield* settleReal(tool, { pattern: tool === "grep" ? "needle" : "*", path: target })
            expect(settled.result).toEqual({
              type: "error",
              value: `Unable to search ${target}: a relative path must stay inside the Location (an absolute path outside it needs approval)`,
            })
            expect(leaked(settled)).toEqual([])
          }
        }
        expect(yield* asks).toEqual([])
      }),
    ),
  )

  it.scoped.skipIf(skip)("a symlinked directory, a symlink chain or a symlinked file cannot carry a root outside", () =>
    inTrust(search, () =>
      Effect.gen(function* () {
        for (const target of ["link-out", "link-out/", "link-out/.", "chain1", "chain1/deeper", "sub/deep-link"]) {
          for (const tool of ["grep", "glob"] as const) {
            const settled = yield* settleReal(tool, { pattern: tool === "grep" ? "needle" : "*", path: target })
            expect(settled.result).toEqual({
              type: "error",
              value: `Unable to search ${target}: it leads outside the Location through a symbolic link`,
            })
            expect(leaked(settled)).toEqual([])
          }
        }
        const file = yield* settleReal("grep", { pattern: "needle", path: "notes.txt" })
        expect(file.result).toMatchObject({
          type: "error",
          value: expect.stringContaining("Unable to search notes.txt"),
        })
        expect(yield* asks).toEqual([])
      }),
    ),
  )

  it.scoped.skipIf(skip)("walking the Location never follows the symlinks that lead outside", () =>
    inTrust(search, () =>
      Effect.gen(function* () {
        const log = yield* Asks
        log.answer = () => ({ reply: "once" })
        const grep = yield* settleReal("grep", { pattern: "needle" })
        expect(text(grep)).not.toContain(OUTSIDE_SECRET)
        expect(text(grep)).not.toContain(OUTSIDE_ENV)
        const glob = yield* settleReal("glob", { pattern: "**" })
        for (const entry of structuredPaths(glob)) expect(entry.startsWith("..")).toBe(false)
        expect(text(glob)).not.toContain(OUTSIDE_NAME)
        expect(log.requests.map((request) => request.action)).toEqual(["read"])
      }),
    ),
  )

  it.scoped.skipIf(skip)("patterns and include globs that point outside match nothing outside", () =>
    inTrust(search, ({ outside }) =>
      Effect.gen(function* () {
        const rel = path.basename(outside)
        for (const pattern of ["../*", `../${rel}/*`, `${outside}/*`, "/**", "**/../../*", "../**/*.txt"]) {
          const settled = yield* settleReal("glob", { pattern })
          expect(text(settled)).not.toContain(OUTSIDE_NAME)
          for (const entry of structuredPaths(settled)) expect(entry.startsWith("..")).toBe(false)
        }
        for (const include of ["../**", `${outside}/*`, `../${rel}/${OUTSIDE_NAME}`, "/**/*.txt"]) {
          const settled = yield* settleReal("grep", { pattern: "SECRET|needle", include })
          expect(leaked(settled)).toEqual([])
          if (settled.output !== undefined) {
            for (const entry of structuredPaths(settled)) expect(entry.startsWith("..")).toBe(false)
          }
        }
      }),
    ),
  )

  it.scoped.skipIf(skip)("an absolute path inside the Location is treated as inside (no ask)", () =>
    inTrust(search, ({ dir }) =>
      Effect.gen(function* () {
        const settled = yield* settleReal("glob", { pattern: "*.txt", path: path.join(dir, "sub") })
        expect(structuredPaths(settled)).toEqual(["sub/keep.txt"])
        expect(yield* asks).toEqual([])
      }),
    ),
  )
})

describe.each(engines)(
  "input the operating system cannot take is a tool error ($engine engine)",
  ({ search, skip }) => {
    it.scoped.skipIf(skip)("NUL and lone surrogates in pattern, include or path: specific errors, no defect", () =>
      inTrust(search, () =>
        Effect.gen(function* () {
          const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
            ["glob", { pattern: "*.ts\0" }, "Unable to find files: the pattern contains a NUL byte"],
            ["glob", { pattern: "a\uD800" }, "Unable to find files: the pattern is not well-formed Unicode text"],
            ["glob", { pattern: "*", path: "sub\0" }, "Unable to search sub\\u0000: the path contains a NUL byte"],
            ["grep", { pattern: "needle\0" }, "Unable to grep: the pattern contains a NUL byte"],
            ["grep", { pattern: "needle", include: "*.ts\0" }, "Unable to grep: the include contains a NUL byte"],
            [
              "grep",
              { pattern: "needle", include: "\uDC00" },
              "Unable to grep: the include is not well-formed Unicode text",
            ],
            [
              "grep",
              { pattern: "needle", path: "\0/etc" },
              "Unable to search \\u0000/etc: the path contains a NUL byte",
            ],
            [
              "grep",
              { pattern: "x", path: "a\uD800" },
              "Unable to search a\\ud800: the path is not well-formed Unicode text",
            ],
          ]
          for (const [tool, input, message] of cases) {
            const settled = yield* settleReal(tool, input)
            expect(settled.result).toEqual({ type: "error", value: message })
          }
        }),
      ),
    )

    it.scoped.skipIf(skip)("a NUL glob pattern inside a Runner run fails that call and the run goes on", () =>
      Effect.gen(function* () {
        const dir = yield* tempDir()
        const outside = yield* tempDir()
        plant(dir, outside)
        const script: ScriptedModel.Script = [
          [
            { type: "tool-call", id: "call_nul", name: "glob", input: { pattern: "*\0" } },
            { type: "tool-call", id: "call_inc", name: "grep", input: { pattern: "needle", include: "\0" } },
          ],
          [{ type: "tool-call", id: "call_ok", name: "glob", input: { pattern: "*.md" } }],
          [{ type: "text", text: "done" }],
        ]
        const stack = Runner.layer.pipe(
          Layer.provideMerge(ScriptedModel.layer(script)),
          Layer.provideMerge(realLocation({ directory: dir, search, config })),
        )
        const result = yield* Effect.gen(function* () {
          const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
          return yield* (yield* Runner.Service).run({ sessionID: session.id, prompt: "go" })
        }).pipe(Effect.provide(stack))
        expect(result.stopped).toBeUndefined()
        expect(result.steps).toBe(3)
        const results = JSON.stringify(result.messages)
        expect(results).toContain("Unable to find files: the pattern contains a NUL byte")
        expect(results).toContain("Unable to grep: the include contains a NUL byte")
        expect(results).toContain(path.join(dir, "README.md"))
      }),
    )
  },
)

describe("Search.readable", () => {
  it.scoped("a matched file (or its folder) that became a symlink or vanished after the search is withheld", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const outside = yield* tempDir()
      write(outside, { "secret.txt": `${OUTSIDE_SECRET}\n` })
      write(dir, { "a.txt": "needle\n" })
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir, "swapped.txt"))
      fs.symlinkSync(outside, path.join(dir, "swapped-dir"))
      const match = (file: string): Search.Match => ({
        entry: { path: file, type: "file" },
        line: 1,
        offset: 0,
        text: "needle\n",
        submatches: [],
      })
      const checked: Array<ReadonlyArray<string>> = []
      const permission = PermissionV2.Service.of({
        check: (input) =>
          Effect.sync(() => {
            checked.push(input.resources)
            return input.resources.map((): PermissionV2.Effect => "allow")
          }),
        assert: () => Effect.die("no ask expected"),
        ask: () => Effect.die("no ask expected"),
        reply: () => Effect.void,
        get: () => Effect.succeed(undefined),
        forSession: () => Effect.succeed([]),
        list: () => Effect.succeed([]),
      })
      const result = yield* Search.readable({
        permission,
        caller: { sessionID: "ses_x", agent: "build", source: { type: "tool", messageID: "m", callID: "c" } },
        root: dir,
        cwd: dir,
        matches: [match("a.txt"), match("swapped.txt"), match("gone.txt"), match("swapped-dir/secret.txt")],
      })
      expect(result.matches.map((row) => row.entry.path)).toEqual(["a.txt"])
      expect(result.withheld).toEqual([{ files: 3, reason: "changed" }])
      expect(checked).toEqual([["a.txt"]])
    }),
  )
})

describe("PermissionV2.check", () => {
  it.scoped("evaluates each resource like assert, without asking: deny, allow, ask; saved allows lift asks", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      yield* Effect.gen(function* () {
        const permission = yield* PermissionV2.Service
        const session = yield* (yield* SessionV2.Service).create({ agent: "build" })
        const resources = ["src/a.ts", ".env", "private/x", "/elsewhere/.env.local"]
        expect(yield* permission.check({ sessionID: session.id, action: "read", resources })).toEqual([
          "allow",
          "ask",
          "deny",
          "ask",
        ])
        expect(yield* permission.check({ sessionID: session.id, action: "read", resources: [] })).toEqual([])
        expect(yield* permission.list()).toEqual([])
        const log = yield* Asks
        log.answer = () => ({ reply: "always" })
        yield* permission.assert({ sessionID: session.id, action: "read", resources: [".env"], save: ["*"] })
        // The answer saved `*.env` (the rule that asked), not `*`: another kind of secret file still asks.
        expect(yield* permission.check({ sessionID: session.id, action: "read", resources })).toEqual([
          "allow",
          "allow",
          "deny",
          "ask",
        ])
        const missing = yield* Effect.flip(permission.check({ sessionID: "ses_missing", action: "read", resources }))
        expect(missing).toBeInstanceOf(SessionV2.NotFoundError)
      }).pipe(Effect.provide(realLocation({ directory: dir, search: Search.layerNode, config })))
    }),
  )
})

/** Path pieces an attacker would combine. */
const piece = FastCheck.constantFrom(
  ".",
  "..",
  "",
  "sub",
  "SUB",
  "Sub",
  "link-out",
  "LINK-OUT",
  "chain1",
  "chain2",
  "deep-link",
  "deeper",
  "src",
  ".env",
  ".ENV",
  "private",
  "\u00fcn\u00efc\u00f6de",
  "e\u0301",
  "\u0000",
  "x\u0000y",
  "...",
  "sub.",
  "sub ",
  OUTSIDE_NAME,
)

describe.each(engines)(
  "property: generated roots never return outside or secret bytes without an ask ($engine)",
  ({ search, skip }) => {
    it.scoped.skipIf(skip)(
      "glob and grep over generated paths",
      () =>
        inTrust(search, ({ dir, outside }) =>
          Effect.gen(function* () {
            const log = yield* Asks
            const runtime = yield* Effect.runtime<SessionV2.Service | ToolRegistry.Service>()
            const rootArb = FastCheck.record({
              absolute: FastCheck.constantFrom("none", "inside", "outside"),
              parts: FastCheck.array(piece, { minLength: 0, maxLength: 4 }),
              trailing: FastCheck.constantFrom("", "/", "/.", "//", "/./"),
            }).map(({ absolute, parts, trailing }) => {
              const joined = parts.join("/") + trailing
              if (absolute === "inside") return `${dir}/${joined}`
              if (absolute === "outside") return `${outside}/${joined}`
              return joined
            })
            const outcomes = { asked: 0, refused: 0, shown: 0 }
            const runOne = (tool: "glob" | "grep", root: string) =>
              Effect.gen(function* () {
                const before = log.requests.length
                const exit = yield* Effect.exit(
                  settleReal(tool, { pattern: tool === "grep" ? "needle|TOKEN|SECRET" : "**", path: root }),
                )
                // Every ask is rejected with a message, so a call ends in a result: never a defect.
                if (Exit.isFailure(exit))
                  throw new Error(`defect for ${JSON.stringify(root)}: ${Cause.pretty(exit.cause)}`)
                const asked = log.requests.slice(before)
                const settled = exit.value
                outcomes[asked.length > 0 ? "asked" : settled.result.type === "error" ? "refused" : "shown"]++
                if (asked.length > 0) {
                  expect(settled.result).toEqual(rejected)
                }
                // Without an approved ask nothing secret and nothing outside comes back.
                expect(leaked(settled)).toEqual([])
                // An error may echo the path the model sent; a result never names an outside file.
                if (settled.result.type !== "error") expect(text(settled)).not.toContain(OUTSIDE_NAME)
                if (settled.output !== undefined) {
                  for (const entry of structuredPaths(settled)) {
                    expect(path.resolve(dir, entry).startsWith(`${dir}${path.sep}`)).toBe(true)
                  }
                }
              })
            yield* Effect.promise(() =>
              FastCheck.assert(
                FastCheck.asyncProperty(rootArb, FastCheck.constantFrom("glob", "grep"), (root, tool) =>
                  Runtime.runPromise(runtime)(runOne(tool as "glob" | "grep", root)),
                ),
                { numRuns: 60 },
              ),
            )
            // The generator reaches every kind of outcome, so the property is not vacuous.
            expect(outcomes.asked * outcomes.refused * outcomes.shown).toBeGreaterThan(0)
          }),
        ),
      120_000,
    )
  },
)
