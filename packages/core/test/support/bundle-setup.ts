/**
 * vitest globalSetup: bundles the test suites' child-process entries from the TypeScript sources once per run into
 * `test-bundle/<project>/`, so a test that starts a child (the sandbox-escape child, as root and as `nobody`; the
 * fixtures under test/fixtures that `support/children.ts` starts) starts one file in about 0.3 s instead of
 * compiling the sources through tsx, which takes about 2 s of CPU per start. The folder's absolute path reaches the
 * tests as `inject("toolgateChildBundle")`. Each project has its own folder, so the default and the stress runs can
 * start side by side.
 *
 * `fixtures/tool-entry.ts` stays out: it checks which modules importing an entry loads, which a bundle would change.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"

export default async function setup(project: TestProject): Promise<void> {
  // @ts-expect-error a plain ESM script without declarations
  const script = (await import("../../../../scripts/bundle-bins.mjs")) as {
    readonly bundle: (options: {
      readonly entries: Record<string, string>
      readonly outdir: string
      readonly source: boolean
    }) => Promise<unknown>
  }
  const outdir = `packages/core/test-bundle/${project.name}`
  const fixtures = fs
    .readdirSync(fileURLToPath(new URL("../fixtures/", import.meta.url)))
    .filter((name) => name.endsWith(".ts") && name !== "tool-entry.ts")
  await script.bundle({
    entries: {
      "sandbox-child": "packages/core/test/support/sandbox-child.ts",
      ...Object.fromEntries(
        fixtures.map((name) => [path.basename(name, ".ts"), `packages/core/test/fixtures/${name}`]),
      ),
    },
    outdir,
    source: true,
  })
  project.provide("toolgateChildBundle", fileURLToPath(new URL(`../../../../${outdir}`, import.meta.url)))
}

declare module "vitest" {
  export interface ProvidedContext {
    toolgateChildBundle: string
  }
}
