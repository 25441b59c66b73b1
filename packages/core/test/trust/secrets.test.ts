/**
 * Secrets (see docs/trust/secrets.md): the whole `.env` family asks for `read` in every letter case, and a mutation
 * of a file `read` would not allow asks `read` first, so edit cannot be used as an oracle for a secret's content.
 * Real Location (`Core.layer`, real PermissionV2 and built-in agents, SQLite file); every ask is rejected and the
 * results are searched for the secret bytes.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { AgentV2, PermissionV2, Wildcard } from "../../src/index.js"
import { tempDir } from "../support/location.js"
import { isolateUserConfig, location, observed, settle, text, write } from "../support/trust-policy.js"

isolateUserConfig()

const SECRET = "SECRET_VALUE_4b1d"
const corrected = "The user rejected permission to use this specific tool call with the following feedback: no"

/** Every member of the family the attack pass read without an ask, plus the other spellings the rules cover. */
const FAMILY = [
  ".env",
  ".envrc",
  ".env~",
  ".ENV",
  ".Env.local",
  ".env.production",
  ".env-prod",
  ".env_test",
  "app.env",
  "APP.ENV",
  "sub/dir/.env",
  "sub/.ENVRC",
  "sub/.env-staging",
  "sub/.Env_Local",
  "sub/config.env~",
]

const locationWithSecrets = Effect.gen(function* () {
  const directory = yield* tempDir("toolgate-secrets-")
  write(directory, Object.fromEntries(FAMILY.map((name) => [name, `TOKEN=${SECRET}\n`])))
  write(directory, { ".env.example": "TOKEN=placeholder\n", ".Env.Sample": "TOKEN=placeholder\n", "ok.txt": "ok\n" })
  const data = yield* tempDir("toolgate-secrets-data-")
  return { directory, data }
})

describe("secrets: the .env family asks for read in every spelling", () => {
  it.scopedLive("read of every family member asks (rejected): no secret byte in any result", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* locationWithSecrets
      const log = observed()
      const results = yield* Effect.gen(function* () {
        const out: Array<string> = []
        for (const name of FAMILY) out.push(text(yield* settle("read", { path: name })))
        return out
      }).pipe(Effect.provide(location({ directory, data, log })))
      for (const result of results) {
        expect(result).not.toContain(SECRET)
        expect(result).toContain(corrected)
      }
      expect(log.asks.map((ask) => [ask.action, ask.resources])).toEqual(FAMILY.map((name) => ["read", [name]]))
    }),
  )

  it.scopedLive(
    "the templates (.env.example, .env.sample in any case) and ordinary files are read without an ask",
    () =>
      Effect.gen(function* () {
        const { directory, data } = yield* locationWithSecrets
        const log = observed()
        yield* Effect.gen(function* () {
          for (const name of [".env.example", ".Env.Sample", "ok.txt"]) {
            expect(text(yield* settle("read", { path: name }))).toMatch(/placeholder|ok/)
          }
        }).pipe(Effect.provide(location({ directory, data, log })))
        expect(log.asks).toEqual([])
      }),
  )

  it("property: any directory and letter case of a family name evaluates to ask with the default rules", () => {
    const rules: PermissionV2.Ruleset = [{ action: "read", resource: "*", effect: "allow" }, ...AgentV2.secretRules]
    const name = FastCheck.oneof(
      FastCheck.constantFrom(".env", ".envrc", ".env~"),
      FastCheck.tuple(FastCheck.constantFrom(".env.", ".env-", ".env_"), FastCheck.stringMatching(/^[a-z0-9]{1,8}$/))
        .filter(([, tail]) => tail !== "example" && tail !== "sample")
        .map(([head, tail]) => head + tail),
      FastCheck.stringMatching(/^[a-z0-9_-]{1,8}$/).map((stem) => `${stem}.env`),
    )
    const recase = (value: string) =>
      FastCheck.array(FastCheck.boolean(), { minLength: value.length, maxLength: value.length }).map((flags) =>
        [...value].map((c, i) => (flags[i] ? c.toUpperCase() : c)).join(""),
      )
    const directory = FastCheck.array(FastCheck.stringMatching(/^[a-zA-Z0-9_-]{1,6}$/), { maxLength: 3 })
    FastCheck.assert(
      FastCheck.property(
        name.chain((value) => recase(value)),
        directory,
        FastCheck.boolean(),
        (file, dirs, absolute) => {
          const resource = (absolute ? "/outside/" : "") + [...dirs, file].join("/")
          expect(PermissionV2.evaluate("read", resource, rules).effect).toBe("ask")
        },
      ),
    )
  })

  it("property: names outside the family stay allowed", () => {
    const rules: PermissionV2.Ruleset = [{ action: "read", resource: "*", effect: "allow" }, ...AgentV2.secretRules]
    FastCheck.assert(
      FastCheck.property(FastCheck.stringMatching(/^[a-z0-9_-]{1,10}\.(ts|md|json|txt)$/), (file) => {
        expect(PermissionV2.evaluate("read", `src/${file}`, rules).effect).toBe("allow")
      }),
    )
  })

  it("property: an ignore_case rule matches exactly when the lower-cased resource matches the lower-cased pattern", () => {
    const alphabet = FastCheck.constantFrom("a", "B", "e", "N", "v", ".", "/", "\\", " ", "*", "?", "-")
    const text = (max: number) => FastCheck.array(alphabet, { maxLength: max }).map((chars) => chars.join(""))
    FastCheck.assert(
      FastCheck.property(text(8), text(12), (pattern, input) => {
        const rules: PermissionV2.Ruleset = [{ action: "read", resource: pattern, effect: "deny", ignore_case: true }]
        const expected = Wildcard.match(input.toLowerCase(), pattern.toLowerCase()) ? "deny" : "ask"
        expect(PermissionV2.evaluate("read", input, rules).effect).toBe(expected)
      }),
      { numRuns: 2000 },
    )
  })

  it("ignore_case is only for the rules that ask for it: other rules keep the platform's case rules", () => {
    const rules: PermissionV2.Ruleset = [
      { action: "read", resource: "*", effect: "allow" },
      { action: "read", resource: "private/*", effect: "deny" },
    ]
    const expected = process.platform === "win32" ? "deny" : "allow"
    expect(PermissionV2.evaluate("read", "PRIVATE/key", rules).effect).toBe(expected)
    expect(PermissionV2.evaluate("read", "private/key", rules).effect).toBe("deny")
  })
})

describe("secrets: no edit oracle", () => {
  const attempts = [
    { oldString: `TOKEN=${SECRET}`, newString: "TOKEN=x" },
    { oldString: "TOKEN=wrong-guess", newString: "TOKEN=x" },
  ]

  it.scopedLive("edit on .env with a right and a wrong guess: both ask read first and fail the same way", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* locationWithSecrets
      const log = observed()
      const results = yield* Effect.gen(function* () {
        const out: Array<string> = []
        for (const attempt of attempts) out.push(text(yield* settle("edit", { path: ".env", ...attempt })))
        return out
      }).pipe(Effect.provide(location({ directory, data, log })))
      expect(results[0]).toBe(results[1])
      expect(results[0]).toContain(corrected)
      expect(results.join("")).not.toContain("Could not find")
      expect(log.asks.map((ask) => [ask.action, ask.resources])).toEqual([
        ["read", [".env"]],
        ["read", [".env"]],
      ])
      expect(fs.readFileSync(path.join(directory, ".env"), "utf8")).toBe(`TOKEN=${SECRET}\n`)
    }),
  )

  it.scopedLive("with a configured read deny the edit is refused for read, right guess or wrong", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* locationWithSecrets
      write(directory, {
        "toolgate.json": JSON.stringify({ permissions: [{ action: "read", resource: "*.env", effect: "deny" }] }),
      })
      const log = observed()
      const results = yield* Effect.gen(function* () {
        const out: Array<string> = []
        for (const attempt of attempts) out.push(text(yield* settle("edit", { path: ".env", ...attempt })))
        return out
      }).pipe(Effect.provide(location({ directory, data, log })))
      expect(results).toEqual([
        JSON.stringify({ type: "error", value: "Permission denied by configured rules for read: .env" }),
        JSON.stringify({ type: "error", value: "Permission denied by configured rules for read: .env" }),
      ])
      expect(log.asks).toEqual([])
      expect(fs.readFileSync(path.join(directory, ".env"), "utf8")).toBe(`TOKEN=${SECRET}\n`)
    }),
  )

  it.scopedLive("write and apply_patch on a secret ask read first; rejected, nothing changes", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* locationWithSecrets
      const log = observed()
      yield* Effect.gen(function* () {
        expect(text(yield* settle("write", { path: ".envrc", content: "export X=1\n" }))).toContain(corrected)
        const patched = yield* settle("apply_patch", {
          patchText: `*** Begin Patch\n*** Update File: .Env.local\n@@\n-TOKEN=${SECRET}\n+TOKEN=x\n*** End Patch`,
        })
        expect(text(patched)).toContain(corrected)
        expect(text(patched)).not.toContain(SECRET)
      }).pipe(Effect.provide(location({ directory, data, log })))
      expect(log.asks.map((ask) => [ask.action, ask.resources])).toEqual([
        ["read", [".envrc"]],
        ["read", [".Env.local"]],
      ])
      expect(fs.readFileSync(path.join(directory, ".envrc"), "utf8")).toBe(`TOKEN=${SECRET}\n`)
      expect(fs.readFileSync(path.join(directory, ".Env.local"), "utf8")).toBe(`TOKEN=${SECRET}\n`)
    }),
  )

  it.scopedLive("an approved read lets the edit continue to its own edit rules (no second read ask)", () =>
    Effect.gen(function* () {
      const { directory, data } = yield* locationWithSecrets
      const log = observed()
      log.answer = (request) => (request.action === "read" ? { reply: "once" } : { reply: "reject", message: "no" })
      const settled = yield* settle("edit", { path: ".env", oldString: `TOKEN=${SECRET}`, newString: "TOKEN=x" }).pipe(
        Effect.provide(location({ directory, data, log })),
      )
      expect(text(settled)).toContain("Edited file successfully")
      expect(log.asks.map((ask) => ask.action)).toEqual(["read"])
      expect(fs.readFileSync(path.join(directory, ".env"), "utf8")).toBe("TOKEN=x\n")
    }),
  )
})
