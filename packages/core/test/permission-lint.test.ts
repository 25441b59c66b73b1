import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Logger } from "effect"
import { Config, Core, PermissionLint, Wildcard } from "../src/index.js"
import { tempDir } from "./support/location.js"

describe("PermissionLint", () => {
  it.scoped("finds duplicates, shadowed rules, rules that never match, unknown actions and keys, broad approvals", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("toolgate-lint-")
      const first = path.join(dir, "a", "toolgate.json")
      const second = path.join(dir, "toolgate.json")
      fs.mkdirSync(path.dirname(first))
      const firstInfo = {
        permissions: [
          { action: "bash", resource: "git status *", effect: "allow" },
          { action: "bash", resource: "npm *", effect: "allow" },
          { action: "external_directory", resource: "build/*", effect: "allow" },
          { action: "bash", resource: "cat ~/notes", effect: "allow" },
          { action: "reed", resource: "*", effect: "allow" },
        ],
      } satisfies Config.Info
      const secondInfo = {
        permissions: [
          { action: "bash", resource: "npm *", effect: "allow" },
          { action: "bash", resource: "*", effect: "deny" },
          { action: "read", resource: "~/docs/*", effect: "allow" },
        ],
      } satisfies Config.Info
      const firstText = JSON.stringify({
        permissions: [...firstInfo.permissions.slice(0, 4), { ...firstInfo.permissions[4], efect: "deny" }],
      })
      fs.writeFileSync(first, firstText)
      fs.writeFileSync(second, JSON.stringify(secondInfo))
      // The documents as discovery parses them: the unknown rule key travels on the document, not in a second read.
      const documents: ReadonlyArray<Config.Document> = [
        Either.getOrThrow(Config.parseDocument(first, firstText)),
        Either.getOrThrow(Config.parseDocument(second, JSON.stringify(secondInfo))),
      ]
      expect(documents[0]!.unknownRuleKeys).toEqual([{ where: "permissions[4]", key: "efect" }])
      expect(documents[1]!.unknownRuleKeys).toBeUndefined()
      // Lint reads what was parsed: changing the file afterwards changes nothing.
      fs.writeFileSync(
        first,
        JSON.stringify({ permissions: [{ action: "read", resource: "*", effect: "allow", x: 1 }] }),
      )
      const findings = PermissionLint.lint(documents, [
        { id: "psv_1", projectID: "p", directory: "", action: "bash", resource: "*", timeCreated: 0 },
        {
          id: "psv_2",
          projectID: "p",
          directory: "",
          action: "bash",
          resource: `${Wildcard.literal("git commit")} *`,
          timeCreated: 0,
        },
      ])
      const codes = findings.map((f) => [f.level, f.code, f.where])
      expect(codes).toEqual(
        expect.arrayContaining([
          ["warning", "shadowed", `${first} permissions[0]`],
          ["warning", "duplicate", `${first} permissions[1]`],
          ["error", "never-matches", `${first} permissions[2]`],
          ["warning", "never-matches", `${first} permissions[3]`],
          ["warning", "unknown-action", `${first} permissions[4]`],
          ["error", "unknown-key", `${first} permissions[4]`],
          ["warning", "broad-approval", "saved approval psv_1"],
        ]),
      )
      expect(findings.filter((f) => f.code === "unknown-key").map((f) => f.message)).toEqual([
        'unknown key "efect" in a rule (expected action, resource, effect)',
      ])
      // The last rules and the home-expanded read pattern are fine; a prefix approval is not "broad".
      expect(findings.some((f) => f.where === `${second} permissions[1]`)).toBe(false)
      expect(findings.some((f) => f.where === `${second} permissions[2]`)).toBe(false)
      expect(findings.some((f) => f.where === "saved approval psv_2")).toBe(false)
      expect(findings.find((f) => f.code === "duplicate")?.message).toBe(
        `the same rule again at ${second} permissions[0]`,
      )
      expect(PermissionLint.render(findings).split("\n")[0]).toMatch(/^error /)
      expect(PermissionLint.render([])).toBe("No problems found.")
    }),
  )

  it("agent rules are linted on top of the top-level rules", () => {
    const findings = PermissionLint.lint([
      {
        type: "document",
        info: {
          permissions: [{ action: "bash", resource: "ls *", effect: "allow" }],
          agents: { build: { permissions: [{ action: "*", resource: "*", effect: "ask" }] } },
        },
      },
    ])
    expect(findings.map((f) => [f.code, f.where])).toEqual([["shadowed", "(config) permissions[0]"]])
  })
})

describe("PermissionLint at Location build", () => {
  it.scoped("a Location whose rules have findings still builds and reports each finding as a warning", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("toolgate-lint-build-")
      const data = yield* tempDir("toolgate-lint-data-")
      fs.writeFileSync(
        path.join(dir, "toolgate.json"),
        JSON.stringify({
          permissions: [
            { action: "bash", resource: "ls *", effect: "allow" },
            { action: "bash", resource: "ls *", effect: "allow" },
          ],
        }),
      )
      const logged: Array<string> = []
      const logger = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message }) => void logged.push(Array.isArray(message) ? message.join(" ") : String(message))),
      )
      yield* Layer.build(Core.layer({ directory: dir, data, memoryDatabase: true })).pipe(Effect.provide(logger))
      expect(logged.some((line) => line.startsWith("permission lint warning duplicate:"))).toBe(true)
      expect(logged.some((line) => line.includes("toolgate.json permissions[1]"))).toBe(true)
    }),
  )
})
