import * as fs from "node:fs"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { Config, Global } from "../src/index.js"
import { locationLayer, tempDir } from "./support/location.js"

const rules = (permissions: ReadonlyArray<unknown>) => JSON.stringify({ permissions })

describe("rule examples", () => {
  it("a rule's examples are checked when the document loads; a failing one names the rule and the example", () => {
    const ok = Config.parseDocument(
      "/p/toolgate.json",
      rules([
        {
          action: "bash",
          resource: "git commit *",
          effect: "allow",
          examples: { match: ["git commit", "git commit -m x"], not_match: ["git push", "git commitx"] },
        },
        { action: "read", resource: "*.ENV", effect: "ask", ignore_case: true, examples: { match: ["a.env"] } },
      ]),
    )
    expect(Either.isRight(ok)).toBe(true)

    const miss = Config.parseDocument(
      "/p/toolgate.json",
      rules([{ action: "bash", resource: "git commit *", effect: "allow", examples: { match: ["git  commit"] } }]),
    )
    expect(Either.isLeft(miss) && miss.left.message).toBe(
      'Invalid config in /p/toolgate.json at permissions.0.examples.match: the rule bash "git commit *" allow does not match "git  commit"',
    )
    const extra = Config.parseDocument(
      "/p/toolgate.json",
      JSON.stringify({
        agents: {
          build: {
            permissions: [{ action: "bash", resource: "npm *", effect: "allow", examples: { not_match: ["npm"] } }],
          },
        },
      }),
    )
    expect(Either.isLeft(extra) && extra.left.message).toBe(
      'Invalid config in /p/toolgate.json at agents.build.permissions.0.examples.not_match: the rule bash "npm *" allow matches "npm"',
    )
  })

  it.scoped("a Location whose rule examples fail does not build", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("toolgate-examples-")
      const file = path.join(dir, "toolgate.json")
      fs.writeFileSync(
        file,
        rules([{ action: "edit", resource: "src/*", effect: "allow", examples: { not_match: ["src/a.ts"] } }]),
      )
      const layer = Config.layer.pipe(
        Layer.provide(
          Layer.mergeAll(
            locationLayer(dir),
            Global.layerWith({ config: path.join(dir, "no-config") }),
            NodeContext.layer,
          ),
        ),
      )
      const error = yield* Effect.flip(Layer.build(layer))
      expect(error._tag).toBe("Config.InvalidError")
      expect(error.message).toContain(`${file} at permissions.0.examples.not_match`)
      expect(error.message).toContain('"src/a.ts"')
    }),
  )
})
