/**
 * One spelling per configuration key: the camelCase spellings are read as their snake_case keys, reported on the
 * document and by PermissionLint, and a document holding both spellings of one key does not load.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck } from "effect"
import { Config, PermissionLint } from "../src/index.js"

const FILE = "/p/toolgate.json"

/** A valid value for each key that has a deprecated spelling. */
const VALUES: Readonly<Record<string, unknown>> = {
  ask_timeout: 5_000,
  read_only: ["vendor"],
  deny_read: ["secrets"],
  allow_unix_sockets: ["/run/x.sock"],
  auto_allow: true,
  fail_if_unavailable: false,
  not_match: ["git push"],
}

/** A document setting the keys of `aliases`, each spelt as the alias (`deprecated`) or as the canonical key. */
const document = (aliases: ReadonlyArray<Config.Alias>, deprecated: boolean) => {
  const out: {
    permission?: Record<string, unknown>
    bash?: { sandbox: Record<string, unknown> }
    permissions?: unknown
  } = {}
  for (const alias of aliases) {
    const key = deprecated ? alias.alias : alias.canonical
    const value = VALUES[alias.canonical]
    if (alias.section === "permission") out.permission = { ...out.permission, [key]: value }
    else if (alias.section === "bash.sandbox")
      out.bash = { sandbox: { mode: "bubblewrap", ...out.bash?.sandbox, [key]: value } }
    else out.permissions = [{ action: "bash", resource: "git commit *", effect: "allow", examples: { [key]: value } }]
  }
  return JSON.stringify(out)
}

const parse = (text: string) => Config.parseDocument(FILE, text)

describe("configuration key spellings", () => {
  it("every deprecated spelling has a canonical snake_case key the schema knows", () => {
    for (const alias of Config.ALIASES) {
      expect(alias.canonical).toMatch(/^[a-z]+(_[a-z]+)+$/)
      expect(alias.alias).toMatch(/[A-Z]/)
      expect(Object.hasOwn(VALUES, alias.canonical), alias.canonical).toBe(true)
    }
    expect(Object.keys(Config.BashSandbox.fields)).toEqual(
      expect.arrayContaining(["read_only", "deny_read", "allow_unix_sockets", "auto_allow", "fail_if_unavailable"]),
    )
    expect(Object.keys(Config.Permission.fields)).toEqual(["ask_timeout"])
  })

  it("a document in the deprecated spellings decodes as the same document in the canonical ones, and says which it used", () =>
    FastCheck.assert(
      FastCheck.property(FastCheck.subarray([...Config.ALIASES], { minLength: 1 }), (aliases) => {
        const old = parse(document(aliases, true))
        const canonical = parse(document(aliases, false))
        expect(Either.isRight(old) && Either.isRight(canonical)).toBe(true)
        if (Either.isLeft(old) || Either.isLeft(canonical)) return
        expect(old.right.info).toEqual(canonical.right.info)
        expect(canonical.right.deprecatedKeys).toBeUndefined()
        expect(old.right.deprecatedKeys?.map((key) => key.canonical.split(".").at(-1)).sort()).toEqual(
          aliases.map((alias) => alias.canonical).sort(),
        )
      }),
    ))

  it("names where each deprecated spelling was, with its canonical name", () => {
    const parsed = parse(
      JSON.stringify({
        permission: { askTimeout: 1000 },
        bash: { sandbox: { mode: "none", readOnly: ["a"] } },
        agents: {
          "my.agent": {
            permissions: [{ action: "bash", resource: "npm *", effect: "allow", examples: { notMatch: ["npx"] } }],
          },
        },
      }),
    )
    expect(Either.isRight(parsed) && parsed.right.deprecatedKeys).toEqual([
      { key: "permission.askTimeout", canonical: "permission.ask_timeout" },
      { key: "bash.sandbox.readOnly", canonical: "bash.sandbox.read_only" },
      {
        key: "agents.my.agent.permissions[0].examples.notMatch",
        canonical: "agents.my.agent.permissions[0].examples.not_match",
      },
    ])
    // The renamed example is checked like any other: a not_match the rule matches fails the document.
    const failing = parse(
      JSON.stringify({
        permissions: [{ action: "bash", resource: "npm *", effect: "allow", examples: { notMatch: ["npm i"] } }],
      }),
    )
    expect(Either.isLeft(failing) && failing.left.message).toBe(
      `Invalid config in ${FILE} at permissions.0.examples.not_match: the rule bash "npm *" allow matches "npm i"`,
    )
  })

  it("a document with both spellings of one key fails closed, naming the file and both keys", () => {
    for (const alias of Config.ALIASES) {
      // The canonical key, and the alias beside it in the same object.
      const text = document([alias], false).replace(
        `"${alias.canonical}":`,
        `"${alias.alias}":${JSON.stringify(VALUES[alias.canonical])},"${alias.canonical}":`,
      )
      const result = parse(text)
      expect(Either.isLeft(result), alias.alias).toBe(true)
      if (Either.isRight(result)) continue
      expect(result.left._tag).toBe("Config.InvalidError")
      expect(result.left.path).toBe(FILE)
      expect(result.left.message).toContain(FILE)
      expect(result.left.message).toContain(`"${alias.alias}"`)
      expect(result.left.message).toContain(`"${alias.canonical}"`)
    }
    const sandbox = parse(JSON.stringify({ bash: { sandbox: { mode: "none", autoAllow: true, auto_allow: false } } }))
    expect(Either.isLeft(sandbox) && sandbox.left.message).toBe(
      `Invalid config in ${FILE}: bash.sandbox has both "autoAllow" and "auto_allow": keep "auto_allow" ("autoAllow" is its deprecated spelling)`,
    )
  })

  it("permissions lint flags each deprecated spelling with the file, the key and the canonical name", () => {
    const parsed = parse(JSON.stringify({ bash: { sandbox: { mode: "none", failIfUnavailable: false } } }))
    if (Either.isLeft(parsed)) throw parsed.left
    const findings = PermissionLint.lint([parsed.right], [])
    expect(findings).toEqual([
      {
        level: "warning",
        code: "deprecated-key",
        where: `${FILE} bash.sandbox.failIfUnavailable`,
        message:
          "bash.sandbox.failIfUnavailable is a deprecated spelling of bash.sandbox.fail_if_unavailable; rename it to bash.sandbox.fail_if_unavailable",
      },
    ])
  })

  it("the generated reference names only the canonical keys", () => {
    const reference = fs.readFileSync(
      path.join(import.meta.dirname, "..", "..", "..", "docs", "configuration.md"),
      "utf8",
    )
    for (const alias of Config.ALIASES) {
      // As a key in backquotes (a path ending in it, or the key alone), not inside a longer word such as `readOnlyHint`.
      expect(reference, alias.alias).not.toMatch(new RegExp(`[.\`]${alias.alias}\``))
      expect(reference, alias.canonical).toContain(
        alias.canonical === "not_match" ? "examples" : `.${alias.canonical}\``,
      )
    }
  })
})
