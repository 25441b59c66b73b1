import * as fs from "node:fs"
import * as path from "node:path"
import { Database, Location, PermissionSaved, Project } from "@toolgate/core"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { tempDir, toolgate } from "./support.js"

/** Saves approvals for `directory` in the real SQLite file under `data`, as an earlier session would have. */
const saveApprovals = (data: string, directory: string, action: string, resources: ReadonlyArray<string>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const layer = PermissionSaved.layer.pipe(
          Layer.provideMerge(Location.layer({ directory }).pipe(Layer.orDie)),
          Layer.provideMerge(Database.layerFile(path.join(data, "toolgate.db"))),
        )
        const context = yield* Layer.build(layer)
        const store = Layer.succeedContext(context)
        return yield* Effect.gen(function* () {
          const saved = yield* PermissionSaved.Service
          const location = yield* Location.Service
          const scope = Project.approvalScope(location.project.id, location.directory)
          yield* saved.add({ ...scope, action, resources })
          return yield* saved.list(scope)
        }).pipe(Effect.provide(store))
      }),
    ),
  )

describe("toolgate permissions explain", () => {
  it("traces a bash command per segment and a read request, with config files, an agent file and saved rows", async () => {
    const home = tempDir()
    const data = path.join(home, "data", "toolgate")
    fs.mkdirSync(data, { recursive: true })
    const dir = tempDir("toolgate-explain-project-")
    fs.writeFileSync(
      path.join(dir, "toolgate.json"),
      JSON.stringify({
        permissions: [
          { action: "bash", resource: "*", effect: "ask" },
          { action: "bash", resource: "ls *", effect: "allow" },
        ],
      }),
    )
    fs.mkdirSync(path.join(dir, ".toolgate", "agents"), { recursive: true })
    fs.writeFileSync(
      path.join(dir, ".toolgate", "agents", "build.md"),
      "---\npermissions:\n  - { action: bash, resource: 'rm *', effect: deny }\n---\nBuild.\n",
    )
    const rows = await saveApprovals(data, dir, "bash", ["git status *"])

    const bash = await toolgate(["permissions", "explain", "--dir", dir, "bash", "ls . ; rm -f ../x; git status"], {
      home,
    })
    expect(bash.stderr).toBe("")
    expect(bash.code).toBe(0)
    const out = bash.stdout
    expect(out).toContain("agent build, action bash: deny")
    expect(out).toMatch(
      new RegExp(`=> #\\d+ allow bash ls \\*  \\(${path.join(dir, "toolgate.json")} permissions\\[1\\]\\)`),
    )
    expect(out).toMatch(/=> #\d+ deny {2}bash rm \* {2}\(.*build\.md agent file permissions\[0\]\)/)
    expect(out).toContain(`=> #`)
    expect(out).toContain(`saved approval ${rows[0]!.id}`)
    expect(out).toContain("segment rm -f ../x")

    const read = await toolgate(["permissions", "explain", "--dir", dir, "read", ".env", "src/a.ts"], { home })
    expect(read.code).toBe(0)
    expect(read.stdout).toContain("agent build, action read: ask")
    expect(read.stdout).toContain("resource .env")

    const missing = await toolgate(["permissions", "explain", "--dir", dir, "--agent", "nobody", "read", "x"], { home })
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe("toolgate: No agent nobody\n")
  })
})
